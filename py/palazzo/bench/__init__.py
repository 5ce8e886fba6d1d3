"""Benchmarks run from the command line (``palazzo bench …``); results are JSON files."""

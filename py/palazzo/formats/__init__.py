"""Palaces as files: the palace JSON exchange format (:mod:`~palazzo.formats.palacefile`) and
graph exports as DOT, Mermaid and D3 (:mod:`~palazzo.formats.graphexport`)."""

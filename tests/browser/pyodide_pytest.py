"""Run pytest inside Pyodide and report every test's outcome as one JSON string.

This file is not a test module: the runner worker (``pyodide_runner.worker.js``) executes it
in Pyodide after unpacking the engine tests, then calls ``run``. The result crosses back to
the CPython test as JSON, so no Python proxy leaves the worker. The CPython side decides what
counts as success; this side only records what happened, collection errors included.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import sys

CPYTHON_ONLY = "cpython_only: the test needs CPython (subprocesses, files from dist/, Panel)"


class Outcomes:
    """A pytest plugin that keeps each test's outcome, traceback and collection errors."""

    def __init__(self) -> None:
        self.collected: list[str] = []
        self.deselected: list[str] = []
        self.collect_errors: dict[str, str] = {}
        self.outcomes: dict[str, str] = {}
        self.details: dict[str, str] = {}

    def pytest_configure(self, config) -> None:
        config.addinivalue_line("markers", CPYTHON_ONLY)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.collect_errors[report.nodeid] = report.longreprtext
        elif report.skipped:  # a module-level skip or importorskip: nothing of it runs here
            self.collect_errors[report.nodeid] = "skipped at collection: " + report.longreprtext

    def pytest_deselected(self, items) -> None:
        self.deselected += [item.nodeid for item in items]

    def pytest_collection_finish(self, session) -> None:
        self.collected = [item.nodeid for item in session.items]

    def pytest_runtest_logreport(self, report) -> None:
        """The first failing phase decides; a skip in setup is a skip; else the call's outcome."""
        if self.outcomes.get(report.nodeid) in ("failed", "error"):
            return
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.failed:
            outcome = "failed" if report.when == "call" else "error"
        elif report.skipped:
            outcome = "skipped"
        elif report.when == "call":
            outcome = "passed"
        else:
            return
        self.outcomes[report.nodeid] = outcome
        if outcome != "passed":
            self.details[report.nodeid] = f"[{report.when}] {report.longreprtext}"


def configure_hypothesis() -> None:
    """Hypothesis, when loaded: no deadline (wasm runs slower than CPython), no database."""
    try:
        from hypothesis import settings
    except ImportError:
        return
    settings.register_profile("pyodide", deadline=None, database=None)
    settings.load_profile("pyodide")


def environment() -> dict[str, str]:
    """Where the tests ran: the platform and the palazzo package they imported."""
    import numpy

    import palazzo

    return {
        "sys.platform": sys.platform,
        "python": platform.python_version(),
        "palazzo": os.path.dirname(palazzo.__file__),
        "numpy": numpy.__version__,
    }


def run(request_json: str) -> str:
    """Run pytest as ``{"root": dir, "args": [...]}`` asks; return outcomes and output as JSON."""
    import pytest

    request = json.loads(request_json)
    os.chdir(request["root"])
    configure_hypothesis()
    plugin = Outcomes()
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        exit_code = int(pytest.main(request["args"], plugins=[plugin]))
    return json.dumps(
        {
            "exit_code": exit_code,
            "environment": environment(),
            "collected": plugin.collected,
            "deselected": plugin.deselected,
            "collect_errors": plugin.collect_errors,
            "outcomes": plugin.outcomes,
            "details": plugin.details,
            "output": output.getvalue(),
        }
    )

"""Shared by the importer tests: running an import that must not hang on a FIFO."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SECONDS = 5.0


def _release(fifo: Path) -> None:
    """Give a reader blocked opening ``fifo`` its end of file: a writer opens and closes."""
    with contextlib.suppress(OSError):  # no reader waiting (ENXIO), or gone
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def in_time() -> Callable[..., Any]:
    """Return ``run(fn, *fifos)``: ``fn()``'s result (or its exception, raised again) when it
    finishes within a few seconds; else the test fails, after the FIFOs are opened for
    writing and closed so the thread blocked on one is freed (a thread cannot be killed)."""

    def run(fn: Callable[[], Any], *fifos: Path) -> Any:
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as err:  # noqa: BLE001 - handed to the test thread
                box["error"] = err

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(SECONDS)
        if thread.is_alive():
            deadline = time.monotonic() + 30
            while thread.is_alive() and time.monotonic() < deadline:
                for fifo in fifos:
                    _release(fifo)
                thread.join(0.05)
            pytest.fail(f"the import was still running after {SECONDS:g} s "
                        "(blocked opening a FIFO?)")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    return run

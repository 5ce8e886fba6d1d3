"""Drive an interactive ``gemini`` session through a pseudo-terminal: wait 12 s for the
start, then type each line (a character every 30 ms, then Enter) and wait 8 s for the CLI to
settle; everything the terminal printed is written to LOG.

usage: python3 interactive.py GEMINI_BIN LOG LINE...
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import sys
import time


def pump(fd: int, log, seconds: float) -> None:
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            log.write(data)
            log.flush()


def main(binary: str, log_path: str, lines: list[str]) -> None:
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(binary, [binary])
    with open(log_path, "wb") as log:
        pump(fd, log, 12)
        for line in lines:
            for ch in line:
                os.write(fd, ch.encode())
                time.sleep(0.03)
            pump(fd, log, 1)
            os.write(fd, b"\r")
            pump(fd, log, 8)
        pump(fd, log, 3)
    with contextlib.suppress(ProcessLookupError):  # /quit has normally ended it
        os.kill(pid, 9)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

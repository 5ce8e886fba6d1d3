"""Copy the rollouts ``make_fixture.sh`` wrote into the fixture folder, with the scratch
paths rewritten to neutral ones (/home/user/project, /home/user/.codex, /home/user).
The rewrite is plain text replacement of path prefixes, which keeps every line valid JSON.

usage: python3 copy_fixture.py WORK DEST   (e.g. /tmp/codex-work ..)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(work: Path, dest: Path) -> None:
    rewrites = [(f"{work}/project", "/home/user/project"), (f"{work}/home", "/home/user/.codex"),
                (f"{work}/fakehome", "/home/user"), (str(work), "/home/user/work")]
    for rollout in sorted((work / "home" / "sessions").rglob("rollout-*.jsonl")):
        text = rollout.read_text(encoding="utf-8")
        for old, new in rewrites:
            text = text.replace(old, new)
        for line in text.splitlines():
            if line.strip():
                json.loads(line)  # still one JSON object a line
        (dest / rollout.name).write_text(text, encoding="utf-8")
        print(dest / rollout.name, len(text.encode()), "bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())

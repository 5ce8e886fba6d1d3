"""Copy the files ``make_fixture.sh`` had the CLI write in the project's temporary folder
(sessions, ``checkpoint-*.json``, ``logs.json``) into the fixture folder, with
the scratch paths rewritten to neutral ones (/home/user/project, /home/user) and the
``projectHash`` (sha256 of the project folder's path) recomputed for the rewritten path.
The rewrite is plain text replacement, which keeps every line valid JSON.

usage: python3 copy_fixture.py WORK DEST   (e.g. /tmp/gemini-work ..)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path


def main(work: Path, dest: Path) -> None:
    old_hash = hashlib.sha256(str(work / "project").encode()).hexdigest()
    new_hash = hashlib.sha256(b"/home/user/project").hexdigest()
    rewrites = [(f"{work}/project", "/home/user/project"), (f"{work}/fakehome", "/home/user"),
                (str(work), "/home/user/work"), (old_hash, new_hash)]
    gemini = work / "fakehome" / ".gemini"
    found = [p for p in (gemini / "tmp").rglob("*.json*") if p.name == "logs.json"
             or p.name.startswith(("session-", "checkpoint-"))]
    for session in sorted(found):
        text = session.read_text(encoding="utf-8")
        for old, new in rewrites:
            text = text.replace(old, new)
        if session.suffix == ".jsonl":
            for line in text.splitlines():
                if line.strip():
                    json.loads(line)  # still one JSON object a line
        else:
            json.loads(text)
        relative = str(session.relative_to(gemini))
        for old, new in rewrites:  # before 0.5x the project folder was named by its hash
            relative = relative.replace(old, new)
        out = dest / relative
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(out, len(text.encode()), "bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())

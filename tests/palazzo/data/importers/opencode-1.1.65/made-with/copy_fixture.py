"""Copy the storage an OpenCode run left under WORK into the fixture folder, with the scratch
paths rewritten to neutral ones (``WORK/project`` → ``/home/user/project``, any other
``WORK`` path → ``/home/user``). Only the JSON files OpenCode wrote are copied: ``session``,
``message``, ``part``, ``project``, ``session_diff`` and the ``migration`` marker; the
snapshot git store and logs next to ``storage`` are not (they hold no conversation).

Usage: python3 copy_fixture.py WORK FIXTURE_FOLDER
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

KEEP = ("session", "message", "part", "project", "session_diff", "migration")


def main(work: Path, fixture: Path) -> None:
    source = work / "data" / "opencode" / "storage"
    target = fixture / "opencode" / "storage"
    if target.exists():
        shutil.rmtree(target)
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        if not path.is_file() or rel.parts[0] not in KEEP:
            continue
        text = path.read_text(encoding="utf-8")
        # JSON strings: the paths appear both plain and inside file:// URLs
        text = text.replace(f"{work}/project", "/home/user/project")
        text = text.replace(str(work), "/home/user")
        out = target / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(out.relative_to(fixture))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())

"""A hook command that records what Claude Code sends: appended to LOGFILE as one JSON line,
the event's JSON as read from standard input and the transcript file as it stands then.

Usage (in settings.json, beside palazzo's own hook): python3 log_hook.py LOGFILE
Exit status 0, nothing on standard output (it adds nothing to the session).
"""

import json
import sys
from pathlib import Path

payload = json.loads(sys.stdin.read() or "{}")
path = payload.get("transcript_path")
text = Path(path).read_text(encoding="utf-8") if path and Path(path).is_file() else None
with open(sys.argv[1], "a", encoding="utf-8") as f:
    f.write(json.dumps({"payload": payload, "transcript": text}) + "\n")

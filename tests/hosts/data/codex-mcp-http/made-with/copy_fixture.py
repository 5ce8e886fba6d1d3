"""Copy what the logging proxy recorded into ``exchanges.jsonl`` beside this folder, each
exchange as the replay test reads it: the request as Codex sent it (its bearer token replaced
by ``<token>``, its ``Host`` left out: both differ in every run) and the answer's status,
whether it started a session, and its body (a ``tools/list`` answer as its tools' names only).

Usage: python3 copy_fixture.py WORK/exchanges.jsonl
"""

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "exchanges.jsonl"

lines = []
for line in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines():
    r = json.loads(line)
    q, a = r["request"], r["response"]
    headers = {k: ("Bearer <token>" if k.lower() == "authorization" else v)
               for k, v in q["headers"].items() if k.lower() != "host"}
    body = a["body"]
    try:
        reply = json.loads(body) if body else None
    except ValueError:
        reply = None
    if isinstance(reply, dict) and "tools" in (reply.get("result") or {}):
        reply["result"]["tools"] = [t["name"] for t in reply["result"]["tools"]]
    lines.append(json.dumps({
        "request": {"method": q["method"], "path": q["path"], "headers": headers,
                    "body": q["body"]},
        "response": {"status": a["status"],
                     "session": any(k.lower() == "mcp-session-id" for k in a["headers"]),
                     "reply": reply}}, ensure_ascii=False))
OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
print(f"{len(lines)} exchanges written to {OUT}")

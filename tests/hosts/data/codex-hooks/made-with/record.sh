#!/usr/bin/env bash
# Drive the real Codex CLI with palazzo's hooks installed by `palazzo hooks install codex`,
# against the scripted fake Responses API of the importer fixture
# (tests/palazzo/data/importers/codex-0.171.0/made-with/), and keep what the tests replay
# (tests/hosts/test_hooks_claude_code.py::test_the_real_codex_clis_hooks_replayed).
#
# Usage: record.sh WORKDIR OUTDIR PALAZZO
#   OUTDIR gets hooks.jsonl (every hook's input, and how long the rollout was then),
#   sessions/ (the rollout as it ended), wake-up-seen.json (the developer messages that
#   carried palazzo's wake-up context), palace.json, runs.txt, versions.txt
# Codex runs a hook only once the user trusted it; `codex exec` has no review, so the runs
# pass --dangerously-bypass-hook-trust (palazzo never writes that trust).
set -euo pipefail

VERSION=0.171.0
PORT=18765
WORK=$(realpath -m "$1")
OUT=$(realpath -m "$2")
PALAZZO=$(realpath "$3")
HERE=$(cd "$(dirname "$0")" && pwd)
MADE="$HERE/../../../../palazzo/data/importers/codex-0.171.0/made-with"
LOG_HOOK="$HERE/../../claude-code-hooks/made-with/log_hook.py"
mkdir -p "$WORK" "$OUT"
cd "$WORK"
[ -x node_modules/.bin/codex ] || npm install --save-exact "@openai/codex@$VERSION"
CODEX="$WORK/node_modules/.bin/codex"

rm -rf home project fakehome palace requests.log hooks.jsonl
mkdir -p home project fakehome
cp "$MADE/config.toml" home/config.toml
printf 'Buy milk.\nWater the plants.\n' > project/notes.txt
FAKE_LOG="$WORK/requests.log" python3 "$MADE/fake_responses_server.py" "$PORT" &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
export CODEX_HOME="$WORK/home" HOME="$WORK/fakehome" SCRIPTED_API_KEY=dummy-key

"$PALAZZO" init --palace "$WORK/palace" --embedder hash
"$PALAZZO" add --palace "$WORK/palace" --embedder hash --wing decisions --room storage \
  "We decided to keep the lantern notes in the attic."
python3 - "$LOG_HOOK" "$WORK/hooks.jsonl" <<'PY'
import json, shlex, sys
command = f"python3 {shlex.quote(sys.argv[1])} {shlex.quote(sys.argv[2])}"
events = ["SessionStart", "Stop", "SubagentStop", "PreCompact"]
hooks = {e: [{"hooks": [{"type": "command", "command": command}]}] for e in events}
open("home/hooks.json", "w").write(json.dumps({"hooks": hooks}, indent=2) + "\n")
PY
"$PALAZZO" hooks install codex --palace "$WORK/palace" --embedder hash

: > "$OUT/runs.txt"
run() {
  local rc=0
  (cd "$WORK/project" && timeout 120 "$CODEX" exec --skip-git-repo-check -s workspace-write \
     --dangerously-bypass-hook-trust "$@") > /dev/null 2>&1 || rc=$?
  echo "--- rc=$rc $*" | tee -a "$OUT/runs.txt"
}
run "Please look at the files in this folder."
run resume --last "Thanks. Now read notes.txt and tell me what it says."

python3 - "$WORK" "$OUT" <<'PY'
import glob, json, os, sys
work, out = sys.argv[1:3]
def neutral(text):
    return text.replace(f"{work}/project", "/home/user/project").replace(
        f"{work}/home", "/home/user/.codex").replace(work, "/home/user")
finals = {}
os.makedirs(f"{out}/sessions", exist_ok=True)
for f in glob.glob(f"{work}/home/sessions/**/rollout-*.jsonl", recursive=True):
    text = neutral(open(f, encoding="utf-8").read())
    finals[neutral(f)] = text
    open(f"{out}/sessions/{os.path.basename(f)}", "w", encoding="utf-8").write(text)
hooks = []
for line in open(f"{work}/hooks.jsonl", encoding="utf-8"):
    d = json.loads(line)
    payload = json.loads(neutral(json.dumps(d["payload"])))
    if d["transcript"] is not None:
        seen = neutral(d["transcript"])
        assert finals[payload["transcript_path"]].startswith(seen), "a rollout was rewritten"
        payload["_transcript_bytes"] = len(seen.encode("utf-8"))
    hooks.append(payload)
open(f"{out}/hooks.jsonl", "w", encoding="utf-8").write(
    "".join(json.dumps(h) + "\n" for h in hooks))
seen = []
for line in open(f"{work}/requests.log", encoding="utf-8"):
    body = json.loads(line).get("body") or {}
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("role") == "developer":
            for part in item.get("content") or []:
                text = part.get("text", "") if isinstance(part, dict) else ""
                if text.startswith("## Identity") and text not in seen:
                    seen.append(text)
open(f"{out}/wake-up-seen.json", "w", encoding="utf-8").write(json.dumps(seen, indent=1))
PY
"$PALAZZO" call list_drawers --palace "$WORK/palace" --embedder hash --args '{"limit": 1000}' \
  > "$OUT/palace.json"
sed -i -e "s#$WORK#/home/user#g" "$OUT/palace.json"
{ "$CODEX" --version; echo "palazzo $(git -C "$HERE" rev-parse --short HEAD)"; } > "$OUT/versions.txt"
find "$OUT" -type f | sort | xargs ls -l

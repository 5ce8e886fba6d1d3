#!/usr/bin/env bash
# Drive the real Claude Code CLI with palazzo's hooks installed by `palazzo hooks install`,
# against the scripted fake API of the importer fixture
# (tests/palazzo/data/importers/claude-code-2.1.332/made-with/fake_anthropic.py), and keep
# what the tests replay (tests/hosts/test_hooks_claude_code.py).
#
# Usage: record.sh WORKDIR OUTDIR PALAZZO
#   WORKDIR  scratch directory (node_modules/, home/, project/, palace/, requests.jsonl)
#   OUTDIR   this fixture's folder: hooks.jsonl (every hook's input and the transcript as it
#            stood), first-requests.jsonl (each session's first /v1/messages request's
#            messages), palace.json (the palace's drawers at the end), runs.txt
#   PALAZZO  the palazzo command (e.g. .venv/bin/palazzo)
# Needs npm and python3; no network but the npm registry (install).
set -euo pipefail

VERSION=2.1.332
WORK=$(realpath -m "$1")
OUT=$(realpath -m "$2")
PALAZZO=$(realpath "$3")
HERE=$(cd "$(dirname "$0")" && pwd)
FAKE="$HERE/../../../../palazzo/data/importers/claude-code-2.1.332/made-with/fake_anthropic.py"
mkdir -p "$WORK" "$OUT"
cd "$WORK"

if [ ! -x node_modules/.bin/claude ] || \
   [ "$(node_modules/.bin/claude --version | cut -d' ' -f1)" != "$VERSION" ]; then
  [ -f package.json ] || npm init -y >/dev/null
  npm install --no-audit --no-fund "@anthropic-ai/claude-code@$VERSION"
fi
CLAUDE="$WORK/node_modules/.bin/claude"

rm -rf home project palace broken requests.jsonl port hooks.jsonl
mkdir -p home project
printf 'Palace notes\nhall: greetings\nlibrary: books to read\nkitchen: recipes\n' \
  > project/notes.txt

python3 "$FAKE" "$WORK/port" "$WORK/requests.jsonl" &
SERVER=$!
trap 'kill "$SERVER"' EXIT
for _ in $(seq 50); do [ -s port ] && break; sleep 0.1; done
PORT=$(cat port)

export HOME="$WORK/home"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT"
export ANTHROPIC_API_KEY=dummy
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_BUG_COMMAND=1
export CLAUDE_CODE_ENABLE_TELEMETRY=0

# The palace, with one note the wake-up context will name.
"$PALAZZO" init --palace "$WORK/palace" --embedder hash
"$PALAZZO" add --palace "$WORK/palace" --embedder hash --wing decisions --room storage \
  "We decided to keep the lantern notes in the attic."

# A recording hook first (a hook the user had), then palazzo's, merged beside it.
mkdir -p home/.claude
python3 - "$HERE/log_hook.py" "$WORK/hooks.jsonl" <<'PY'
import json, shlex, sys
command = f"python3 {shlex.quote(sys.argv[1])} {shlex.quote(sys.argv[2])}"
events = ["SessionStart", "Stop", "SubagentStop", "PreCompact", "SessionEnd"]
settings = {"hooks": {e: [{"hooks": [{"type": "command", "command": command}]}]
                      for e in events}}
open("home/.claude/settings.json", "w").write(json.dumps(settings, indent=2) + "\n")
PY
"$PALAZZO" hooks install claude-code --palace "$WORK/palace" --embedder hash

run() {  # run [options] PROMPT: the CLI in the project dir; the fake API answers by script
  local rc=0
  (cd "$WORK/project" && timeout 120 "$CLAUDE" -p "${@:1:$#-1}" \
     --tools Read,Bash --allowedTools Read,Bash \
     --system-prompt-snapshot off -- "${@: -1}") || rc=$?
  echo "--- rc=$rc $*" | tee -a "$OUT/runs.txt"
}

: > "$OUT/runs.txt"
S1=3f1c2a10-5b8e-4f61-9c2d-0a1b2c3d4e51
S2=b4e7f0c4-1d9a-4c3e-8f5b-6a7b8c9d0e52
S3=c5e7f0c4-1d9a-4c3e-8f5b-6a7b8c9d0e53
# Session 1: three turns, then a /compact and one more resume that says nothing new.
run --session-id "$S1" "Hello! What is a memory palace?"
run --resume "$S1" "Please read notes.txt and summarise it."
run --resume "$S1" "Now list the files here with Bash."
run --resume "$S1" "/compact"
run --resume "$S1" "Thanks, just say noted."
# Session 2: a new session (its first request should carry the wake-up context).
run --session-id "$S2" "Where do we keep the lantern notes?"
# Session 3: the palace broken (its snapshot damaged): the session must still work.
cp -r "$WORK/palace" "$WORK/broken"
snap=$(ls "$WORK/broken"/snapshot-* | head -1)
printf 'XXXXXXXX' | dd of="$snap" bs=1 seek=40 conv=notrunc 2>/dev/null
sed -i "s#--palace $WORK/palace#--palace $WORK/broken#g" home/.claude/settings.json
run --session-id "$S3" "Thanks, just say noted."

# What the tests replay, paths made neutral (the scratch folder becomes /home/user): the
# session files as they ended (Claude Code only appends to them, so each hook's transcript is
# a prefix: its length in bytes is kept, and checked to be one), every hook's input, and the
# wake-up context each new session's first request carried.
python3 - "$WORK" "$OUT" <<'PY'
import glob, json, os, re, sys
work, out = sys.argv[1:3]
def neutral(text):
    text = text.replace(f"{work}/project", "/home/user/project").replace(
        f"{work}/home", "/home/user").replace(work, "/home/user")
    return text.replace(work.replace("/", "-"), "-home-user")  # the project's folder name
finals = {}
for f in glob.glob(f"{work}/home/.claude/projects/*/*.jsonl"):
    sid = os.path.basename(f)[:-6]
    finals[sid] = neutral(open(f, encoding="utf-8").read())
    os.makedirs(f"{out}/projects/-home-user-project", exist_ok=True)
    open(f"{out}/projects/-home-user-project/{sid}.jsonl", "w", encoding="utf-8").write(
        finals[sid])
hooks = []
for line in open(f"{work}/hooks.jsonl", encoding="utf-8"):
    d = json.loads(line)
    payload = json.loads(neutral(json.dumps(d["payload"])))
    if d["transcript"] is not None:
        seen = neutral(d["transcript"])
        assert finals[payload["session_id"]].startswith(seen), "a transcript was rewritten"
        payload["_transcript_bytes"] = len(seen.encode("utf-8"))
    hooks.append(payload)
open(f"{out}/hooks.jsonl", "w", encoding="utf-8").write(
    "".join(json.dumps(h) + "\n" for h in hooks))
seen = []
for line in open(f"{work}/requests.jsonl", encoding="utf-8"):
    r = json.loads(line)
    body = r.get("body") or {}
    if not r["path"].split("?")[0].endswith("/v1/messages") or not body.get("tools"):
        continue
    for m in body.get("messages", []):
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            text = b.get("text", "") if isinstance(b, dict) else ""
            if text.startswith("SessionStart hook additional context: ") and text not in seen:
                seen.append(neutral(text))
open(f"{out}/wake-up-seen.json", "w", encoding="utf-8").write(json.dumps(seen, indent=1))
PY
"$PALAZZO" call list_drawers --palace "$WORK/palace" --embedder hash --args '{"limit": 1000}' \
  > "$OUT/palace.json"
DASHED=$(echo "$WORK" | tr '/' '-')
sed -i -e "s#$WORK#/home/user#g" -e "s#$DASHED#-home-user#g" "$OUT/palace.json"
{ "$CLAUDE" --version; echo "palazzo $("$PALAZZO" --version 2>/dev/null || git -C "$HERE" rev-parse --short HEAD)"; } > "$OUT/versions.txt"
"$PALAZZO" status --palace "$WORK/broken" --embedder hash > "$OUT/broken-status.json" 2>/dev/null || true
sed -i -e "s#$WORK#/home/user#g" -e "s#$DASHED#-home-user#g" "$OUT/broken-status.json"
find "$OUT" -type f | sort | xargs ls -l

#!/usr/bin/env bash
# Remake the Gemini CLI session fixture: a real `gemini` (npm @google/gemini-cli, pinned)
# talking to the scripted fake Gemini API server in this folder. Session 1, headless: three
# turns, `gemini -p`, then `gemini --resume latest -p` twice. Session 2, interactive (typed
# through a pseudo-terminal by interactive.py): one prompt, `/chat save mytag`, `/quit`.
# The CLI writes under $WORK/fakehome/.gemini/tmp/<project>/ (chats/session-*.jsonl,
# checkpoint-mytag.json, logs.json); copy_fixture.py rewrites the paths and copies them
# next to this folder.
#   usage: WORK=/tmp/gemini-work bash make_fixture.sh
# VERSION=0.26.0 (with another WORK) remakes ../../gemini-cli-0.26.0, the older
# one-document session-*.json shape, from the same script.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${WORK:-/tmp/gemini-work}"
VERSION="${VERSION:-0.61.0}"
PORT="${PORT:-18931}"
CLI="$WORK/cli-$VERSION"
mkdir -p "$CLI"
if [ ! -x "$CLI/node_modules/.bin/gemini" ]; then
  # a package.json of its own, so npm installs here and not in a folder above
  (cd "$CLI" && echo '{}' > package.json && npm install --save-exact "@google/gemini-cli@$VERSION")
fi
cd "$WORK"
rm -rf fakehome project requests.log && mkdir -p fakehome/.gemini project
cp "$HERE/settings.json" fakehome/.gemini/settings.json
printf 'Buy milk.\nWater the plants.\n' > project/notes.txt
printf '# Project notes\n\nAnswer briefly. Never delete notes.txt.\n' > project/GEMINI.md
FAKE_LOG="$WORK/requests.log" python3 "$HERE/fake_gemini_server.py" "$PORT" &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
cd project
export HOME="$WORK/fakehome" GEMINI_API_KEY=dummy-key \
  GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" GEMINI_CLI_TRUST_WORKSPACE=true \
  GEMINI_TELEMETRY_ENABLED=false NO_COLOR=1
GEMINI="$CLI/node_modules/.bin/gemini"
"$GEMINI" --version
# --yolo: run_shell_command needs approval, which a headless run cannot give
"$GEMINI" --yolo -p "Please list the files in this folder."
sleep 1
"$GEMINI" --yolo --resume latest -p "Thanks. Now read notes.txt and tell me what it says."
sleep 1
"$GEMINI" --yolo --resume latest -p "Thank you, that is all."
sleep 1
# /chat save and logs.json exist only in interactive mode ("not supported in non-interactive")
TERM=xterm-256color python3 "$HERE/interactive.py" "$GEMINI" "$WORK/screen.log" \
  "Please read notes.txt for me." "/chat save mytag" "/quit"
find "$WORK/fakehome/.gemini" -type f | sort

#!/usr/bin/env bash
# Remake the Codex CLI rollout fixture: a real `codex` (npm @openai/codex, pinned) talking to
# the scripted fake Responses API server in this folder. Three turns: `codex exec`, then
# `codex exec resume --last` twice. Writes the rollout under $WORK/home/sessions;
# copy_fixture.py rewrites the paths and copies it next to this folder.
#   usage: WORK=/tmp/codex-work bash make_fixture.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${WORK:-/tmp/codex-work}"
VERSION=0.171.0
PORT=18765
mkdir -p "$WORK" && cd "$WORK"
[ -x node_modules/.bin/codex ] || npm install --save-exact "@openai/codex@$VERSION"
node_modules/.bin/codex --version
rm -rf home project fakehome requests.log && mkdir -p home project fakehome
cp "$HERE/config.toml" home/config.toml
printf 'Buy milk.\nWater the plants.\n' > project/notes.txt
printf '# Project notes\n\nAnswer briefly. Never delete notes.txt.\n' > project/AGENTS.md
FAKE_LOG="$WORK/requests.log" python3 "$HERE/fake_responses_server.py" "$PORT" &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
cd project
export CODEX_HOME="$WORK/home" HOME="$WORK/fakehome" SCRIPTED_API_KEY=dummy-key
# workspace-write: the sandbox lets `ls`/`cat` run without asking (exec never asks anyway)
../node_modules/.bin/codex exec --skip-git-repo-check -s workspace-write \
  "Please look at the files in this folder."
../node_modules/.bin/codex exec --skip-git-repo-check -s workspace-write resume --last \
  "Thanks. Now read notes.txt and tell me what it says."
../node_modules/.bin/codex exec --skip-git-repo-check -s workspace-write resume --last \
  "Thank you, that is all."
find "$WORK/home/sessions" -name 'rollout-*.jsonl'

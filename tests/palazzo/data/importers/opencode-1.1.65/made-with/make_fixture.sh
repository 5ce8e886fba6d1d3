#!/usr/bin/env bash
# Remake the OpenCode 1.1 JSON-storage fixture: a real `opencode` (npm opencode-ai, pinned)
# talking to the scripted fake chat completions server in this folder. Three turns:
# `opencode run`, then `opencode run --continue` twice (the first of them attaching
# notes.txt with --file). Writes the storage under $WORK/data/opencode/storage;
# copy_fixture.py rewrites the paths and copies it here.
#   usage: WORK=/tmp/opencode-work bash make_fixture.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${WORK:-/tmp/opencode-work}"
VERSION=1.1.65
PORT=18791
mkdir -p "$WORK" && cd "$WORK"
[ -f package.json ] || npm init -y >/dev/null  # else npm installs into a parent folder
[ -x node_modules/.bin/opencode ] || npm install --save-exact "opencode-ai@$VERSION"
OPENCODE="$WORK/node_modules/.bin/opencode"
"$OPENCODE" --version
rm -rf home data config cache state project requests.log
mkdir -p home data config/opencode cache state project
cp "$HERE/opencode.json" config/opencode/opencode.json
printf 'Buy milk.\nWater the plants.\n' > project/notes.txt
( cd project && git init -q && git add notes.txt \
  && git -c user.name=user -c user.email=user@example.com commit -qm notes )
FAKE_LOG="$WORK/requests.log" FAKE_PROJECT="$WORK/project" \
  python3 "$HERE/fake_chat_server.py" "$PORT" &
SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
cd project
export HOME="$WORK/home" XDG_DATA_HOME="$WORK/data" XDG_CONFIG_HOME="$WORK/config" \
  XDG_CACHE_HOME="$WORK/cache" XDG_STATE_HOME="$WORK/state" \
  OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
  OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1
"$OPENCODE" run "Hello! Please read notes.txt and tell me what it says."
"$OPENCODE" run --continue "Please summarise the attached file in one line." --file notes.txt
"$OPENCODE" run --continue "Thanks, that is all."
find "$WORK/data/opencode/storage" -type f | sort

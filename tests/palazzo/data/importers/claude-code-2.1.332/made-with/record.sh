#!/usr/bin/env bash
# Record Claude Code session files against the scripted fake API (fake_anthropic.py).
#
# Usage: record.sh WORKDIR OUTDIR
#   WORKDIR  scratch directory (gets node_modules/, home/, project/, requests.jsonl)
#   OUTDIR   the fixture folder: the session files go to OUTDIR/projects/, paths made neutral
# Needs npm and python3; talks to no network but the npm registry (install). Made with node
# 20.20.2 and npm 11.19.1: npm warns the package wants node >= 22, but `claude` is a native
# binary that does not run on node.
set -euo pipefail

VERSION=2.1.332
WORK=$(realpath -m "$1")
OUT=$(realpath -m "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" "$OUT"
cd "$WORK"

if [ ! -x node_modules/.bin/claude ] || \
   [ "$(node_modules/.bin/claude --version | cut -d' ' -f1)" != "$VERSION" ]; then
  [ -f package.json ] || npm init -y >/dev/null
  npm install --no-audit --no-fund "@anthropic-ai/claude-code@$VERSION"
fi
CLAUDE="$WORK/node_modules/.bin/claude"

rm -rf home project requests.jsonl port
mkdir -p home project
printf 'Palace notes\nhall: greetings\nlibrary: books to read\nkitchen: recipes\n' \
  > project/notes.txt
printf 'print("hello")\n' > project/hello.py

python3 "$HERE/fake_anthropic.py" "$WORK/port" "$WORK/requests.jsonl" &
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

run() {  # run [options] PROMPT: the CLI in the project dir; the fake API answers by script
  local rc=0
  (cd "$WORK/project" && timeout 120 "$CLAUDE" -p "${@:1:$#-1}" \
     --tools Read,Bash,Agent --allowedTools Read,Bash,Agent \
     --disable-slash-commands --system-prompt-snapshot off -- "${@: -1}") || rc=$?
  echo "--- rc=$rc"
}

# Fixed session ids, so the file names do not change from one recording to the next.
S1=7d3c2a10-5b8e-4f61-9c2d-0a1b2c3d4e5f
S2=e2b7f0c4-1d9a-4c3e-8f5b-6a7b8c9d0e1f
# Session 1: four turns in one session (--continue, then --resume), with a thinking block,
# the Read and Bash tools and a subagent (the Agent tool: its own file under subagents/).
run --session-id "$S1" "Hello! What is a memory palace?"
run --continue "Please read notes.txt and summarise it."
run --resume "$S1" "Now list the files here with Bash."
run --resume "$S1" "Ask a subagent to count the words in notes.txt."
# Session 2: a separate one-turn session with a name (-n: a custom-title line).
run --session-id "$S2" -n "Quick check" "Thanks, just say noted."

# Copy the session files (and the subagents' .meta.json), paths made neutral: the scratch
# project and home become /home/user/project and /home/user, also in the dashed form
# Claude Code names a project's folder by.
SRC="$HOME/.claude/projects"
DASHED=$(echo "$WORK/project" | tr '/.' '--')
rm -rf "$OUT/projects"
(cd "$SRC" && find . -name '*.jsonl' -o -name '*.meta.json') | while read -r f; do
  dest="$OUT/projects/$(echo "${f#./}" | sed "s#^[^/]*#-home-user-project#")"
  mkdir -p "$(dirname "$dest")"
  sed -e "s#$WORK/project#/home/user/project#g" -e "s#$WORK/home#/home/user#g" \
      -e "s#$WORK#/home/user#g" -e "s#$DASHED#-home-user-project#g" "$SRC/$f" > "$dest"
done
find "$OUT/projects" -type f | sort | xargs ls -l

#!/usr/bin/env bash
# Remake the recording: a real `codex` (npm @openai/codex, pinned) with the scripted model
# uses palazzo's MCP tools over Streamable HTTP, with a token, through a logging proxy.
#   usage: WORK=/tmp/codex-mcp bash make.sh    (from a palazzo checkout with .venv built)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../../.." && pwd)"
WORK="${WORK:-/tmp/codex-mcp}"
VERSION=0.171.0
mkdir -p "$WORK" && cd "$WORK"
[ -x node_modules/.bin/codex ] || npm install --save-exact "@openai/codex@$VERSION"
node_modules/.bin/codex --version
rm -rf home project fakehome palace model.log exchanges.jsonl && mkdir -p home project fakehome
cp "$HERE/config.toml" home/config.toml
PZ="$REPO/.venv/bin/python -m palazzo"
export PYTHONPATH="$REPO/py"
$PZ init --palace palace --embedder hash >/dev/null
TOKEN=$($PZ token create --palace palace --embedder hash --scope write --name codex)
$PZ serve --palace palace --embedder hash --port 18768 --tokens 2>serve.log &
SERVE=$!
FAKE_LOG="$WORK/model.log" python3 "$HERE/fake_responses_server.py" 18765 &
MODEL=$!
python3 "$HERE/logging_proxy.py" 18767 18768 "$WORK/exchanges.jsonl" &
PROXY=$!
trap 'kill $SERVE $MODEL $PROXY' EXIT
sleep 3
cd project
export CODEX_HOME="$WORK/home" HOME="$WORK/fakehome" SCRIPTED_API_KEY=dummy-key \
  PALAZZO_TOKEN="$TOKEN"
../node_modules/.bin/codex exec --skip-git-repo-check \
  "Remember: the staging database moved to port 5433 on Tuesday."
../node_modules/.bin/codex exec --skip-git-repo-check "Recall: staging database port"
cd ..
$PZ search "staging database" --palace palace --embedder hash --limit 3
wc -l exchanges.jsonl

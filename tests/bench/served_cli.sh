#!/usr/bin/env bash
# A command's wall time on a 20k-drawer palace, opening its files and through a running
# palazzo serve (found by its .server.json): five `palazzo add`, three `palazzo search` each.
#   usage: bash tests/bench/served_cli.sh PALACE   (a palace made by import-chats of the scale
#   generator's export: see docs/server.md)
cd /work/main
export PYTHONPATH=py
P="$1"
t() { local s=$(date +%s.%N); "$@" > /dev/null 2>&1; local e=$(date +%s.%N); echo "$e - $s" | bc; }
echo "files:"; for i in 1 2 3 4 5; do t .venv/bin/python -m palazzo add --palace $P --embedder hash --wing w --room r "files $i $RANDOM"; done
.venv/bin/python -m palazzo serve --palace $P --embedder hash --port 18891 2>/dev/null &
S=$!; sleep 4
echo "server:"; for i in 1 2 3 4 5; do t .venv/bin/python -m palazzo add --palace $P --embedder hash --wing w --room r "served $i $RANDOM"; done
echo "search server:"; for i in 1 2 3; do t .venv/bin/python -m palazzo search "garden kettle" --palace $P --embedder hash; done
kill $S; wait $S 2>/dev/null
echo "search files:"; for i in 1 2 3; do t .venv/bin/python -m palazzo search "garden kettle" --palace $P --embedder hash; done

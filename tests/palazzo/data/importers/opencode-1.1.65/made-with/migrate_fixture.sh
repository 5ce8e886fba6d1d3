#!/usr/bin/env bash
# Let the real OpenCode 1.2.1 (npm opencode-ai@1.2.1, the first to keep sessions in SQLite)
# migrate the fixture's JSON storage into its opencode.db, and keep that database next to it
# as migrated-1.2.1/opencode.db (checkpointed and compacted, 1 KB pages, by sqlite3's VACUUM
# INTO: the rows are OpenCode's). OpenCode migrates on start-up: `opencode session list`
# is the run.
#   usage: WORK=/tmp/opencode-work bash migrate_fixture.sh   (after copy_fixture.py)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
FIXTURE="$(dirname "$HERE")"
WORK="${WORK:-/tmp/opencode-work}"
VERSION=1.2.1
mkdir -p "$WORK/v12" && cd "$WORK/v12"
[ -f package.json ] || npm init -y >/dev/null  # else npm installs into a parent folder
[ -x node_modules/.bin/opencode ] || npm install --save-exact "opencode-ai@$VERSION"
OPENCODE="$WORK/v12/node_modules/.bin/opencode"
"$OPENCODE" --version
M="$WORK/mig"
rm -rf "$M" && mkdir -p "$M/home" "$M/data/opencode" "$M/config/opencode" "$M/cache" "$M/state"
cp -r "$FIXTURE/opencode/storage" "$M/data/opencode/storage"
cp "$HERE/opencode.json" "$M/config/opencode/opencode.json"
cd "$M"
HOME="$M/home" XDG_DATA_HOME="$M/data" XDG_CONFIG_HOME="$M/config" XDG_CACHE_HOME="$M/cache" \
  XDG_STATE_HOME="$M/state" OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
  "$OPENCODE" session list
mkdir -p "$FIXTURE/migrated-1.2.1" && rm -f "$FIXTURE/migrated-1.2.1/opencode.db"
python3 - "$M/data/opencode/opencode.db" "$FIXTURE/migrated-1.2.1/opencode.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA page_size = 1024")  # small pages: 42 KB instead of 118 KB
db.execute("VACUUM INTO ?", (sys.argv[2],))
PY
ls -l "$FIXTURE/migrated-1.2.1/opencode.db"

#!/bin/sh
# Step 4 of the README: add conversation drawers carrying ``authored_at`` to the palace of
# steps 1-3, with the real ``mempalace mine --mode convos`` (mempalace 3.11.0, own venv).
# The palace is laid out as MemPalace 3.11 does by default on a fresh home (XDG):
# ~/.config/mempalace/palace; HOME points at a scratch folder, so no real home is touched.
set -e
W=/tmp/mp-work/ext
mkdir -p "$W/home/.config/mempalace/palace" "$W/home/.mempalace"
cp chroma.sqlite3 "$W/home/.config/mempalace/palace/"      # the palace of steps 1-3
mkdir -p "$W/convos" && cp made-with/convos/*.jsonl "$W/convos/"  # one Claude Code session
python made-with/fake_embed.py & EMBED=$!
sleep 1
HOME="$W/home" MEMPALACE_EMBEDDING_MODEL=openai-compat \
  MEMPALACE_EMBEDDING_API_URL=http://127.0.0.1:18765 MEMPALACE_EMBEDDING_API_MODEL=fake-hash \
  mempalace mine "$W/convos" --mode convos --wing chats
kill $EMBED
cp "$W/home/.config/mempalace/palace/chroma.sqlite3" chroma.sqlite3

"""Write the palace directory ``palace-79b8256/`` and its export ``palace-79b8256.json`` with
palazzo as it was at commit 79b8256 (before the package was laid out in subpackages), so a
test can hold that palaces written then keep opening.

Run from a checkout of that commit (kept here exactly as it was run):

    git archive 79b8256 py | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/py python tests/palazzo/data/formats/make_palace_79b8256.py
"""

import json
import shutil
from pathlib import Path

from palazzo.embed.hashing import HashEmbedder
from palazzo.palace import Palace
from palazzo.palacefile import export_palace
from palazzo.persistence import PalaceStore
from palazzo.storage import DirectorySpace

HERE = Path(__file__).parent
OUT = HERE / "palace-79b8256"
tick = iter(range(1_700_000_000, 1_700_100_000))


def make(**kw):
    return Palace(embedder=HashEmbedder(dim=16), **kw)


shutil.rmtree(OUT, ignore_errors=True)
OUT.mkdir()
store = PalaceStore(DirectorySpace(OUT), make, clock=lambda: float(next(tick)))
call = store.call
# In the snapshot:
call("add_room", {"wing": "garden", "name": "roses", "description": "the rose beds"})
for text in ("Prune roses in late winter.", "Feed roses after the first flush.",
             "Deadhead the climbers weekly in June."):
    call("add_drawer", {"wing": "garden", "room": "roses", "content": text,
                        "source": "notes"})
call("add_drawer", {"wing": "kitchen", "room": "bread", "content": "Rye starter: feed daily.",
                    "key": "bread.md#0"})
call("kg_add", {"subject": "Alice", "predicate": "grows", "object": "roses",
                "valid_from": "2024-03-01"})
store.compact()
# In the journal, replayed on open:
call("add_drawer", {"wing": "garden", "room": "tools", "content": "Sharpen the secateurs."})
hit = call("search", {"query": "prune roses", "limit": 1})["results"][0]["drawer_id"]
call("update_drawer", {"drawer_id": hit, "content": "Prune roses in late winter, before buds."})
call("pheromone_deposit", {"drawer_ids": [hit], "reward": 1.0})
turn = call("add_turn", {"conversation": "chat", "role": "user",
                         "content": "When do I prune?"})["turn"]["id"]
bundle = call("slice_context", {"anchor": turn})["bundle"]  # makes the signing key (keys.json)
call("diary_write", {"agent": "Guide", "text": "Showed Alice the rose beds.", "topic": "tour"})
call("kg_invalidate", {"subject": "Alice", "predicate": "grows", "object": "roses",
                       "ended": "2025-01-01"})
call("add_agent", {"name": "Scout", "archetype": "explorer", "focus": "garden"})
doc = export_palace(store.palace, vectors=None, exported_at=0.0)
(HERE / "palace-79b8256.json").write_text(json.dumps({"export": doc, "bundle": bundle},
                                                      sort_keys=True, indent=1) + "\n")
for lock in OUT.glob("*.lock"):
    lock.unlink()
print(sorted(p.name for p in OUT.iterdir()), store.status)

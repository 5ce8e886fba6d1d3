"""Palaces written by earlier versions keep opening: a palace directory (snapshot, journal,
signing keys) made by palazzo at commit 79b8256, before the package was laid out in
subpackages, opens to exactly the palace that version exported, and its signed slice still
verifies. How the files were made: ``tests/palazzo/data/formats/make_palace_79b8256.py``."""

import json
from pathlib import Path

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.formats import snapshot
from palazzo.formats.palacefile import export_palace
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import MemorySpace

DATA = Path(__file__).parents[1] / "data" / "formats"
EXPECTED = json.loads((DATA / "palace-79b8256.json").read_text())


def opened():
    space = MemorySpace()
    for path in sorted((DATA / "palace-79b8256").iterdir()):
        space.write(path.name, path.read_bytes())
    return PalaceStore(space, lambda **kw: Palace(embedder=HashEmbedder(dim=16), **kw),
                       clock=lambda: 1_800_000_000.0)


def test_a_palace_of_79b8256_opens_to_the_palace_it_exported():
    store = opened()
    assert store.status.problem is None and not store.status.read_only
    assert store.status.replayed == 7  # the journaled operations, by their unchanged names
    assert export_palace(store.palace, vectors=None, exported_at=0.0) == EXPECTED["export"]


def test_its_signed_slice_still_verifies_and_it_takes_new_writes():
    store = opened()
    assert store.call("verify_token", {"bundle": EXPECTED["bundle"]})["valid"] is True
    store.call("add_drawer", {"wing": "garden", "room": "roses", "content": "Mulch in May."})
    hits = call(store.palace, "search", {"query": "mulch", "limit": 1})["results"]
    assert hits[0]["content"] == "Mulch in May."


def test_its_next_compaction_writes_the_columnar_snapshot_which_opens_the_same():
    store = opened()
    store.compact()
    name = f"snapshot-{store.status.generation:08d}.pz"
    assert snapshot.is_snapshot(store.space.read(name))
    again = PalaceStore(store.space, lambda **kw: Palace(embedder=HashEmbedder(dim=16), **kw))
    assert export_palace(again.palace, vectors=None, exported_at=0.0) == EXPECTED["export"]


def test_a_version_1_columnar_snapshot_opens_to_the_same_palace():
    """``palace-4200040``: the palace above, opened and compacted by palazzo at commit
    4200040, whose columnar snapshot (version 1) held the knowledge graph, conversations,
    provenance and diaries in its header; version 2 holds them as byte arrays."""
    space = MemorySpace()
    for path in sorted((DATA / "palace-4200040").iterdir()):
        space.write(path.name, path.read_bytes())
    meta, _ = snapshot.unpack(space.read("snapshot-00000003.pz"))
    assert "conversations" in meta  # it is a version 1 file
    store = PalaceStore(space, lambda **kw: Palace(embedder=HashEmbedder(dim=16), **kw))
    assert store.status.problem is None and not store.status.read_only
    assert export_palace(store.palace, vectors=None, exported_at=0.0) == EXPECTED["export"]
    assert store.call("verify_token", {"bundle": EXPECTED["bundle"]})["valid"] is True
    store.compact()  # written again as version 2, the same palace
    again = PalaceStore(space, lambda **kw: Palace(embedder=HashEmbedder(dim=16), **kw))
    meta, arrays = snapshot.unpack(space.read(f"snapshot-{again.status.generation:08d}.pz"))
    assert "conversations" not in meta and "s.conversations" in arrays
    assert export_palace(again.palace, vectors=None, exported_at=0.0) == EXPECTED["export"]

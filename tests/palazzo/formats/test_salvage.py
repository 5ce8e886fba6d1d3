"""A palace rebuilt around its snapshot's damaged pages: one page of each array damaged in
turn, what comes back is the palace minus exactly what that page held — drawers lost only
when their own bytes were hit, derived data made again, nothing invented."""

import numpy as np
import pytest

from palazzo import call
from palazzo.errors import SnapshotDamaged
from palazzo.formats import salvage, snapshot

from .test_snapshot import make, rich_palace

PALACE = rich_palace()
DATA = bytes(snapshot.write_snapshot(PALACE))
OPENED = snapshot.open_snapshot(bytearray(DATA))
DERIVED = ("d.vectors", "d.has_vector", "c.", "t.", "n.")


def texts(palace):
    s = palace.drawers
    return {s.ids[int(r)]: s.content[int(r)] for r in s.live_rows()}


def _where(name):
    """Return the absolute byte offset of array ``name`` in DATA."""
    head_len = snapshot.PREFIX.unpack_from(DATA)[1]
    for k, (_, _, offset, nbytes) in _table().items():
        if k == name:
            return snapshot.PREFIX.size + head_len + offset, nbytes
    raise KeyError(name)


def _table():
    import json
    head_len = snapshot.PREFIX.unpack_from(DATA)[1]
    return json.loads(DATA[snapshot.PREFIX.size:snapshot.PREFIX.size + head_len])["arrays"]


def _damaged(at):
    bad = bytearray(DATA)
    bad[at] ^= 0x21
    with pytest.raises(SnapshotDamaged) as caught:
        snapshot.open_snapshot(bad)
    return caught.value.partial


ORIGINAL = texts(PALACE)
ARRAYS = [name for name, (_, _, _, nbytes) in _table().items() if nbytes]


@pytest.mark.parametrize("name", ARRAYS)
def test_a_damaged_page_of_any_array_costs_only_what_it_held(name):
    start, nbytes = _where(name)
    partial = _damaged(start + nbytes // 2)
    assert name in partial.bad
    palace, report = salvage.salvage(partial, make)
    got = texts(palace)
    assert all(ORIGINAL[i] == t for i, t in got.items())  # nothing changed or invented
    lost = set(ORIGINAL) - set(got)
    assert len(lost) == report["drawers_lost_count"]
    if name.startswith(DERIVED) or name.startswith("e.") or name.startswith("s."):
        assert not lost, name  # derived data, links and sections never cost a drawer
    call(palace, "search", {"query": "pears orchard", "limit": 3})  # it answers
    call(palace, "palace_status")
    if name.startswith("s."):
        assert report["sections_lost"] == [name[2:]]


def test_a_damaged_page_of_texts_loses_exactly_the_drawers_it_held():
    start, nbytes = _where("d.content.block")
    partial = _damaged(start + 10)  # the first page of the texts
    palace, report = salvage.salvage(partial, make)
    off = OPENED.arrays["d.content.offsets"]
    alive = OPENED.arrays["d.alive"]
    ids = [PALACE.drawers.ids[r] for r in range(len(alive))]
    expected = {ids[r] for r in range(len(alive)) if alive[r] and int(off[r]) < 4096 and
                int(off[r + 1]) > 0}
    assert set(ORIGINAL) - set(texts(palace)) == expected and expected
    assert sorted(report["drawers_lost"]) == sorted(expected)
    hits = call(palace, "search", {"query": "pears", "mode": "bm25"})["results"]
    assert all(h["drawer_id"] not in expected for h in hits)  # the word index was rebuilt


def test_vectors_hit_are_dropped_and_made_again_not_kept_wrong():
    start, nbytes = _where("d.vectors")
    partial = _damaged(start + 5)
    palace, report = salvage.salvage(partial, make)
    assert report["vectors_dropped"] >= 1 and not report["drawers_lost"]
    assert not palace.drawers.has_vector[0]
    assert np.isfinite(palace.drawers.vectors[: palace.drawers.size]).all()


def test_the_first_bytes_damaged_lose_nothing():
    partial = _damaged(0)
    assert partial.prefix and not partial.bad
    palace, report = salvage.salvage(partial, make)
    assert texts(palace) == ORIGINAL and report["drawers_lost_count"] == 0


def test_a_damaged_header_cannot_be_salvaged():
    bad = bytearray(DATA)
    bad[snapshot.PREFIX.size + 5] ^= 0x01
    with pytest.raises(SnapshotDamaged) as caught:
        snapshot.open_snapshot(bad)
    assert caught.value.partial is None

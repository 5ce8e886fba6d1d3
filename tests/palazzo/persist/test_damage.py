"""The damage table of the issue "Damage is never silent", as a test: a 52-drawer palace (12
journal records on a snapshot of 40 drawers, the previous generation kept), one damage at a
time; each opens read-only with a one-line reason, refuses writes, and after a repair has
lost only the drawers whose own bytes were damaged."""

import pytest

from palazzo.bench import damage
from palazzo.errors import PalaceDamaged
from palazzo.persist import journal
from palazzo.persist.palacestore import KEYS, PalaceStore, journal_name, snapshot_name
from palazzo.persist.storage import MemorySpace

REF = damage.reference()
GEN = REF.current
JOURNAL = journal_name(GEN)
SNAPSHOT = snapshot_name(GEN)
SPANS = REF.records[JOURNAL]


def test_the_reference_palace_is_the_issues():
    assert len(REF.texts) == 52 and len(SPANS) == 12
    store = PalaceStore(_space(REF.files), damage.make)
    assert store.status.replayed == 12 and not store.status.damaged
    assert {snapshot_name(GEN - 1), journal_name(GEN - 1)} <= set(REF.files)  # kept


def _space(files):
    space = MemorySpace()
    for name, data in files.items():
        space.write(name, data)
    return space


def _flip(name, at):
    files = dict(REF.files)
    data = bytearray(files[name])
    data[at] ^= 0x5A
    files[name] = bytes(data)
    return files


def _journal(data):
    return {**REF.files, JOURNAL: data}


def _records(*order):
    data = REF.files[JOURNAL]
    return b"".join(data[SPANS[i][0]:SPANS[i][1]] for i in order)


def _zero_page(name, page):
    files = dict(REF.files)
    data = files[name]
    start = page * 4096 if page >= 0 else (len(data) - 1) // 4096 * 4096
    files[name] = data[:start] + bytes(min(4096, len(data) - start)) + data[start + 4096:]
    return files


CASES = {
    # damage: (files, drawers lost for good after the repair)
    "byte flipped in the payload of record 1 of 12": (_flip(JOURNAL, SPANS[0][0] + 20), 1),
    "byte flipped in the length of record 1 of 12": (_flip(JOURNAL, SPANS[0][0] + 3), 0),
    "byte flipped in record 6 of 12": (_flip(JOURNAL, SPANS[5][0] + 40), 1),
    "record 3 duplicated": (_journal(_records(0, 1, 2, 2, *range(3, 12))), 0),
    "records 4 and 5 swapped": (_journal(_records(0, 1, 2, 4, 3, *range(5, 12))), 0),
    "record 2 removed": (_journal(_records(0, *range(2, 12))), 1),
    "journal truncated to half": (_journal(REF.files[JOURNAL][:len(REF.files[JOURNAL]) // 2]),
                                  sum(b > len(REF.files[JOURNAL]) // 2 for _, b, _ in SPANS)),
    "snapshot: first byte flipped": (_flip(SNAPSHOT, 0), 0),
    "snapshot: a byte in the middle flipped": (_flip(SNAPSHOT, len(REF.files[SNAPSHOT]) // 2),
                                               0),
    "snapshot: a byte of the last page flipped": (_flip(SNAPSHOT, len(REF.files[SNAPSHOT]) - 9),
                                                  0),
    "snapshot: a 4 KiB page zeroed": (_zero_page(SNAPSHOT, 1), 0),
    "snapshot: its last page zeroed": (_zero_page(SNAPSHOT, -1), 0),
    "keys.json: a byte flipped": (_flip(KEYS, len(REF.files[KEYS]) // 2), 0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_damage_opens_read_only_says_why_and_repair_loses_only_the_damaged(name):
    files, lost = CASES[name]
    space = _space(files)
    store = PalaceStore(space, damage.make)
    st = store.status
    assert st.read_only and st.damaged, name
    assert st.problem and "\n" not in st.problem and "repair" in st.problem
    with pytest.raises(PalaceDamaged):
        store.call("add_drawer", {"wing": "w", "room": "r", "content": "refused"})
    assert {n: space.read(n) for n in space.names()} == files  # nothing written, nothing cut
    out = store.repair()
    assert out["repaired"] and not store.status.read_only
    again = PalaceStore(space, damage.make)
    assert not again.status.damaged and again.status.problem is None
    texts = damage._texts(again)
    assert texts <= set(REF.texts)  # nothing invented
    assert len(set(REF.texts) - texts) == lost, name
    for moved in out["moved"]:  # every damaged file is kept, byte for byte
        assert space.read(moved["to"]) == files[moved["file"]]
    again.call("add_drawer", {"wing": "w", "room": "r", "content": "after the repair"})
    assert "after the repair" in damage._texts(PalaceStore(space, damage.make))


def test_a_damaged_snapshot_falls_back_to_the_previous_generation_and_says_so():
    store = PalaceStore(_space(_flip(SNAPSHOT, 100)), damage.make)
    assert store.status.fallback == GEN - 1
    assert damage._texts(store) == set(REF.texts)  # everything, read-only
    assert SNAPSHOT in store.status.problem and "fell back to generation" in \
        store.status.problem


def test_damaged_keys_turn_signing_off_and_repair_keeps_the_keys_that_verify():
    store = PalaceStore(_space(_flip(KEYS, len(REF.files[KEYS]) // 2)), damage.make)
    assert not store.status.signing and store.status.read_only
    assert damage._texts(store) == set(REF.texts)  # the memory itself is whole
    store.repair()
    assert store.status.signing
    store.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
    turn = store.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
    bundle = store.call("slice_context", {"anchor": turn})["bundle"]
    again = PalaceStore(store.space, damage.make)
    assert again.call("verify_token", {"bundle": bundle})["valid"] is True


def test_a_record_that_no_longer_applies_is_listed_with_its_text_and_kept_beside():
    space = MemorySpace()
    store = PalaceStore(space, damage.make)
    did = store.call("add_drawer", {"wing": "w", "room": "r", "content": "first words"})[
        "drawer_id"]
    store.call("update_drawer", {"drawer_id": did, "content": "the words, edited"})
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "a later note"})
    name = journal_name(store.status.generation)
    found = journal.scan(space.read(name))
    data = space.read(name)
    space.write(name, data[found.ends[0]:])  # the add is gone: the edit has nothing to edit
    again = PalaceStore(space, damage.make)
    assert again.status.missing == [[found.records[0].seq, found.records[0].seq]]
    assert again.status.set_aside[0]["op"] == "update_drawer"
    assert again.status.set_aside[0]["text"] == "the words, edited"
    out = again.repair()
    assert out["set_aside"][0]["text"] == "the words, edited"
    kept = journal.scan(space.read(out["rejected"])).records
    assert [r.op for r in kept] == ["update_drawer"]
    assert damage._texts(again) == {"a later note"}


def test_a_journal_cut_at_a_record_boundary_is_kept_aside_and_its_records_named_missing():
    cut = SPANS[8][1]  # after record 9 of 12: whole records, only the tip knows
    files = _journal(REF.files[JOURNAL][:cut])
    space = _space(files)
    store = PalaceStore(space, damage.make)
    last = journal.scan(REF.files[JOURNAL]).records[-1].seq
    assert store.status.missing == [[last - 2, last]]
    report = PalaceStore(_space(files), damage.make, read_only=True).check()
    row = next(f for f in report["files"] if f["file"] == JOURNAL)
    assert not report["ok"] and not row["ok"] and "acknowledged" in row["found"]
    out = store.repair()
    assert {"file": JOURNAL, "to": f"damaged-{JOURNAL}"} in out["moved"]
    assert space.read(f"damaged-{JOURNAL}") == files[JOURNAL]
    assert out["missing"] == [[last - 2, last]]


def test_check_finds_a_healthy_palace_whole():
    report = PalaceStore(_space(REF.files), damage.make, read_only=True).check()
    assert report["ok"] and all(f["ok"] for f in report["files"])

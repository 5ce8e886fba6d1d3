import base64
import copy
import json

import numpy as np
import pytest

from palazzo import call
from palazzo.core.model import drawer_id
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ImportRejected
from palazzo.formats.palacefile import export_jsonl, export_palace
from palazzo.palace import MAX_CONTENT, Palace


def clock():
    return 1234.0


def sample() -> Palace:
    p = Palace(name="atrium", embedder=HashEmbedder(), clock=clock, similar_threshold=0.1)
    p.add_drawer("projects", "search", "BM25 over drawers as sparse algebra", source="notes")
    p.add_drawer("projects", "search", "RRF fuses the vector and keyword rankings")
    p.add_drawer("projects", "ui", "Panel renders from the worker", closet="boot")
    p.add_drawer("people", "search", "Ada asked about recall at five", importance=0.9)
    p.edges.columns["success"][0] = 0.25
    return p


def fresh() -> Palace:
    return Palace(embedder=HashEmbedder(), clock=clock)


def test_export_import_export_is_identical():
    doc = export_palace(sample(), exported_at=1.0)
    target = fresh()
    call(target, "import", {"document": copy.deepcopy(doc), "reindex": False, "take_name": True})
    assert export_palace(target, exported_at=1.0) == doc
    assert call(target, "palace_status")["embedded"] == 4  # vectors came from the file


def test_the_envelope_is_versioned_and_names_the_embedder():
    doc = export_palace(sample())
    assert doc["format"] == "palazzo" and doc["version"] == 2
    assert doc["palace"]["vectors"]["embedder"] == "hash"
    json.dumps(doc)


def test_float16_vectors_halve_the_size_and_stay_close():
    p = sample()
    d16 = export_palace(p, vectors="float16")
    d32 = export_palace(p, vectors="float32")
    assert len(d16["palace"]["vectors"]["data"]) < 0.6 * len(d32["palace"]["vectors"]["data"])
    q = fresh()
    call(q, "import", {"document": d16, "reindex": False})
    assert abs(q.drawers.vectors[:4] - p.drawers.vectors[:4]).max() < 1e-3


def test_import_without_vectors_reembeds():
    target = fresh()
    result = call(target, "import", {"document": export_palace(sample(), vectors=None)})
    assert result["embedded_now"] == 4


def test_jsonl_has_one_drawer_a_line():
    lines = export_jsonl(sample()).splitlines()
    assert len(lines) == 4
    assert {json.loads(line)["wing"] for line in lines} == {"projects", "people"}


def _rehome(drawer, room):
    """Move ``drawer`` to ``room`` keeping its id that of its text (so the room is wrong)."""
    drawer.update(room=room, id=drawer_id(drawer["content"], drawer["wing"], room))


def _corrupt(mutate):
    doc = export_palace(sample())
    mutate(doc)
    return doc


BAD = [
    (lambda d: d.update(format="other"), "not a palazzo palace file"),
    (lambda d: d.update(version=99), "version 99"),
    (lambda d: d["palace"]["drawers"][1].pop("content"), "palace.drawers[1].content is missing"),
    (lambda d: _rehome(d["palace"]["drawers"][0], "nowhere"), "palace.drawers[0]: no room"),
    (lambda d: d["palace"]["drawers"][2].update(importance=7), "drawers[2].importance"),
    (lambda d: d["palace"]["drawers"][0].update(content=" "), "content must not be empty"),
    (lambda d: d["palace"]["rooms"][0].update(wing="ghost"), "palace.rooms[0].wing"),
    (lambda d: d["palace"]["edges"][0].update(kind="TELEPORT"), "not an edge kind"),
    (lambda d: d["palace"]["edges"][0].update(dst="drawer_missing"), "no node 'drawer_missing'"),
    (lambda d: d["palace"]["vectors"].update(data="!!!"), "not valid base64"),
    (lambda d: d["palace"]["vectors"].update(
        data=base64.b64encode(b"\0" * 12).decode()), "expected 4×384×4"),
    (lambda d: d["palace"]["wings"].append(d["palace"]["wings"][0]), "duplicate names"),
    (lambda d: d["palace"].update(drawers="lots"), "palace.drawers must be a list"),
    (lambda d: d["palace"].update(trails=[{"terms": ["violin"], "drawers": {"x": "lots"}}]),
     "palace.trails[0].drawers['x'] must be a positive number"),
]


@pytest.mark.parametrize(("mutate", "message"), BAD)
def test_a_bad_file_is_refused_with_its_place_and_changes_nothing(mutate, message):
    target = sample()
    before = export_palace(target, exported_at=1.0)
    with pytest.raises(ImportRejected) as info:
        call(target, "import", {"document": _corrupt(mutate)})
    assert message in str(info.value)
    assert export_palace(target, exported_at=1.0) == before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "palazzo", "version": 1, "palace": {"na', "is it truncated?"),
        ("[" * 100_000 + "]" * 100_000, "nests deeper than 100 levels"),
        ("null", "file must be an object"),
        ("", "not valid JSON"),
        ('{"a": "' + "[" * 200 + '"}', "file.format"),  # brackets in strings are text
    ],
)
def test_truncated_or_hostile_text_is_refused(text, message):
    target = sample()
    before = export_palace(target, exported_at=1.0)
    with pytest.raises(ImportRejected) as info:
        call(target, "import", {"text": text})
    assert message in str(info.value)
    assert export_palace(target, exported_at=1.0) == before


LONG = " ".join(f"Sentence {i} is about topic {i % 7} and nothing else." for i in range(60))


def chunked() -> Palace:
    p = sample()
    p.add_drawer("projects", "notes", LONG)
    p.add_drawer("projects", "notes", LONG + " Plus one more remark about Lisbon.")
    return p


def test_chunk_vectors_round_trip_exactly():
    p = chunked()
    doc = export_palace(p, exported_at=1.0)
    chunks = doc["palace"]["chunk_vectors"]
    assert len(chunks["ids"]) == len(p.drawers.chunks) >= 6
    target = fresh()
    call(target, "import", {"document": copy.deepcopy(doc), "reindex": False, "take_name": True})
    assert export_palace(target, exported_at=1.0) == doc
    assert len(target.drawers.chunks) == len(p.drawers.chunks)
    query = {"query": "remark about Lisbon", "mode": "vector", "limit": 1}
    assert call(target, "search", query) == call(p, "search", query)


def test_event_sentences_keep_their_kind_through_a_file():
    p = sample()
    p.add_drawer("life", "notes", "Today I passed my driving test. My friend Sam moved to "
                 "Porto last week. Nothing else happened.")
    p.add_drawer("life", "notes", LONG + " Yesterday we planted the pear tree.")
    doc = export_palace(p, exported_at=1.0)
    kinds = doc["palace"]["chunk_vectors"]["kinds"]
    assert len(kinds) == len(doc["palace"]["chunk_vectors"]["ids"]) and "1" in kinds
    assert "2" in kinds and kinds.count("1") + kinds.count("2") == 3
    target = fresh()
    call(target, "import", {"document": copy.deepcopy(doc), "reindex": False, "take_name": True})
    assert export_palace(target, exported_at=1.0) == doc
    query = {"query": "What did I do when the driving test happened?", "enrich": 1}
    assert call(target, "search", query) == call(p, "search", query)
    # A file without kinds (written before event sentences) reads every chunk as a window.
    del doc["palace"]["chunk_vectors"]["kinds"]
    old = fresh()
    call(old, "import", {"document": doc, "reindex": False, "take_name": True})
    assert not old.drawers.chunks.kind.any() and not old.drawers.chunks.has_events()


def test_chunk_vectors_of_another_embedder_are_reembedded_on_import():
    doc = export_palace(chunked())
    other = Palace(embedder=HashEmbedder(dim=64), clock=clock)
    result = call(other, "import", {"document": doc})
    assert result["embedded_now"] == 6  # every drawer counts as missing, chunked ones too
    assert len(other.drawers.chunks.of_row) == 2
    assert other.drawers.chunks.vectors.shape[1] == 64


def _corrupt_chunks(mutate):
    doc = export_palace(chunked())
    mutate(doc["palace"])
    return doc


BAD_CHUNKS = [
    (lambda b: b["chunk_vectors"]["ids"].__setitem__(0, "drawer_nope"), "have a vector"),
    (lambda b: b["chunk_vectors"].update(ids=b["chunk_vectors"]["ids"][1:]), "bytes, expected"),
    (lambda b: b["chunk_vectors"].update(data="@@"), "not valid base64"),
    (lambda b: b["chunk_vectors"].update(
        data=base64.b64encode(b"\xff\xff\xff\x7f" * (len(b["chunk_vectors"]["ids"]) * 384))
        .decode()), "not finite"),
    (lambda b: b["chunk_vectors"]["ids"].append(b["chunk_vectors"]["ids"][0]),
     "consecutively"),
    (lambda b: b.update(vectors=None), "needs palace.vectors"),
    (lambda b: b["chunk_vectors"].update(kinds="4" * len(b["chunk_vectors"]["ids"])),
     "kinds must be one digit"),
    (lambda b: b["chunk_vectors"].update(kinds="3" * len(b["chunk_vectors"]["ids"])),
     "must be its drawer's only chunk"),
    (lambda b: b["chunk_vectors"].update(kinds="0"), "kinds must be one digit"),
    (lambda b: b["settings"].update(chunk_size=5), "chunk_size is out of range"),
]


@pytest.mark.parametrize(("mutate", "message"), BAD_CHUNKS)
def test_bad_chunk_vectors_are_refused(mutate, message):
    target = sample()
    before = export_palace(target, exported_at=1.0)
    with pytest.raises(ImportRejected) as info:
        call(target, "import", {"document": _corrupt_chunks(mutate)})
    assert message in str(info.value)
    assert export_palace(target, exported_at=1.0) == before


# -- everything a palace file holds is checked (issue 11) ---------------------------------------

def rich() -> Palace:
    """A palace with every section filled: facts, an agent's diary, a conversation, an edited
    drawer (so an alias) and a keyed drawer beside an identical unkeyed one."""
    p = sample()
    call(p, "kg_add", {"subject": "Ada", "predicate": "works_on", "object": "recall"})
    call(p, "diary_write", {"agent": "scout", "text": "found the BM25 notes", "topic": "search"})
    call(p, "add_turn", {"conversation": "chat", "role": "user", "content": "hello there"})
    p.add_drawer("projects", "search", "the launch is on friday")
    call(p, "bulk_replace", {"find": "friday", "replace": "monday"})
    p.add_drawer("projects", "files", "the same block", key="notes.md#0")
    p.add_drawer("projects", "files", "the same block", key="notes.md#1")
    return p


def test_every_section_round_trips_exactly():
    p = rich()
    doc = export_palace(p, exported_at=1.0)
    assert doc["palace"]["drawer_aliases"] and doc["palace"]["entities"]
    assert [d["key"] for d in doc["palace"]["drawers"] if "key" in d] == ["notes.md#0",
                                                                          "notes.md#1"]
    target = fresh()
    call(target, "import", {"document": copy.deepcopy(doc), "reindex": False, "take_name": True})
    assert export_palace(target, exported_at=1.0) == doc
    old = next(iter(doc["palace"]["drawer_aliases"]))
    drawer = call(target, "get_drawer", {"drawer_id": old})["drawer"]
    assert drawer["content"] == "the launch is on monday"
    # the old text can be added again: it is a drawer of its own
    assert target.add_drawer("projects", "search", "the launch is on friday")[1]


def _big_vector(d):
    v = d["palace"]["vectors"]
    m = np.frombuffer(base64.b64decode(v["data"]), "<f4").reshape(-1, v["dim"]).copy()
    m[1, 0] = 3e38
    v["data"] = base64.b64encode(m.tobytes()).decode()


def _zero_vector(d):
    v = d["palace"]["vectors"]
    m = np.frombuffer(base64.b64decode(v["data"]), "<f4").reshape(-1, v["dim"]).copy()
    m[2] = 0.0
    v["data"] = base64.b64encode(m.tobytes()).decode()


def _edge(d, kind, dst):
    return next(e for e in d["palace"]["edges"] if e["kind"] == kind and e["dst"] == dst)


def _drop_edge(d, kind, dst):
    d["palace"]["edges"].remove(_edge(d, kind, dst))


def _huge_drawer(d):
    _rehome(d["palace"]["drawers"][0], "search")
    d["palace"]["drawers"][0]["content"] = "x" * (MAX_CONTENT + 1)
    _rehome(d["palace"]["drawers"][0], "search")


DRAWER0 = "drawer_4251da8280f269ba40cd29d2"
RICH_BAD = [
    (lambda d: d["palace"]["closets"].append(d["palace"]["closets"][0]),
     "palace.closets has duplicates"),
    (lambda d: d["palace"]["entities"].append(d["palace"]["entities"][0]),
     "palace.entities has duplicate ids"),
    (lambda d: d["palace"]["agents"].append(d["palace"]["agents"][0]),
     "palace.agents has duplicate ids"),
    (lambda d: d["palace"]["edges"].append(next(
        e for e in d["palace"]["edges"] if e["kind"] == "HAS_DRAWER")), "a second HAS_DRAWER edge"),
    (lambda d: d["palace"]["drawers"][0].update(content="not what the id says"),
     "palace.drawers[0].id 'drawer_4251da8280f269ba40cd29d2' is not the id of its content"),
    (lambda d: _edge(d, "HAS_WING", "wing:projects").update(src="wing:projects",
                                                            dst="palace"),
     "is not one of the hierarchy"),
    (lambda d: _edge(d, "HAS_ROOM", "room:projects/ui").update(src="room:projects/ui"),
     "a HAS_ROOM edge from 'room:projects/ui' to 'room:projects/ui' is not one"),
    (lambda d: _edge(d, "HAS_DRAWER", DRAWER0).update(src="room:projects/ui"),
     "is not one of the hierarchy"),
    (lambda d: _drop_edge(d, "HAS_DRAWER", DRAWER0), f"{DRAWER0!r} has no HAS_DRAWER edge"),
    (lambda d: _drop_edge(d, "HAS_ROOM", "room:projects/ui"), "an orphan"),
    (_huge_drawer, "palace.drawers[0].content is longer than 5000000 characters"),
    (lambda d: d["palace"].update(name="n" * 50_000_000), "palace.name is longer than"),
    (lambda d: d["palace"].update(name="n" * 201), "palace name is longer than 200"),
    (lambda d: d["palace"].update(name="bad\nname"), "control characters"),
    (lambda d: d["palace"]["drawers"][1].update(exploitation=-1.0),
     "palace.drawers[1].exploitation is out of range"),
    (lambda d: d["palace"]["edges"][4].update(success=-0.5), "palace.edges[4].success"),
    (_big_vector, "palace.vectors.data row 1 has length"),
    (_zero_vector, "palace.vectors.data row 2 has length 0"),
    (lambda d: d["palace"]["diaries"][0].update(written_at=1e308),
     "palace.diaries[0].written_at"),
    (lambda d: d["palace"]["diaries"][0].update(written_at=10**400),
     "palace.diaries[0].written_at is an integer beyond float range"),
    (lambda d: d["palace"].update(created_at=10**400),
     "palace.created_at is an integer beyond float range"),
    (lambda d: d["palace"]["entities"][0]["properties"].update(x=[1.0, float("nan")]),
     "palace.entities[0].properties.x[1] is not a finite number (nan)"),
    (lambda d: d["palace"]["agents"][0]["state"].update(y=float("-inf")),
     "palace.agents[0].state.y is not a finite number"),
    (lambda d: d["palace"]["drawers"][2].update(source="\ud800"),
     "palace.drawers[2].source is not valid Unicode"),
    (lambda d: d["palace"].update(seed=2**70), "palace.seed must be an integer"),
    (lambda d: d["palace"]["drawers"][-1].update(key="k" * 1025),
     "palace.drawers[8].key is longer than 1024 characters"),
    (lambda d: d["palace"]["drawers"][0].update(key=""), "key must not be empty"),
    (lambda d: d["palace"]["drawer_aliases"].update(drawer_x="drawer_nowhere"),
     "palace.drawer_aliases['drawer_x'] must be the id of a drawer in the file"),
    (lambda d: d["palace"]["drawer_aliases"].update({DRAWER0: d["palace"]["drawers"][1]["id"]}),
     "is a drawer's own id, not an old one"),
    (lambda d: d["palace"]["vectors"].update(ids=[{"a": 1}] * 3), "list of drawer ids"),
]


@pytest.mark.parametrize(("mutate", "message"), RICH_BAD)
def test_a_file_with_inconsistent_sections_is_refused_and_changes_nothing(mutate, message):
    target = rich()
    before = export_palace(target, exported_at=1.0)
    doc = export_palace(rich())
    mutate(doc)
    with pytest.raises(ImportRejected) as info:
        call(target, "import", {"document": doc})
    assert message in str(info.value)
    assert export_palace(target, exported_at=1.0) == before


@pytest.mark.parametrize(
    ("number", "message"),
    [("1" + "0" * 400, "palace.created_at is an integer beyond float range"),
     ("1e400", "palace.created_at is not a finite number (inf)"),
     ("-1e400", "palace.created_at is not a finite number (-inf)"),
     ("NaN", "palace.created_at is not a finite number (nan)"),
     ("Infinity", "palace.created_at is not a finite number (inf)")],
)
def test_numbers_beyond_float_range_in_text_are_refused(number, message):
    text = json.dumps(export_palace(sample())).replace('"created_at": 1234.0', '"created_at": '
                                                       + number, 1)
    target = sample()
    with pytest.raises(ImportRejected) as info:
        call(target, "import", {"text": text})
    assert message in str(info.value)


def test_a_version_1_file_with_edited_drawers_gets_ids_of_their_text():
    """Before ids followed text, an edit kept the old id: such a file still reads, the drawer
    gets the id of its text and the old id becomes an alias (edges and vectors follow)."""
    p = sample()
    call(p, "diary_write", {"agent": "scout", "text": "first words", "topic": "search"})
    doc = export_palace(p, exported_at=1.0)
    doc["version"] = 1
    body = doc["palace"]
    del body["drawer_aliases"]
    diary = next(d for d in body["drawers"] if d["source"] == "diary")
    body["drawers"][0]["content"] = "edited in place"  # what update_drawer did then
    diary["content"] = "later words"
    twin = body["drawers"][1]  # edited to the text of drawer 1: both must survive
    body["drawers"][0]["content"] = twin["content"]
    old, old_diary = body["drawers"][0]["id"], diary["id"]
    target = fresh()
    call(target, "import", {"document": doc, "reindex": False})
    moved = call(target, "get_drawer", {"drawer_id": old})["drawer"]
    assert moved["content"] == twin["content"] and moved["id"] not in (old, twin["id"])
    assert call(target, "get_drawer", {"drawer_id": twin["id"]})["drawer"]["id"] == twin["id"]
    assert call(target, "get_drawer", {"drawer_id": old_diary})["drawer"]["content"] \
        == "later words"
    assert call(target, "diary_read", {"agent": "scout"})["entries"][0]["content"] \
        == "later words"
    assert call(target, "palace_status")["embedded"] == 5
    again = export_palace(target, exported_at=1.0)
    assert again["version"] == 2 and again["palace"]["drawer_aliases"] == {
        old: moved["id"], old_diary: drawer_id("later words", "agent-scout", "diary")}
    assert export_palace(fresh_import(again), exported_at=1.0) == again


def fresh_import(doc) -> Palace:
    target = fresh()
    call(target, "import", {"document": copy.deepcopy(doc), "reindex": False, "take_name": True})
    return target


@pytest.mark.parametrize("when", [1e308, -1e308, float("nan"), float("inf"), 253402300800.0])
def test_diary_read_shows_an_entry_whatever_time_it_holds(when):
    """A time no date has (kept by an older palazzo that read it from a file) leaves the
    entry's date empty instead of making every later diary_read raise."""
    p = rich()
    entry = next(iter(p.diaries.entries.values()))
    entry.written_at = when
    read = call(p, "diary_read", {"agent": "scout"})["entries"]
    assert [(e["content"], e["written"]) for e in read] == [("found the BM25 notes", None)]


def test_diary_times_at_the_ends_of_the_calendar_are_read():
    doc = export_palace(rich(), exported_at=1.0)
    for when, day in [(-62135596800.0, "0001-01-01T00:00:00+00:00"),
                      (253402300799, "9999-12-31T23:59:59+00:00")]:
        doc["palace"]["diaries"][0]["written_at"] = when
        target = fresh_import(doc)
        assert call(target, "diary_read", {"agent": "scout"})["entries"][0]["written"] == day


@pytest.mark.parametrize(("levels", "accepted"), [(95, True), (96, False), (3000, False)])
def test_a_document_nests_no_deeper_than_a_palace_file_may(levels, accepted):
    """A document made in Python (not parsed from text) must not hold what its own export
    could not be read back from: the text of a palace file nests at most 100 levels."""
    doc = export_palace(sample(), exported_at=1.0)
    value = 1
    for _ in range(levels):
        value = [value]
    doc["palace"]["edges"][0]["props"] = {"deep": value}
    target = fresh()
    if accepted:
        call(target, "import", {"document": doc, "reindex": False})
        text = json.dumps(export_palace(target, exported_at=1.0))
        call(target, "import", {"text": text, "reindex": False})
        assert export_palace(target, exported_at=1.0)["palace"]["edges"][0]["props"] == {
            "deep": value}
    else:
        with pytest.raises(ImportRejected, match=r"palace\.edges\[0\]\.props\.deep\[0\].* "
                                                 "nests deeper than the 100 levels"):
            call(target, "import", {"document": doc, "reindex": False})


def test_import_keeps_the_palace_name_unless_told_to_take_the_files():
    doc = export_palace(sample(), exported_at=1.0)
    target = Palace(name="mine")
    call(target, "import", {"document": copy.deepcopy(doc), "reindex": False})
    assert target.name == "mine" and len(target.drawers) == len(sample().drawers)
    call(target, "import", {"document": copy.deepcopy(doc), "reindex": False, "take_name": True})
    assert target.name == doc["palace"]["name"] != "mine"

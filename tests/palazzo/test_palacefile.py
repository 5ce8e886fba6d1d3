import base64
import copy
import json

import pytest

from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ImportRejected
from palazzo.palace import Palace
from palazzo.palacefile import export_jsonl, export_palace


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
    target.call("import", {"document": copy.deepcopy(doc), "reindex": False})
    assert export_palace(target, exported_at=1.0) == doc
    assert target.call("palace_status")["embedded"] == 4  # vectors came from the file


def test_the_envelope_is_versioned_and_names_the_embedder():
    doc = export_palace(sample())
    assert doc["format"] == "palazzo" and doc["version"] == 1
    assert doc["palace"]["vectors"]["embedder"] == "hash"
    json.dumps(doc)


def test_float16_vectors_halve_the_size_and_stay_close():
    p = sample()
    d16 = export_palace(p, vectors="float16")
    d32 = export_palace(p, vectors="float32")
    assert len(d16["palace"]["vectors"]["data"]) < 0.6 * len(d32["palace"]["vectors"]["data"])
    q = fresh()
    q.call("import", {"document": d16, "reindex": False})
    assert abs(q.drawers.vectors[:4] - p.drawers.vectors[:4]).max() < 1e-3


def test_import_without_vectors_reembeds():
    target = fresh()
    result = target.call("import", {"document": export_palace(sample(), vectors=None)})
    assert result["embedded_now"] == 4


def test_jsonl_has_one_drawer_a_line():
    lines = export_jsonl(sample()).splitlines()
    assert len(lines) == 4
    assert {json.loads(line)["wing"] for line in lines} == {"projects", "people"}


def _corrupt(mutate):
    doc = export_palace(sample())
    mutate(doc)
    return doc


BAD = [
    (lambda d: d.update(format="other"), "not a palazzo palace file"),
    (lambda d: d.update(version=99), "version 99"),
    (lambda d: d["palace"]["drawers"][1].pop("content"), "palace.drawers[1].content is missing"),
    (lambda d: d["palace"]["drawers"][0].update(room="nowhere"), "palace.drawers[0]: no room"),
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
]


@pytest.mark.parametrize(("mutate", "message"), BAD)
def test_a_bad_file_is_refused_with_its_place_and_changes_nothing(mutate, message):
    target = sample()
    before = export_palace(target, exported_at=1.0)
    with pytest.raises(ImportRejected) as info:
        target.call("import", {"document": _corrupt(mutate)})
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
        target.call("import", {"text": text})
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
    target.call("import", {"document": copy.deepcopy(doc), "reindex": False})
    assert export_palace(target, exported_at=1.0) == doc
    assert len(target.drawers.chunks) == len(p.drawers.chunks)
    query = {"query": "remark about Lisbon", "mode": "vector", "limit": 1}
    assert target.call("search", query) == p.call("search", query)


def test_chunk_vectors_of_another_embedder_are_reembedded_on_import():
    doc = export_palace(chunked())
    other = Palace(embedder=HashEmbedder(dim=64), clock=clock)
    result = other.call("import", {"document": doc})
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
    (lambda b: b["settings"].update(chunk_size=5), "chunk_size is out of range"),
]


@pytest.mark.parametrize(("mutate", "message"), BAD_CHUNKS)
def test_bad_chunk_vectors_are_refused(mutate, message):
    target = sample()
    before = export_palace(target, exported_at=1.0)
    with pytest.raises(ImportRejected) as info:
        target.call("import", {"document": _corrupt_chunks(mutate)})
    assert message in str(info.value)
    assert export_palace(target, exported_at=1.0) == before

import pytest

from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.model import EdgeKind, drawer_id
from palazzo.palace import Palace


def ticking():
    t = [1000.0]

    def clock():
        t[0] += 1.0
        return t[0]

    return clock


def make(**kw):
    return Palace(embedder=HashEmbedder(), clock=ticking(), **kw)


def test_drawer_ids_are_deterministic_and_adding_twice_changes_nothing():
    p = make()
    did, created = p.add_drawer("projects", "palazzo", "Pyodide boots in the worker.")
    assert created and did == drawer_id("Pyodide boots in the worker.", "projects", "palazzo")
    again, created_again = p.add_drawer("projects", "palazzo", "Pyodide boots in the worker.")
    assert (again, created_again) == (did, False)
    assert p.counts()["drawers"] == 1
    other, _ = p.add_drawer("people", "palazzo", "Pyodide boots in the worker.")
    assert other != did  # same text, other wing: another drawer


def test_rooms_get_halls_in_their_wing_and_tunnels_across_wings():
    p = make()
    p.add_room("projects", "search")
    p.add_room("projects", "ui")
    p.add_room("people", "search")
    kinds = {(p.edges.kind[i], p.edges.src[i], p.edges.dst[i]) for i in p.edges.live()}
    assert (EdgeKind.HALL, "room:projects/search", "room:projects/ui") in kinds
    assert (EdgeKind.TUNNEL, "room:projects/search", "room:people/search") in kinds
    assert (EdgeKind.HAS_ROOM, "wing:people", "room:people/search") in kinds


def test_bad_input_is_refused_and_changes_nothing():
    p = make()
    with pytest.raises(ValidationError):
        p.add_drawer("w", "r", "   ")
    with pytest.raises(ValidationError):
        p.add_drawer("w\x00", "r", "text")
    with pytest.raises(ValidationError):
        p.add_drawer("w", "r", "text", importance=2)
    assert p.counts()["drawers"] == 0


def test_delete_removes_the_drawer_from_every_index():
    p = make(similar_threshold=0.0)
    keep, _ = p.add_drawer("w", "r", "apples and pears")
    gone, _ = p.add_drawer("w", "r", "apples and plums")
    assert any(p.edges.kind[i] == EdgeKind.SIMILAR_TO for i in p.edges.live())
    p.delete_drawer(gone)
    with pytest.raises(NotFound):
        p.drawer(gone)
    hits = p.call("search", {"query": "plums", "limit": 10})["results"]
    assert [h["drawer_id"] for h in hits] == [keep] or all(h["drawer_id"] != gone for h in hits)
    assert all(gone not in (p.edges.src[i], p.edges.dst[i]) for i in p.edges.live())


def test_update_keeps_the_id_and_reindexes_the_text():
    p = make()
    did, _ = p.add_drawer("w", "r", "the cat sat")
    d = p.update_drawer(did, content="the dog barked", importance=0.9)
    assert d.id == did and d.content == "the dog barked" and d.importance == 0.9
    hits = p.call("search", {"query": "dog", "mode": "bm25"})["results"]
    assert hits[0]["drawer_id"] == did
    assert p.call("search", {"query": "cat", "mode": "bm25"})["results"] == []


def test_the_clock_is_injected():
    p = make()
    did, _ = p.add_drawer("w", "r", "x marks the spot")
    assert p.drawer(did).created_at == 1004.0  # palace, wing, room, then the drawer

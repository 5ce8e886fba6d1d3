"""Extractive room summaries (the room's own sentences, traced, cached until the room
changes) and the AAAK export view."""

import pytest

from palazzo import call
from palazzo.errors import NotFound, ValidationError
from palazzo.memory.summary import summarise
from palazzo.palace import Palace

ROOM = [
    "We moved the orders service to Postgres in March. Postgres replication lag was the "
    "main worry.",
    "Replication lag on Postgres stayed under a second after the move. Lunch was fine.",
    "The orders service now runs Postgres 16 with two replicas. Nice weather today.",
]


def _palace() -> Palace:
    ticks = iter(range(1_700_000_000, 1_800_000_000, 60))
    p = Palace(clock=lambda: float(next(ticks)))
    for text in ROOM:
        call(p, "add_drawer", {"wing": "work", "room": "db", "content": text})
    call(p, "add_drawer", {"wing": "home", "room": "garden",
                           "content": "Prune the roses in late winter, before new growth."})
    return p


def test_a_summary_is_the_rooms_most_typical_sentences_in_order_and_traced():
    p = _palace()
    out = call(p, "summarize", {"wing": "work", "room": "db", "max_chars": 150})
    [room] = out["rooms"]
    assert room["drawers"] == 3
    texts = [s["text"] for s in room["sentences"]]
    assert all("Postgres" in t for t in texts) and "Lunch" not in room["summary"]
    assert len(room["summary"]) <= 150 + len(texts)
    ids = [s["drawer_id"] for s in room["sentences"]]
    for sentence in room["sentences"]:  # word for word from its drawer
        drawer = call(p, "get_drawer", {"drawer_id": sentence["drawer_id"]})["drawer"]
        assert sentence["text"] in " ".join(drawer["content"].split())
    made = {r["id"]: r["created_at"] for r in call(p, "list_drawers", {"wing": "work"})["drawers"]}
    assert sorted(ids, key=made.__getitem__) == ids  # oldest drawer first


def test_a_changed_room_is_summarised_again_and_an_unchanged_one_comes_from_the_cache():
    p = _palace()
    first = call(p, "summarize", {"wing": "work", "room": "db"})["rooms"][0]
    assert call(p, "summarize", {"wing": "work", "room": "db"})["rooms"][0] == first
    call(p, "add_drawer", {"wing": "work", "room": "db", "content":
                           "Postgres replication replicas lag Postgres orders replicas again."})
    again = call(p, "summarize", {"wing": "work", "room": "db"})["rooms"][0]
    assert again["drawers"] == 4 and again != first


def test_every_room_or_one_wing_and_clear_errors():
    p = _palace()
    assert [(r["wing"], r["room"]) for r in call(p, "summarize", {})["rooms"]] == [
        ("home", "garden"), ("work", "db")]
    assert call(p, "summarize", {"wing": "home"})["count"] == 1
    with pytest.raises(ValidationError):
        call(p, "summarize", {"room": "db"})
    with pytest.raises(NotFound):
        call(p, "summarize", {"wing": "work", "room": "nope"})
    assert summarise([]) == [] and summarise([("d", "Too short.")]) == []


def test_the_aaak_view_has_a_line_a_drawer_and_leaves_the_drawers_verbatim():
    p = _palace()
    before = call(p, "export", {"vectors": "none"})["document"]["palace"]["drawers"]
    text = call(p, "export", {"format": "aaak"})["text"]
    lines = text.splitlines()
    assert lines[0].startswith("# AAAK view") and "# work/db" in lines
    drawer_lines = [ln for ln in lines if not ln.startswith("#")]
    assert len(drawer_lines) == 4 and all(ln.split("|")[-1].startswith("drawer_")
                                          for ln in drawer_lines)
    assert all(len(ln) < 200 for ln in drawer_lines)
    assert call(p, "export", {"vectors": "none"})["document"]["palace"]["drawers"] == before


def test_an_imported_palace_is_summarised_from_its_own_drawers():
    p = _palace()
    doc = call(p, "export", {"vectors": "none"})["document"]
    other = Palace(extract_on_add=False)
    call(other, "add_drawer", {"wing": "x", "room": "y", "content": "Something else entirely."})
    call(other, "import", {"document": doc})
    assert other.summaries.palace is other and other.extract_on_add is False
    assert call(other, "summarize", {"wing": "work", "room": "db"})["rooms"][0]["drawers"] == 3
    call(other, "add_drawer", {"wing": "work", "room": "db", "content": "Postgres again."})
    assert call(other, "summarize", {"wing": "work", "room": "db"})["rooms"][0]["drawers"] == 4

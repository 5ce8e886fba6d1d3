"""The wake-up context: sections in order, the budget kept, every line traceable, the same
palace giving the same text."""

import pytest

from palazzo import call
from palazzo.errors import ValidationError
from palazzo.memory.wakeup import tokens, wake_up
from palazzo.palace import Palace


def _palace() -> Palace:
    ticks = iter(range(1_700_000_000, 1_800_000_000, 86_400))
    p = Palace(name="home", clock=lambda: float(next(ticks)))
    call(p, "add_drawer", {"wing": "me", "room": "identity",
                           "content": "I am Ada, a backend engineer in Lisbon."})
    call(p, "add_drawer", {"wing": "work", "room": "db", "importance": 0.9,
                           "content": "We moved the orders service to Postgres 16."})
    call(p, "add_drawer", {"wing": "work", "room": "db", "importance": 0.2,
                           "content": "Lunch was fine."})
    call(p, "add_drawer", {"wing": "home", "room": "garden", "importance": 0.5,
                           "content": "Prune the roses in late winter."})
    call(p, "kg_add", {"subject": "Ada", "predicate": "works_at", "object": "Acme",
                       "valid_from": "2024-01-01"})
    call(p, "kg_add", {"subject": "Ada", "predicate": "lives_in", "object": "Lisbon",
                       "valid_from": "2023-05-01", "confidence": 0.6})
    call(p, "kg_add", {"subject": "team", "predicate": "decided", "object": "Postgres 16",
                       "valid_from": "2024-03-01"})
    return p


def test_sections_in_priority_order_with_their_sources():
    p = _palace()
    out = wake_up(p, 800)
    sections = [ln["section"] for ln in out["lines"]]
    assert sections == sorted(sections, key=["identity", "facts", "decisions", "story",
                                             "rooms"].index)
    first = out["lines"][0]
    assert first["text"].startswith("I am Ada") and first["source"]["drawer_id"]
    facts = [ln for ln in out["lines"] if ln["section"] == "facts"]
    # the certain fact before the uncertain one; entities under their written names
    assert [f["text"] for f in facts] == ["Ada works at Acme (since 2024-01-01)",
                                          "Ada lives in Lisbon (since 2023-05-01)"]
    assert all("triple_id" in f["source"] for f in facts)
    [decision] = [ln for ln in out["lines"] if ln["section"] == "decisions"]
    assert decision["text"].startswith("team decided Postgres 16")
    story = [ln["text"] for ln in out["lines"] if ln["section"] == "story"]
    assert "Postgres 16" in story[0] and "Lunch" in story[-1]  # importance decides
    assert not any("I am Ada" in s for s in story)  # identity is not repeated
    rooms = [ln["text"] for ln in out["lines"] if ln["section"] == "rooms"]
    assert rooms[0].startswith("home/garden: 1 drawers")  # the newest room first
    assert out["text"].startswith("## Identity\n- I am Ada")
    for line in out["lines"]:
        assert line["text"] in out["text"]


def test_the_budget_is_kept_and_what_did_not_fit_is_counted():
    p = _palace()
    for i in range(60):
        call(p, "add_drawer", {"wing": "log", "room": f"day{i}", "importance": 0.7,
                               "content": f"Entry {i}: " + "words " * 30})
    small = wake_up(p, 120)
    assert tokens(small["text"]) == small["tokens"] <= 120
    assert small["left_out"]["story"] > 0 and small["left_out"]["rooms"] > 0
    big = wake_up(p, 5000)
    assert big["tokens"] <= 5000 and len(big["lines"]) > len(small["lines"])


def test_the_same_palace_gives_the_same_context():
    assert wake_up(_palace(), 300) == wake_up(_palace(), 300)


def test_an_empty_palace_and_a_bad_budget():
    out = call(Palace(name="empty"), "wake_up", {})
    assert out["budget"] == 800 and [ln["section"] for ln in out["lines"]] == ["identity"]
    with pytest.raises(ValidationError):
        call(Palace(), "wake_up", {"budget": 10})

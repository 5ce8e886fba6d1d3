import pytest

from palazzo import bind, call
from palazzo.errors import PalazzoError
from palazzo.formats.palacefile import export_palace
from palazzo.hosts import demo
from palazzo.palace import Palace


def build():
    p = Palace(clock=lambda: 1764633600.0)
    return p, demo.build(bind(p))


def test_the_demo_has_wings_rooms_drawers_facts_a_diary_and_trails():
    p, out = build()
    text = demo.demo_text()
    assert out["drawers"] == len(text.drawers) >= 15 and out["facts"] == len(text.facts) >= 5
    counts = p.counts()
    assert counts["wings"] >= 4 and counts["rooms"] >= 8
    assert counts["drawers"] == out["drawers"] + 1 + out["turns"]  # diary entry, chat turns
    assert call(p, "kg_query", {"entity": "Jonas", "as_of": "2020-06-01"})
    assert call(p, "pheromone_status")["edge_pheromones"]["recency"]["nonzero"] > 0
    hit = call(p, "search", {"query": "pruning roses", "mode": "bm25"})["results"][0]
    assert (hit["wing"], hit["room"]) == ("Home", "garden")


def test_the_demo_is_the_same_every_time():
    a, _ = build()
    b, _ = build()
    assert export_palace(a, vectors=None, exported_at=0) == export_palace(b, vectors=None,
                                                                          exported_at=0)


@pytest.mark.parametrize("text, message", [
    ("just a paragraph", "before any"),
    ("# Facts\n- a | b | c", "5 '|' fields"),
    ("# Facts\n-  | b | c | | ", "5 '|' fields"),
])
def test_malformed_demo_text_is_refused(text, message):
    with pytest.raises(PalazzoError, match=message):
        demo.parse(text)

"""The ``communities`` operation and :func:`community_mask`, the search filter's rows."""

import random

import numpy as np
import pytest

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.ops.communities import community_mask
from palazzo.palace import Palace

TOPIC_WORDS = {
    "garden": "roses tulips soil compost pruning seeds watering mulch bloom hedges",
    "database": "postgres replication query vacuum schema migration replica lag index",
    "music": "guitar piano chords melody rhythm tempo scales song practice concert",
}
FILLER_WORDS = "today really thing maybe think good went also quite still"
TOPICS = {topic: words.split() for topic, words in TOPIC_WORDS.items()}
FILLER = FILLER_WORDS.split(" ")


def _palace(sizes=(14, 10, 6)) -> tuple[Palace, dict[str, str]]:
    """Return (a palace of three topics of ``sizes`` drawers, drawer id -> topic)."""
    rng = random.Random(1)
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0)
    topic_of = {}
    for (topic, words), n in zip(TOPICS.items(), sizes, strict=True):
        for i in range(n):
            text = " ".join(rng.choice(words) if rng.random() < 0.6 else rng.choice(FILLER)
                            for _ in range(20))
            out = call(p, "add_drawer", {"wing": f"w{i % 2}", "room": f"r{i % 3}",
                                         "content": text})
            topic_of[out["drawer_id"]] = topic
    return p, topic_of


def test_the_operation_lists_named_communities_largest_first():
    p, topic_of = _palace()
    out = call(p, "communities", {"drawers": True})
    assert out["count"] == out["total"] == 3 and out["drawers"] == 30
    assert [c["size"] for c in out["communities"]] == [14, 10, 6]
    assert [c["id"] for c in out["communities"]] == [0, 1, 2]
    for c, topic in zip(out["communities"], TOPICS, strict=True):
        assert {topic_of[d] for d in c["drawer_ids"]} == {topic}
        assert set(c["name"].split(" · ")) <= set(TOPICS[topic])
        assert c["wings"] and c["rooms"][0]["drawers"] >= 1
    assert out["similarity"] == "vectors" and out["modularity"] > 0.4
    assert out["settings"]["seed"] == 0 and out["links"]["similar"] > 0
    assert "drawer_ids" not in call(p, "communities", {})["communities"][0]
    assert call(p, "communities", {}) == call(p, "communities", {})


def test_limit_min_size_and_one_community():
    p, _ = _palace()
    out = call(p, "communities", {"limit": 1})
    assert len(out["communities"]) == 1 and out["truncated"] and out["count"] == 3
    out = call(p, "communities", {"min_size": 8})
    assert [c["size"] for c in out["communities"]] == [14, 10] and out["count"] == 2
    [one] = call(p, "communities", {"community": 2, "drawers": True})["communities"]
    assert one["id"] == 2 and len(one["drawer_ids"]) == 6
    with pytest.raises(NotFound, match="no community 3"):
        call(p, "communities", {"community": 3})


def test_the_mask_selects_the_rows_of_a_community():
    p, _ = _palace()
    listed = call(p, "communities", {"drawers": True})["communities"]
    for c in listed:
        mask = community_mask(p, c["id"])
        assert mask.dtype == bool and len(mask) == p.drawers.size
        assert sorted(p.drawers.ids[r] for r in np.flatnonzero(mask)) == c["drawer_ids"]
    # the settings the user was shown are the ones the mask follows
    many = call(p, "communities", {"resolution": 30.0})["total"]
    assert many > 3
    assert community_mask(p, many - 1, {"resolution": 30.0}).any()
    with pytest.raises(NotFound):
        community_mask(p, many - 1)
    for bad in (-1, 1.5, True, "0"):
        with pytest.raises(ValidationError):
            community_mask(p, bad)


def test_an_empty_palace_and_a_palace_without_vectors():
    empty = Palace()
    out = call(empty, "communities", {})
    assert out["communities"] == [] and out["total"] == 0 and out["similarity"] == "none"
    with pytest.raises(NotFound, match="no drawers"):
        community_mask(empty, 0)
    p = Palace()
    for words in TOPICS.values():
        for i in range(5):
            call(p, "add_drawer", {"wing": "w", "room": "r",
                                   "content": " ".join(words[i:] + words[:i])})
    out = call(p, "communities", {})
    assert out["similarity"] == "terms" and [c["size"] for c in out["communities"]] == [5, 5, 5]


@pytest.mark.parametrize("args", [{"k": 0}, {"resolution": 0}, {"min_cosine": 2},
                                  {"min_cosine": -0.5}, {"entity_weight": -1}, {"seed": -1},
                                  {"limit": 0}, {"community": -1}, {"colour": "red"}])
def test_bad_arguments_are_refused_before_anything_runs(args):
    p, _ = _palace()
    with pytest.raises(ValidationError):
        call(p, "communities", args)

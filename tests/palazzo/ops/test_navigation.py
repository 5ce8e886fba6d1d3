"""The navigation operations through a registry, as hosts call them."""


import numpy as np
import pytest

from palazzo.core.model import EdgeKind
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.ops import default_registry
from palazzo.ops.navigation import operation
from palazzo.palace import Palace


@pytest.fixture
def reg():
    return default_registry()  # the navigation operations are built in


@pytest.fixture
def palace():
    p = Palace(similar_threshold=None)
    for wing in ("code", "notes"):
        for room in ("auth", "db"):
            d, _ = p.add_drawer(wing, room, f"{wing} {room}", closet="c")
            v = np.zeros(p.drawers.dim, np.float32)
            v[len(wing) % 3 + (room == "db")] = 1.0
            p.drawers.set_vector(p.row(d), v)
    return p


def test_operations_are_registered(reg):
    for name in ("navigate", "find_tunnels", "graph_stats"):
        assert reg.get(name).describe()["input_schema"]["type"] == "object"
    with pytest.raises(ValueError):
        reg.add(operation.ops[0])  # already there: a second registration is a bug


def test_navigate_with_shorthand(reg, palace):
    out = reg.call(palace, "navigate", {"start": "code/auth", "goal": "notes/auth"})
    assert out["found"] and out["nodes"] == ["room:code/auth", "room:notes/auth"]
    assert out["steps"][0]["kind"] == "TUNNEL" and out["deposited"] is False
    assert out["total_cost"] == pytest.approx(0.3 + 0.3 * 0.7)
    wing = reg.call(palace, "navigate", {"start": "code", "goal": "room:code/db",
                                         "context": "memory_recall", "admissible": True})
    assert wing["start"] == "wing:code" and wing["length"] == 1


def test_navigate_validates(reg, palace):
    with pytest.raises(ValidationError):
        reg.call(palace, "navigate", {"start": "code/auth", "goal": "x", "context": "nope"})
    with pytest.raises(NotFound):
        reg.call(palace, "navigate", {"start": "code/auth", "goal": "code/nowhere"})


def test_find_tunnels(reg, palace):
    out = reg.call(palace, "find_tunnels", {})
    assert out["count"] == 2
    assert {(t["src_room"], t["dst_room"]) for t in out["tunnels"]} == {("auth", "auth"),
                                                                        ("db", "db")}
    assert reg.call(palace, "find_tunnels", {"wing": "notes"})["count"] == 2
    with pytest.raises(NotFound):
        reg.call(palace, "find_tunnels", {"wing": "nowhere"})


def test_graph_stats(reg, palace):
    out = reg.call(palace, "graph_stats", {})
    assert out["nodes_by_kind"] == {"closet": 4, "drawer": 4, "palace": 1, "room": 4,
                                    "wing": 2}
    assert out["edges_by_kind"] == {"HALL": 2, "HAS_CLOSET": 4, "HAS_DRAWER": 4,
                                    "HAS_ROOM": 4, "HAS_WING": 2, "TUNNEL": 2}
    assert out["components"] == 1 and out["nodes"] == 15 and out["edges"] == 18
    assert out["mean_degree"] == pytest.approx(36 / 15)
    palace.edges.remove(palace.edges.find(EdgeKind.HAS_WING, "palace", "wing:code"))
    for e in palace.edges.live():
        if palace.edges.kind[e] is EdgeKind.TUNNEL:
            palace.edges.remove(e)
    assert reg.call(palace, "graph_stats", {})["components"] == 2


def test_deposit_reinforces_the_path(reg, palace):
    out = reg.call(palace, "navigate", {"start": "code/auth", "goal": "notes/auth",
                                        "deposit": True})
    assert out["deposited"]
    (edge,) = [s["edge"] for s in out["steps"]]
    assert palace.edges.columns["success"][edge] > 0


@pytest.fixture
def topical():
    """Two wings of two rooms whose drawers talk about their room's topic (hash vectors)."""
    p = Palace(embedder=HashEmbedder(), similar_threshold=None)
    texts = {("kitchen", "baking"): ["sourdough bread needs flour and yeast",
                                     "the oven bakes bread loaves with yeast"],
             ("kitchen", "coffee"): ["espresso beans ground fine", "a grinder for coffee beans"],
             ("garden", "roses"): ["prune the roses in spring", "roses need aphid spray"],
             ("garden", "tomatoes"): ["tomatoes ripen on the vine", "stake the tomato vines"]}
    for (wing, room), drawers in texts.items():
        for text in drawers:
            p.add_drawer(wing, room, text)
    return p


def test_goal_query_picks_the_room_nearest_in_meaning(reg, topical):
    out = reg.call(topical, "navigate", {"start": "garden/roses",
                                         "goal_query": "yeast and flour for bread"})
    choice = out["goal_choice"]
    assert choice["node"] == out["goal"] == "room:kitchen/baking"
    assert choice["by"] == "centroid" and 0 < choice["score"] <= 1
    assert out["found"] and out["nodes"][0] == "room:garden/roses"
    assert out["nodes"][-1] == "room:kitchen/baking"
    # start left out: the walk begins at the palace.
    home = reg.call(topical, "navigate", {"goal_query": "espresso grinder beans"})
    assert home["nodes"] == ["palace", "wing:kitchen", "room:kitchen/coffee"]
    assert reg.call(topical, "navigate", {"goal": "garden"})["nodes"] == ["palace",
                                                                        "wing:garden"]


def test_goal_query_without_vectors_takes_the_top_search_hit(reg):
    p = Palace(similar_threshold=None)  # no embedder: words decide (BM25)
    p.add_drawer("garden", "roses", "prune the roses in spring")
    tomato, _ = p.add_drawer("garden", "tomatoes", "tomatoes ripen on the vine")
    out = reg.call(p, "navigate", {"start": "garden/roses", "goal_query": "ripen tomatoes"})
    assert out["goal_choice"]["node"] == out["goal"] == tomato
    assert out["goal_choice"]["by"] == "search" and out["goal_choice"]["score"] > 0
    assert out["nodes"][-1] == tomato
    with pytest.raises(NotFound):
        reg.call(p, "navigate", {"goal_query": "quantum chromodynamics"})


def test_goal_and_goal_query_exactly_one(reg, palace):
    for args in ({"start": "code/auth"},
                 {"start": "code/auth", "goal": "notes/auth", "goal_query": "auth"}):
        with pytest.raises(ValidationError) as err:
            reg.call(palace, "navigate", args)
        assert "exactly one of goal" in str(err.value) and "\n" not in str(err.value)

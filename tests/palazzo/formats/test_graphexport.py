import json
import re

import pytest

from palazzo import call
from palazzo.core.model import EdgeKind, Entity
from palazzo.errors import NotFound, ValidationError
from palazzo.palace import Palace

HOSTILE = 'He said "hi" \\ -> }; <script>alert(1)</script> [x] |y| #z\nnext line'


@pytest.fixture
def palace():
    p = Palace(clock=lambda: 1.0)
    p.add_drawer("work", "palazzo", HOSTILE)
    p.add_drawer("work", "notes", "plain text")
    p.add_drawer("home", "notes", "groceries")
    for name in ("alice", "bob", "carol", "dave"):
        p.entities[f"entity:{name}"] = Entity(f"entity:{name}", name.title(), "person")
    for a, b in (("alice", "bob"), ("bob", "carol"), ("carol", "dave")):
        p.edges.add(EdgeKind.RELATES_TO, f"entity:{a}", f"entity:{b}")
    return p


def test_rooms_level_has_wings_rooms_halls_and_tunnels(palace):
    out = call(palace, "export_graph", {"format": "d3"})
    kinds = {n["kind"] for n in out["graph"]["nodes"]}
    assert kinds == {"palace", "wing", "room"}
    links = {(x["source"], x["target"], x["kind"]) for x in out["graph"]["links"]}
    assert ("room:work/notes", "room:home/notes", "TUNNEL") in links
    assert ("room:work/palazzo", "room:work/notes", "HALL") in links
    assert out["nodes"] == 6 and out["edges"] == len(links)


def test_drawers_level_of_one_wing(palace):
    out = call(palace, "export_graph", {"format": "d3", "level": "drawers", "wing": "home"})
    ids = {n["id"] for n in out["graph"]["nodes"]}
    assert "wing:home" in ids and "room:home/notes" in ids
    assert not any(i.startswith("room:work") for i in ids)
    assert sum(n["kind"] == "drawer" for n in out["graph"]["nodes"]) == 1


def test_dot_escapes_labels(palace):
    dot = call(palace, "export_graph", {"format": "dot", "level": "drawers"})["graph"]
    assert dot.startswith('digraph "palace" {') and dot.endswith("}\n")
    line = next(x for x in dot.splitlines() if "said" in x)
    assert '\\"hi\\" \\\\ ->' in line
    # Every statement is one line: the newline in the drawer text did not split it.
    assert all(x.endswith(("{", "}", ";")) for x in dot.splitlines())


def test_mermaid_escapes_labels(palace):
    text = call(palace, "export_graph", {"format": "mermaid", "level": "drawers"})["graph"]
    line = next(x for x in text.splitlines() if "said" in x)
    assert "<script>" not in text and '"hi"' not in line
    assert "#lt;script#gt;" in line and "#quot;hi#quot;" in line
    label = line.split('["', 1)[1].rsplit('"]', 1)[0]
    assert not set(re.sub(r"#\w+;", "", label)) & set('"[]{}()<>|;')


def test_entity_neighbourhood_is_bounded_by_hops(palace):
    one = call(palace, "export_graph", {"format": "d3", "entity": "Bob", "hops": 1})
    assert {n["id"] for n in one["graph"]["nodes"]} == {"entity:alice", "entity:bob",
                                                        "entity:carol"}
    assert one["edges"] == 2
    two = call(palace, "export_graph", {"format": "d3", "entity": "entity:alice", "hops": 2})
    assert {n["id"] for n in two["graph"]["nodes"]} == {"entity:alice", "entity:bob",
                                                        "entity:carol"}
    zero = call(palace, "export_graph", {"format": "d3", "entity": "alice", "hops": 0})
    assert zero["nodes"] == 1 and zero["edges"] == 0


def test_output_is_deterministic_and_errors_are_clear(palace):
    a = call(palace, "export_graph", {"format": "dot", "level": "drawers"})
    b = call(palace, "export_graph", {"format": "dot", "level": "drawers"})
    assert a == b
    json.dumps(call(palace, "export_graph", {"format": "d3"}))
    with pytest.raises(NotFound, match="no entity"):
        call(palace, "export_graph", {"entity": "zoe"})
    with pytest.raises(NotFound, match="no wing"):
        call(palace, "export_graph", {"wing": "nowhere"})
    with pytest.raises(ValidationError):
        call(palace, "export_graph", {"format": "svg"})


def test_entity_names_go_through_the_knowledge_graphs_aliases():
    p = Palace(clock=lambda: 1.0)
    call(p, "kg_add", {"subject": "Google Cloud Platform", "predicate": "hosts",
                      "object": "Palazzo demo"})
    out = call(p, "export_graph", {"format": "d3", "entity": "GCP", "hops": 1})
    assert out["nodes"] == 2 and out["edges"] == 1

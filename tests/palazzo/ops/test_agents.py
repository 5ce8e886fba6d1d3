"""The agent operations through the registry, as hosts call them."""

import pytest

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.ops import default_registry
from palazzo.ops.agents import operation
from palazzo.palace import Palace


@pytest.fixture
def palace():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0)
    for w in ("code", "notes"):
        for r in ("auth", "db"):
            for i in range(2):
                p.add_drawer(w, r, f"{w} {r} note {i}")
    return p


def test_registered_and_mutation_flags():
    reg = default_registry()
    assert {"list_agents", "add_agent", "run_swarm"} <= set(reg.names())
    assert reg.get("add_agent").mutates and reg.get("run_swarm").mutates
    assert not reg.get("list_agents").mutates
    with pytest.raises(ValueError):
        reg.add(operation.ops[0])  # a second registration is a bug


def test_add_and_list_agents(palace):
    out = call(palace, "add_agent", {"name": "Scout", "archetype": "explorer", "focus": "code"})
    assert out["created"] and out["agent"]["id"] == "agent:scout"
    assert out["agent"]["temperature"] == 1.0
    assert not call(palace, "add_agent", {"name": "Scout"})["created"]
    listed = call(palace, "list_agents")
    assert [a["name"] for a in listed["agents"]] == ["Scout"]
    assert len(listed["archetypes"]) == 5
    with pytest.raises(ValidationError):
        call(palace, "add_agent", {"name": "x", "archetype": "wizard"})
    with pytest.raises(ValidationError):
        call(palace, "add_agent", {"archetype": "explorer"})
    with pytest.raises(ValidationError):
        call(palace, "add_agent", {"name": "x", "colour": "red"})


def test_run_swarm_op(palace):
    out = call(palace, "run_swarm", {"cycles": 12, "agents": 3, "seed": 4, "goal": "db",
                                    "stop_on_converge": False})
    assert out["cycles_run"] == 12 and len(out["metrics"]) == 12 and out["has_goal"]
    assert len(out["agents"]) == 3 and out["seed"] == 4
    assert {"visited", "frontier", "pheromone_mass", "pheromone_variance",
            "converged"} <= set(out["metrics"][0])
    out = call(palace, "run_swarm", {"cycles": 3, "archetypes": ["exploiter", "explorer"],
                                    "schedule": "cosine", "stop_on_converge": False})
    assert [a["archetype"] for a in out["agents"]] == ["exploiter", "explorer"]


def test_run_swarm_is_reproducible_through_ops():
    def once():
        p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0)
        for i in range(6):
            p.add_drawer("w", f"r{i % 3}", f"text {i}")
        return call(p, "run_swarm", {"cycles": 20, "agents": 4, "seed": 9})
    assert once() == once()


def test_notes_returned_by_a_run_are_written_once_later(palace):
    out = call(palace, "run_swarm", {"cycles": 30, "archetypes": ["specialist"], "seed": 2,
                                    "stop_on_converge": False, "diary": False})
    assert out["gained"]["diary_entries"] == 0 and out["notes"]
    assert call(palace, "list_agents")["agents"] == []  # nothing written yet
    note = out["notes"][-1]
    wrote = call(palace, "write_swarm_notes", {"notes": [note]})
    assert wrote == {"diary_entries": {note["agent"]: 1}, "written": 1}
    agents = call(palace, "list_agents")["agents"]
    assert [(a["name"], a["archetype"], a["diary_entries"]) for a in agents] == [
        (note["agent"], "specialist", 1)]
    entries = call(palace, "diary_read", {"agent": note["agent"]})["entries"]
    assert [e["content"] for e in entries] == [note["text"]]
    again = call(palace, "write_swarm_notes", {"notes": [{"agent": note["agent"],
                                                          "text": note["text"]}]})
    assert again["written"] == 0  # the same text is not written twice
    for bad in ({"notes": []}, {"notes": [{"agent": "x"}]}, {"notes": [{"text": "t"}]},
                {"notes": [{"agent": "x", "text": "t", "colour": 1}]}):
        with pytest.raises(ValidationError):
            call(palace, "write_swarm_notes", bad)


@pytest.mark.parametrize("args", [
    {"cycles": 0}, {"cycles": 10_001}, {"agents": 0}, {"agents": 101},
    {"archetypes": ["wizard"]}, {"archetypes": []}, {"agents": 2, "archetypes": ["explorer"]},
    {"seed": -1}, {"goal": ""}, {"schedule": "sawtooth"}, {"cycles": "10"}, {"extra": 1},
])
def test_run_swarm_validation(palace, args):
    with pytest.raises(ValidationError):
        call(palace, "run_swarm", args)


def test_goal_needs_an_embedder():
    p = Palace()
    p.add_drawer("w", "r", "text")
    with pytest.raises(ValidationError, match="embedder"):
        call(p, "run_swarm", {"goal": "text", "cycles": 2})
    assert call(p, "run_swarm", {"cycles": 2})["cycles_run"] >= 1

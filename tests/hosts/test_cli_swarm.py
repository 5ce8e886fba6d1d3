"""``palazzo swarm`` with the archetypes' acts and ``palazzo tunnels``: proposals listed,
approved and rejected through the command line."""

import json

import pytest

from palazzo.hosts.cli import main

pytestmark = pytest.mark.cpython_only


def run(capsys, *argv):
    code = main([*argv, "--embedder", "hash"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_swarm_acts_and_tunnels_are_reviewed(palace, capsys):
    texts = ["prune the roses in late winter", "roses want sun and mulch"]
    for wing, room in (("garden", "roses"), ("notes", "flowers")):
        for text in texts:
            assert run(capsys, "add", "--wing", wing, "--room", room, text)[0] == 0
    assert run(capsys, "add", "--wing", "code", "--room", "db", "postgres vacuum")[0] == 0
    code, out, _ = run(capsys, "swarm", "--cycles", "150", "--archetype", "generalist",
                       "--archetype", "specialist", "--wing", "garden", "--seed", "1")
    result = json.loads(out)
    assert code == 0 and result["gained"]["tunnels_proposed"] == 1
    spec = next(a for a in result["agents"] if a["archetype"] == "specialist")
    assert spec["wing"] == "garden" and spec["diary_entries"] >= 1
    code, out, _ = run(capsys, "tunnels")
    (proposal,) = json.loads(out)["proposals"]
    code, out, _ = run(capsys, "tunnels", "--approve", proposal["id"])
    listed = json.loads(out)
    assert code == 0 and listed["approved"][0]["status"] == "approved"
    assert listed["proposals"] == [] and listed["counts"]["approved"] == 1
    code, _, err = run(capsys, "tunnels", "--reject", proposal["id"])
    assert code == 1 and "already approved" in err and "Traceback" not in err
    code, _, err = run(capsys, "swarm", "--wing", "nowhere")
    assert code == 1 and "nowhere" in err
    code, out, _ = run(capsys, "call", "node_pheromones", "--args", '{"kind": "room"}')
    assert code == 0 and json.loads(out)["nodes"]

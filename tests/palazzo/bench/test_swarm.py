"""The swarm soak benchmark writes a whole, reproducible curve."""

import json

from palazzo.bench import swarm
from palazzo.hosts.cli import main


def test_soak_curve_has_every_cycle_and_is_reproducible():
    a = swarm.run(agents=3, cycles=40, wings=2, rooms=4, seed=1)
    b = swarm.run(agents=3, cycles=40, wings=2, rooms=4, seed=1)
    assert [m["cycle"] for m in a["curve"]] == list(range(1, 41))  # no stop at convergence
    assert a["curve"] == b["curve"]
    assert a["agents"] == ["explorer", "exploiter", "balanced"]
    assert a["peak_pheromone_mass"] == max(m["pheromone_mass"] for m in a["curve"]) > 0
    converged = [m["cycle"] for m in a["curve"] if m["converged"]]
    assert a["first_converged_cycle"] == (converged[0] if converged else None)
    assert a["converged_cycles"] == len(converged)
    assert sum(m["decayed"] for m in a["curve"]) == 4  # every 10th cycle


def test_cli_soak(tmp_path, capsys):
    out = tmp_path / "soak.json"
    assert main(["bench", "swarm", "--agents", "2", "--cycles", "15", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["cycles"] == 15 and len(result["curve"]) == 15


def _without_times(result):
    runs = {k: {x: y for x, y in v.items() if x not in ("seconds", "ms_per_cycle")}
            for k, v in result["runs"].items()}
    return {**{k: v for k, v in result.items() if k != "build_seconds"}, "runs": runs}


def test_archetypes_differ_measurably_and_reproducibly():
    kw = dict(wings=4, rooms=5, drawers=5, twins=3, cycles=200, per_archetype=2, seed=3)
    a = swarm.run_archetypes(**kw)
    assert _without_times(a) == _without_times(swarm.run_archetypes(**kw))
    runs = a["runs"]
    assert set(runs) == {"explorer", "exploiter", "balanced", "specialist", "generalist",
                         "mixed"}
    assert a["drawers"] == 100 and a["rooms"] == 20
    cover = {k: v["coverage"]["swarm_nodes"] for k, v in runs.items()}
    assert cover["explorer"] > cover["exploiter"]
    assert runs["exploiter"]["trail_use"] > runs["explorer"]["trail_use"]
    assert runs["specialist"]["diary_entries"] > 0 and runs["specialist"][
        "specialists_left_wing"] == 0
    assert all(runs[k]["diary_entries"] == 0 for k in ("explorer", "exploiter", "generalist"))
    tunnels = runs["generalist"]["tunnels"]
    assert tunnels["planted"] == 3 and 0 < tunnels["proposed"] == tunnels["right"]
    assert all(runs[k]["tunnels"]["proposed"] == 0 for k in ("explorer", "specialist"))
    assert runs["mixed"]["gained"]["rooms"] > 0


def test_planted_palace_plants_similar_pairs_across_wings():
    p, planted = swarm.planted_palace(wings=3, rooms=4, drawers=6, twins=2, seed=1)
    assert len(planted) == 2 and all(len({r.split("/")[0] for r in pair}) == 2
                                     for pair in planted)
    from palazzo.stigmergy.pathfinding import node_vectors

    nv = node_vectors(p)
    for pair in planted:
        a, b = sorted(pair)
        assert nv.groups[nv.index[a]] @ nv.groups[nv.index[b]] > 0.85


def test_cli_archetypes(tmp_path, capsys):
    out = tmp_path / "acts.json"
    assert main(["bench", "swarm", "--archetypes", "--wings", "2", "--rooms", "3",
                 "--drawers", "3", "--twins", "1", "--cycles", "30", "--per-archetype", "1",
                 "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["benchmark"] == "swarm-archetypes" and len(result["runs"]) == 6

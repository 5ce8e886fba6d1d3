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

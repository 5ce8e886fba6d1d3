"""The swarm coordinator: reproducibility, cancellation, progress, convergence, goals."""

import numpy as np
import pytest

from palazzo.core.model import PALACE_ID, wing_id
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.stigmergy.agents import add_agent
from palazzo.stigmergy.swarm import (
    SwarmConfig,
    convergence_flags,
    growth_rate,
    is_converged,
    resolve_agents,
    run_swarm,
)


def build():
    from palazzo.palace import Palace

    p = Palace(embedder=HashEmbedder(), clock=lambda: 0.0)
    for w in ("code", "notes", "life"):
        for r in ("auth", "db", "ui"):
            for i in range(3):
                p.add_drawer(w, r, f"{w} {r} memory number {i} about {r} things")
    return p


NO_STOP = SwarmConfig(stop_on_converge=False)


def test_same_seed_same_result_and_different_seed_differs():
    a = run_swarm(build(), agents=5, cycles=30, seed=3, goal="database", config=NO_STOP)
    b = run_swarm(build(), agents=5, cycles=30, seed=3, goal="database", config=NO_STOP)
    c = run_swarm(build(), agents=5, cycles=30, seed=4, goal="database", config=NO_STOP)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != c.to_dict()
    assert a.cycles_run == 30 and not a.cancelled


def test_pheromone_state_is_reproducible_too():
    p, q = build(), build()
    run_swarm(p, agents=3, cycles=20, seed=1, config=NO_STOP)
    run_swarm(q, agents=3, cycles=20, seed=1, config=NO_STOP)
    n = len(p.edges.kind)
    for k in ("success", "traversal", "recency", "current_cost"):
        assert np.array_equal(p.edges.columns[k][:n], q.edges.columns[k][:n])
    assert np.array_equal(p.drawers.columns["exploration"], q.drawers.columns["exploration"])
    assert p.edges.columns["traversal"][:n].sum() > 0  # agents left trails


def test_cancel_after_k_cycles_and_progress_once_per_cycle():
    calls = []
    result = run_swarm(build(), agents=2, cycles=100, seed=0, config=NO_STOP,
                       progress=lambda t, m: calls.append((t, m["cycle"])),
                       cancel=lambda: len(calls) >= 4)
    assert result.cancelled and result.cycles_run == 4
    assert calls == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert [m.cycle for m in result.metrics] == [1, 2, 3, 4]

    seen = []
    done = run_swarm(build(), agents=2, cycles=7, seed=0, config=NO_STOP,
                     progress=lambda t, m: seen.append(t))
    assert seen == list(range(1, 8)) and not done.cancelled


def test_cancel_before_first_cycle():
    result = run_swarm(build(), agents=1, cycles=5, cancel=lambda: True)
    assert result.cancelled and result.cycles_run == 0 and result.metrics == []
    assert result.summary()["visited"] is None


def test_convergence_two_of_three():
    cfg = SwarmConfig()
    assert convergence_flags(0.01, 0.01, 3, cfg) == (True, True, True)
    assert convergence_flags(None, 1.0, 50, cfg) == (False, False, False)
    assert convergence_flags(0.2, 0.04, 50, cfg) == (False, True, False)
    assert not is_converged((False, True, False))
    assert is_converged((True, True, False))
    assert is_converged((False, True, True))
    assert is_converged((True, False, True))
    assert is_converged((True, True, True))
    assert not is_converged((False, False, False))
    # Thresholds are strict ("below"): exactly at a threshold does not count.
    assert convergence_flags(0.05, 0.05, 10, cfg) == (False, False, False)


def test_growth_rate_window():
    assert growth_rate([1, 2, 3], 3) is None
    assert growth_rate([10, 12, 20, 21], 3) == pytest.approx(1.1)
    assert growth_rate([0, 0, 5], 2) == 5.0  # divides by max(before, 1)


def test_run_stops_on_convergence_and_reports_flags():
    result = run_swarm(build(), agents=5, cycles=500, seed=2)
    assert result.converged and result.converged_at == result.cycles_run < 500
    last = result.metrics[-1]
    assert last.converged and sum((last.growth_ok, last.variance_ok, last.frontier_ok)) >= 2
    assert all(not m.converged for m in result.metrics[:-1])
    assert all(m.cycle >= 10 or not m.converged for m in result.metrics)


def test_decay_every_n_cycles():
    result = run_swarm(build(), agents=2, cycles=12, config=SwarmConfig(
        decay_every=4, stop_on_converge=False))
    assert [m.decayed for m in result.metrics].count(True) == 3
    assert [m.cycle for m in result.metrics if m.decayed] == [4, 8, 12]


def test_metrics_are_consistent():
    result = run_swarm(build(), agents=3, cycles=15, seed=5, config=NO_STOP)
    visited = [m.visited for m in result.metrics]
    assert visited == sorted(visited)
    assert all(m.pheromone_mass >= 0 and m.pheromone_variance >= 0 for m in result.metrics)
    assert result.metrics[0].growth_rate is None and result.metrics[-1].growth_rate is not None
    assert sum(a["moves"] for a in result.agents) == 45


def test_goal_text_vector_and_errors():
    p = build()
    g = p.embedder.embed(["database db"])[0]
    a = run_swarm(p, agents=2, cycles=5, goal=g, config=NO_STOP)
    b = run_swarm(build(), agents=2, cycles=5, goal="database db", config=NO_STOP)
    assert a.has_goal and a.to_dict() == b.to_dict()
    with pytest.raises(ValidationError):
        run_swarm(p, goal=np.zeros(p.drawers.dim))
    with pytest.raises(ValidationError):
        run_swarm(p, goal=[1.0, 2.0])
    with pytest.raises(ValidationError):
        run_swarm(p, cycles=0)
    with pytest.raises(ValidationError):
        run_swarm(p, cycles=10_001)
    from palazzo.palace import Palace

    with pytest.raises(ValidationError, match="embedder"):
        run_swarm(Palace(), goal="text")


def test_agent_resolution_and_start_positions():
    p = build()
    assert [a.archetype for a in resolve_agents(p, 6)] == [
        "explorer", "exploiter", "balanced", "specialist", "generalist", "explorer"]
    assert [a.archetype for a in resolve_agents(p, ["exploiter", "Explorer"])] == [
        "exploiter", "explorer"]
    assert len(resolve_agents(p, None)) == 5
    with pytest.raises(ValidationError):
        resolve_agents(p, 0)
    with pytest.raises(ValidationError):
        resolve_agents(p, ["wizard"])
    add_agent(p, "keeper", "specialist", focus="notes")
    add_agent(p, "roamer", "explorer")
    assert [a.name for a in resolve_agents(p, None)] == ["keeper", "roamer"]
    # Agents never walk onto agent nodes: HAS_AGENT links are skipped.
    result = run_swarm(p, cycles=1, seed=0, config=NO_STOP)
    first = {a["name"]: a["position"] for a in result.agents}
    assert first["keeper"].startswith(("room:notes/", wing_id("notes"))) or \
        first["keeper"] == PALACE_ID
    result = run_swarm(p, cycles=40, seed=0, config=NO_STOP)
    assert not any(a["position"].startswith("agent:") for a in result.agents)


def test_annealed_schedules_run():
    for schedule in ("linear", "exponential", "cosine"):
        r = run_swarm(build(), agents=5, cycles=10, seed=1,
                      config=SwarmConfig(schedule=schedule, stop_on_converge=False))
        assert r.cycles_run == 10
    with pytest.raises(ValidationError):
        run_swarm(build(), config=SwarmConfig(schedule="sawtooth"))


def test_isolated_agent_stays_put():
    from palazzo.palace import Palace

    p = Palace(embedder=HashEmbedder())
    r = run_swarm(p, agents=1, cycles=3, config=NO_STOP)
    assert r.agents[0]["position"] == PALACE_ID and r.agents[0]["moves"] == 0

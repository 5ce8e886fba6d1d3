"""Active Inference agents: EFE, softmax, precision, archetypes, annealing, agent records."""

import math

import numpy as np
import pytest

from palazzo.core.model import PALACE_ID, EdgeKind
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.palace import Palace
from palazzo.stigmergy.agents import (
    ARCHETYPES,
    add_agent,
    agent_id,
    anneal,
    anneal_cosine,
    anneal_exponential,
    anneal_linear,
    archetype,
    choose,
    expected_free_energy,
    is_relevant,
    softmax_policy,
    update_precision,
)


def test_efe_hand_computed():
    # n1: π=1, cos=0.5, social=0.2 -> −(1 + .5 + .2); n2: π=4, cos=−0.25, social=−0.1
    efe = expected_free_energy([1.0, 4.0], [0.5, -0.25], [0.2, -0.1])
    assert efe == pytest.approx([-1.7, -(0.25 - 0.25 - 0.1)])
    with pytest.raises(ValidationError):
        expected_free_energy([0.0], [0.0], [0.0])


def test_softmax_hand_computed():
    p = softmax_policy(np.array([-1.0, 0.0]), 1.0)
    e = math.exp(1.0)
    assert p == pytest.approx([e / (e + 1), 1 / (e + 1)])
    # Temperature 0.5 doubles the exponents.
    p = softmax_policy(np.array([-1.0, 0.0]), 0.5)
    assert p[0] == pytest.approx(math.exp(2) / (math.exp(2) + 1))
    # Equal scores: uniform.
    assert softmax_policy(np.zeros(4), 0.1) == pytest.approx([0.25] * 4)


def test_softmax_is_numerically_stable():
    p = softmax_policy(np.array([-1000.0, -999.0, 5.0]), 0.1)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    assert p[0] == pytest.approx(1 / (1 + math.exp(-10)))
    p = softmax_policy(np.array([-1.0, 0.0]), 0.0)  # clamped: the arg-max limit
    assert p == pytest.approx([1.0, 0.0])
    with pytest.raises(ValidationError):
        softmax_policy(np.array([]), 1.0)


def test_choose_uses_only_the_given_generator():
    p = np.array([0.2, 0.5, 0.3])
    a = [choose(p, np.random.default_rng(7)) for _ in range(3)]
    b = [choose(p, np.random.default_rng(7)) for _ in range(3)]
    assert a == b
    rng = np.random.default_rng(0)
    draws = np.bincount([choose(p, rng) for _ in range(4000)], minlength=3) / 4000
    assert draws == pytest.approx(p, abs=0.03)
    assert choose(np.array([0.0, 1.0, 0.0]), np.random.default_rng(3)) == 1


def test_archetype_temperatures():
    assert {k: a.temperature for k, a in ARCHETYPES.items()} == {
        "explorer": 1.0, "exploiter": 0.1, "balanced": 0.5, "specialist": 0.3,
        "generalist": 0.7}
    assert archetype(" Explorer ").name == "explorer"
    with pytest.raises(ValidationError, match="known"):
        archetype("wizard")


def test_precision_update():
    assert update_precision(1.0, True) == 2.0
    assert update_precision(1.0, False) == 1.0
    assert update_precision(2.0, True, delta=0.5) == 2.5
    assert is_relevant(0.3, True) and not is_relevant(0.1, True)
    assert is_relevant(-1.0, False)  # no goal: every look is informative
    # More precision, less epistemic value: EFE rises (less attractive).
    assert expected_free_energy(2.0, 0, 0) > expected_free_energy(1.0, 0, 0)


def test_annealing_endpoints_and_midpoints():
    assert anneal_linear(0, 1.0, 0.1, 100) == 1.0
    assert anneal_linear(100, 1.0, 0.1, 100) == pytest.approx(0.1)
    assert anneal_linear(50, 1.0, 0.1, 100) == pytest.approx(0.55)
    assert anneal_linear(500, 1.0, 0.1, 100) == pytest.approx(0.1)  # clamped after horizon
    assert anneal_exponential(0, 1.0, 0.01, 10) == 1.0
    assert anneal_exponential(10, 1.0, 0.01, 10) == pytest.approx(0.01)
    assert anneal_exponential(5, 1.0, 0.01, 10) == pytest.approx(0.1)  # √(T0·Tmin)
    assert anneal_cosine(0, 1.0, 0.2, 8) == pytest.approx(1.0)
    assert anneal_cosine(8, 1.0, 0.2, 8) == pytest.approx(0.2)
    assert anneal_cosine(4, 1.0, 0.2, 8) == pytest.approx(0.6)
    assert anneal("constant", 99, 0.7, 0.1, 10) == 0.7
    assert anneal("cosine", 4, 1.0, 0.2, 8) == pytest.approx(0.6)
    with pytest.raises(ValidationError):
        anneal("sawtooth", 1, 1, 0.1, 10)
    with pytest.raises(ValidationError):
        anneal_linear(1, 1, 0.1, 0)
    with pytest.raises(ValidationError):
        anneal_exponential(1, 1, 0.0, 10)


def test_add_agent_stores_record_and_edge():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 5.0)
    agent, created = add_agent(p, "Code Keeper", "specialist", focus="code")
    assert created and agent.id == agent_id("Code Keeper") == "agent:code-keeper"
    assert agent.archetype == "specialist" and agent.state == {"temperature": 0.3}
    assert agent.created_at == 5.0 and p.agents[agent.id] is agent
    assert p.edges.find(EdgeKind.HAS_AGENT, PALACE_ID, agent.id) is not None
    again, created = add_agent(p, "Code Keeper", "explorer")
    assert again is agent and not created
    with pytest.raises(ValidationError, match="clashes"):
        add_agent(p, "code keeper")
    with pytest.raises(ValidationError):
        add_agent(p, "x", "wizard")
    with pytest.raises(ValidationError):
        add_agent(p, "  ")

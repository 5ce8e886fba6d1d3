"""Active Inference agents: expected free energy, softmax policy, beliefs, archetypes (seed 000
§"Active Inference Agents").

For a candidate node n the expected free energy is

    EFE(n) = −(V_epistemic(n) + V_pragmatic(n) + Q_edge(n))

- ``V_epistemic(n) = 1/π_n``: π_n is the agent's precision about n (high uncertainty, large
  epistemic value, for nodes it has not looked at);
- ``V_pragmatic(n) = cos(e_n, g)``: the node's vector against the goal vector (0 without a
  goal or without a node vector);
- ``Q_edge(n) = min(exploitation(n), 1) − min(exploration(n), 1)``: the node pheromones,
  each clamped at 1 as the seed clamps them in the edge factor Φ (drawers carry them in
  ``palace.drawers.columns``, wings, rooms, closets and entities in ``palace.node_pheromones``:
  :func:`palazzo.stigmergy.pheromone.social`).

The action is drawn from ``p_i ∝ exp(−EFE_i / τ)`` (:func:`softmax_policy`) with a
temperature τ set by the archetype and optionally annealed (:func:`anneal`). Each archetype
also has a :class:`Strategy` (:data:`STRATEGIES`): which terms of the score it weighs and how
(the explorer is pure epistemic, the exploiter follows trails), and what it does besides
walking (the specialist keeps a diary of one wing, the generalist proposes tunnels).

Belief update (seed Eq. belief): ``π_n ← π_n + Δπ·1[o relevant]``. The seed leaves Δπ and
"relevant" open; ours: Δπ = :data:`DELTA_PRECISION` (1.0), the prior precision
:data:`PRIOR_PRECISION` (1.0, so an unseen node has epistemic value 1), and an observation is
relevant when its pragmatic value is at least :data:`RELEVANT_COS` (0.25) or when there is no
goal (then every look at a node is informative about it). The rule is exactly the conjugate
Normal–Normal update of a mean with known observation precision Δπ (posterior precision =
prior precision + observation precision).

Randomness comes only from a ``numpy.random.Generator`` passed in by the caller.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from palazzo.core.model import PALACE_ID, Agent, EdgeKind, clean_name
from palazzo.errors import ValidationError

PRIOR_PRECISION = 1.0
DELTA_PRECISION = 1.0
RELEVANT_COS = 0.25
MIN_TEMPERATURE = 1e-6  # τ is clamped to this: τ → 0 is the arg-max limit, not a division by 0


@dataclass(slots=True, frozen=True)
class Archetype:
    """One of the seed's five pre-configured agent kinds (Table "archetypes")."""

    name: str
    strategy: str
    temperature: float
    description: str


ARCHETYPES: dict[str, Archetype] = {
    a.name: a for a in (
        Archetype("explorer", "Pure epistemic", 1.0, "Seeks new rooms; expands palace frontier"),
        Archetype("exploiter", "Follow proven trails", 0.1, "Retrieves known memories quickly"),
        Archetype("balanced", "Mixed", 0.5, "Default; balances both goals"),
        Archetype("specialist", "Wing manager", 0.3,
                  "Deep focus on one wing; maintains diary"),
        Archetype("generalist", "Cross-domain", 0.7, "Finds tunnels between domains"),
    )
}
SCHEDULES = ("constant", "linear", "exponential", "cosine")


@dataclass(slots=True, frozen=True)
class Strategy:
    """How an archetype weighs what it senses: the terms of its interest score

        I(n) = epistemic·V_epistemic + pragmatic·V_pragmatic
               + exploit·φ_exploit(n) − explore·φ_explore(n)
               + novelty·1[no agent of the swarm has been at n]
               + trail·Φ(edge to n) + domain·V_domain(n)

    (the swarm's three weights w1, w2, w3 multiply the first, second and third line), and
    whether it may step straight back to the node it came from when it has another choice.
    ``learn_every_visit``: every look at a node raises the agent's precision about it (pure
    epistemic: any observation is information), not only a relevant one. ``confined``: the
    agent stays inside one wing. ``proposes_tunnels`` / ``keeps_diary``: the acts of the
    generalist and the specialist (:mod:`palazzo.stigmergy.swarm`).
    """

    epistemic: float = 1.0
    pragmatic: float = 1.0
    exploit: float = 1.0
    explore: float = 1.0
    novelty: float = 0.0
    trail: float = 0.0
    domain: float = 0.0
    backtrack: bool = True
    learn_every_visit: bool = False
    confined: bool = False
    proposes_tunnels: bool = False
    keeps_diary: bool = False


# Seed 000's strategies made concrete (the weights are ours; the seed gives a strategy name and
# a temperature). Balanced is exactly the seed's EFE, I = −EFE.
NOVELTY = 1.0  # one unseen node outweighs a full exploration mark
TRAIL = 3.0  # with τ = 0.1 a trail edge of Φ ≥ 0.2 is taken e^6 ≈ 400 times as often as none
STRATEGIES: dict[str, Strategy] = {
    # Pure epistemic: what it has not looked at, what nobody has searched, what no agent saw.
    "explorer": Strategy(epistemic=1.0, pragmatic=0.0, exploit=0.0, explore=1.0,
                         novelty=NOVELTY, backtrack=False, learn_every_visit=True),
    # Follow proven trails: edge Φ (success, traversal, recency) and node exploitation; no
    # curiosity, no aversion to searched places.
    "exploiter": Strategy(epistemic=0.0, pragmatic=1.0, exploit=1.0, explore=0.0,
                          trail=TRAIL, backtrack=False),
    "balanced": Strategy(),
    # The seed's EFE inside one wing, keeping a diary of what it found there.
    "specialist": Strategy(backtrack=False, confined=True, keeps_diary=True),
    # The seed's EFE plus a pull towards the wings it has seen least (and, after a while in
    # one wing, towards the way out of it); proposes tunnels.
    "generalist": Strategy(domain=1.0, backtrack=False, proposes_tunnels=True),
}


def archetype(name: str) -> Archetype:
    """Return the archetype called ``name`` (case-insensitive) or raise ValidationError. O(1)."""
    try:
        return ARCHETYPES[name.strip().lower()]
    except KeyError:
        raise ValidationError(f"unknown archetype {name!r}; known: "
                              + ", ".join(ARCHETYPES)) from None


# -- expected free energy and policy --------------------------------------------------------
def expected_free_energy(precision: np.ndarray | float, pragmatic: np.ndarray | float,
                         social: np.ndarray | float) -> np.ndarray:
    """Return EFE = −(1/precision + pragmatic + social) elementwise (float64 array).

    Precisions must be positive. Cost: O(n), vectorised.
    """
    pi = np.asarray(precision, dtype=np.float64)
    if np.any(pi <= 0):
        raise ValidationError("precision must be positive")
    return -(1.0 / pi + np.asarray(pragmatic, np.float64) + np.asarray(social, np.float64))


def softmax_policy(efe: np.ndarray, temperature: float) -> np.ndarray:
    """Return the action probabilities p_i = exp(−EFE_i/τ) / Σ_j exp(−EFE_j/τ).

    Numerically stable (the largest exponent is subtracted first), so τ = 0.1 with large
    scores never overflows; τ is clamped to :data:`MIN_TEMPERATURE`. Cost: O(n).
    """
    z = -np.asarray(efe, dtype=np.float64) / max(float(temperature), MIN_TEMPERATURE)
    if z.size == 0:
        raise ValidationError("softmax needs at least one candidate")
    z -= z.max()
    w = np.exp(z)
    return w / w.sum()


def choose(probabilities: np.ndarray, rng: np.random.Generator) -> int:
    """Return an index drawn from ``probabilities`` using one ``rng.random()`` draw. O(n)."""
    cdf = np.cumsum(probabilities)
    i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    return min(i, len(cdf) - 1)


def update_precision(precision: float, relevant: bool, delta: float = DELTA_PRECISION) -> float:
    """Return π + Δπ·1[relevant] (seed Eq. belief; conjugate Normal update). O(1)."""
    return float(precision) + (float(delta) if relevant else 0.0)


def is_relevant(pragmatic: float, has_goal: bool, threshold: float = RELEVANT_COS) -> bool:
    """Return whether an observation with this pragmatic value confirms a belief. O(1)."""
    return (not has_goal) or pragmatic >= threshold


# -- temperature annealing ------------------------------------------------------------------
def _fraction(t: float, horizon: float) -> float:
    if horizon <= 0:
        raise ValidationError("annealing horizon must be positive")
    return min(max(float(t) / float(horizon), 0.0), 1.0)


def anneal_linear(t: float, t0: float, tmin: float, horizon: float) -> float:
    """Return T0 − (T0 − Tmin)·min(t/horizon, 1): T0 at t = 0, Tmin from t = horizon on."""
    return t0 - (t0 - tmin) * _fraction(t, horizon)


def anneal_exponential(t: float, t0: float, tmin: float, horizon: float) -> float:
    """Return T0·(Tmin/T0)^min(t/horizon, 1): geometric, √(T0·Tmin) at half the horizon.

    Both temperatures must be positive. O(1).
    """
    if t0 <= 0 or tmin <= 0:
        raise ValidationError("exponential annealing needs positive temperatures")
    return t0 * (tmin / t0) ** _fraction(t, horizon)


def anneal_cosine(t: float, t0: float, tmin: float, horizon: float) -> float:
    """Return Tmin + (T0 − Tmin)·(1 + cos(π·min(t/horizon, 1)))/2: the mean at half. O(1)."""
    return tmin + (t0 - tmin) * 0.5 * (1.0 + math.cos(math.pi * _fraction(t, horizon)))


def anneal(schedule: str, t: float, t0: float, tmin: float, horizon: float) -> float:
    """Return the temperature of ``schedule`` ("constant", "linear", "exponential",
    "cosine") at cycle ``t``. O(1)."""
    if schedule == "constant":
        return t0
    if schedule == "linear":
        return anneal_linear(t, t0, tmin, horizon)
    if schedule == "exponential":
        return anneal_exponential(t, t0, tmin, horizon)
    if schedule == "cosine":
        return anneal_cosine(t, t0, tmin, horizon)
    raise ValidationError(f"unknown schedule {schedule!r}; known: " + ", ".join(SCHEDULES))


# -- agent records --------------------------------------------------------------------------
def agent_id(name: str) -> str:
    """Return the agent node id of ``name``: "agent:" + the name, lower-cased, runs of
    characters other than letters, digits, "-" and "_" turned into "-". O(len(name))."""
    slug = re.sub(r"[^\w-]+", "-", name.strip().lower()).strip("-")
    return f"agent:{slug or 'agent'}"


def add_agent(palace: Any, name: str, archetype_name: str = "balanced",
              focus: str = "") -> tuple[Agent, bool]:
    """Return (the agent called ``name``, whether it was created now).

    A new agent is stored in ``palace.agents`` with state {"temperature": archetype τ} and
    linked from the palace node by a HAS_AGENT edge. A different agent whose name maps to the
    same id is refused (ValidationError). Cost: O(len(name)).
    """
    name = clean_name(name, "agent")
    kind = archetype(archetype_name)
    aid = agent_id(name)
    existing = palace.agents.get(aid)
    if existing is not None:
        if existing.name != name:
            raise ValidationError(f"agent {name!r} clashes with agent {existing.name!r} "
                                  f"(both are {aid!r})")
        return existing, False
    agent = Agent(id=aid, name=name, focus=focus.strip(), archetype=kind.name,
                  created_at=float(palace.clock()),
                  state={"temperature": kind.temperature})
    palace.agents[aid] = agent
    palace.edges.add(EdgeKind.HAS_AGENT, PALACE_ID, aid)
    return agent, True


def agent_dict(agent: Agent) -> dict[str, Any]:
    """Return the JSON-able form of an agent record. O(size of its state)."""
    return {"id": agent.id, "name": agent.name, "focus": agent.focus,
            "archetype": agent.archetype, "created_at": agent.created_at,
            "temperature": float(agent.state.get("temperature",
                                                 archetype(agent.archetype).temperature)),
            "state": dict(agent.state)}

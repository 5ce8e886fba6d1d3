"""Slice policies: the rules a context slice grows by, and the registry that names them.

A :class:`SlicePolicyV1` (seed 002 §4.3) says how many turns a slice takes, how far from its
anchor, and how phase, salience and distance weigh; its fingerprint (``params_hash``) is the
sha256 of its canonical, quantised parameters, so a policy is exactly what its hash says. A
:class:`PolicyRegistry` holds a palace's policies by name; a name, once registered, always
means the same parameters, because admissibility tokens name policies.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from palazzo.errors import NotFound, ValidationError
from palazzo.memory.conversation import PHASES, QUANTUM, is_hex, quantise
from palazzo.provenance.canonical import canonical_bytes, sha256_hex

DEFAULT_POLICY = "default"
# Seed 002 §4.1: synthesis 1.0, planning 0.9, consolidation 0.6, debugging 0.5, exploration 0.3.
DEFAULT_PHASE_WEIGHTS = (("synthesis", 1.0), ("planning", 0.9), ("consolidation", 0.6),
                         ("debugging", 0.5), ("exploration", 0.3))
POLICY_PARAMS = ("max_nodes", "max_radius", "phase_weights", "salience_weight",
                 "distance_decay", "include_siblings", "max_siblings_per_node")
MAX_POLICIES = 1000
MAX_NODES = 10_000
MAX_RADIUS = 10_000
MAX_SIBLINGS = 1000
POLICY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(slots=True, frozen=True)
class SlicePolicyV1:
    """How a slice grows from its anchor (seed 002 §4.3).

    A turn at ``distance`` hops has priority ``W_phase · (1 − α + α·salience) · β^distance``
    (α = ``salience_weight``, β = ``distance_decay``); at most ``max_nodes`` turns within
    ``max_radius`` hops are taken, best first. With ``include_siblings`` each taken turn also
    offers up to ``max_siblings_per_node`` of its siblings (other children of its parents) at
    its own distance. ``phase_weights`` may be given as a mapping; phases it leaves out keep
    their default weight, and it is stored as (phase, weight) pairs in ``PHASES`` order.
    Floats are quantised to 1e-6 when the policy is made, so a policy is exactly what its hash
    says. Invalid values raise ValidationError. Defaults: the seed's weights, α = 0.3 and
    β = 0.9; the seed gives no sizes, so 64 turns, 8 hops and 3 siblings are palazzo's.
    """

    name: str = DEFAULT_POLICY
    max_nodes: int = 64
    max_radius: int = 8
    phase_weights: tuple[tuple[str, float], ...] = DEFAULT_PHASE_WEIGHTS
    salience_weight: float = 0.3
    distance_decay: float = 0.9
    include_siblings: bool = True
    max_siblings_per_node: int = 3

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not POLICY_NAME.fullmatch(self.name):
            raise ValidationError("policy name must be 1-64 characters of letters, digits, "
                                  "'_', '.', '-', starting with a letter or digit")
        _integer(self.max_nodes, "max_nodes", 1, MAX_NODES)
        _integer(self.max_radius, "max_radius", 0, MAX_RADIUS)
        _integer(self.max_siblings_per_node, "max_siblings_per_node", 0, MAX_SIBLINGS)
        if not isinstance(self.include_siblings, bool):
            raise ValidationError("include_siblings must be true or false")
        weights = self.phase_weights
        given = dict(weights) if isinstance(weights, Mapping) else _pairs(weights)
        unknown = sorted(set(given) - set(PHASES), key=str)
        if unknown:
            raise ValidationError(f"phase_weights: unknown phase(s) {unknown}; phases are "
                                  + ", ".join(PHASES))
        merged = dict(DEFAULT_PHASE_WEIGHTS) | given
        set_ = object.__setattr__  # frozen: the normalised values are set once, here
        set_(self, "phase_weights", tuple((p, _unit(merged[p], f"phase_weights.{p}", 0.0))
                                          for p in PHASES))
        set_(self, "salience_weight", _unit(self.salience_weight, "salience_weight", 0.0))
        set_(self, "distance_decay", _unit(self.distance_decay, "distance_decay", 1e-6))

    def canonical(self) -> dict[str, Any]:
        """Return the parameters in canonical form (floats as 10^6-scaled integers); the name
        is not a parameter, so two names for the same rules share a fingerprint."""
        return {
            "kind": "SlicePolicyV1",
            "max_nodes": self.max_nodes,
            "max_radius": self.max_radius,
            "phase_weights": {p: quantise(w) for p, w in self.phase_weights},
            "salience_weight": quantise(self.salience_weight),
            "distance_decay": quantise(self.distance_decay),
            "include_siblings": self.include_siblings,
            "max_siblings_per_node": self.max_siblings_per_node,
        }

    @property
    def params_hash(self) -> str:
        """Return the policy's fingerprint: sha256 hex of its canonical parameter bytes."""
        return sha256_hex(canonical_bytes(self.canonical()))

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form: name and parameters (floats as quantised floats)."""
        return {"name": self.name, "max_nodes": self.max_nodes, "max_radius": self.max_radius,
                "phase_weights": dict(self.phase_weights),
                "salience_weight": self.salience_weight, "distance_decay": self.distance_decay,
                "include_siblings": self.include_siblings,
                "max_siblings_per_node": self.max_siblings_per_node}

    @classmethod
    def from_dict(cls, value: Any, where: str = "policy") -> SlicePolicyV1:
        """Return the policy described by ``value`` (``to_dict``'s form; parameters left out
        take their defaults); raise ValidationError naming ``where`` on anything else."""
        if not isinstance(value, dict):
            raise ValidationError(f"{where} must be an object")
        extra = sorted(set(value) - {"name", *POLICY_PARAMS})
        if extra:
            raise ValidationError(f"{where} has unknown field(s): {', '.join(extra)}")
        if "name" not in value:
            raise ValidationError(f"{where}.name is missing")
        weights = value.get("phase_weights", {})
        if not isinstance(weights, dict):
            raise ValidationError(f"{where}.phase_weights must be an object")
        try:
            return cls(**value)
        except ValidationError as err:
            raise ValidationError(f"{where}: {err}") from None


def _integer(value: Any, what: str, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationError(f"{what} must be an integer from {lo} to {hi}, got {value!r}")


def _unit(value: Any, what: str, lo: float) -> float:
    """Return ``value`` quantised to 1e-6 if it is a number in [lo, 1], else raise."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= 1:
        raise ValidationError(f"{what} must be a number from {lo:g} to 1, got {value!r}")
    return quantise(value) / QUANTUM


def _pairs(value: Any) -> dict[str, Any]:
    if not isinstance(value, tuple | list) or not all(
            isinstance(p, tuple | list) and len(p) == 2 and isinstance(p[0], str)
            for p in value):
        raise ValidationError("phase_weights must map phases to weights")
    return {p: w for p, w in value}


class PolicyRegistry:
    """Named slice policies; a name, once registered, always means the same parameters.

    The built-in ``default`` policy is in every registry. Iteration follows registration order.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, SlicePolicyV1] = {DEFAULT_POLICY: SlicePolicyV1()}

    def __iter__(self) -> Iterator[SlicePolicyV1]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    def register(self, policy: SlicePolicyV1) -> tuple[SlicePolicyV1, bool]:
        """Add ``policy``; return (the registered policy, whether it is new).

        The same name with the same parameters is a no-op; with other parameters it raises
        ValidationError, because tokens name policies and a name must not change meaning.
        """
        old = self._by_name.get(policy.name)
        if old is not None:
            if old.params_hash == policy.params_hash:
                return old, False
            raise ValidationError(f"policy {policy.name!r} exists with other parameters; a "
                                  "policy never changes, so register the new rules under a "
                                  "new name")
        if len(self._by_name) > MAX_POLICIES:
            raise ValidationError(f"a palace holds at most {MAX_POLICIES} policies")
        self._by_name[policy.name] = policy
        return policy, True

    def find(self, name: str) -> SlicePolicyV1 | None:
        """Return the policy called ``name``, or None."""
        return self._by_name.get(name)

    def get(self, ref: str) -> SlicePolicyV1:
        """Return the policy named ``ref``, or else the first one whose params hash is
        ``ref``; raise NotFound listing the names."""
        policy = self._by_name.get(ref)
        if policy is None and is_hex(ref, 64):
            policy = next((p for p in self._by_name.values() if p.params_hash == ref), None)
        if policy is None:
            raise NotFound(f"no policy {ref!r}; known: {', '.join(self._by_name)}")
        return policy

    def registered(self) -> list[SlicePolicyV1]:
        """Return the policies added to this palace (all but the built-in default)."""
        return [p for n, p in self._by_name.items() if n != DEFAULT_POLICY]

    def fingerprint(self) -> str:
        """Return the registry's composite fingerprint: sha256 over the sorted
        (name, params hash) pairs, so any added or different policy changes it."""
        pairs = [[n, self._by_name[n].params_hash] for n in sorted(self._by_name)]
        return sha256_hex(canonical_bytes({"kind": "PolicyRegistry", "policies": pairs}))

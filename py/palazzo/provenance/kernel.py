"""The provenance kernel: slice policies, context slices and admissibility tokens (seed 002 §4).

Given an anchor turn and a :class:`SlicePolicyV1`, :func:`policy_weighted_bfs` picks the turns
of the conversation DAG allowed to inform that turn, and an admissibility token binds what was
picked to six provenance fields, in this order::

    slice_id, anchor_turn_id, policy_id, policy_params_hash, graph_snapshot_hash, schema_version

The token is HMAC-SHA256, keyed by a secret of this palace, over the canonical JSON array
``["palazzo-admissibility-v1", <the six fields>]``, written as 64 lowercase hex digits (the
whole digest: the seed's truncation to 128 bits saves nothing here). It is compared with
:func:`hmac.compare_digest`, in constant time.

**Hashes** are sha256 (hashlib) everywhere. The seed uses xxHash64, which neither CPython's nor
Pyodide's standard library has; sha256 is in both and, unlike xxHash, is collision resistant,
which a fingerprint a token vouches for should be.

**Canonical form.** Everything hashed is first written as canonical JSON: keys sorted, no
whitespace, ASCII only (``\\uXXXX`` escapes), and no float anywhere: floats are quantised to
``round(x·10^6)`` integers (:func:`palazzo.memory.conversation.quantise`), so the same policy
and slice hash alike in CPython, Pyodide or another language. Ties are broken by turn id
everywhere, so no result depends on dict or set order.

**Keys** are 32 bytes from :func:`secrets.token_bytes`, made on first use (or injected, for
tests) and named by a key id derived from the secret. Rotation makes a new key sign while old
ones still verify; a deleted key verifies nothing. Keys live in :class:`Keyring`, which the palace
file never contains (the export says ``"keys": "not exported"``); ``keyring_to_json`` is for
storing them locally beside the palace.

**What the token does not cover.** The six fields bind the anchor, the set of turn ids (sorted:
the order turns are listed in is free), the edges among them, their content hashes and the
policy. A bundle's ``distance`` and ``priority`` of each turn, its ``sliced_at`` time and the
order of its turns are descriptive and not signed: anyone holding a bundle can change them and
it still verifies (:meth:`Provenance.is_current` re-runs the slice to confirm the selection).
Phase, salience, depth, time and drawer of a turn are checked against this palace's records
when it holds the turn, and unsigned otherwise. Reading a bundle refuses a ``sliced_at`` or a
turn time that no date has (outside years 1 to 9999, NaN, infinite), and the PROV export
writes times it can, so neither ever raises.

**Admissible evidence.** An :class:`AdmissibleEvidenceBundle` can only be made by
:meth:`Provenance.slice` and :meth:`Provenance.admit`, both of which verify a token first (the
seed's INV-003, as far as Python can enforce it: the constructor demands a private seal).
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import json
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import InitVar, dataclass, field
from datetime import UTC, datetime
from typing import Any

from palazzo.errors import ImportRejected, NotAdmissible, NotFound, PalazzoError, ValidationError
from palazzo.memory.conversation import (
    EDGE_TYPES,
    PHASES,
    QUANTUM,
    ROLES,
    content_hash,
    is_hex,
    quantise,
    turn_id,
)

SCHEMA_VERSION = "palazzo.slice.v1"
TOKEN_DOMAIN = "palazzo-admissibility-v1"
FIELDS = ("slice_id", "anchor_turn_id", "policy_id", "policy_params_hash",
          "graph_snapshot_hash", "schema_version")
DEFAULT_POLICY = "default"
# Seed 002 §4.1: synthesis 1.0, planning 0.9, consolidation 0.6, debugging 0.5, exploration 0.3.
DEFAULT_PHASE_WEIGHTS = (("synthesis", 1.0), ("planning", 0.9), ("consolidation", 0.6),
                         ("debugging", 0.5), ("exploration", 0.3))
POLICY_PARAMS = ("max_nodes", "max_radius", "phase_weights", "salience_weight",
                 "distance_decay", "include_siblings", "max_siblings_per_node")
KEY_BYTES = 32
MAX_POLICIES = 1000
MAX_NODES = 10_000
MAX_RADIUS = 10_000
MAX_SIBLINGS = 1000
NOT_EXPORTED = "not exported"
_POLICY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_KEY_ID = re.compile(r"key_[0-9a-f]{16}")




class _Refused(Exception):
    """Internal: verification stopped with a reason code (never leaves this module)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


# -- canonical bytes ---------------------------------------------------------------------------

def _check_canonical(value: Any, path: str) -> None:
    if isinstance(value, float):
        raise TypeError(f"{path} is a float; quantise it before hashing")
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{path} has a key that is not a string")
            _check_canonical(v, f"{path}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check_canonical(v, f"{path}[{i}]")
    elif not (value is None or isinstance(value, str | int)):
        raise TypeError(f"{path} is a {type(value).__name__}, not JSON")


def canonical_bytes(value: Any) -> bytes:
    """Return the canonical JSON bytes of ``value``: sorted keys, no whitespace, ASCII.

    Floats are refused (TypeError): they must be quantised first, so that no platform's float
    printing can change a hash. Cost: O(size of value).
    """
    _check_canonical(value, "value")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def sha256_hex(data: bytes) -> str:
    """Return the sha256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


# -- policies ----------------------------------------------------------------------------------

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
        if not isinstance(self.name, str) or not _POLICY_NAME.fullmatch(self.name):
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


# -- slicing -----------------------------------------------------------------------------------

@dataclass(slots=True, frozen=True)
class Selection:
    """One turn a slice took: its hop distance from the anchor and its priority."""

    turn_id: str
    distance: int
    priority: float


def policy_weighted_bfs(conversations: Any, anchor: str, policy: SlicePolicyV1
                        ) -> list[Selection]:
    """Return the turns ``policy`` selects around ``anchor``, in the order taken.

    Best-first expansion (seed 002 Algorithm 1): the frontier pops the highest priority, then
    the nearer turn, then the smaller turn id, so the order is total and never depends on
    insertion order. Neighbours are parents and children at distance + 1; a turn is queued at
    most once (at the first distance it is found), and turns beyond ``max_radius`` are never
    queued. Siblings are queued at the taken turn's own distance, best first, at most
    ``max_siblings_per_node`` not yet queued per taken turn (a taken sibling then offers its
    own siblings, so in a plain fan-out the cap bounds the frontier, not the result; it bounds
    the result where merges make siblings differ). β^d is built by repeated multiplication (no
    ``pow``), so the floats are bitwise the same on every IEEE-754 platform.
    Raises NotFound for an unknown anchor. Cost: O(k·(deg + log k)) for k queued turns.
    """
    turns = conversations.turns
    if anchor not in turns:
        raise NotFound(f"no conversation turn with id {anchor!r}")
    weights = dict(policy.phase_weights)
    alpha = policy.salience_weight
    decay = [1.0]
    for _ in range(policy.max_radius):
        decay.append(decay[-1] * policy.distance_decay)

    def score(tid: str, distance: int) -> float:
        t = turns[tid]
        return weights[t.phase] * (1.0 - alpha + alpha * t.salience) * decay[distance]

    frontier = [(-score(anchor, 0), 0, anchor)]
    queued = {anchor}
    taken: list[Selection] = []
    while frontier and len(taken) < policy.max_nodes:
        neg, distance, tid = heapq.heappop(frontier)
        taken.append(Selection(tid, distance, -neg))
        if distance < policy.max_radius:
            near = set(turns[tid].parents).union(conversations.children.get(tid, ()))
            for n in sorted(near - queued):
                queued.add(n)
                heapq.heappush(frontier, (-score(n, distance + 1), distance + 1, n))
        if policy.include_siblings and policy.max_siblings_per_node:
            sibs = [s for s in conversations.siblings_of(tid) if s not in queued]
            sibs.sort(key=lambda s: (-score(s, distance), s))
            for s in sibs[: policy.max_siblings_per_node]:
                queued.add(s)
                heapq.heappush(frontier, (-score(s, distance), distance, s))
    return taken


def snapshot_hash(content_hashes: list[str]) -> str:
    """Return the graph snapshot hash: sha256 of the canonical, sorted content hashes."""
    return sha256_hex(canonical_bytes({"content_hashes": sorted(content_hashes),
                                       "schema_version": SCHEMA_VERSION}))


def slice_id(anchor: str, turn_ids: list[str], edges: list[tuple[str, str, str]],
             policy_id: str, params_hash: str, schema_version: str = SCHEMA_VERSION) -> str:
    """Return the slice id: sha256 over the canonical anchor, sorted turn ids, sorted
    (parent, child, type) edges, policy id, params hash and schema version."""
    return sha256_hex(canonical_bytes({
        "anchor": anchor, "turns": sorted(turn_ids),
        "edges": [list(e) for e in sorted(edges)], "policy_id": policy_id,
        "params_hash": params_hash, "schema_version": schema_version,
    }))


@dataclass(slots=True, frozen=True)
class SliceTurn:
    """A turn as a bundle carries it: the turn's record, where the slice found it, and its
    text when the drawer still holds it unchanged (None otherwise)."""

    id: str
    conversation: str
    parents: tuple[str, ...]
    role: str
    phase: str
    salience: float
    depth: int
    created_at: float
    content_hash: str
    drawer_id: str
    distance: int
    priority: float
    content: str | None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form."""
        return {"id": self.id, "conversation": self.conversation, "parents": list(self.parents),
                "role": self.role, "phase": self.phase, "salience": self.salience,
                "depth": self.depth, "created_at": self.created_at,
                "content_hash": self.content_hash, "drawer_id": self.drawer_id,
                "distance": self.distance, "priority": self.priority, "content": self.content}


@dataclass(slots=True, frozen=True)
class SliceEdge:
    """A reply/branch/merge link between two turns of a slice."""

    parent: str
    child: str
    type: str

    def to_dict(self) -> dict[str, str]:
        """Return the JSON-able form."""
        return {"parent": self.parent, "child": self.child, "type": self.type}


@dataclass(slots=True, frozen=True)
class ProvenanceFields:
    """The six fields an admissibility token binds (seed 002 INV-002), in token order."""

    slice_id: str
    anchor_turn_id: str
    policy_id: str
    policy_params_hash: str
    graph_snapshot_hash: str
    schema_version: str

    def values(self) -> list[str]:
        """Return the six values in token order."""
        return [self.slice_id, self.anchor_turn_id, self.policy_id, self.policy_params_hash,
                self.graph_snapshot_hash, self.schema_version]

    def message(self) -> bytes:
        """Return the bytes the HMAC covers: canonical ``[domain, six fields]``."""
        return canonical_bytes([TOKEN_DOMAIN, *self.values()])

    def to_dict(self) -> dict[str, str]:
        """Return the JSON-able form."""
        return dict(zip(FIELDS, self.values(), strict=True))

    @classmethod
    def parse(cls, value: Any) -> ProvenanceFields:
        """Return the fields in ``value`` (an object with exactly the six keys, each in its
        format); raise _Refused("malformed_fields") otherwise."""
        if not isinstance(value, dict) or set(value) != set(FIELDS):
            raise _Refused("malformed_fields", "provenance must be an object with exactly "
                           "the fields " + ", ".join(FIELDS))
        checks = {
            "slice_id": is_hex(value["slice_id"], 64),
            "anchor_turn_id": isinstance(value["anchor_turn_id"], str)
            and value["anchor_turn_id"].startswith("turn_")
            and is_hex(value["anchor_turn_id"][5:], 32),
            "policy_id": isinstance(value["policy_id"], str)
            and bool(_POLICY_NAME.fullmatch(value["policy_id"])),
            "policy_params_hash": is_hex(value["policy_params_hash"], 64),
            "graph_snapshot_hash": is_hex(value["graph_snapshot_hash"], 64),
            "schema_version": isinstance(value["schema_version"], str)
            and 0 < len(value["schema_version"]) <= 100,
        }
        bad = [k for k in FIELDS if not checks[k]]
        if bad:
            raise _Refused("malformed_fields", f"provenance.{bad[0]} is not in its format")
        return cls(*(value[k] for k in FIELDS))


@dataclass(slots=True, frozen=True)
class Verdict:
    """The answer of a verification: ``valid``, a stable ``reason`` code ("ok" when valid) and
    a sentence for people; ``key_id`` is the key that signed, when it is known."""

    valid: bool
    reason: str
    detail: str
    key_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form."""
        return {"valid": self.valid, "reason": self.reason, "detail": self.detail,
                "key_id": self.key_id}


_SEAL = object()  # only this module holds it: the one way to make an admissible bundle


@dataclass(slots=True, frozen=True)
class AdmissibleEvidenceBundle:
    """A context slice whose admissibility token has been verified (seed 002 INV-003).

    Made only by :meth:`Provenance.slice` and :meth:`Provenance.admit`, after the token
    verified; constructing one elsewhere (or through ``dataclasses.replace``) raises TypeError.
    ``turns`` are in the order the slice took them.
    """

    fields: ProvenanceFields
    key_id: str
    token: str
    policy: SlicePolicyV1
    turns: tuple[SliceTurn, ...]
    edges: tuple[SliceEdge, ...]
    sliced_at: float | None
    seal: InitVar[object]

    def __post_init__(self, seal: object) -> None:
        if seal is not _SEAL:
            raise TypeError("an AdmissibleEvidenceBundle is made only by verifying a token "
                            "(Provenance.slice or Provenance.admit)")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able bundle (what ``slice_context`` returns and ``verify_token``
        and ``export_prov`` take back)."""
        return {"provenance": self.fields.to_dict(), "key_id": self.key_id,
                "token": self.token, "policy": self.policy.to_dict(),
                "turns": [t.to_dict() for t in self.turns],
                "edges": [e.to_dict() for e in self.edges], "sliced_at": self.sliced_at}


# -- keys --------------------------------------------------------------------------------------

def key_id_of(secret: bytes) -> str:
    """Return the key id of ``secret``: ``key_`` + 16 hex of HMAC(secret, label), which names
    the key without revealing anything about it."""
    return "key_" + hmac.new(secret, b"palazzo-key-id-v1", hashlib.sha256).hexdigest()[:16]


@dataclass(slots=True)
class SigningKey:
    """One signing secret. ``retired_at`` is set when a newer key took over signing."""

    key_id: str
    secret: bytes = field(repr=False)
    created_at: float
    retired_at: float | None = None

    def describe(self, current: bool) -> dict[str, Any]:
        """Return the key's public facts (never the secret)."""
        return {"key_id": self.key_id, "created_at": self.created_at,
                "retired_at": self.retired_at, "current": current}


class Keyring:
    """The signing keys of one palace: one current key signs, retired keys only verify.

    ``entropy(n)`` returns n random bytes (``secrets.token_bytes``; inject a function for
    tests). ``revision`` grows with every change, so a host knows when to store the keyring
    again. Keys are never part of a palace file.
    """

    def __init__(self, entropy: Callable[[int], bytes] = secrets.token_bytes) -> None:
        self.entropy = entropy
        self.keys: dict[str, SigningKey] = {}
        self.current: str | None = None
        self.revision = 0

    def __repr__(self) -> str:
        return f"Keyring(keys={list(self.keys)}, current={self.current!r})"

    @classmethod
    def with_secret(cls, secret: bytes, created_at: float = 0.0) -> Keyring:
        """Return a keyring whose current key is ``secret`` (fixed key material for tests, or
        a key brought from elsewhere)."""
        ring = cls()
        ring.install(secret, created_at)
        return ring

    def get(self, key_id: Any) -> SigningKey | None:
        """Return the key ``key_id`` (current or retired), or None."""
        return self.keys.get(key_id) if isinstance(key_id, str) else None

    def signing_key(self, now: float) -> SigningKey:
        """Return the current key, making the first one now if there is none."""
        if self.current is None:
            return self.install(self._fresh(), now)
        return self.keys[self.current]

    def install(self, secret: bytes, now: float) -> SigningKey:
        """Make ``secret`` (at least 32 bytes) the current key, retiring the one before;
        return it. Raises ValidationError for short or already known secrets."""
        if not isinstance(secret, bytes) or len(secret) < KEY_BYTES:
            raise ValidationError(f"a signing key must be at least {KEY_BYTES} bytes")
        kid = key_id_of(secret)
        if kid in self.keys:
            raise ValidationError(f"key {kid} is already in the keyring")
        if self.current is not None:
            self.keys[self.current].retired_at = float(now)
        self.keys[kid] = SigningKey(kid, secret, float(now))
        self.current = kid
        self.revision += 1
        return self.keys[kid]

    def rotate(self, now: float) -> SigningKey:
        """Make a new random key current; the old one stays for verification only."""
        return self.install(self._fresh(), now)

    def delete(self, key_id: str) -> SigningKey:
        """Remove a retired key: tokens it signed no longer verify. Returns the removed key.
        The current key cannot be deleted (rotate first): NotFound/ValidationError."""
        key = self.get(key_id)
        if key is None:
            raise NotFound(f"no key {key_id!r} in the keyring")
        if key_id == self.current:
            raise ValidationError(f"key {key_id} signs new tokens; rotate_key first, then "
                                  "delete it")
        del self.keys[key_id]
        self.revision += 1
        return key

    def describe(self) -> list[dict[str, Any]]:
        """Return the public facts of every key, oldest first."""
        return [k.describe(k.key_id == self.current) for k in self.keys.values()]

    def _fresh(self) -> bytes:
        secret = self.entropy(KEY_BYTES)
        if not isinstance(secret, bytes) or len(secret) != KEY_BYTES:
            raise PalazzoError(f"the key source returned something other than {KEY_BYTES} "
                               "bytes")
        return secret

    def to_json(self) -> dict[str, Any]:
        """Return the keyring with its secrets (hex) for local storage beside the palace:
        never put this in a palace file or send it anywhere."""
        return {"format": "palazzo-keyring", "version": 1, "current": self.current,
                "keys": [{"key_id": k.key_id, "secret": k.secret.hex(),
                          "created_at": k.created_at, "retired_at": k.retired_at}
                         for k in self.keys.values()]}

    @classmethod
    def from_json(cls, value: Any, entropy: Callable[[int], bytes] = secrets.token_bytes
                  ) -> Keyring:
        """Return the keyring ``to_json`` wrote; raise ValidationError on anything else (ids
        are recomputed from the secrets and must match)."""
        if not isinstance(value, dict) or value.get("format") != "palazzo-keyring" \
                or value.get("version") != 1:
            raise ValidationError("not a palazzo keyring (format palazzo-keyring, version 1)")
        keys = value.get("keys")
        if not isinstance(keys, list):
            raise ValidationError("keyring.keys must be a list")
        ring = cls(entropy)
        for i, k in enumerate(keys):
            at = f"keyring.keys[{i}]"
            text = k.get("secret") if isinstance(k, dict) else None
            if not isinstance(text, str) or len(text) < 2 * KEY_BYTES or len(text) % 2 \
                    or not is_hex(text, len(text)):
                raise ValidationError(f"{at}.secret must be at least {KEY_BYTES} bytes in hex")
            secret = bytes.fromhex(text)
            if k.get("key_id") != key_id_of(secret) or key_id_of(secret) in ring.keys:
                raise ValidationError(f"{at}.key_id does not match its secret (or repeats)")
            created = k.get("created_at")
            retired = k.get("retired_at")
            for name, t in (("created_at", created), ("retired_at", retired)):
                if name == "retired_at" and t is None:
                    continue
                if isinstance(t, bool) or not isinstance(t, int | float):
                    raise ValidationError(f"{at}.{name} must be a number")
            ring.keys[k["key_id"]] = SigningKey(k["key_id"], secret, float(created),
                                                None if retired is None else float(retired))
        current = value.get("current")
        if current is not None and current not in ring.keys:
            raise ValidationError("keyring.current must name one of its keys (or be null)")
        ring.current = current
        return ring


# -- the kernel of a palace --------------------------------------------------------------------

class Provenance:
    """The policy registry and the signing keyring of one palace, and what they do:
    slicing, signing, verifying, admitting."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace
        self.policies = PolicyRegistry()
        self.keyring = Keyring()  # secret signing keys: never exported, kept across imports

    # -- slicing and signing ----------------------------------------------------------------
    def slice(self, anchor: str, policy: str = DEFAULT_POLICY, with_content: bool = True
              ) -> AdmissibleEvidenceBundle:
        """Return the admissible evidence bundle of ``anchor`` under ``policy`` (a name or a
        params hash): the selected turns, the edges among them, the six provenance fields
        and a token signed with the current key (made now if the palace has none).

        The bundle is built through the verification path, like any other. ``with_content``
        adds each turn's text from its drawer (None if the drawer is gone or was edited).
        Raises NotFound for an unknown anchor or policy. Cost: the BFS plus O(k log k).
        """
        rules = self.policies.get(policy)
        conv = self.palace.conversations
        picks = policy_weighted_bfs(conv, anchor, rules)
        ids = [p.turn_id for p in picks]
        edges = conv.edges_among(ids)
        fields = ProvenanceFields(
            slice_id=slice_id(anchor, ids, edges, rules.name, rules.params_hash),
            anchor_turn_id=anchor, policy_id=rules.name, policy_params_hash=rules.params_hash,
            graph_snapshot_hash=snapshot_hash([conv.turns[t].content_hash for t in ids]),
            schema_version=SCHEMA_VERSION,
        )
        now = float(self.palace.clock())
        key_id, token = self.sign(fields, now)
        turns = tuple(self._slice_turn(conv.turns[p.turn_id], p, with_content) for p in picks)
        return self._admit(fields, key_id, token, rules, turns,
                           tuple(SliceEdge(*e) for e in edges), now)

    def _slice_turn(self, t: Any, pick: Selection, with_content: bool) -> SliceTurn:
        text = None
        if with_content:
            row = self.palace.drawers.lookup(t.drawer_id)
            if row is not None:
                stored = self.palace.drawers.content[row]
                text = stored if content_hash(stored) == t.content_hash else None
        return SliceTurn(t.id, t.conversation, t.parents, t.role, t.phase, t.salience, t.depth,
                         t.created_at, t.content_hash, t.drawer_id, pick.distance,
                         pick.priority, text)

    def sign(self, fields: ProvenanceFields, now: float | None = None) -> tuple[str, str]:
        """Return (key id, token): HMAC-SHA256 of ``fields.message()`` under the current key
        (made at ``now``, or the palace clock, if there is none yet)."""
        when = float(self.palace.clock()) if now is None else now
        key = self.keyring.signing_key(when)
        return key.key_id, hmac.new(key.secret, fields.message(), hashlib.sha256).hexdigest()

    def _admit(self, fields: ProvenanceFields, key_id: str, token: str, policy: SlicePolicyV1,
               turns: tuple[SliceTurn, ...], edges: tuple[SliceEdge, ...],
               sliced_at: float | None) -> AdmissibleEvidenceBundle:
        """The one place a bundle is made: only after the token verifies."""
        try:
            self._verify(fields.to_dict(), token, key_id)
        except _Refused as r:
            raise NotAdmissible(Verdict(False, r.reason, r.detail, key_id)) from None
        return AdmissibleEvidenceBundle(fields, key_id, token, policy, turns, edges, sliced_at,
                                        _SEAL)

    # -- verifying --------------------------------------------------------------------------
    def verify(self, fields: Any, token: Any, key_id: Any) -> Verdict:
        """Return whether ``token`` is this palace's signature over ``fields`` (a
        ProvenanceFields or its dict) by key ``key_id``, and the reason if not.

        Never raises on malformed input. Checks, in order: token format (64 lowercase hex),
        fields format, schema version, key known (a deleted key is not), the HMAC (constant
        time), and that the policy still has those parameters here.
        """
        if isinstance(fields, ProvenanceFields):
            fields = fields.to_dict()
        try:
            self._verify(fields, token, key_id)
        except _Refused as r:
            return Verdict(False, r.reason, r.detail, _known(key_id))
        return Verdict(True, "ok", "the token is valid for these fields", key_id)

    def _verify(self, fields_value: Any, token: Any, key_id: Any) -> ProvenanceFields:
        if not is_hex(token, 64):
            raise _Refused("malformed_token", "a token is 64 lowercase hex digits")
        fields = ProvenanceFields.parse(fields_value)
        if fields.schema_version != SCHEMA_VERSION:
            raise _Refused("unsupported_schema", f"schema version {fields.schema_version!r} is "
                           f"not {SCHEMA_VERSION!r}")
        key = self.keyring.get(key_id)
        if key is None:
            raise _Refused("unknown_key", f"no key {key_id!r} in this palace's keyring (never "
                           "made here, or deleted)")
        expected = hmac.new(key.secret, fields.message(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode("ascii"), token.encode("ascii")):
            raise _Refused("bad_signature", "the token does not match these fields under "
                           f"key {key.key_id}")
        policy = self.policies.find(fields.policy_id)
        if policy is None:
            raise _Refused("unknown_policy", f"this palace has no policy {fields.policy_id!r}")
        if policy.params_hash != fields.policy_params_hash:
            raise _Refused("policy_changed", f"policy {fields.policy_id!r} now has other "
                           "parameters than the token names")
        return fields

    def check(self, document: Any) -> Verdict:
        """Return the verdict on a bundle document (``AdmissibleEvidenceBundle.to_dict``'s
        form): its token as :meth:`verify` checks it and, when present, its body: the policy
        must hash to the params hash, each turn id must follow from its conversation,
        parents, role and content hash, each text must hash to its content hash, the turns
        and edges must reproduce the snapshot hash and slice id, and turns this palace holds
        must match its records (phase, salience, depth, time, drawer). Never raises."""
        key_id = document.get("key_id") if isinstance(document, dict) else None
        try:
            self._read(document, full=False)
        except _Refused as r:
            return Verdict(False, r.reason, r.detail, _known(key_id))
        return Verdict(True, "ok", "the token and the bundle are valid", key_id)

    def admit(self, document: Any) -> AdmissibleEvidenceBundle:
        """Return the bundle in ``document`` as admissible evidence, or raise NotAdmissible
        with the verdict. A full bundle (policy, turns and edges) is required."""
        try:
            parts = self._read(document, full=True)
        except _Refused as r:
            key_id = document.get("key_id") if isinstance(document, dict) else None
            raise NotAdmissible(Verdict(False, r.reason, r.detail, _known(key_id))) from None
        return self._admit(*parts)

    def _read(self, doc: Any, full: bool) -> tuple[Any, ...]:
        """Return (fields, key id, token, policy, turns, edges, sliced_at) of a verified
        bundle document; raise _Refused with the first problem."""
        if not isinstance(doc, dict):
            raise _Refused("malformed_bundle", "a bundle is an object")
        extra = sorted(set(doc) - {"provenance", "key_id", "token", "policy", "turns", "edges",
                                   "sliced_at"}, key=str)
        if extra:
            raise _Refused("malformed_bundle", f"unknown bundle field(s): {extra}")
        fields = self._verify(doc.get("provenance"), doc.get("token"), doc.get("key_id"))
        policy = None
        if "policy" in doc or full:
            try:
                policy = SlicePolicyV1.from_dict(doc.get("policy"))
            except ValidationError as err:
                raise _Refused("malformed_bundle", str(err)) from None
            if policy.name != fields.policy_id or policy.params_hash != \
                    fields.policy_params_hash:
                raise _Refused("policy_params_mismatch", "the bundle's policy is not the one "
                               "its token names (name or parameters differ)")
        turns = edges = None
        if "turns" in doc or "edges" in doc or full:
            turns = _read_turns(doc.get("turns"))
            edges = _read_edges(doc.get("edges"))
            _check_body(fields, turns, edges)
            self._check_records(turns)
        sliced_at = doc.get("sliced_at")
        if sliced_at is not None and not _is_time(sliced_at):
            raise _Refused("malformed_bundle", "sliced_at must be a time from year 1 to 9999 "
                           "(epoch seconds) or null")
        return (fields, doc["key_id"], doc["token"], policy, turns, edges,
                None if sliced_at is None else float(sliced_at))

    def _check_records(self, turns: tuple[SliceTurn, ...]) -> None:
        """Raise _Refused unless every turn this palace knows is described as it stores it.

        The token binds ids, edges and content hashes; phase, salience, depth, time and drawer
        are not in the six fields, so the palace's own (immutable) records vouch for them.
        Distance and priority are descriptive; ``is_current`` confirms the selection."""
        known = self.palace.conversations.turns
        for t in turns:
            s = known.get(t.id)
            if s is not None and (s.conversation, s.parents, s.role, s.phase, s.salience,
                                  s.depth, s.created_at, s.content_hash, s.drawer_id) != (
                    t.conversation, t.parents, t.role, t.phase, t.salience, t.depth,
                    t.created_at, t.content_hash, t.drawer_id):
                raise _Refused("turn_mismatch", f"turn {t.id} differs from this palace's "
                               "record of it")

    def is_current(self, fields: ProvenanceFields) -> bool:
        """Return whether slicing the same anchor with the same policy now gives the same
        slice id and snapshot (False if the anchor or policy is gone)."""
        try:
            rules = self.policies.get(fields.policy_id)
            conv = self.palace.conversations
            ids = [p.turn_id for p in policy_weighted_bfs(conv, fields.anchor_turn_id, rules)]
        except NotFound:
            return False
        sid = slice_id(fields.anchor_turn_id, ids, conv.edges_among(ids), rules.name,
                       rules.params_hash)
        snap = snapshot_hash([conv.turns[t].content_hash for t in ids])
        return sid == fields.slice_id and snap == fields.graph_snapshot_hash

    # -- policies and keys ------------------------------------------------------------------
    def register_policy(self, policy: SlicePolicyV1) -> tuple[SlicePolicyV1, bool]:
        """Register ``policy``; return (registered policy, whether new). See
        :meth:`PolicyRegistry.register`."""
        return self.policies.register(policy)

    def rotate_key(self) -> SigningKey:
        """Make a new current signing key (the old one only verifies from now on)."""
        return self.keyring.rotate(float(self.palace.clock()))

    def delete_key(self, key_id: str) -> SigningKey:
        """Delete a retired key; the tokens it signed stop verifying."""
        return self.keyring.delete(key_id)

    def keyring_to_json(self) -> dict[str, Any]:
        """Return the keyring with its secrets, for local storage only (never exports)."""
        return self.keyring.to_json()

    def keyring_from_json(self, value: Any) -> None:
        """Replace the keyring by the one ``keyring_to_json`` wrote (ValidationError on bad
        input, and then nothing changes)."""
        self.keyring = Keyring.from_json(value, self.keyring.entropy)

    # -- palace file ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able provenance section of the palace file: the registered
        policies (the built-in default is implied) and the registry fingerprint; never keys."""
        return {"schema_version": SCHEMA_VERSION, "keys": NOT_EXPORTED,
                "policies": [p.to_dict() for p in self.policies.registered()],
                "fingerprint": self.policies.fingerprint()}

    @classmethod
    def from_json(cls, palace: Any, value: Any, where: str) -> Provenance:
        """Return the policies read from ``value`` with a new, empty keyring; raise
        ImportRejected naming the bad place. A section carrying key material is refused."""
        out = cls(palace)
        if not isinstance(value, dict):
            raise ImportRejected(f"{where} must be an object")
        extra = sorted(set(value) - {"schema_version", "keys", "policies", "fingerprint"})
        if extra:
            raise ImportRejected(f"{where} has unknown field(s): {', '.join(extra)}")
        if value.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
            raise ImportRejected(f"{where}.schema_version must be {SCHEMA_VERSION!r}")
        if value.get("keys", NOT_EXPORTED) != NOT_EXPORTED:
            raise ImportRejected(f"{where}.keys must be {NOT_EXPORTED!r}: palace files never "
                                 "carry signing keys")
        policies = value.get("policies", [])
        if not isinstance(policies, list) or len(policies) > MAX_POLICIES:
            raise ImportRejected(f"{where}.policies must be a list of at most {MAX_POLICIES}")
        for i, p in enumerate(policies):
            at = f"{where}.policies[{i}]"
            try:
                out.policies.register(SlicePolicyV1.from_dict(p, at))
            except ValidationError as err:
                raise ImportRejected(str(err) if str(err).startswith(at) else f"{at}: {err}"
                                     ) from None
        if "fingerprint" in value and value["fingerprint"] != out.policies.fingerprint():
            raise ImportRejected(f"{where}.fingerprint does not match its policies")
        return out


def _known(key_id: Any) -> str | None:
    return key_id if isinstance(key_id, str) and _KEY_ID.fullmatch(key_id) else None


def _read_turns(value: Any) -> tuple[SliceTurn, ...]:
    """Return the bundle's turns, each checked for shape; raise _Refused."""
    if not isinstance(value, list) or not value:
        raise _Refused("malformed_bundle", "turns must be a non-empty list")
    out = []
    keys = set(SliceTurn.__slots__)
    for i, t in enumerate(value):
        at = f"turns[{i}]"
        if not isinstance(t, dict) or set(t) != keys:
            raise _Refused("malformed_bundle", f"{at} must have exactly the fields "
                           + ", ".join(SliceTurn.__slots__))
        ok = (all(isinstance(t[k], str) for k in ("id", "conversation", "drawer_id"))
              and t["role"] in ROLES and t["phase"] in PHASES
              and is_hex(t["content_hash"], 64)
              and isinstance(t["parents"], list) and all(isinstance(p, str) for p in t["parents"])
              and all(_is_int(t[k]) for k in ("depth", "distance"))
              and all(_is_num(t[k]) for k in ("salience", "priority"))
              and _is_time(t["created_at"])
              and (t["content"] is None or isinstance(t["content"], str)))
        if not ok:
            raise _Refused("malformed_bundle", f"{at} has a field of the wrong type")
        out.append(SliceTurn(t["id"], t["conversation"], tuple(t["parents"]), t["role"],
                             t["phase"], float(t["salience"]), t["depth"],
                             float(t["created_at"]), t["content_hash"], t["drawer_id"],
                             t["distance"], float(t["priority"]), t["content"]))
    return tuple(out)


def _read_edges(value: Any) -> tuple[SliceEdge, ...]:
    if not isinstance(value, list):
        raise _Refused("malformed_bundle", "edges must be a list")
    out = []
    for i, e in enumerate(value):
        if not isinstance(e, dict) or set(e) != {"parent", "child", "type"} \
                or not isinstance(e["parent"], str) or not isinstance(e["child"], str) \
                or e["type"] not in EDGE_TYPES:
            raise _Refused("malformed_bundle", f"edges[{i}] must be {{parent, child, type}}")
        out.append(SliceEdge(e["parent"], e["child"], e["type"]))
    return tuple(out)


def _check_body(fields: ProvenanceFields, turns: tuple[SliceTurn, ...],
                edges: tuple[SliceEdge, ...]) -> None:
    """Raise _Refused unless the turns and edges are the ones the fields were signed for."""
    ids = [t.id for t in turns]
    if len(set(ids)) != len(ids) or fields.anchor_turn_id not in ids:
        raise _Refused("slice_mismatch", "the turns repeat an id or leave out the anchor")
    for t in turns:
        if turn_id(t.conversation, t.parents, t.role, t.content_hash) != t.id:
            raise _Refused("turn_mismatch", f"turn {t.id}'s conversation, parents, role or "
                           "content hash were changed")
        if t.content is not None and content_hash(t.content) != t.content_hash:
            raise _Refused("content_mismatch", f"the text of turn {t.id} does not match its "
                           "content hash")
    if snapshot_hash([t.content_hash for t in turns]) != fields.graph_snapshot_hash:
        raise _Refused("snapshot_mismatch", "the turns' content hashes do not give the "
                       "graph snapshot hash")
    sid = slice_id(fields.anchor_turn_id, ids, [(e.parent, e.child, e.type) for e in edges],
                   fields.policy_id, fields.policy_params_hash, fields.schema_version)
    if sid != fields.slice_id:
        raise _Refused("slice_mismatch", "the turns and edges do not give the slice id")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    """Return whether ``v`` is a finite number within float range (not a bool)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and \
        -_FLOAT_MAX <= v <= _FLOAT_MAX  # NaN compares false


def _is_time(v: Any) -> bool:
    """Return whether ``v`` is epoch seconds some date has (years 1 to 9999, UTC)."""
    return _is_num(v) and _EARLIEST <= v <= _LATEST


_FLOAT_MAX = 1.7976931348623157e308
_EARLIEST = datetime(1, 1, 1, tzinfo=UTC).timestamp()
_LATEST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


# -- W3C PROV ----------------------------------------------------------------------------------

def _iso(t: float) -> str | None:
    """Return epoch seconds ``t`` as an ISO datetime (UTC), or None when no date has that
    time: an export never fails on a time a bundle carried. O(1)."""
    try:
        return datetime.fromtimestamp(t, UTC).isoformat()
    except (OverflowError, ValueError, OSError, TypeError):
        return None


def prov_document(bundle: AdmissibleEvidenceBundle) -> dict[str, Any]:
    """Return ``bundle`` as a W3C PROV-JSON document.

    Entities: every turn (``palazzo:Turn``), the slice (``palazzo:ContextSlice``, carrying the
    six fields, token and key id) and the policy (a ``prov:Plan``). One activity, the slicing
    (``palazzo:PolicyWeightedBFS``), which used each turn and generated the slice, associated
    with the agent palazzo (a ``prov:SoftwareAgent``) following the policy. The slice
    wasDerivedFrom each turn; a child turn wasDerivedFrom its parents (with the edge type);
    each turn wasAttributedTo an agent for its role. Relation ids are numbered in bundle
    order, so the document is deterministic. A time no date has (a bundle made in Python
    with ``sliced_at`` 1e308 or NaN) is left out rather than raising. Cost: O(turns + edges).
    """
    from palazzo._version import __version__

    f = bundle.fields
    sid = f"palazzo:slice_{f.slice_id}"
    act = f"palazzo:slicing_{f.slice_id}"
    plan = f"palazzo:policy_{f.policy_id}"
    engine = "palazzo:engine"
    entity: dict[str, Any] = {}
    for t in bundle.turns:
        attrs: dict[str, Any] = {
            "prov:type": "palazzo:Turn", "palazzo:conversation": t.conversation,
            "palazzo:role": t.role, "palazzo:phase": t.phase, "palazzo:salience": t.salience,
            "palazzo:depth": t.depth, "palazzo:distance": t.distance,
            "palazzo:priority": t.priority, "palazzo:contentHash": t.content_hash,
            "palazzo:drawer": t.drawer_id}
        if (created := _iso(t.created_at)) is not None:
            attrs["palazzo:createdAt"] = created
        if t.content is not None:
            attrs["prov:value"] = t.content
        entity[f"palazzo:{t.id}"] = attrs
    entity[sid] = {"prov:type": "palazzo:ContextSlice",
                   **{f"palazzo:{k}": v for k, v in f.to_dict().items()},
                   "palazzo:token": bundle.token, "palazzo:keyId": bundle.key_id}
    entity[plan] = {"prov:type": "prov:Plan", "palazzo:paramsHash": f.policy_params_hash,
                    **{f"palazzo:{k}": (json.dumps(v, sort_keys=True) if isinstance(v, dict)
                                        else v)
                       for k, v in bundle.policy.to_dict().items()}}
    activity: dict[str, Any] = {act: {"prov:type": "palazzo:PolicyWeightedBFS",
                                      "palazzo:anchor": f"palazzo:{f.anchor_turn_id}"}}
    sliced = None if bundle.sliced_at is None else _iso(bundle.sliced_at)
    if sliced is not None:
        activity[act]["prov:startTime"] = activity[act]["prov:endTime"] = sliced
    roles = sorted({t.role for t in bundle.turns})
    agent: dict[str, Any] = {engine: {"prov:type": "prov:SoftwareAgent",
                                      "palazzo:version": __version__}}
    for r in roles:
        agent[f"palazzo:role_{r}"] = {"prov:type": "prov:Person" if r == "user"
                                      else "prov:SoftwareAgent", "palazzo:role": r}
    used = {f"_:u{i}": {"prov:activity": act, "prov:entity": f"palazzo:{t.id}"}
            for i, t in enumerate(bundle.turns)}
    derived = {f"_:d{i}": {"prov:generatedEntity": sid, "prov:usedEntity": f"palazzo:{t.id}",
                           "prov:activity": act}
               for i, t in enumerate(bundle.turns)}
    base = len(derived)
    for j, e in enumerate(bundle.edges):
        derived[f"_:d{base + j}"] = {"prov:generatedEntity": f"palazzo:{e.child}",
                                     "prov:usedEntity": f"palazzo:{e.parent}",
                                     "palazzo:edgeType": e.type}
    generated = {"_:g0": {"prov:entity": sid, "prov:activity": act}}
    if sliced is not None:
        generated["_:g0"]["prov:time"] = sliced
    return {
        "prefix": {"palazzo": "urn:palazzo:"},
        "entity": entity,
        "activity": activity,
        "agent": agent,
        "used": used,
        "wasGeneratedBy": generated,
        "wasAssociatedWith": {"_:a0": {"prov:activity": act, "prov:agent": engine,
                                       "prov:plan": plan}},
        "wasDerivedFrom": derived,
        "wasAttributedTo": {f"_:t{i}": {"prov:entity": f"palazzo:{t.id}",
                                        "prov:agent": f"palazzo:role_{t.role}"}
                            for i, t in enumerate(bundle.turns)},
    }

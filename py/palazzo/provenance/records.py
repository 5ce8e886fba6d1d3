"""The plain records of a context slice: its turns, its edges, the six provenance fields an
admissibility token binds, and the verdict of a verification.

An admissibility token binds a slice to six provenance fields, in this order::

    slice_id, anchor_turn_id, policy_id, policy_params_hash, graph_snapshot_hash, schema_version

It is HMAC-SHA256 over the canonical JSON array ``["palazzo-admissibility-v1", <the six
fields>]`` (:meth:`ProvenanceFields.message`). These records only hold and check values; the
kernel (:mod:`palazzo.provenance.kernel`) slices, signs and verifies. ``_Refused`` is the
kernel's control flow for a failed check: it is raised here by :meth:`ProvenanceFields.parse`
and in the kernel, and the kernel turns it into a :class:`Verdict`; it never leaves the
provenance package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from palazzo.errors import ValidationError
from palazzo.memory.conversation import is_hex
from palazzo.provenance.canonical import canonical_bytes
from palazzo.provenance.policy import POLICY_NAME

TOKEN_DOMAIN = "palazzo-admissibility-v1"
# A budgeted slice counts each turn as ceil(characters / 4) tokens of its text (the wake-up
# estimate, :func:`palazzo.memory.wakeup.tokens`) plus TURN_OVERHEAD for its role label and
# separators; the estimate's name is hashed into the slice id, so a changed estimate can
# never pass for the old one.
TURN_OVERHEAD = 4
TOKEN_ESTIMATE = "ceil(chars/4)+4"
MAX_BUDGET = 10_000_000
FIELDS = ("slice_id", "anchor_turn_id", "policy_id", "policy_params_hash",
          "graph_snapshot_hash", "schema_version")


class _Refused(Exception):
    """Internal: verification stopped with a reason code (caught by the kernel, which makes a
    Verdict of it; never leaves the provenance package)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


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
class Budget:
    """A slice's token budget: at most ``max_tokens`` tokens of turn text, counted with the
    estimate named ``estimate`` (:data:`TOKEN_ESTIMATE`); ``used`` is what the slice's turns
    took (descriptive: not signed, None on a budget not yet applied). ValidationError for a
    budget that is not an integer from 1 to :data:`MAX_BUDGET`."""

    max_tokens: int
    estimate: str = TOKEN_ESTIMATE
    used: int | None = None

    def __post_init__(self) -> None:
        m = self.max_tokens
        if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= MAX_BUDGET:
            raise ValidationError(f"budget must be an integer from 1 to {MAX_BUDGET} tokens, "
                                  f"got {m!r}")
        if self.estimate != TOKEN_ESTIMATE:
            raise ValidationError(f"unknown token estimate {self.estimate!r}; palazzo counts "
                                  f"{TOKEN_ESTIMATE!r}")

    def canonical(self) -> dict[str, Any]:
        """Return what the slice id is computed over (no float)."""
        return {"max_tokens": self.max_tokens, "estimate": self.estimate}

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form."""
        return {**self.canonical(), "used": self.used}

    @classmethod
    def parse(cls, value: Any) -> Budget:
        """Return the budget of a bundle document's ``budget`` object; raise
        _Refused("malformed_bundle") otherwise."""
        if not isinstance(value, dict) or set(value) != {"max_tokens", "estimate", "used"}:
            raise _Refused("malformed_bundle", "budget must be {max_tokens, estimate, used}")
        used = value["used"]
        if isinstance(used, bool) or not isinstance(used, int) or used < 0:
            raise _Refused("malformed_bundle", "budget.used must be a whole number")
        try:
            return cls(value["max_tokens"], value["estimate"], used)
        except ValidationError as err:
            raise _Refused("malformed_bundle", f"budget: {err}") from None


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
            and bool(POLICY_NAME.fullmatch(value["policy_id"])),
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

"""The provenance kernel: context slices and admissibility tokens (seed 002 §4).

Given an anchor turn and a :class:`~palazzo.provenance.policy.SlicePolicyV1`,
:func:`policy_weighted_bfs` picks the turns of the conversation DAG allowed to inform that
turn, and an admissibility token binds what was picked to the six provenance fields of
:class:`~palazzo.provenance.records.ProvenanceFields`. The token is HMAC-SHA256, keyed by a
secret of this palace (:mod:`palazzo.provenance.keys`), over the canonical JSON array
``["palazzo-admissibility-v1", <the six fields>]``, written as 64 lowercase hex digits (the
whole digest: the seed's truncation to 128 bits saves nothing here). It is compared with
:func:`hmac.compare_digest`, in constant time. Slice ids and snapshot hashes are sha256 over
canonical bytes (:mod:`palazzo.provenance.canonical`). Ties are broken by turn id everywhere,
so no result depends on dict or set order.

**What the token does not cover.** The six fields bind the anchor, the set of turn ids (sorted:
the order turns are listed in is free), the edges among them, their content hashes and the
policy. A bundle's ``distance`` and ``priority`` of each turn, its ``sliced_at`` time and the
order of its turns are descriptive and not signed: anyone holding a bundle can change them and
it still verifies (:meth:`Provenance.is_current` re-runs the slice to confirm the selection).
Phase, salience, depth, time and drawer of a turn are checked against this palace's records
when it holds the turn, and unsigned otherwise. Reading a bundle refuses a ``sliced_at`` or a
turn time that no date has (outside years 1 to 9999, NaN, infinite), and the PROV export
(:mod:`palazzo.provenance.prov`) writes times it can, so neither ever raises.

**Budgets.** ``slice(…, budget=N)`` keeps, of the policy's turns in the order taken, each
that still fits in N tokens (:func:`turn_tokens`: the wake-up estimate ``ceil(chars / 4)``
plus 4 a turn); the budget is hashed into the slice id (so signed), and a slice without one
hashes as it did before budgets existed.

**Admissible evidence.** An :class:`AdmissibleEvidenceBundle` can only be made by
:meth:`Provenance.slice`, :meth:`Provenance.slice_many` and :meth:`Provenance.admit`, all of
which verify a token first (the seed's INV-003, as far as Python can enforce it: the
constructor demands a private seal that only this module holds, and every use checks a
private registry of the bundles made here and their values; see the class).
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import weakref
from collections.abc import Callable, Iterable
from dataclasses import InitVar, dataclass, replace
from datetime import UTC, datetime
from typing import Any

from palazzo.errors import ImportRejected, NotAdmissible, NotFound, ValidationError
from palazzo.memory.conversation import EDGE_TYPES, PHASES, ROLES, content_hash, is_hex, turn_id
from palazzo.memory.wakeup import tokens
from palazzo.provenance.canonical import canonical_bytes, sha256_hex
from palazzo.provenance.keys import KEY_ID, Keyring, SigningKey
from palazzo.provenance.policy import (
    DEFAULT_POLICY,
    MAX_POLICIES,
    POLICY_PARAMS,
    PolicyRegistry,
    SlicePolicyV1,
)
from palazzo.provenance.records import (
    TURN_OVERHEAD,
    Budget,
    ProvenanceFields,
    SliceEdge,
    SliceTurn,
    Verdict,
    _Refused,
)

SCHEMA_VERSION = "palazzo.slice.v1"
NOT_EXPORTED = "not exported"


@dataclass(slots=True, frozen=True)
class Selection:
    """One turn a slice took: its hop distance from the anchor and its priority."""

    turn_id: str
    distance: int
    priority: float


class SliceGraph:
    """The conversation DAG as one policy's slicing reads it: each turn's neighbours
    (parents and children), its siblings and its base priority ``W_phase · (1 − α +
    α·salience)``, each computed on first use and kept, so that many slices under one policy
    share them (seed 002 §3.4's BatchSlicer). Valid while the palace gains no turn: make a new
    one after a change. Memory: O(turns touched)."""

    __slots__ = ("turns", "children", "conversations", "decay", "_weights", "_alpha",
                 "_near", "_siblings", "_base")

    def __init__(self, conversations: Any, policy: SlicePolicyV1) -> None:
        self.conversations = conversations
        self.turns = conversations.turns
        self.children = conversations.children
        self._weights = dict(policy.phase_weights)
        self._alpha = policy.salience_weight
        # β^d by repeated multiplication (no ``pow``): bitwise the same on every IEEE-754
        # platform.
        self.decay = [1.0]
        for _ in range(policy.max_radius):
            self.decay.append(self.decay[-1] * policy.distance_decay)
        self._near: dict[str, list[str]] = {}
        self._siblings: dict[str, list[str]] = {}
        self._base: dict[str, float] = {}

    def near(self, tid: str) -> list[str]:
        """Return the sorted parents and children of ``tid``."""
        got = self._near.get(tid)
        if got is None:
            got = self._near[tid] = sorted(set(self.turns[tid].parents).union(
                self.children.get(tid, ())))
        return got

    def siblings(self, tid: str) -> list[str]:
        """Return the sorted siblings of ``tid`` (other children of its parents)."""
        got = self._siblings.get(tid)
        if got is None:
            got = self._siblings[tid] = self.conversations.siblings_of(tid)
        return got

    def score(self, tid: str, distance: int) -> float:
        """Return the priority of ``tid`` at ``distance`` hops (seed 002 §4.1)."""
        base = self._base.get(tid)
        if base is None:
            t = self.turns[tid]
            base = self._base[tid] = self._weights[t.phase] * (
                1.0 - self._alpha + self._alpha * t.salience)
        return base * self.decay[distance]


def policy_weighted_bfs(conversations: Any, anchor: str, policy: SlicePolicyV1,
                        graph: SliceGraph | None = None) -> list[Selection]:
    """Return the turns ``policy`` selects around ``anchor``, in the order taken.

    Best-first expansion (seed 002 Algorithm 1): the frontier pops the highest priority, then
    the nearer turn, then the smaller turn id, so the order is total and never depends on
    insertion order. Neighbours are parents and children at distance + 1; a turn is queued at
    most once (at the first distance it is found), and turns beyond ``max_radius`` are never
    queued. Siblings are queued at the taken turn's own distance, best first, at most
    ``max_siblings_per_node`` not yet queued per taken turn (a taken sibling then offers its
    own siblings, so in a plain fan-out the cap bounds the frontier, not the result; it bounds
    the result where merges make siblings differ). β^d is built by repeated multiplication (no
    ``pow``), so the floats are bitwise the same on every IEEE-754 platform. ``graph`` (a
    :class:`SliceGraph` of the same conversations and policy) shares neighbour lists and
    scores between calls; the result is the same with or without it.
    Raises NotFound for an unknown anchor. Cost: O(k·(deg + log k)) for k queued turns.
    """
    turns = conversations.turns
    if anchor not in turns:
        raise NotFound(f"no conversation turn with id {anchor!r}")
    g = SliceGraph(conversations, policy) if graph is None else graph
    score = g.score
    frontier = [(-score(anchor, 0), 0, anchor)]
    queued = {anchor}
    taken: list[Selection] = []
    while frontier and len(taken) < policy.max_nodes:
        neg, distance, tid = heapq.heappop(frontier)
        taken.append(Selection(tid, distance, -neg))
        if distance < policy.max_radius:
            for n in g.near(tid):
                if n not in queued:
                    queued.add(n)
                    heapq.heappush(frontier, (-score(n, distance + 1), distance + 1, n))
        if policy.include_siblings and policy.max_siblings_per_node:
            sibs = [s for s in g.siblings(tid) if s not in queued]
            sibs.sort(key=lambda s: (-score(s, distance), s))
            for s in sibs[: policy.max_siblings_per_node]:
                queued.add(s)
                heapq.heappush(frontier, (-score(s, distance), distance, s))
    return taken


def fit_budget(picks: list[Selection], cost: Callable[[str], int], budget: Budget
               ) -> list[Selection]:
    """Return the picks a token budget keeps: in the order taken (best first), each turn that
    still fits in what the turns before it left. The anchor (the first pick) must fit, else
    ValidationError says how many tokens it needs. The result is a subset of ``picks``, so a
    budget only ever bounds a policy's slice. Cost: O(k) calls of ``cost``."""
    left = budget.max_tokens
    kept: list[Selection] = []
    for i, pick in enumerate(picks):
        need = cost(pick.turn_id)
        if need <= left:
            kept.append(pick)
            left -= need
        elif i == 0:
            raise ValidationError(f"the anchor turn alone needs about {need} tokens, more than "
                                  f"the budget of {budget.max_tokens}; give a budget of at "
                                  f"least {need}")
    return kept


def snapshot_hash(content_hashes: list[str]) -> str:
    """Return the graph snapshot hash: sha256 of the canonical, sorted content hashes."""
    return sha256_hex(canonical_bytes({"content_hashes": sorted(content_hashes),
                                       "schema_version": SCHEMA_VERSION}))


def slice_id(anchor: str, turn_ids: list[str], edges: list[tuple[str, str, str]],
             policy_id: str, params_hash: str, schema_version: str = SCHEMA_VERSION,
             budget: Budget | None = None) -> str:
    """Return the slice id: sha256 over the canonical anchor, sorted turn ids, sorted
    (parent, child, type) edges, policy id, params hash and schema version, and the token
    budget (its size and estimate) when there is one: a budget is signed through the slice
    id, while a slice without one hashes exactly as before budgets existed."""
    body = {"anchor": anchor, "turns": sorted(turn_ids),
            "edges": [list(e) for e in sorted(edges)], "policy_id": policy_id,
            "params_hash": params_hash, "schema_version": schema_version}
    if budget is not None:
        body["budget"] = budget.canonical()
    return sha256_hex(canonical_bytes(body))


def turn_tokens(text: str | None) -> int:
    """Return what a turn costs against a budget: ceil(characters / 4) of its text (the
    wake-up estimate, :func:`palazzo.memory.wakeup.tokens`; 0 when the text is gone) plus
    ``TURN_OVERHEAD`` (4) for its role label and separators. O(1)."""
    return tokens(text or "") + TURN_OVERHEAD

_SEAL = object()  # only this module holds it: the one way to make an admissible bundle
# Every bundle this module made, by identity, with its values (:func:`_values`): a bundle is
# admissible only while it is here, unchanged. ``object.__new__`` plus ``object.__setattr__``
# can fill a bundle's slots without the seal (or change a real one's), but cannot put the
# object here or change the recorded values, so :func:`require_admissible` (called by
# ``to_dict``, the forms and the PROV export) refuses it. An entry leaves when its bundle is
# collected.
_ADMITTED: dict[int, tuple[weakref.ref[Any], tuple[Any, ...]]] = {}


@dataclass(slots=True, frozen=True, weakref_slot=True)
class AdmissibleEvidenceBundle:
    """A context slice whose admissibility token has been verified (seed 002 INV-003).

    Made only by :meth:`Provenance.slice`, :meth:`Provenance.slice_many` and
    :meth:`Provenance.admit`, after the token verified; constructing one elsewhere (or
    through ``dataclasses.replace``) raises TypeError, a subclass cannot be declared, a copy
    or pickle is refused, and a bundle forged with ``object.__new__`` is refused on use
    (:func:`require_admissible`). ``turns`` are in the order the slice took them. ``budget``
    is the token budget it was cut to (None: bounded by the policy alone).

    A bundle altered after it was made (``object.__setattr__`` on it or on a record inside
    it) is refused on use too: the registry keeps its values. What Python cannot
    prevent: code in this process that reaches the module's private ``_SEAL`` or
    ``_ADMITTED`` (or uses ``ctypes``/``gc``) can still make one. The guarantee is against
    mistakes and against data: nothing read from outside (a document, an RPC argument)
    becomes admissible without its token verifying.
    """

    fields: ProvenanceFields
    key_id: str
    token: str
    policy: SlicePolicyV1
    turns: tuple[SliceTurn, ...]
    edges: tuple[SliceEdge, ...]
    sliced_at: float | None
    budget: Budget | None
    seal: InitVar[object]

    def __post_init__(self, seal: object) -> None:
        if seal is not _SEAL or type(self) is not AdmissibleEvidenceBundle:
            raise TypeError("an AdmissibleEvidenceBundle is made only by verifying a token "
                            "(Provenance.slice, slice_many or admit)")
        key = id(self)

        def gone(ref: weakref.ref[Any]) -> None:
            if _ADMITTED.get(key, (None,))[0] is ref:
                del _ADMITTED[key]

        _ADMITTED[key] = (weakref.ref(self, gone), _values(self))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("AdmissibleEvidenceBundle cannot be subclassed: a subclass could "
                        "skip the verification")

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("an admissible bundle is not copied or pickled: send to_dict() and "
                        "admit it again where it arrives")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able bundle (what ``slice_context`` returns and ``verify_token``
        and ``export_prov`` take back); ``budget`` appears only on a budgeted slice.
        TypeError for a forged or altered bundle."""
        require_admissible(self)
        return self._body()

    def _body(self) -> dict[str, Any]:
        out = {"provenance": self.fields.to_dict(), "key_id": self.key_id,
               "token": self.token, "policy": self.policy.to_dict(),
               "turns": [t.to_dict() for t in self.turns],
               "edges": [e.to_dict() for e in self.edges], "sliced_at": self.sliced_at}
        if self.budget is not None:
            out["budget"] = self.budget.to_dict()
        return out


def _values(b: AdmissibleEvidenceBundle) -> tuple[Any, ...]:
    """Return every value the bundle holds, its records' too, as one flat-ish tuple of
    references (no copies): a bundle equal to the tuple taken when it was made is unchanged.
    O(size); tuple equality tries identity first, so the check is cheap."""
    return (tuple(b.fields.values()), b.key_id, b.token,
            tuple(getattr(b.policy, n) for n in _POLICY_FIELDS),
            tuple(tuple(getattr(t, n) for n in SliceTurn.__slots__) for t in b.turns),
            tuple((e.parent, e.child, e.type) for e in b.edges), b.sliced_at,
            None if b.budget is None else (b.budget.max_tokens, b.budget.estimate,
                                           b.budget.used))


def require_admissible(bundle: Any) -> AdmissibleEvidenceBundle:
    """Return ``bundle`` if this module made it after verifying its token and it is unchanged
    since; raise TypeError otherwise (an object forged with ``object.__new__``, altered with
    ``object.__setattr__``, copied, or something else). Cost: O(size of the bundle): its
    values compared with those recorded when it was made."""
    entry = _ADMITTED.get(id(bundle)) if type(bundle) is AdmissibleEvidenceBundle else None
    if entry is None or entry[0]() is not bundle or entry[1] != _values(bundle):
        raise TypeError("not an admissible bundle (forged, copied or altered): only "
                        "Provenance.slice, slice_many and admit make one")
    return bundle


_POLICY_FIELDS = ("name", *POLICY_PARAMS)


class Provenance:
    """The policy registry and the signing keyring of one palace, and what they do:
    slicing, signing, verifying, admitting."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace
        self.policies = PolicyRegistry()
        self.keyring = Keyring()  # secret signing keys: never exported, kept across imports

    # -- slicing and signing ----------------------------------------------------------------
    def slice(self, anchor: str, policy: str = DEFAULT_POLICY, with_content: bool = True,
              budget: int | None = None) -> AdmissibleEvidenceBundle:
        """Return the admissible evidence bundle of ``anchor`` under ``policy`` (a name or a
        params hash): the selected turns, the edges among them, the six provenance fields
        and a token signed with the current key (made now if the palace has none).

        The bundle is built through the verification path, like any other. ``with_content``
        adds each turn's text from its drawer (None if the drawer is gone or was edited).
        ``budget`` (tokens, :func:`turn_tokens` a turn) keeps, of the policy's turns in the
        order taken, each one that still fits (:func:`fit_budget`); the budget is hashed into
        the slice id, so it is signed, and no budget gives the same slice as before budgets.
        Raises NotFound for an unknown anchor or policy, ValidationError for a bad budget or
        one the anchor alone exceeds. Cost: the BFS plus O(k log k).
        """
        return self.slice_many([anchor], policy, with_content, budget)[0]

    def slice_many(self, anchors: Iterable[str], policy: str = DEFAULT_POLICY,
                   with_content: bool = True, budget: int | None = None
                   ) -> list[AdmissibleEvidenceBundle]:
        """Return the bundle of each anchor, in order, as :meth:`slice` makes them one by one
        (the same turns, ids and tokens; one clock reading for all), sharing the work: one
        :class:`SliceGraph` (neighbours, siblings, scores) and one text lookup a turn.
        Every anchor is checked before any is sliced (NotFound names the first unknown).
        Cost: the BFS of each anchor on the shared graph, plus one HMAC each.
        """
        rules = self.policies.get(policy)
        limit = None if budget is None else Budget(budget)
        conv = self.palace.conversations
        anchors = list(anchors)
        for a in anchors:
            conv.get(a)
        graph = SliceGraph(conv, rules)
        texts: dict[str, str | None] = {}

        def text(tid: str) -> str | None:
            if tid not in texts:
                texts[tid] = self._text_of(conv.turns[tid])
            return texts[tid]

        now = float(self.palace.clock())
        return [self._cut(conv, a, rules, graph, text, with_content, limit, now)
                for a in anchors]

    def _cut(self, conv: Any, anchor: str, rules: SlicePolicyV1, graph: SliceGraph,
             text: Callable[[str], str | None], with_content: bool, budget: Budget | None,
             now: float) -> AdmissibleEvidenceBundle:
        """Slice, sign and admit one anchor (the body of :meth:`slice_many`)."""
        picks = policy_weighted_bfs(conv, anchor, rules, graph)
        if budget is not None:
            picks = fit_budget(picks, lambda t: turn_tokens(text(t)), budget)
            budget = replace(budget, used=sum(turn_tokens(text(p.turn_id)) for p in picks))
        ids = [p.turn_id for p in picks]
        edges = conv.edges_among(ids)
        fields = ProvenanceFields(
            slice_id=slice_id(anchor, ids, edges, rules.name, rules.params_hash,
                              budget=budget),
            anchor_turn_id=anchor, policy_id=rules.name, policy_params_hash=rules.params_hash,
            graph_snapshot_hash=snapshot_hash([conv.turns[t].content_hash for t in ids]),
            schema_version=SCHEMA_VERSION,
        )
        key_id, token = self.sign(fields, now)
        turns = tuple(_slice_turn(conv.turns[p.turn_id], p,
                                  text(p.turn_id) if with_content else None) for p in picks)
        return self._admit(fields, key_id, token, rules, turns,
                           tuple(SliceEdge(*e) for e in edges), now, budget)

    def _text_of(self, t: Any) -> str | None:
        """Return turn ``t``'s text from its drawer, or None if the drawer is gone or no
        longer holds the text the turn hashed."""
        row = self.palace.drawers.lookup(t.drawer_id)
        if row is None:
            return None
        stored = self.palace.drawers.content[row]
        return stored if content_hash(stored) == t.content_hash else None

    def sign(self, fields: ProvenanceFields, now: float | None = None) -> tuple[str, str]:
        """Return (key id, token): HMAC-SHA256 of ``fields.message()`` under the current key
        (made at ``now``, or the palace clock, if there is none yet)."""
        when = float(self.palace.clock()) if now is None else now
        key = self.keyring.signing_key(when)
        return key.key_id, hmac.new(key.secret, fields.message(), hashlib.sha256).hexdigest()

    def _admit(self, fields: ProvenanceFields, key_id: str, token: str, policy: SlicePolicyV1,
               turns: tuple[SliceTurn, ...], edges: tuple[SliceEdge, ...],
               sliced_at: float | None, budget: Budget | None) -> AdmissibleEvidenceBundle:
        """The one place a bundle is made: only after the token verifies."""
        try:
            self._verify(fields.to_dict(), token, key_id)
        except _Refused as r:
            raise NotAdmissible(Verdict(False, r.reason, r.detail, key_id)) from None
        return AdmissibleEvidenceBundle(fields, key_id, token, policy, turns, edges, sliced_at,
                                        budget, _SEAL)

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
        """Return (fields, key id, token, policy, turns, edges, sliced_at, budget) of a
        verified bundle document; raise _Refused with the first problem."""
        if not isinstance(doc, dict):
            raise _Refused("malformed_bundle", "a bundle is an object")
        extra = sorted(set(doc) - {"provenance", "key_id", "token", "policy", "turns", "edges",
                                   "sliced_at", "budget"}, key=str)
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
        budget = Budget.parse(doc["budget"]) if "budget" in doc else None
        turns = edges = None
        if "turns" in doc or "edges" in doc or full:
            turns = _read_turns(doc.get("turns"))
            edges = _read_edges(doc.get("edges"))
            _check_body(fields, turns, edges, budget)
            self._check_records(turns)
        sliced_at = doc.get("sliced_at")
        if sliced_at is not None and not _is_time(sliced_at):
            raise _Refused("malformed_bundle", "sliced_at must be a time from year 1 to 9999 "
                           "(epoch seconds) or null")
        return (fields, doc["key_id"], doc["token"], policy, turns, edges,
                None if sliced_at is None else float(sliced_at), budget)

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

    def is_current(self, fields: ProvenanceFields, budget: int | None = None) -> bool:
        """Return whether slicing the same anchor with the same policy (and ``budget``, which
        a budgeted slice needs: its fields alone do not say it) now gives the same slice id
        and snapshot (False if the anchor or policy is gone, or the anchor no longer fits)."""
        try:
            rules = self.policies.get(fields.policy_id)
            conv = self.palace.conversations
            picks = policy_weighted_bfs(conv, fields.anchor_turn_id, rules)
            limit = None if budget is None else Budget(budget)
            if limit is not None:
                picks = fit_budget(picks, lambda t: turn_tokens(self._text_of(conv.turns[t])),
                                   limit)
        except (NotFound, ValidationError):
            return False
        ids = [p.turn_id for p in picks]
        sid = slice_id(fields.anchor_turn_id, ids, conv.edges_among(ids), rules.name,
                       rules.params_hash, budget=limit)
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
    return key_id if isinstance(key_id, str) and KEY_ID.fullmatch(key_id) else None


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


def _slice_turn(t: Any, pick: Selection, text: str | None) -> SliceTurn:
    return SliceTurn(t.id, t.conversation, t.parents, t.role, t.phase, t.salience, t.depth,
                     t.created_at, t.content_hash, t.drawer_id, pick.distance, pick.priority,
                     text)


def _check_body(fields: ProvenanceFields, turns: tuple[SliceTurn, ...],
                edges: tuple[SliceEdge, ...], budget: Budget | None = None) -> None:
    """Raise _Refused unless the turns and edges are the ones the fields were signed for (and,
    for a budgeted slice, the texts it carries fit its budget)."""
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
                   fields.policy_id, fields.policy_params_hash, fields.schema_version, budget)
    if sid != fields.slice_id:
        raise _Refused("slice_mismatch", "the turns and edges (and budget) do not give the "
                       "slice id")
    if budget is not None:
        shown = sum(turn_tokens(t.content) for t in turns)  # the texts it carries
        if max(shown, budget.used or 0) > budget.max_tokens:
            raise _Refused("over_budget", f"the turns take about {max(shown, budget.used or 0)}"
                           f" tokens, more than the budget of {budget.max_tokens}")


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

"""TUNNEL proposals: cross-wing passages a generalist agent suggests and a user approves.

Seed 000's generalist "finds tunnels between domains". Ours looks, in every room it walks
through, for rooms of *other* wings whose drawers are about the same thing — the cosine of the
two rooms' centroids (the normalised mean of their drawers' unit vectors,
:func:`palazzo.stigmergy.pathfinding.node_vectors`) at least a threshold
(:data:`TUNNEL_COSINE`, 0.8 by default) — and that have no TUNNEL yet. Such a pair becomes a
*proposal*, kept in ``palace.tunnel_proposals`` as pending; only :func:`approve` adds the
TUNNEL (an option of the swarm approves at once). A rejected pair is remembered, so it is not
proposed again; an approved one now has its TUNNEL, so it is not proposed again either.

A proposal's id is the hash of its unordered pair of room ids: the same pair proposed by
another agent, in another run or on replay of the journal is the same proposal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from palazzo.core.jsontext import records
from palazzo.core.model import EdgeKind
from palazzo.errors import ImportRejected, NotFound, ValidationError

# A pair of rooms is "about the same thing" from this centroid cosine on. With MiniLM, rooms
# on one topic sit around 0.8–0.9 and unrelated rooms below 0.4; a threshold below 0.7 starts
# proposing rooms that merely share a language or a register.
TUNNEL_COSINE = 0.8
STATUSES = ("pending", "approved", "rejected")
MAX_LIST = 10_000


def proposal_id(a: str, b: str) -> str:
    """Return the id of the proposal joining rooms ``a`` and ``b`` (in either order). O(1)."""
    lo, hi = sorted((a, b))
    return "tunnel:" + hashlib.sha256(f"{lo}\x1f{hi}".encode()).hexdigest()[:16]


def has_tunnel(palace: Any, a: str, b: str) -> bool:
    """Return whether a live TUNNEL joins rooms ``a`` and ``b`` (stored either way). O(1)."""
    edges = palace.edges
    return (edges.find(EdgeKind.TUNNEL, a, b) is not None
            or edges.find(EdgeKind.TUNNEL, b, a) is not None)


@dataclass(slots=True)
class TunnelProposal:
    """A suggested TUNNEL between two rooms of different wings (``src`` < ``dst``)."""

    id: str
    src: str
    dst: str
    cosine: float
    agent: str
    status: str = "pending"

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able record. O(1)."""
        return {"id": self.id, "src": self.src, "dst": self.dst, "cosine": self.cosine,
                "agent": self.agent, "status": self.status}


class TunnelProposals:
    """The proposals of one palace, by id, in the order they were made."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: dict[str, TunnelProposal] = {}

    def __len__(self) -> int:
        return len(self.items)

    def known(self, a: str, b: str) -> bool:
        """Return whether the pair was proposed before (whatever became of it). O(1)."""
        return proposal_id(a, b) in self.items

    def propose(self, a: str, b: str, cosine: float, agent: str) -> TunnelProposal | None:
        """Record a pending proposal joining rooms ``a`` and ``b``; return it, or None when
        the pair is already known. Cost: O(1)."""
        pid = proposal_id(a, b)
        if pid in self.items:
            return None
        lo, hi = sorted((a, b))
        proposal = TunnelProposal(pid, lo, hi, round(float(cosine), 6), agent)
        self.items[pid] = proposal
        return proposal

    def listed(self, status: str | None = "pending") -> list[TunnelProposal]:
        """Return the proposals with ``status`` (all when None), best cosine first, then id.
        Cost: O(n log n)."""
        chosen = [p for p in self.items.values() if status is None or p.status == status]
        return sorted(chosen, key=lambda p: (-p.cosine, p.id))

    def get(self, pid: str) -> TunnelProposal:
        """Return proposal ``pid`` or raise NotFound. O(1)."""
        try:
            return self.items[pid]
        except KeyError:
            raise NotFound(f"no tunnel proposal {pid!r}") from None

    def to_json(self) -> list[dict[str, Any]]:
        """Return every proposal as records, in the order made (the palace file's form)."""
        return [p.to_dict() for p in self.items.values()]

    @classmethod
    def from_json(cls, value: Any, rooms: set[str], where: str) -> TunnelProposals:
        """Return the proposals of a palace file's ``tunnel_proposals`` list; every record
        must join two rooms of ``rooms`` under its own id, with a known status and a cosine
        in [-1, 1]. Raises ImportRejected naming the bad place. Cost: O(n)."""
        out = cls()
        for at, rec in records(value, where):
            src, dst, agent = rec.get("src"), rec.get("dst"), rec.get("agent", "")
            for end, node in (("src", src), ("dst", dst)):
                if node not in rooms:
                    raise ImportRejected(f"{at}.{end}: no room {node!r} in the file")
            if src == dst:
                raise ImportRejected(f"{at} joins a room to itself")
            if rec.get("id") != proposal_id(src, dst):
                raise ImportRejected(f"{at}.id is not the id of its pair of rooms")
            cosine = rec.get("cosine")
            if isinstance(cosine, bool) or not isinstance(cosine, int | float) or \
                    not -1.0 <= cosine <= 1.0:
                raise ImportRejected(f"{at}.cosine must be a number from -1 to 1")
            if not isinstance(agent, str) or len(agent) > 200:
                raise ImportRejected(f"{at}.agent must be a name")
            status = rec.get("status", "pending")
            if status not in STATUSES:
                raise ImportRejected(f"{at}.status must be one of " + ", ".join(STATUSES))
            if rec["id"] in out.items:
                raise ImportRejected(f"{at}.id appears twice")
            lo, hi = sorted((src, dst))
            out.items[rec["id"]] = TunnelProposal(rec["id"], lo, hi, float(cosine), agent,
                                                  status)
        return out


def _pending(palace: Any, ids: Iterable[str]) -> list[TunnelProposal]:
    chosen = []
    for pid in dict.fromkeys(ids):
        p = palace.tunnel_proposals.get(pid)
        if p.status != "pending":
            raise ValidationError(f"tunnel proposal {pid} is already {p.status}")
        chosen.append(p)
    if not chosen:
        raise ValidationError("name at least one tunnel proposal")
    return chosen


def approve(palace: Any, ids: Iterable[str]) -> list[dict[str, Any]]:
    """Add the TUNNEL of each pending proposal in ``ids`` (props: ``proposed_by``, ``cosine``)
    and mark it approved; return the proposals. Every id is checked before any edge is added
    (NotFound for an unknown one, ValidationError for one not pending). A pair that got a
    TUNNEL meanwhile is approved without a second edge. Cost: O(len(ids))."""
    chosen = _pending(palace, ids)
    for p in chosen:
        if not has_tunnel(palace, p.src, p.dst):
            palace.edges.add(EdgeKind.TUNNEL, p.src, p.dst,
                             {"proposed_by": p.agent, "cosine": p.cosine})
        p.status = "approved"
    return [p.to_dict() for p in chosen]


def reject(palace: Any, ids: Iterable[str]) -> list[dict[str, Any]]:
    """Mark each pending proposal in ``ids`` rejected (no edge; the pair is not proposed
    again); return them. Checked as :func:`approve`. Cost: O(len(ids))."""
    chosen = _pending(palace, ids)
    for p in chosen:
        p.status = "rejected"
    return [p.to_dict() for p in chosen]

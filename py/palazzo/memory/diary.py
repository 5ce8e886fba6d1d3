"""Agent diaries: entries are drawers in the agent's own wing, so search finds them.

As in both MemPalace versions, an agent writes verbatim entries into its wing (``agent-<name>``,
room ``diary``, closet = the topic); a WROTE edge links agent and drawer. Beside the drawer the
diary keeps a small record: the agent, when it was written (the palace clock), the topic and,
optionally, the AAAK compact form (:mod:`palazzo.memory.aaak`), never instead of the verbatim text.

Drawer ids are content addressed (text + wing + room), so the same text written twice by one
agent is one entry: the second write changes nothing and says so (``created`` false).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from palazzo.core.jsontext import records
from palazzo.core.model import EdgeKind
from palazzo.errors import ImportRejected, NotFound, ValidationError
from palazzo.memory import aaak
from palazzo.stigmergy.agents import add_agent, agent_id

DIARY_ROOM = "diary"
MAX_READ = 1000
# The times a date can be written for (datetime's years 1 to 9999, UTC): a palace file's
# entry outside them is refused, so every entry can be shown with its date.
EARLIEST = dt.datetime(1, 1, 1, tzinfo=dt.UTC).timestamp()
LATEST = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC).timestamp()


def diary_wing(agent_name: str) -> str:
    """Return the wing that holds ``agent_name``'s diary."""
    return f"agent-{agent_name}"


def parse_day(value: str, end: bool = False) -> float:
    """Return the UTC epoch seconds of an ISO date or datetime (the day's end when ``end`` and
    only a date is given); raise ValidationError on anything else."""
    try:
        if len(value) == 10:
            day = dt.date.fromisoformat(value)
            moment = dt.datetime.combine(day, dt.time.max if end else dt.time.min)
        else:
            moment = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValidationError(f"{value!r} is not an ISO date (YYYY-MM-DD) or datetime") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def written_date(when: float) -> str | None:
    """Return the UTC date (YYYY-MM-DD) of ``when`` (epoch seconds), or None for 0 (a palace
    clock that records no time) and for times no date has (as :func:`written_day`): what
    extraction reads "yesterday" from and what the wake-up shows. Cost: O(1)."""
    day = written_day(when) if when else None
    return day[:10] if day else None


def written_day(when: float) -> str | None:
    """Return ``when`` (epoch seconds) as an ISO datetime in UTC, or None when no date has
    that time (outside years 1 to 9999, or not a number): reading a diary never fails on a
    stored time. Cost: O(1)."""
    try:
        return dt.datetime.fromtimestamp(when, dt.UTC).isoformat()
    except (OverflowError, ValueError, OSError):
        return None


@dataclass(slots=True)
class DiaryEntry:
    """What the diary keeps beside an entry's drawer."""

    drawer_id: str
    agent_id: str
    written_at: float
    topic: str
    aaak: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able record (without the text, which lives in the drawer)."""
        return {"drawer_id": self.drawer_id, "agent_id": self.agent_id,
                "written_at": self.written_at, "topic": self.topic, "aaak": self.aaak}


class Diaries:
    """The diary records of one palace, keyed by drawer id."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace
        self.entries: dict[str, DiaryEntry] = {}

    def live(self) -> list[DiaryEntry]:
        """Return entries whose drawer still exists (a deleted drawer ends its entry)."""
        rows = self.palace.drawers.row_of
        return [e for e in self.entries.values() if e.drawer_id in rows]

    def rename(self, old: str, new: str) -> None:
        """Follow a drawer whose text was edited (its id changed from ``old`` to ``new``)."""
        entry = self.entries.pop(old, None)
        if entry is not None:
            entry.drawer_id = new
            self.entries[new] = entry

    def count(self, agent: str) -> int:
        """Return how many live entries the agent with id ``agent`` has."""
        return sum(e.agent_id == agent for e in self.live())

    def write(self, agent_name: str, text: str, topic: str = "general",
              importance: float = 0.5, compact: bool = False,
              codes: dict[str, str] | None = None) -> dict[str, Any]:
        """Write an entry; return {"entry", "created", "agent_created"}.

        A missing agent is created (balanced archetype), as MemPalace's diary_write does.
        Everything is checked before anything is stored. Cost: one drawer insert.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("a diary entry must not be empty")
        topic = topic.strip() or "general"
        p = self.palace
        existing = p.agents.get(agent_id(agent_name.strip()))
        agent, agent_created = (existing, False) if existing else add_agent(p, agent_name)
        did, created = p.add_drawer(diary_wing(agent.name), DIARY_ROOM, text,
                                    source="diary", importance=importance, closet=topic)
        if not created:
            return {"entry": self.entry_dict(self.entries[did]) if did in self.entries
                    else None, "created": False, "agent_created": agent_created}
        now = float(p.drawers.columns["created_at"][p.row(did)])
        form = None
        if compact:
            known = [e.name for e in p.entities.values()]
            form = aaak.encode(text, now, agent.name, importance, codes, known)
        entry = DiaryEntry(did, agent.id, now, p.drawers.closet[p.row(did)], form)
        self.entries[did] = entry
        p.edges.add(EdgeKind.WROTE, agent.id, did)
        return {"entry": self.entry_dict(entry), "created": True,
                "agent_created": agent_created}

    def read(self, agent_name: str, limit: int = 10, since: str | None = None,
             until: str | None = None) -> list[dict[str, Any]]:
        """Return the agent's entries, latest first, at most ``limit``, optionally between two
        ISO dates (inclusive; a bare date covers the whole day, UTC)."""
        aid = agent_id(agent_name.strip())
        if aid not in self.palace.agents:
            raise NotFound(f"no agent named {agent_name!r}")
        lo = parse_day(since) if since else None
        hi = parse_day(until, end=True) if until else None
        # Only a given bound filters: a time no date has (NaN) is still read without one.
        mine = [e for e in self.live() if e.agent_id == aid
                and (lo is None or lo <= e.written_at) and (hi is None or e.written_at <= hi)]
        mine.sort(key=lambda e: (-e.written_at, e.drawer_id))
        return [self.entry_dict(e) for e in mine[:limit]]

    def entry_dict(self, e: DiaryEntry) -> dict[str, Any]:
        """Return an entry with its verbatim text and date, as operations show it."""
        return {**e.to_dict(), "written": written_day(e.written_at),
                "content": self.palace.drawers.content[self.palace.row(e.drawer_id)]}

    def to_json(self) -> list[dict[str, Any]]:
        """Return the live entries for the palace file, in drawer-id order."""
        return [e.to_dict() for e in sorted(self.live(), key=lambda e: e.drawer_id)]

    @classmethod
    def from_json(cls, palace: Any, value: Any, where: str) -> Diaries:
        """Return the diaries read from ``value`` (a list of entry records); every entry must
        name a drawer and an agent of the file. Raises ImportRejected naming the bad place."""
        out = cls(palace)
        for at, rec in records(value, where):
            did, aid, topic = rec.get("drawer_id"), rec.get("agent_id"), rec.get("topic")
            if did not in palace.drawers.row_of:
                raise ImportRejected(f"{at}.drawer_id: no drawer {did!r} in the file")
            if aid not in palace.agents:
                raise ImportRejected(f"{at}.agent_id: no agent {aid!r} in the file")
            if not isinstance(topic, str):
                raise ImportRejected(f"{at}.topic must be a string")
            when = rec.get("written_at")
            if isinstance(when, bool) or not isinstance(when, int | float) or \
                    not EARLIEST <= when <= LATEST:  # NaN, ±inf and huge integers fail too
                raise ImportRejected(f"{at}.written_at must be a time from year 1 to 9999 "
                                     f"(seconds from {EARLIEST:.0f} to {LATEST:.0f})")
            form = rec.get("aaak")
            if form is not None and not isinstance(form, str):
                raise ImportRejected(f"{at}.aaak must be a string or null")
            if did in out.entries:
                raise ImportRejected(f"{at}.drawer_id {did!r} appears twice")
            out.entries[did] = DiaryEntry(did, aid, float(when), topic, form)
        return out

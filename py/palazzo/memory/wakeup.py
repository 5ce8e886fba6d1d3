"""Wake-up context: what an assistant should know at the start of a session, within a budget.

MemPalace loads an identity (L0) and an "essential story" (L1) before the first message; the
Graph Kernel paper assembles context to a token budget. :func:`wake_up` does both from what
the palace holds, with no model: five sections, in this order of priority,

1. **identity** — drawers of a room or wing called ``identity`` (what the user wrote about
   themselves or the assistant), newest first, then the palace's name and size;
2. **facts** — current knowledge-graph facts, the most confident and most recently valid
   first (each line names its triple, and the drawer it came from when it has one);
3. **decisions** — current facts whose predicate records a decision or a plan
   (:data:`DECISION_PREDICATES`): the open decisions;
4. **story** — the most important drawers (importance, then newest), one line each;
5. **rooms** — the rooms most recently written to, with their drawer counts.

Each section may take at most its share of the budget (:data:`SHARES`); what a section leaves
unused goes to the sections after it. A line that does not fit is left out whole (never cut
mid-way except a drawer excerpt, which is cut to :data:`EXCERPT` characters first). Tokens are
estimated as ``ceil(characters / 4)`` (MiniLM's word pieces and GPT-style tokens both average
about four characters of English), so the budget is an estimate, stated as such.

The result depends on the palace alone (no wall clock, ties broken by id): the same palace
gives the same context. Cost: one pass over the live drawers (an ``argsort`` of importance
and time), one over the current facts, and sorting the rooms; ``palazzo bench wakeup`` times
it on a generated 20k-drawer palace (docs/benchmarks.md, "Wake-up").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from palazzo.errors import ValidationError
from palazzo.memory.diary import written_date
from palazzo.memory.kg import ENTITY_PREFIX

IDENTITY = "identity"
EXCERPT = 160  # characters of a drawer shown in the story and identity sections
SECTIONS = ("identity", "facts", "decisions", "story", "rooms")
# Share of the budget each section may take (unused shares pass down the list).
SHARES = {"identity": 0.25, "facts": 0.30, "decisions": 0.15, "story": 0.20, "rooms": 0.10}
TITLES = {"identity": "Identity", "facts": "Facts", "decisions": "Open decisions",
          "story": "Essential story", "rooms": "Active rooms"}
# Predicates that record a decision, a plan or a commitment (extraction writes "decided" and
# "plans_to"; users write the others by hand).
DECISION_PREDICATES = frozenset({"decided", "decided_to", "decided_on", "chose", "plans_to",
                                 "will", "will_use", "committed_to", "agreed_to"})
DEFAULT_BUDGET = 800
MIN_BUDGET = 50
MAX_BUDGET = 100_000


def tokens(text: str) -> int:
    """Return the token estimate of ``text``: ceil(characters / 4). Cost: O(1)."""
    return math.ceil(len(text) / 4)


@dataclass(slots=True)
class Line:
    """One line of the wake-up context and where it came from (a drawer, a fact, a room)."""

    section: str
    text: str
    source: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"section": self.section, "text": self.text, "source": self.source,
                "tokens": tokens(self.text)}


def _day(seconds: float) -> str:
    return written_date(seconds) or ""


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1].rstrip() + "…"


def _identity_lines(palace: Any) -> list[Line]:
    store = palace.drawers
    rows = [r for r in store.live_rows()
            if store.room[r].casefold() == IDENTITY or store.wing[r].casefold() == IDENTITY]
    created = store.columns["created_at"]
    rows.sort(key=lambda r: (-float(created[r]), store.ids[r]))
    lines = [Line("identity", _excerpt(store.content[r]), {"drawer_id": store.ids[r]})
             for r in rows]
    counts = palace.counts()
    lines.append(Line("identity", f"Palace {palace.name!r}: {counts.get('drawers', 0)} drawers "
                                  f"in {counts.get('wings', 0)} wings, "
                                  f"{counts.get('rooms', 0)} rooms.", {"palace": palace.name}))
    return lines


def _fact_text(palace: Any, t: Any) -> str:
    """Return the fact in words, with the entities' display names (as first written)."""
    def name(key: str) -> str:
        entity = palace.entities.get(ENTITY_PREFIX + key)
        return entity.name if entity is not None else key
    since = f" (since {t.valid_from[:10]})" if t.valid_from else ""
    return f"{name(t.subject)} {t.predicate.replace('_', ' ')} {name(t.object)}{since}"


def _fact_source(t: Any) -> dict[str, str]:
    src = {"triple_id": t.id}
    if t.source_drawer:
        src["drawer_id"] = t.source_drawer
    return src


def _facts(palace: Any, decisions: bool) -> list[Line]:
    current = [t for t in palace.kg.triples.values()
               if t.current and (t.predicate in DECISION_PREDICATES) == decisions]
    # Most confident first, then the most recently valid, then the latest observed, then by
    # id (stable sorts, last key first).
    current.sort(key=lambda t: t.id)
    current.sort(key=lambda t: t.observed_at, reverse=True)
    current.sort(key=lambda t: (-t.confidence, -t.start))
    section = "decisions" if decisions else "facts"
    return [Line(section, _fact_text(palace, t), _fact_source(t)) for t in current]


def _story_lines(palace: Any, limit: int) -> list[Line]:
    store = palace.drawers
    n = store.size
    live = np.flatnonzero(store.alive[:n])
    if not len(live):
        return []
    imp = store.columns["importance"][live]
    created = store.columns["created_at"][live]
    # lexsort: last key first -> importance desc, then newest, then row (ids are per row).
    order = np.lexsort((live, -created, -imp))[:limit]
    lines = []
    for i in order:
        r = int(live[i])
        if store.room[r].casefold() == IDENTITY or store.wing[r].casefold() == IDENTITY:
            continue
        day = _day(float(store.columns["created_at"][r]))
        lines.append(Line("story", f"[{store.wing[r]}/{store.room[r]}{' ' + day if day else ''}]"
                                   f" {_excerpt(store.content[r])}", {"drawer_id": store.ids[r]}))
    return lines


def _room_lines(palace: Any) -> list[Line]:
    created = palace.drawers.columns["created_at"]
    rooms = palace.summaries.rooms()
    count = {k: len(rows) for k, rows in rooms.items()}
    latest = {k: float(created[rows].max()) for k, rows in rooms.items()}
    keys = sorted(latest, key=lambda k: (-latest[k], k))
    lines = []
    for w, r in keys:
        day = _day(latest[(w, r)])
        lines.append(Line("rooms", f"{w}/{r}: {count[(w, r)]} drawers"
                                   + (f", last {day}" if day else ""), {"room": f"{w}/{r}"}))
    return lines


def _render(chosen: list[Line]) -> str:
    parts = []
    for name in SECTIONS:
        lines = [ln for ln in chosen if ln.section == name]
        if lines:
            parts.append(f"## {TITLES[name]}\n" + "".join(f"- {ln.text}\n" for ln in lines))
    return "\n".join(parts)


def wake_up(palace: Any, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """Return the wake-up context of ``palace`` within about ``budget`` tokens.

    The result: ``text`` (markdown, one heading a section that has lines), ``lines`` (each
    with its section, text, source and token estimate), ``tokens`` (the estimate of
    ``text``), ``budget``, and ``left_out`` (lines per section that did not fit). Why a budget
    and not a count: the caller knows how much of its context window it can spend. Cost: see
    the module docstring.
    """
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise ValidationError(f"budget must be between {MIN_BUDGET} and {MAX_BUDGET} tokens")
    # Story candidates: enough to fill any budget (a line costs at least ~10 tokens).
    candidates = {
        "identity": _identity_lines(palace),
        "facts": _facts(palace, decisions=False),
        "decisions": _facts(palace, decisions=True),
        "story": _story_lines(palace, limit=budget // 10 + 1),
        "rooms": _room_lines(palace),
    }
    chosen: list[Line] = []
    left_out: dict[str, int] = {}
    spent = 0
    carry = 0.0
    for name in SECTIONS:
        lines = candidates[name]
        heading = tokens(f"## {TITLES[name]}\n")
        allowance = SHARES[name] * budget + carry
        used = 0
        taken = 0
        for line in lines:
            cost = tokens(line.text) + 1 + (heading if taken == 0 else 0)
            if used + cost > allowance or spent + used + cost > budget:
                continue  # a shorter line further down may still fit
            chosen.append(line)
            used += cost
            taken += 1
        spent += used
        carry = max(0.0, allowance - used)
        if len(lines) > taken:
            left_out[name] = len(lines) - taken
    text = _render(chosen)
    while chosen and tokens(text) > budget:  # the estimate per line rounds; the whole decides
        dropped = chosen.pop()
        left_out[dropped.section] = left_out.get(dropped.section, 0) + 1
        text = _render(chosen)
    return {"text": text, "tokens": tokens(text), "budget": budget,
            "lines": [ln.to_dict() for ln in chosen], "left_out": left_out}

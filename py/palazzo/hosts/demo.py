"""The demo palace a first launch shows, built from ``data/demo.md`` by palazzo's own operations.

The text file holds wings (``# Wing``), rooms (``## Room``), one drawer a paragraph, and
knowledge-graph facts (``- subject | predicate | object | valid_from | valid_to`` under
``# Facts``) and one conversation (``- user: …`` turns under ``# Conversation``).
:func:`build` adds them through the operations registry, writes a diary entry,
and runs a short seeded swarm so the map has pheromone trails to show. Nothing binary is
committed: the demo is made fresh, the same way every time (ids and the swarm are
deterministic; times come from the palace clock).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from palazzo.errors import PalazzoError

DEMO_NAME = "Demo palace"
SWARM = {"agents": 3, "cycles": 40, "seed": 7, "stop_on_converge": False}


@dataclass(slots=True)
class DemoText:
    """What ``demo.md`` says: drawers as (wing, room, text) and facts as dicts."""

    drawers: list[tuple[str, str, str]] = field(default_factory=list)
    facts: list[dict[str, str]] = field(default_factory=list)
    turns: list[dict[str, str]] = field(default_factory=list)


def parse(text: str) -> DemoText:
    """Return the drawers and facts of demo-format ``text``; a malformed line raises
    PalazzoError naming its line number."""
    out = DemoText()
    wing = room = None
    paragraph: list[str] = []
    in_comment = False

    def close() -> None:
        if paragraph:
            if wing is None or room is None:
                raise PalazzoError("demo text: a paragraph before any '# Wing' / '## Room'")
            out.drawers.append((wing, room, " ".join(paragraph)))
            paragraph.clear()

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if in_comment or line.startswith("<!--"):
            in_comment = not line.endswith("-->")
            continue
        if line.startswith("## "):
            close()
            room = line[3:].strip()
        elif line.startswith("# "):
            close()
            wing, room = line[2:].strip(), None
        elif line.startswith("- ") and wing == "Conversation":
            role, sep, said = line[2:].partition(":")
            if not sep or role.strip() not in ("user", "assistant") or not said.strip():
                raise PalazzoError(f"demo text line {number}: a turn is '- user: text' or "
                                   "'- assistant: text'")
            out.turns.append({"role": role.strip(), "content": said.strip()})
        elif line.startswith("- ") and wing == "Facts":
            parts = [p.strip() for p in line[2:].split("|")]
            if len(parts) != 5 or not all(parts[:3]):
                raise PalazzoError(f"demo text line {number}: a fact needs 5 '|' fields")
            fact = {"subject": parts[0], "predicate": parts[1], "object": parts[2]}
            if parts[3]:
                fact["valid_from"] = parts[3]
            if parts[4]:
                fact["valid_to"] = parts[4]
            out.facts.append(fact)
        elif line:
            paragraph.append(line)
        else:
            close()
    close()
    return out


def demo_text() -> DemoText:
    """Return the parsed ``data/demo.md`` shipped with palazzo."""
    return parse(resources.files("palazzo").joinpath("data/demo.md").read_text("utf-8"))


def build(call: Any) -> dict[str, Any]:
    """Fill a palace with the demo through ``call(name, args)`` (a palace's, a store's or a
    bridge's) and return counts of what was added."""
    demo = demo_text()
    for wing, room, text in demo.drawers:
        call("add_drawer", {"wing": wing, "room": room, "content": text, "source": "demo"})
    for fact in demo.facts:
        call("kg_add", fact)
    if demo.turns:
        call("import_conversation", {"conversation": "demo-garden-chat",
                                     "messages": demo.turns})
    call("diary_write", {"agent": "Guide", "topic": "tour", "aaak": True,
                         "text": "Walked the demo palace: the Home wing has the most drawers; "
                                 "the Projects wing explains how palazzo itself works."})
    swarm = call("run_swarm", dict(SWARM))
    return {"drawers": len(demo.drawers), "facts": len(demo.facts), "turns": len(demo.turns),
            "swarm_cycles": swarm["cycles_run"]}

"""Agent operations: list and add Active Inference agents, run a swarm over the palace, and
review the TUNNELs generalist agents propose.

The engine work is in :mod:`palazzo.stigmergy.agents`, :mod:`palazzo.stigmergy.swarm` and
:mod:`palazzo.stigmergy.tunnels`; a specialist's notes are written here through the diary
(:mod:`palazzo.memory.diary`), which the swarm's layer cannot reach.
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import NotFound, ValidationError
from palazzo.memory.diary import diary_wing
from palazzo.ops.registry import GOAL, LIMIT, NAME, OPT_TEXT, TEXT, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.stigmergy import tunnels
from palazzo.stigmergy.agents import ARCHETYPES, add_agent, agent_dict, agent_id
from palazzo.stigmergy.swarm import (
    DIARY_EVERY,
    MADE_BY,
    MAX_CYCLES,
    DiaryNote,
    SwarmConfig,
    run_swarm,
)

operation = Operations()

ARCHETYPE = {"enum": list(ARCHETYPES)}
MAX_AGENTS = 100
PROPOSAL_IDS = {"type": "array", "items": NAME, "minItems": 1, "maxItems": 1000}


@operation("list_agents", "The palace's agents and the five agent archetypes.",
           obj({}))
def _list_agents(palace: Palace, args: dict[str, Any]) -> Result:
    return {"agents": [{**agent_dict(a), "diary_entries": palace.diaries.count(a.id)}
                       for a in palace.agents.values()],
            "archetypes": [{"name": a.name, "strategy": a.strategy,
                            "temperature": a.temperature, "description": a.description}
                           for a in ARCHETYPES.values()]}


@operation("add_agent", "Create an Active Inference agent (explorer, exploiter, "
           "balanced, specialist, generalist) with a domain focus.",
           obj({"name": NAME, "archetype": ARCHETYPE, "focus": OPT_TEXT}, ("name",)), mutates=True)
def _add_agent(palace: Palace, args: dict[str, Any]) -> Result:
    agent, created = add_agent(palace, args["name"], args.get("archetype", "balanced"),
                               args.get("focus", ""))
    return {"agent": agent_dict(agent), "created": created}


@operation("run_swarm", "Run SENSE→DECIDE→ACT→UPDATE swarm cycles: agents deposit "
           "pheromones on the edges and nodes they walk, each archetype by its strategy; "
           "specialists stay in one wing and write diary entries of what they found, "
           "generalists propose TUNNELs between similar rooms of different wings (pending "
           "until approved, or added at once with add_tunnels). Returns per-agent coverage, "
           "trail use, diary entries and proposals, and per-cycle metrics. Agents: a count, "
           "a list of archetypes, or the palace's agents.",
           obj({"cycles": {"type": "integer", "minimum": 1, "maximum": MAX_CYCLES},
                 "agents": {"type": "integer", "minimum": 1, "maximum": MAX_AGENTS},
                 "archetypes": {"type": "array", "items": ARCHETYPE, "minItems": 1,
                                "maxItems": MAX_AGENTS},
                 "seed": {"type": "integer", "minimum": 0},
                 "goal": GOAL,
                 "schedule": {"enum": ["constant", "linear", "exponential", "cosine"]},
                 "decay_every": {"type": "integer", "minimum": 1,
                                 "maximum": MAX_CYCLES},
                 "stop_on_converge": {"type": "boolean"},
                 "wing": NAME,
                 "diary": {"type": "boolean"},
                 "diary_every": {"type": "integer", "minimum": 1, "maximum": MAX_CYCLES},
                 "tunnel_threshold": {"type": "number", "minimum": 0, "maximum": 1},
                 "add_tunnels": {"type": "boolean"}}), mutates=True)
def _run_swarm(palace: Palace, args: dict[str, Any]) -> Result:
    """``wing``: the wing specialists without a focus work in (default: the wings most
    relevant to the goal, or with most drawers, one each); ``diary`` (default true): write
    each specialist's notes to its diary — a specialist that is not one of the palace's
    agents is added as one (archetype specialist, focus its wing, marked as made by the
    swarm so later runs do not take it for one of the user's agents) when it first writes;
    ``add_tunnels``: approve the generalists' proposals at once."""
    if "agents" in args and "archetypes" in args:
        raise ValidationError("run_swarm takes 'agents' (a count) or 'archetypes' (a list), "
                              "not both")
    agents = args.get("archetypes", args.get("agents"))
    if isinstance(agents, list) and not 1 <= len(agents) <= MAX_AGENTS:
        raise ValidationError(f"archetypes must list 1 to {MAX_AGENTS} archetypes")
    goal = args.get("goal")
    if goal is not None and palace.embedder is None:
        raise ValidationError("a goal needs a palace with an embedder")
    wing = args.get("wing")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    skip = frozenset(diary_wing(a.name) for a in palace.agents.values())
    config = SwarmConfig(schedule=args.get("schedule", "constant"),
                         decay_every=args.get("decay_every", 10),
                         stop_on_converge=args.get("stop_on_converge", True),
                         diary_every=args.get("diary_every", DIARY_EVERY),
                         tunnel_threshold=args.get("tunnel_threshold",
                                                   tunnels.TUNNEL_COSINE),
                         add_tunnels=args.get("add_tunnels", False),
                         skip_wings=skip, specialist_wing=wing)
    result = run_swarm(palace, agents=agents, cycles=args.get("cycles", 100),
                       seed=args.get("seed", 0), goal=goal, config=config)
    written = write_notes(palace, result.notes) if args.get("diary", True) else {}
    out = result.to_dict()
    for a in out["agents"]:
        if a["archetype"] == "specialist":
            a["diary_entries"] = written.get(a["name"], 0)
    out["gained"]["diary_entries"] = sum(written.values())
    return out


def write_notes(palace: Palace, notes: list[DiaryNote]) -> dict[str, int]:
    """Write each note to its specialist's diary (topic: its wing); return the entries made
    by agent name (a note whose text is already in the diary adds nothing). Cost: one drawer
    insert a note."""
    made: dict[str, int] = {}
    for note in notes:
        stored = palace.agents.get(note.agent_id) or palace.agents.get(agent_id(note.agent))
        if stored is None:
            stored, _ = add_agent(palace, note.agent, "specialist", focus=note.wing)
            # a swarm's own specialist keeps its diary, but a later run without agents
            # named still runs the full mix, not just it (swarm.resolve_agents)
            stored.state[MADE_BY] = "swarm"
        out = palace.diaries.write(stored.name, note.text, topic=note.wing or "general")
        made[note.agent] = made.get(note.agent, 0) + bool(out["created"])
    return made


IDS = {"type": "array", "items": NAME, "maxItems": 1000}
NOTE = obj({"agent": NAME, "agent_id": NAME, "wing": OPT_TEXT, "text": TEXT,
            "first_cycle": {"type": "integer", "minimum": 0},
            "last_cycle": {"type": "integer", "minimum": 0},
            "drawers": IDS, "rooms": IDS}, ("agent", "text"))  # as run_swarm returns a note


@operation("write_swarm_notes", "Write diary notes a swarm run returned without writing "
           "them (run_swarm with diary false, its notes list): each to its specialist's "
           "diary, the specialist added as an agent if new. A host that runs one swarm in "
           "chunks writes the run's notes once, whichever chunk found them.",
           obj({"notes": {"type": "array", "items": NOTE, "minItems": 1,
                          "maxItems": MAX_AGENTS}}, ("notes",)), mutates=True)
def _write_swarm_notes(palace: Palace, args: dict[str, Any]) -> Result:
    """Return the diary entries made by agent name and their sum (a note already in its
    diary adds nothing). Cost: one drawer insert a note."""
    notes = [DiaryNote(n["agent"], n.get("agent_id", agent_id(n["agent"])), n.get("wing", ""),
                       n.get("first_cycle", 0), n.get("last_cycle", 0), n["text"],
                       n.get("drawers", []), n.get("rooms", [])) for n in args["notes"]]
    made = write_notes(palace, notes)
    return {"diary_entries": made, "written": sum(made.values())}


@operation("list_tunnel_proposals", "TUNNELs generalist agents proposed between similar "
           "rooms of different wings: pending ones (or approved, rejected, all), best "
           "centroid cosine first.",
           obj({"status": {"enum": [*tunnels.STATUSES, "all"]}, "limit": LIMIT}))
def _list_tunnel_proposals(palace: Palace, args: dict[str, Any]) -> Result:
    status = args.get("status", "pending")
    chosen = palace.tunnel_proposals.listed(None if status == "all" else status)
    counts = dict.fromkeys(tunnels.STATUSES, 0)
    for p in palace.tunnel_proposals.items.values():
        counts[p.status] += 1
    return {"proposals": [p.to_dict() for p in chosen[: args.get("limit", 100)]],
            "counts": counts}


@operation("approve_tunnel", "Add the TUNNEL edges of pending tunnel proposals (by id).",
           obj({"ids": PROPOSAL_IDS}, ("ids",)), mutates=True)
def _approve_tunnel(palace: Palace, args: dict[str, Any]) -> Result:
    return {"approved": tunnels.approve(palace, args["ids"])}


@operation("reject_tunnel", "Reject pending tunnel proposals (by id): no edge, and the pair "
           "is not proposed again.",
           obj({"ids": PROPOSAL_IDS}, ("ids",)), mutates=True)
def _reject_tunnel(palace: Palace, args: dict[str, Any]) -> Result:
    return {"rejected": tunnels.reject(palace, args["ids"])}

"""Agent operations: list and add Active Inference agents, run a swarm over the palace.

:func:`register` adds them to a :class:`palazzo.ops.Registry`; the engine work is in
:mod:`palazzo.agents` and :mod:`palazzo.swarm`.
"""

from __future__ import annotations

from typing import Any

from palazzo.agents import ARCHETYPES, add_agent, agent_dict
from palazzo.errors import ValidationError
from palazzo.ops import GOAL, NAME, OPT_TEXT, TEXT, Operation, Registry, Result, _obj
from palazzo.palace import Palace
from palazzo.swarm import MAX_CYCLES, SwarmConfig, run_swarm

ARCHETYPE = {"enum": list(ARCHETYPES)}
MAX_AGENTS = 100


def _list_agents(palace: Palace, args: dict[str, Any]) -> Result:
    return {"agents": [{**agent_dict(a), "diary_entries": palace.diaries.count(a.id)}
                       for a in palace.agents.values()],
            "archetypes": [{"name": a.name, "strategy": a.strategy,
                            "temperature": a.temperature, "description": a.description}
                           for a in ARCHETYPES.values()]}


def _add_agent(palace: Palace, args: dict[str, Any]) -> Result:
    agent, created = add_agent(palace, args["name"], args.get("archetype", "balanced"),
                               args.get("focus", ""))
    return {"agent": agent_dict(agent), "created": created}


def _run_swarm(palace: Palace, args: dict[str, Any]) -> Result:
    if "agents" in args and "archetypes" in args:
        raise ValidationError("run_swarm takes 'agents' (a count) or 'archetypes' (a list), "
                              "not both")
    agents = args.get("archetypes", args.get("agents"))
    if isinstance(agents, list) and not 1 <= len(agents) <= MAX_AGENTS:
        raise ValidationError(f"archetypes must list 1 to {MAX_AGENTS} archetypes")
    goal = args.get("goal")
    if goal is not None and palace.embedder is None:
        raise ValidationError("a goal needs a palace with an embedder")
    config = SwarmConfig(schedule=args.get("schedule", "constant"),
                         decay_every=args.get("decay_every", 10),
                         stop_on_converge=args.get("stop_on_converge", True))
    result = run_swarm(palace, agents=agents, cycles=args.get("cycles", 100),
                       seed=args.get("seed", 0), goal=goal, config=config)
    return result.to_dict()


def _diary_write(palace: Palace, args: dict[str, Any]) -> Result:
    codes = args.get("codes") or {}
    if not all(isinstance(v, str) and v.strip() for v in codes.values()):
        raise ValidationError("codes must map entity names to non-empty codes")
    return palace.diaries.write(args["agent"], args["text"], args.get("topic", "general"),
                                args.get("importance", 0.5), args.get("aaak", False), codes)


def _diary_read(palace: Palace, args: dict[str, Any]) -> Result:
    entries = palace.diaries.read(args["agent"], args.get("limit", 10), args.get("since"),
                                  args.get("until"))
    return {"agent": args["agent"], "entries": entries}


DAY = {"type": "string", "minLength": 10, "maxLength": 40}


def register(reg: Registry) -> None:
    """Add the agent operations to ``reg``. Returns None; a second call raises."""
    add = reg.add
    add(Operation("list_agents", "The palace's agents and the five agent archetypes.",
                  _obj({}), _list_agents))
    add(Operation("add_agent", "Create an Active Inference agent (explorer, exploiter, "
                  "balanced, specialist, generalist) with a domain focus.",
                  _obj({"name": NAME, "archetype": ARCHETYPE, "focus": OPT_TEXT}, ("name",)),
                  _add_agent, mutates=True))
    add(Operation("run_swarm", "Run SENSE→DECIDE→ACT→UPDATE swarm cycles (agents deposit "
                  "pheromones on the edges they walk); returns a summary and per-cycle "
                  "metrics. Agents: a count, a list of archetypes, or the palace's agents.",
                  _obj({"cycles": {"type": "integer", "minimum": 1, "maximum": MAX_CYCLES},
                        "agents": {"type": "integer", "minimum": 1, "maximum": MAX_AGENTS},
                        "archetypes": {"type": "array", "items": ARCHETYPE, "minItems": 1,
                                       "maxItems": MAX_AGENTS},
                        "seed": {"type": "integer", "minimum": 0},
                        "goal": GOAL,
                        "schedule": {"enum": ["constant", "linear", "exponential", "cosine"]},
                        "decay_every": {"type": "integer", "minimum": 1,
                                        "maximum": MAX_CYCLES},
                        "stop_on_converge": {"type": "boolean"}}),
                  _run_swarm, mutates=True))
    add(Operation("diary_write", "Write a verbatim entry to an agent's diary (a drawer in its "
                  "wing, so it is searchable); aaak adds the compact AAAK form beside it.",
                  _obj({"agent": NAME, "text": TEXT, "topic": NAME,
                        "importance": {"type": "number", "minimum": 0, "maximum": 1},
                        "aaak": {"type": "boolean"}, "codes": {"type": "object"}},
                       ("agent", "text")), _diary_write, mutates=True))
    add(Operation("diary_read", "An agent's diary entries, latest first (limit, since/until "
                  "ISO dates).",
                  _obj({"agent": NAME, "limit": {"type": "integer", "minimum": 1,
                                                 "maximum": 1000},
                        "since": DAY, "until": DAY}, ("agent",)), _diary_read))

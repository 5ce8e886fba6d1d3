"""Agent operations: list and add Active Inference agents, run a swarm over the palace.

The engine work is in :mod:`palazzo.stigmergy.agents` and :mod:`palazzo.stigmergy.swarm`.
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import ValidationError
from palazzo.ops.registry import GOAL, NAME, OPT_TEXT, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.stigmergy.agents import ARCHETYPES, add_agent, agent_dict
from palazzo.stigmergy.swarm import MAX_CYCLES, SwarmConfig, run_swarm

operation = Operations()

ARCHETYPE = {"enum": list(ARCHETYPES)}
MAX_AGENTS = 100


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


@operation("run_swarm", "Run SENSE→DECIDE→ACT→UPDATE swarm cycles (agents deposit "
           "pheromones on the edges they walk); returns a summary and per-cycle "
           "metrics. Agents: a count, a list of archetypes, or the palace's agents.",
           obj({"cycles": {"type": "integer", "minimum": 1, "maximum": MAX_CYCLES},
                 "agents": {"type": "integer", "minimum": 1, "maximum": MAX_AGENTS},
                 "archetypes": {"type": "array", "items": ARCHETYPE, "minItems": 1,
                                "maxItems": MAX_AGENTS},
                 "seed": {"type": "integer", "minimum": 0},
                 "goal": GOAL,
                 "schedule": {"enum": ["constant", "linear", "exponential", "cosine"]},
                 "decay_every": {"type": "integer", "minimum": 1,
                                 "maximum": MAX_CYCLES},
                 "stop_on_converge": {"type": "boolean"}}), mutates=True)
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

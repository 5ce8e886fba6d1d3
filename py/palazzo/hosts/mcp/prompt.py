"""The ``palace_protocol`` prompt: what an assistant is told about the palace and its tools.

The MCP server (:mod:`palazzo.hosts.mcp.server`) serves it. This module holds its text, the
short form sent as the server's ``instructions``, and the answers to ``prompts/list`` and
``prompts/get`` once the server has checked the request's shape; it knows nothing of JSON-RPC.
"""

from __future__ import annotations

from typing import Any

PROMPT_NAME = "palace_protocol"
WAKE_UP = "wake_up"
NAMES = (PROMPT_NAME, WAKE_UP)
DEFAULT_AGENT = "assistant"

PROTOCOL = """\
# Your memory palace (palazzo)

The tools of this server are your long-term memory: a palazzo memory palace. It keeps what you
store word for word and finds it again by meaning and by words.

## Layout
- **Palace**: the whole memory (this server serves one).
- **Wing**: a major domain: a person, a project, a field ("work", "family", "orion").
- **Room**: one subject inside a wing ("auth", "deploys", "garden"). Rooms of one wing are
  joined by halls; rooms of different wings that share a subject by tunnels.
- **Closet**: an optional shelf inside a room that groups related drawers.
- **Drawer**: one verbatim text (a note, a decision, a quotation, an excerpt) with its source,
  importance (0 to 1) and timestamps. Its id comes from text + wing + room, so storing the same
  text twice in a room stores it once.
- **Knowledge graph**: entities and dated facts (subject -predicate-> object) with confidence
  and validity (valid_from, valid_to). A fact that stops being true is ended, not erased, so
  you can ask what was true at a date.
- **Diaries**: every agent, you included, has a diary in its own wing; entries are drawers,
  so search finds them.
- **Pheromones**: trails of use. Results and paths that helped can be reinforced
  (pheromone_deposit, navigate with deposit: true); trails decay. Pass the search's `query`
  with the drawer ids that answered it and the reward is remembered with that query: a later
  search with pheromone > 0 (1 is a good start) ranks them higher for the same or a nearly
  same question, and for no other. Search ignores trails unless you pass pheromone > 0.
- **Provenance slices**: conversation turns (add_turn, import_conversation) form a graph;
  slice_context cuts the admissible evidence around an anchor turn under a named policy and
  signs it with an HMAC token; verify_token checks a bundle or token later.

## How to use it
1. **Search first.** Before answering from memory, and before storing, call `search` with a
   short query (add wing/room when you know the place); read whole drawers with `get_drawer`.
   `get_taxonomy` and `list_wings` show the layout: reuse the wings and rooms that exist
   instead of inventing near-duplicates.
2. **Add verbatim.** `add_drawer` with the exact words (wing, room, content; source and
   importance when you know them), never a paraphrase of text you could store whole.
   `check_duplicate` when unsure; `update_drawer` corrects, `delete_drawer` removes.
3. **Facts with dates.** `kg_add` subject, predicate, object, with `valid_from` (YYYY-MM-DD)
   when the fact started, `confidence` below 1 when unsure, and `source_drawer` naming the
   drawer that says so. When a fact changes, `kg_supersede` (or `kg_invalidate`) it rather
   than adding a contradiction. Ask with `kg_query` (`as_of` for a past date), `kg_timeline`,
   `kg_traverse`; `kg_contradictions` finds clashes.
4. **Keep a diary.** After a piece of work, `diary_write` (agent: "{agent}") a few sentences:
   what you did, what you learned, what is still open. `diary_read` picks up where you left.
5. **Cite with provenance.** When an answer rests on a conversation, store its turns
   (`add_turn` or `import_conversation`), call `slice_context` with the turn you answer as
   `anchor`, and keep the bundle with your answer. `verify_token` with that bundle (and
   `recompute: true`) says whether it is still valid and current. Never write or edit a token.
6. **Errors are answers.** A result marked as an error says what was wrong; nothing was
   changed. Fix the arguments and call again.

## This palace now
{now}
"""




def _palace_now(store: Any) -> str:
    """Return a few lines on the open palace for the prompt (name, counts, wings, mode)."""
    status = store.call("palace_status", {})
    wings = store.call("list_wings", {})["wings"]
    lines = [f"- Name: {status['name']}; {status['drawers']} drawers in {status['rooms']} "
             f"rooms of {status['wings']} wings; {status['entities']} entities."]
    if wings:
        shown = ", ".join(f"{w['name']} ({w['drawers']})" for w in wings[:40])
        more = f" and {len(wings) - 40} more" if len(wings) > 40 else ""
        lines.append(f"- Wings (drawers): {shown}{more}.")
    else:
        lines.append("- Empty so far: the first add_drawer creates its wing and room.")
    if store.status.read_only:
        lines.append("- Read-only for now: its files need a repair (`palazzo repair --yes`), "
                     "so writes fail until then; reads always work.")
    return "\n".join(lines)


def protocol_text(store: Any, agent: str = DEFAULT_AGENT) -> str:
    """Return the palace_protocol prompt's text for ``store``'s palace and ``agent``."""
    return PROTOCOL.format(agent=agent, now=_palace_now(store))


def instructions(store: Any) -> str:
    """Return the server's instructions: a short form of the protocol, sent with
    ``initialize`` and ``server/discover`` because a client may put it in the system prompt
    without ever asking for a prompt."""
    text = ("palazzo is a memory palace: wings > rooms > drawers of verbatim text, a dated "
            "knowledge graph, agent diaries and provenance slices. Search before you answer "
            "or store; store exact words with add_drawer; record facts with kg_add and a "
            "valid_from date; write a diary entry with diary_write after a piece of work. "
            f"The prompt '{PROMPT_NAME}' explains the layout and every habit.")
    if store.status.read_only:
        text += (" This palace is read-only for now (its files need `palazzo repair --yes`): "
                 "writes fail until then, reads always work.")
    return text


def prompts() -> list[dict[str, Any]]:
    """Return the ``prompts`` of a ``prompts/list`` result: the one prompt this server has,
    with its title, description and optional ``agent`` argument."""
    return [{
        "name": PROMPT_NAME, "title": "Palace protocol",
        "description": "How the memory palace is laid out (wings, rooms, closets, verbatim "
                       "drawers, knowledge graph, diaries, pheromones, provenance slices) "
                       "and how to use its tools.",
        "arguments": [{"name": "agent", "required": False,
                       "description": f"your diary's agent name (default {DEFAULT_AGENT!r})"}],
    }, {
        "name": WAKE_UP, "title": "Wake-up context",
        "description": "What to know at the start of a session: identity, current facts, "
                       "open decisions, the most important drawers and the active rooms, "
                       "within a token budget; each line names its drawer or fact.",
        "arguments": [{"name": "budget", "required": False,
                       "description": "tokens to spend, 50 to 100000 (default 800)"}],
    }]


def wake_up(store: Any, arguments: dict[str, str]) -> dict[str, Any]:
    """Return the ``prompts/get`` result for :data:`WAKE_UP`: the ``wake_up`` operation's
    text as one user message. ``arguments["budget"]`` must be a whole number of tokens in the
    operation's range; anything else raises :class:`ValueError` (the server answers -32602).
    Cost: the operation's (docs/benchmarks.md, "Wake-up")."""
    budget = arguments.get("budget")
    call_args: dict[str, Any] = {}
    if budget is not None:
        if not budget.strip().isdigit():
            raise ValueError(f"budget must be a whole number of tokens, not {budget!r}")
        call_args["budget"] = int(budget)
    out = store.call("wake_up", call_args)
    text = ("# What you remember (palazzo wake-up context)\n\n"
            + (out["text"] or "The palace is empty so far.\n"))
    return {"description": f"Wake-up context, about {out['tokens']} of {out['budget']} tokens",
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}


def get(store: Any, arguments: dict[str, str]) -> dict[str, Any]:
    """Return the ``prompts/get`` result for :data:`PROMPT_NAME`: the protocol text for
    ``store``'s palace as one user message, addressed to ``arguments["agent"]`` (default
    :data:`DEFAULT_AGENT`). The server has checked the name and that ``arguments`` is an
    object of strings. Cost: two store reads (``palace_status``, ``list_wings``)."""
    agent = arguments.get("agent") or DEFAULT_AGENT
    return {"description": "The palace protocol: layout and habits",
            "messages": [{"role": "user", "content": {
                "type": "text", "text": protocol_text(store, agent)}}]}

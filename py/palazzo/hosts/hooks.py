"""Assistant hooks: what ``palazzo hook <event>`` does when Claude Code (or Codex, whose
hooks take the same input and answer) runs it.

Claude Code runs a hook command at its events with the event's JSON on standard input
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, and per event ``source``
or ``trigger``). palazzo answers four kinds:

- **Stop, SubagentStop, PreCompact, SessionEnd** save the session: the transcript file is
  imported as ``palazzo import-chats`` would (the Claude Code reader, the conversation's room
  in the conversations wing), so only the messages the palace does not hold yet are added:
  a message is keyed by its uuid, and running a hook twice, or after a compaction (which
  appends to the transcript, never rewrites it), adds nothing twice;
- **SessionStart** prints the palace's wake-up context (the ``wake_up`` operation, every
  line naming the drawer, fact or room it came from) within a token budget as the hook's
  ``additionalContext``, which Claude Code puts before the model;
- **UserPromptSubmit** does nothing unless asked (``--recall TOKENS``): then it searches the
  palace for the prompt and gives the few drawers that answer it best, outside the session's
  own conversation (the model has that already), as ``additionalContext`` within that many
  tokens, each line naming its drawer.

Kept out on request: in a folder that holds a ``.palazzoignore`` file (the session's ``cwd``
or any folder above it), every hook does nothing; with ``--redact`` a saving hook takes
secrets (API keys, tokens, private keys, ``PASSWORD=…`` values:
:mod:`palazzo.importers.redaction`) out of the messages before they are kept.

Fail-soft by contract (:func:`run_soft`): bad or missing input, a locked, missing or damaged
palace, or any error ends the hook with exit status 0 and one line on standard error, never
blocking the assistant; the failure is kept in the palace directory's
``.hook-failures.json`` (the last :data:`KEPT_FAILURES`), which ``palazzo status`` shows.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from palazzo.errors import PalazzoError, ValidationError

SAVE_EVENTS = frozenset({"Stop", "SubagentStop", "PreCompact", "SessionEnd"})
EVENTS = frozenset({*SAVE_EVENTS, "SessionStart", "UserPromptSubmit"})
IGNORE = ".palazzoignore"  # in a session's folder or above it: its hooks do nothing
FAILURES = ".hook-failures.json"  # in the palace directory (a dot: no palace file)
KEPT_FAILURES = 20
WAKE_BUDGET = 1500  # tokens of wake-up context a SessionStart hook prints by default
RECALL_HITS = 5  # drawers a UserPromptSubmit recall gives at most
RECALL_QUERY = 2000  # characters of the prompt searched for
RECALL_LINE = 240  # characters of a drawer's text on its line
MAX_INPUT = 1 << 20  # bytes of a hook's standard input read (its JSON is a few hundred)
HOOK_LOCK_WAIT = 10.0  # seconds a saving hook waits for the writer lock, then fails soft


def event_name(given: str) -> str:
    """Return the Claude Code event name for ``given`` (``Stop``, ``stop``, ``pre-compact``
    or ``pre_compact`` alike); raise ValidationError for an event palazzo has no hook for."""
    key = given.replace("-", "").replace("_", "").lower()
    for name in EVENTS:
        if name.lower() == key:
            return name
    raise ValidationError(f"no palazzo hook for the event {given!r} (the events: "
                          f"{', '.join(sorted(EVENTS))})")


def read_input(stream: TextIO) -> dict[str, Any]:
    """Return the hook's JSON object read from ``stream``; raise ValidationError (one line)
    when it is not one."""
    text = stream.read(MAX_INPUT + 1)
    if len(text) > MAX_INPUT:
        raise ValidationError(f"the hook's input is over {MAX_INPUT} bytes")
    try:
        data = json.loads(text) if text.strip() else None
    except json.JSONDecodeError as err:
        raise ValidationError(f"the hook's input is not JSON ({err.msg} at {err.pos})") \
            from None
    if not isinstance(data, dict):
        raise ValidationError("the hook's input is not a JSON object (Claude Code sends one)")
    return data


def transcript(data: dict[str, Any]) -> Path:
    """Return the transcript file the hook's input names; raise ValidationError when it
    names none or it is not a regular file."""
    path = data.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise ValidationError("the hook's input names no transcript_path")
    p = Path(path).expanduser()
    if not p.is_file():
        raise ValidationError(f"the transcript {p} is not a file")
    return p


def ignored(data: dict[str, Any]) -> Path | None:
    """Return the ``.palazzoignore`` file that keeps the session out of the palace (in its
    ``cwd`` or a folder above it), or None. Cost: a look in each folder up to the root."""
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None
    here = Path(cwd).expanduser()
    for folder in (here, *here.parents):
        if (folder / IGNORE).is_file():
            return folder / IGNORE
    return None


def save(open_palace: Callable[[], Any], data: dict[str, Any], redact: bool = False
         ) -> dict[str, Any]:
    """Import the session's transcript into the palace (only the messages it lacks); return
    what the import did (``import_conversation``'s counts, summed). Through a running
    palace server when there is one (its rooms read through it), else on the palace's
    files.
    ``redact``: secrets taken out of the messages first. Cost: reading the transcript, the
    palace's look-up of what it holds, and the new messages' writes."""
    from palazzo.importers import BATCH, apply
    from palazzo.importers.chats import plan_chats
    from palazzo.importers.redaction import redact_plan

    path = transcript(data)
    with open_palace() as d:
        store = getattr(d, "store", None)  # (None: a palace server, which checks every call)
        plan = plan_chats(path, palace=d if store is None else store, check=store is not None)
        if redact:
            redact_plan(plan)
        if store is None:  # the server embeds and links each batch itself
            return apply(plan, d.call, batch=BATCH)
        from palazzo.hosts.embedding import embedding_steps

        with store.words_first():  # searchable by their words first, then the vectors
            out = apply(plan, d.call, batch=BATCH)
        for _ in embedding_steps(d.call, 64):
            pass
    return out


def wake(open_palace: Callable[[], Any], data: dict[str, Any], budget: int) -> dict[str, Any]:
    """Return SessionStart's answer: ``hookSpecificOutput`` with the wake-up context as
    ``additionalContext`` (nothing added for an empty palace)."""
    with open_palace() as d:
        out = d.call("wake_up", {"budget": budget})
    text = out.get("text") or ""
    answer: dict[str, Any] = {"hookEventName": "SessionStart"}
    if text:
        answer["additionalContext"] = text
    return {"hookSpecificOutput": answer}


def recall(open_palace: Callable[[], Any], data: dict[str, Any], budget: int
           ) -> dict[str, Any] | None:
    """Return UserPromptSubmit's answer: the drawers that best answer the prompt (at most
    :data:`RECALL_HITS`, none of the session's own conversation), one line each with its
    wing, room and id, within ``budget`` tokens (characters / 4) as ``additionalContext``;
    None (nothing printed) when none is found. Raises ValidationError for an input without
    a prompt. Cost: one search (and a look at the conversations' rooms)."""
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValidationError("the hook's input has no prompt")
    with open_palace() as d:
        hits = d.call("search", {"query": prompt[:RECALL_QUERY],
                                 "limit": RECALL_HITS * 3})["results"]
        own = _session_rooms(d, data.get("session_id"))
    lines, used = [], 0
    for h in hits:
        if (h["wing"], h["room"]) in own:
            continue
        text = " ".join(str(h.get("content") or "").split())
        text = text if len(text) <= RECALL_LINE else text[:RECALL_LINE - 1] + "…"
        line = f"- [{h['wing']}/{h['room']}] {text} ({h['drawer_id']})"
        cost = len(line) // 4 + 1
        if used + cost > budget:
            break
        lines.append(line)
        used += cost
        if len(lines) == RECALL_HITS:
            break
    if not lines:
        return None
    text = "From the palace (palazzo), drawers that may bear on this prompt:\n" + \
        "\n".join(lines)
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                   "additionalContext": text}}


def _session_rooms(d: Any, session: Any) -> set[tuple[str, str]]:
    """Return the (wing, room) of the Claude Code session ``session`` in the palace (empty
    when it was not saved yet, or no session is named)."""
    if not isinstance(session, str) or not session:
        return set()
    store = getattr(d, "store", None)
    rooms = d.rooms if store is None else store.palace.rooms  # (a server's, or the files')
    name = f"claude-code:{session}"
    return {key for key, r in rooms.items() if name in (r.name, r.source)}


def run(event: str, open_palace: Callable[[], Any], stdin: TextIO,
        budget: int = WAKE_BUDGET, recall_budget: int = 0, redact: bool = False
        ) -> dict[str, Any] | None:
    """Run the hook for ``event`` on the input read from ``stdin``; return the JSON to print
    on standard output (None: print nothing). ``recall_budget``: UserPromptSubmit's tokens
    of recalled drawers (0: it does nothing); ``redact``: a save takes secrets out first.
    A session under a ``.palazzoignore`` gets nothing done. Raises on any failure
    (:func:`run_soft` makes that a line on standard error)."""
    name = event_name(event)
    data = read_input(stdin)
    if ignored(data) is not None:
        return None
    if name in SAVE_EVENTS:
        save(open_palace, data, redact)
        return None
    if name == "SessionStart":
        return wake(open_palace, data, budget)
    if recall_budget > 0:  # UserPromptSubmit
        return recall(open_palace, data, recall_budget)
    return None


def run_soft(event: str, palace: Path, open_palace: Callable[[], Any], stdin: TextIO,
             stdout: TextIO, stderr: TextIO, budget: int = WAKE_BUDGET,
             recall_budget: int = 0, redact: bool = False) -> int:
    """:func:`run`, fail-soft: print its answer, and return 0 whatever happened; a failure
    is one line on ``stderr`` and an entry in the palace directory's ``.hook-failures.json``
    (when it holds a palace)."""
    try:
        answer = run(event, open_palace, stdin, budget, recall_budget, redact)
    except (Exception, KeyboardInterrupt) as err:
        why = str(err) if isinstance(err, PalazzoError) else f"{type(err).__name__}: {err}"
        why = " ".join(why.split())[:500]
        print(f"palazzo hook {event}: {why} (the session goes on; nothing was saved)",
              file=stderr)
        record_failure(palace, event, why)
        return 0
    if answer is not None:
        stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return 0


def record_failure(palace: Path, event: str, why: str) -> None:
    """Keep the failure in ``palace``'s ``.hook-failures.json`` (the newest
    :data:`KEPT_FAILURES`); nothing when the directory holds no palace (a snapshot) or
    cannot be written: a hook never makes a folder look like something it is not."""
    path = Path(palace).expanduser() / FAILURES
    try:
        if not any(p.name.startswith("snapshot-") for p in path.parent.iterdir()):
            return
        kept = failures(path.parent)
        kept.append({"at": time.time(), "event": event, "error": why})
        tmp = path.with_name(f".{FAILURES}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(kept[-KEPT_FAILURES:], ensure_ascii=False, indent=1),
                       encoding="utf-8")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError:
        pass


def failures(palace: Path) -> list[dict[str, Any]]:
    """Return the hook failures kept in ``palace`` (oldest first; [] when none or unreadable)."""
    try:
        data = json.loads((Path(palace) / FAILURES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [f for f in data if isinstance(f, dict)] if isinstance(data, list) else []

"""Importers: other tools' memories turned into palazzo operation calls.

Each importer reads its source, checks all of it, and returns a :class:`Plan`: the operation
calls (``add_drawer``, ``kg_add``, ``diary_write``, ``import_conversation``, …) that would
bring the source into a palace, plus a summary (counts, and every item left out with the
reason). Nothing is written while planning. :func:`apply` then runs the calls in order
through any ``call(name, args)`` — :meth:`palazzo.palace.Palace.call`, or
:meth:`palazzo.persist.palacestore.PalaceStore.call` so that every write is journaled.

Why plans: a malformed source must change nothing (DESIGN §3: "an import is validated
completely before anything is applied"), so every call is checked against its operation's
schema and the engine's own rules before the plan is returned, and a problem raises
:class:`~palazzo.errors.ImportRejected` naming the file and the place in it. Applying a plan
twice adds nothing the second time: drawer ids are content addressed (content + wing + room),
``kg_add`` merges an overlapping duplicate, diary entries and conversation turns are content
addressed too.

Importers read files and SQLite databases, so they are CPython-side tools; this package only
imports the standard library and palazzo at module level (``sqlite3`` is imported where a
database is opened), so importing it never fails under Pyodide.

Public surface:

- :func:`palazzo.importers.folder.plan_index` — a folder of text files
- :func:`palazzo.importers.chats.plan_chats` — chat exports (JSON, JSONL, ChatGPT, Claude,
  OpenCode)
- :func:`palazzo.importers.mempalace.plan_mempalace` — a MemPalace palace (Python or Rust)
- :func:`palazzo.importers.graphpalace.plan_graphpalace` — a GraphPalace JSON export
- :func:`palazzo.importers.source.recognise` — what a dropped file or folder is
- :func:`apply` — run a plan; :class:`Applier` — run it a batch at a time
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from palazzo.core.model import MAX_CONTENT, Progress, clean_name, drawer_id
from palazzo.core.schema import validate
from palazzo.errors import ImportInterrupted, ImportRejected, PalazzoError
from palazzo.importers._files import open_regular
from palazzo.memory.conversation import (
    DEFAULT_PHASE,
    DEFAULT_SALIENCE,
    MAX_MESSAGES,
    conversation_name,
    read_message,
)
from palazzo.memory.kg import normalise_entity, normalise_predicate, parse_when

if TYPE_CHECKING:
    import sqlite3

CallFn = Callable[[str, dict[str, Any]], dict[str, Any]]
BATCH = 500  # calls a batch of an import, at most
BATCH_CHARS = 4_000_000  # characters of text a batch carries, about (its journal record)

__all__ = [
    "Applier",
    "Call",
    "ImportInterrupted",
    "Plan",
    "apply",
]




@dataclass(slots=True, frozen=True)
class Call:
    """One planned operation call and where in the source it comes from (for messages)."""

    name: str
    args: dict[str, Any]
    where: str = ""

    def pair(self) -> tuple[str, dict[str, Any]]:
        """Return ``(name, args)``, the form hosts pass to ``call``."""
        return self.name, self.args


@dataclass(slots=True)
class Plan:
    """The checked calls an importer wants to run, and what it found (``summary``).

    ``summary`` always has ``source`` (the path read), ``format`` (the shape detected),
    ``calls`` (per operation name), and ``skipped`` (a list of ``{"item", "reason"}``).
    """

    calls: list[Call]
    summary: dict[str, Any]

    def __len__(self) -> int:
        return len(self.calls)

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        return (c.pair() for c in self.calls)

    def pairs(self) -> list[tuple[str, dict[str, Any]]]:
        """Return the calls as ``(name, args)`` pairs, in order."""
        return [c.pair() for c in self.calls]


class Applier:
    """Applies a plan a batch at a time: :meth:`step` runs the next batch, so a host can
    show progress and stop between batches (the browser answers clicks in between).

    ``batch``/``batch_chars`` as in :func:`apply`. Between steps, :attr:`done` calls of
    :attr:`total` are applied; stopping leaves them applied (applying the plan again adds
    only the rest). Cost per step: one operation call (one journal record through a store).
    """

    __slots__ = ("call", "batch", "total", "done", "calls", "created", "_groups")

    def __init__(self, plan: Plan | Iterable[tuple[str, dict[str, Any]]], call: CallFn,
                 batch: int = 1, batch_chars: int = BATCH_CHARS) -> None:
        items = list(plan.calls) if isinstance(plan, Plan) else [
            c if isinstance(c, Call) else Call(c[0], c[1]) for c in plan]
        self.call = call
        self.batch = batch
        self.total = len(items)
        self.done = 0
        self.calls: Counter[str] = Counter()
        self.created: Counter[str] = Counter()
        self._groups = _groups(items, batch, batch_chars)

    def step(self) -> bool:
        """Apply the next batch; return whether any was left to apply (False: finished,
        nothing done). A call that fails raises :class:`ImportInterrupted` naming it and how
        far the plan got."""
        group = next(self._groups, None)
        if group is None:
            return False
        batch, total, done = self.batch, self.total, self.done
        try:
            if batch <= 1:
                results = [self.call(group[0].name, group[0].args)]
            else:
                results = self.call("batch", {"calls": [{"name": c.name, "args": c.args}
                                                        for c in group]})["results"]
        except PalazzoError as err:
            at = getattr(err, "batch_index", 0) if batch > 1 else 0
            item = group[at]
            place = f" ({item.where})" if item.where else ""
            before = (f"the {done} calls before its batch were applied" if batch > 1 else
                      f"the {done} calls before it were applied")
            raise ImportInterrupted(
                f"call {done + at + 1} of {total}, {item.name}{place}, failed: {err}; {before}, "
                "and applying the plan again finishes it"
            ) from err
        for item, result in zip(group, results, strict=True):
            self.calls[item.name] += 1
            if isinstance(result, dict):
                if result.get("created") is True:
                    self.created[item.name] += 1
                elif item.name == "import_conversation" and \
                        isinstance(result.get("created"), int) and result["created"] > 0:
                    self.created[item.name] += result["created"]
        self.done += len(group)
        return True

    def result(self) -> dict[str, Any]:
        """Return {"total", "calls", "created"}: what :func:`apply` returns (so far)."""
        return {"total": self.total, "calls": dict(self.calls), "created": dict(self.created)}


def apply(plan: Plan | Iterable[tuple[str, dict[str, Any]]], call: CallFn,
          progress: Progress | None = None, batch: int = 1,
          batch_chars: int = BATCH_CHARS) -> dict[str, Any]:
    """Run the plan's calls in order through ``call``; return what happened.

    The result counts calls per operation name (``calls``) and how many of them reported a
    new thing (``created``: a result with ``created`` true, or ``import_conversation``'s
    count of new turns). With ``batch`` > 1 the calls go in ``batch`` operations of at most
    that many calls (and about ``batch_chars`` characters of arguments): through a store, each
    batch is one journal record and one durable write that lands whole or not at all, and
    new drawers are embedded and linked a batch at a time. ``progress(done, total)`` is called
    after every call (every batch). A call that fails raises :class:`ImportInterrupted`
    naming it and how far the plan got; applying the plan again completes it (what is there
    is not added twice). Cost: one operation call per planned call or per batch.
    """
    applier = Applier(plan, call, batch, batch_chars)
    while applier.step():
        if progress is not None:
            progress(applier.done, applier.total)
    return applier.result()


def _groups(items: list[Call], size: int, chars: int) -> Iterator[list[Call]]:
    """Yield ``items`` in order, in groups of at most ``size`` calls and about ``chars``
    characters of text arguments (a group always holds at least one call)."""
    group: list[Call] = []
    weight = 0
    for item in items:
        w = len(json.dumps(item.args, ensure_ascii=False))
        if group and (len(group) >= max(size, 1) or weight + w > chars):
            yield group
            group, weight = [], 0
        group.append(item)
        weight += w
    if group:
        yield group


# -- building and checking plans ---------------------------------------------------------------

@dataclass(slots=True)
class PlanBuilder:
    """Collects calls and skipped items while an importer reads its source.

    :meth:`finish` checks every call (schema of its operation, names, text, dates) and
    returns the :class:`Plan`; it raises :class:`ImportRejected` on the first bad call.
    ``check`` False leaves that to whoever runs the plan: a palace server checks every call
    of a batch before it runs any, and checking here would load the whole engine in a
    process that only talks to it (a hook).
    """

    source: str
    format: str
    calls: list[Call] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    check: bool = True

    def add(self, name: str, args: dict[str, Any], where: str) -> None:
        """Plan the call ``name(args)``; ``where`` names its place in the source."""
        self.calls.append(Call(name, args, where))

    def skip(self, item: str, reason: str) -> None:
        """Record that ``item`` is left out, and why (it shows in the summary)."""
        self.skipped.append({"item": item, "reason": reason})

    def finish(self, **summary: Any) -> Plan:
        """Return the checked plan; ``summary`` adds importer-specific counts.
        Cost: linear in the size of the calls' arguments."""
        for c in self.calls if self.check else ():
            check_call(c)
        reasons = Counter(reason_group(s["reason"]) for s in self.skipped)
        out = {"source": self.source, "format": self.format,
               "calls": dict(Counter(c.name for c in self.calls)),
               **summary, "skipped": self.skipped, "skipped_by_reason": dict(reasons)}
        return Plan(self.calls, out)


def reason_group(reason: str) -> str:
    """Return the part of a skip reason the summary counts by: up to its first colon outside
    parentheses ("unknown role: 'x'" and "unknown role: 'y'" count together; "step marker
    (a model call's start: no text)" stays whole). Cost: one pass over the reason."""
    depth = 0
    for i, ch in enumerate(reason):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0:
            return reason[:i]
    return reason


def check_call(c: Call) -> None:
    """Raise :class:`ImportRejected` if the call would be refused by its operation.

    Checks the operation's JSON Schema and the engine's rules that the schema cannot say
    (usable names, non-empty text, ISO dates, validity windows, messages). Returns None.
    """
    from palazzo.ops import REGISTRY

    try:
        op = REGISTRY.get(c.name)
        validate(c.args, op.schema, where=f"{c.name} arguments")
        checker = _CHECKS.get(c.name)
        if checker is not None:
            checker(c.args)
    except ImportRejected:
        raise
    except PalazzoError as err:
        raise ImportRejected(f"{c.where}: {err}" if c.where else str(err)) from None


def _check_drawer(args: dict[str, Any]) -> None:
    clean_name(args["wing"], "wing")
    clean_name(args["room"], "room")
    if args.get("closet") is not None:
        clean_name(args["closet"], "closet")
    _check_text(args["content"], "content", MAX_CONTENT)


def _check_text(text: str, what: str, limit: int) -> None:
    if not text.strip():
        raise ImportRejected(f"{what} is empty")
    if len(text) > limit:
        raise ImportRejected(f"{what} is longer than {limit} characters")


def _check_fact(args: dict[str, Any]) -> None:
    keys = [normalise_entity(clean_name(args[k], k)) for k in ("subject", "object")]
    if not all(keys):
        raise ImportRejected("subject and object need letters or digits")
    if keys[0] == keys[1]:
        raise ImportRejected(f"subject and object are the same entity ({keys[0]!r})")
    if not normalise_predicate(args["predicate"]):
        raise ImportRejected("predicate needs letters or digits")
    start = parse_when(args["valid_from"], "valid_from") if "valid_from" in args else None
    end = parse_when(args["valid_to"], "valid_to") if "valid_to" in args else None
    if "observed_at" in args:
        parse_when(args["observed_at"], "observed_at")
    if start is not None and end is not None and end.instant <= start.instant:
        raise ImportRejected(f"valid_to ({end.text}) must be after valid_from ({start.text})")
    for k in ("subject_type", "object_type"):
        if k in args:
            clean_name(args[k], k)


def _check_diary(args: dict[str, Any]) -> None:
    clean_name(args["agent"], "agent")
    if "topic" in args:
        clean_name(args["topic"], "topic")
    _check_text(args["text"], "text", 5_000_000)


def _check_conversation(args: dict[str, Any]) -> None:
    conversation_name(args["conversation"])
    messages = args.get("messages", [])
    if not 1 <= len(messages) <= MAX_MESSAGES:
        raise ImportRejected(f"a conversation takes 1 to {MAX_MESSAGES} messages, "
                             f"this one has {len(messages)}")
    for i, m in enumerate(messages):
        read_message(m, f"messages[{i}]", DEFAULT_PHASE, DEFAULT_SALIENCE)
        for j, ref in enumerate(m.get("parents") or ()):
            if isinstance(ref, bool) or not isinstance(ref, int) or not 0 <= ref < i:
                raise ImportRejected(f"messages[{i}].parents[{j}] is not an earlier message")


def _check_names(*keys: str) -> Callable[[dict[str, Any]], None]:
    def check(args: dict[str, Any]) -> None:
        for k in keys:
            if k in args:
                clean_name(args[k], k)
    return check


_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "add_drawer": _check_drawer,
    "kg_add": _check_fact,
    "diary_write": _check_diary,
    "import_conversation": _check_conversation,
    "add_wing": _check_names("name"),
    "add_room": _check_names("wing", "name"),
    "add_agent": _check_names("name"),
    "kg_entity": _check_names("name", "type"),
}


def planned_drawer_id(content: str, wing: str, room: str, key: str = "") -> str:
    """Return the id ``add_drawer`` will give this drawer (names normalised as it does;
    ``key`` is the identity key passed with it, "" for none)."""
    return drawer_id(content, clean_name(wing, "wing"), clean_name(room, "room"), key)


# -- reading sources ---------------------------------------------------------------------------

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts with the SQLite header (a FIFO or a
    device is never opened). Cost: a stat and a read of 16 bytes."""
    try:
        with open_regular(path) as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def open_sqlite(path: Path) -> sqlite3.Connection:
    """Return a read-only connection to the SQLite database at ``path``.

    Raises ImportRejected when the file is not a SQLite database or cannot be opened. The
    database is opened with ``mode=ro``: an importer never changes its source.
    """
    import sqlite3

    if not path.is_file():
        raise ImportRejected(f"{path}: no such file")
    if not is_sqlite(path):
        raise ImportRejected(f"{path}: not a SQLite database (no SQLite header)")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as err:
        raise ImportRejected(f"{path}: cannot read the database: {err}") from None
    return conn


def quote_name(name: str) -> str:
    """Return ``name`` as an SQL identifier: in double quotes, inner quotes doubled."""
    return '"' + name.replace('"', '""') + '"'


def table_columns(conn: sqlite3.Connection,
                  unreadable: list[tuple[str, str]] | None = None) -> dict[str, set[str]]:
    """Return every readable table and view of the database with its column names.

    A table the driver cannot describe (a virtual table whose module this SQLite does not
    have, such as sqlite-vec's ``vec0``) is left out and, when ``unreadable`` is given,
    appended to it as ``(table, reason)``, so a caller can name it in its summary. Raises
    ImportRejected only when the schema itself cannot be listed. Cost: one PRAGMA a table.
    """
    import sqlite3

    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")]
    except sqlite3.Error as err:
        raise ImportRejected(f"cannot list the tables of the database: {err}") from None
    out: dict[str, set[str]] = {}
    for t in tables:
        if not isinstance(t, str):
            continue
        try:
            out[t] = {r[1] for r in conn.execute(f"PRAGMA table_info({quote_name(t)})")}
        except sqlite3.Error as err:
            if unreadable is not None:
                unreadable.append((t, f"unreadable table: {err}"))
    return out


def require_columns(path: Path, tables: dict[str, set[str]], table: str,
                    columns: Iterable[str]) -> None:
    """Raise ImportRejected naming the file when ``table`` or one of ``columns`` is missing."""
    if table not in tables:
        raise ImportRejected(f"{path}: no table {table!r} (found: "
                             f"{', '.join(sorted(tables)) or 'none'})")
    missing = sorted(set(columns) - tables[table])
    if missing:
        raise ImportRejected(f"{path}: table {table!r} has no column(s) {', '.join(missing)}")


def rows(conn: sqlite3.Connection, path: Path, sql: str,
         params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    """Return the rows of ``sql`` (as :class:`sqlite3.Row`); a database error is an
    ImportRejected naming the file."""
    import sqlite3

    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error as err:
        raise ImportRejected(f"{path}: cannot read: {err}") from None


def check_unicode(doc: Any, where: str) -> None:
    """Raise ImportRejected when a string (or key) of the parsed JSON ``doc`` is not Unicode
    text: JSON may spell a lone surrogate (``"\\ud800"``), which Python keeps but no UTF-8
    writer (the journal, a drawer id's hash, the terminal) can encode. Walks the document
    without recursion; O(size of the document)."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        value, at = stack.pop()
        if isinstance(value, str):
            _check_encodable(value, at, where)
        elif isinstance(value, dict):
            for k, v in value.items():
                _check_encodable(k, at, where)
                stack.append((v, f"{at}.{k}" if isinstance(k, str) and k.isidentifier()
                              else f"{at}[{k!r}]"))
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(value))


def _check_encodable(text: str, at: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = text[err.start]
        place = at.encode("utf-8", "backslashreplace").decode("ascii", "replace") or "the text"
        raise ImportRejected(f"{where}: {place} holds a lone surrogate (\\u{ord(bad):04x}), "
                             "which is not Unicode text; the file is damaged") from None


# -- text and time helpers ---------------------------------------------------------------------

_FRACTION = re.compile(r"(\d{2}:\d{2}:\d{2})\.(\d{6})\d+")
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")


def iso_when(value: Any, where: str) -> str | None:
    """Return ``value`` as an ISO 8601 text ``kg_add`` accepts, or None when it is empty.

    Accepts the forms other tools write: ``YYYY-MM-DD``, ``YYYY-MM-DDTHH:MM:SS[.f][Z|±HH:MM]``
    and SQLite's ``YYYY-MM-DD HH:MM:SS``; fractions beyond microseconds (chrono writes
    nanoseconds) are cut. Raises ImportRejected naming ``where`` for anything else.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ImportRejected(f"{where} must be an ISO 8601 date or datetime, got {value!r}")
    text = _FRACTION.sub(r"\1.\2", value.strip().replace(" ", "T", 1))
    try:
        return parse_when(text, where).text
    except PalazzoError:
        raise ImportRejected(f"{where} is not an ISO 8601 date or datetime: {value!r}") from None


def end_of_day(value: str | None) -> str | None:
    """Return a ``valid_to`` whose date-only form meant "through that whole day" as the next
    day (palazzo's ``valid_to`` is an exclusive instant, a date meaning its 00:00 UTC).

    MemPalace compares a date-only ``valid_to`` as ``…T23:59:59Z`` (the fact holds all that
    day); without this shift a one-day fact (``valid_from == valid_to``) would be empty.
    """
    if value is None or not _DATE_ONLY.fullmatch(value):
        return value
    return (date.fromisoformat(value) + timedelta(days=1)).isoformat()


def number(value: Any, where: str, lo: float | None = None, hi: float | None = None) -> float:
    """Return ``value`` as a finite float within [lo, hi]; raise ImportRejected otherwise
    (also for an integer too large for a float, which ``float()`` would overflow on)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ImportRejected(f"{where} must be a finite number, got {_short(value)}")
    try:
        result = float(value)
    except OverflowError:
        raise ImportRejected(f"{where} must be a finite number, got an integer too large "
                             "for one") from None
    if not math.isfinite(result):
        raise ImportRejected(f"{where} must be a finite number, got {value!r}")
    if (lo is not None and result < lo) or (hi is not None and result > hi):
        raise ImportRejected(f"{where} must be between {lo} and {hi}, got {result:g}")
    return result


def _short(value: Any, limit: int = 80) -> str:
    """Return ``repr(value)`` cut to ``limit`` characters, for messages about bad input."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 100 \
        else f"an integer of {value.bit_length()} bits"
    return text if len(text) <= limit else text[:limit] + "…"


def usable_name(value: Any) -> str | None:
    """Return ``value`` as a wing/room/closet/entity name palazzo accepts, or None.

    Control characters (tabs, newlines) become spaces and runs of spaces one space, so a
    name that other tools allowed is kept readable rather than refused; an empty or
    over-long result is None (the caller skips the item and says why).
    """
    if not isinstance(value, str):
        return None
    text = " ".join("".join(" " if unicodedata.category(ch) == "Cc" else ch
                            for ch in value).split())
    try:
        return clean_name(text, "name")
    except PalazzoError:
        return None

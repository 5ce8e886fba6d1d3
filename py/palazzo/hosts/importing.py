"""An import a host runs in steps: recognise, plan, apply batch by batch, summarise.

The browser worker drives it (``workers/palace.worker.js``): the person drops files, the
worker writes them under one folder and calls :meth:`ImportJob.prepare`, which recognises
the source (:mod:`palazzo.importers.source`), reads and checks all of it and returns what it
found, in words and numbers, before anything is written. Once the person has chosen where
it lands (a new palace, or the open one), the worker calls :meth:`ImportJob.step` until it
returns finished, answering clicks and posting progress in between, and may stop early
(cancel). :meth:`ImportJob.summary` says what was imported and what was skipped and why.

Text first: while a step runs, the palace's embedder is set aside, so a batch of 500
drawers lands (stored, BM25-indexed) in a fraction of a second instead of waiting for its
vectors; the host embeds the new drawers afterwards in small steps (``reindex`` with a
limit), as it does for a palace JSON import. Drawers embedded that way get no SIMILAR_TO
links (``reindex`` embeds, it does not link).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from palazzo.errors import ImportRejected, PalazzoError, ValidationError
from palazzo.hosts.words import plural
from palazzo.importers import BATCH, Applier, Plan, reason_group
from palazzo.importers.source import Source, recognise, unpack_zip

CallFn = Callable[[str, dict[str, Any]], dict[str, Any]]
EXAMPLES = 5  # skipped items named in the summary, per import (the rest are counted)
_UNSAFE = re.compile(r"[^A-Za-z0-9 _.-]+")


def palace_name_for(stem: str, taken: Iterable[str]) -> str:
    """Return a palace name made from ``stem`` that is valid on every backend (1–64
    letters, digits, spaces, ``_ . -``, starting with a letter or digit) and not in
    ``taken``: "notes", then "notes 2", "notes 3"… Why: the dialog suggests the name, and a
    name that exists is never reused silently."""
    base = _UNSAFE.sub(" ", stem)
    base = " ".join(base.split()).lstrip("._- ").rstrip(" .")[:56] or "Imported"
    taken = set(taken)
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base} {n}"
    return name


@contextmanager
def text_first(bridge: Any):
    """Within the block the open palace has no embedder, so imported drawers are stored and
    indexed without waiting for vectors (see the module docstring); the embedder is back
    afterwards, even on error."""
    palace = bridge.palace
    embedder = palace.embedder
    palace.embedder = None
    try:
        yield
    finally:
        palace.embedder = embedder


class ImportJob:
    """One import of the files under ``root`` through ``bridge``, in steps."""

    def __init__(self, bridge: Any, root: str | Path, batch: int = BATCH) -> None:
        self.bridge = bridge
        self.root = Path(root)
        self.batch = batch
        self.source: Source | None = None
        self.plan: Plan | None = None
        self.document: dict[str, Any] | None = None
        self.applier: Applier | None = None
        self.stopped = False
        self.imported: dict[str, int] | None = None  # a palace file's counts, once loaded

    # -- before anything is written ---------------------------------------------------------
    def _entry(self) -> Path:
        """The dropped thing itself: the one file or folder under the root, else the root
        (several files dropped together are one folder of notes)."""
        items = [p for p in self.root.iterdir()]
        if not items:
            raise ImportRejected("nothing was dropped")
        return items[0] if len(items) == 1 else self.root

    def prepare(self, taken: Iterable[str] = ()) -> dict[str, Any]:
        """Recognise and read the whole source, check every call, and return what was
        found: {"kind", "format", "label", "name" (suggested for a new palace, not in
        ``taken``), "counts", "skipped", "skipped_by_reason", "examples", "calls"}. Raises
        ImportRejected (one sentence naming the file and the place) having written nothing.
        Cost: one read of the source (a zip is unpacked next to it first)."""
        entry = self._entry()
        source = recognise(entry)
        if source.path.is_file() and source.path.suffix.lower() == ".zip" and \
                source.kind in ("folder", "mempalace"):
            unpacked = self.root.parent / f"{self.root.name}.unzipped"
            unpacked.mkdir(parents=True, exist_ok=True)
            source.path = unpack_zip(source.path, unpacked)
        elif source.kind == "folder" and source.path.is_file():
            source.path = source.path.parent  # a text file dropped alone: its own folder
        self.source = source
        if source.kind == "palace":
            from palazzo.core import jsontext

            raw = source.path.read_bytes()
            doc = jsontext.loads(raw, source.path.name, ImportRejected)
            self._check_palace_file(doc)
            self.document = doc
            body = doc.get("palace") or {}
            counts = {k: len(body.get(k) or ()) for k in ("wings", "rooms", "drawers")}
            suggested = body.get("name") if isinstance(body.get("name"), str) else source.name
            return {"kind": "palace", "format": "palazzo", "label": source.label,
                    "name": palace_name_for(suggested, taken), "counts": counts,
                    "skipped": 0, "skipped_by_reason": {}, "examples": [], "calls": 1}
        self.plan = source.plan()
        return self._found(taken)

    def _check_palace_file(self, doc: Any) -> None:
        """Load the palace file into a throwaway palace (the ``import`` operation's own
        check), so a bad file is refused before a new palace is made for it."""
        from palazzo.formats.palacefile import read_palace
        from palazzo.palace import Palace

        try:
            read_palace(doc, lambda **kw: Palace(**kw))
        except PalazzoError as err:
            raise ImportRejected(f"{self.source.path.name}: {err}") from None

    def _found(self, taken: Iterable[str]) -> dict[str, Any]:
        summary = self.plan.summary
        skipped = summary.get("skipped") or []
        counts = {k: v for k, v in summary.items()
                  if isinstance(v, int) and not isinstance(v, bool)}
        return {"kind": self.source.kind, "format": summary.get("format", self.source.kind),
                "label": self.source.label, "name": palace_name_for(self.source.name, taken),
                "counts": counts, "by_kind": dict(summary.get("messages_by_kind") or {}),
                "skipped": len(skipped),
                "skipped_by_reason": dict(summary.get("skipped_by_reason") or {}),
                "examples": skipped[:EXAMPLES], "calls": len(self.plan.calls)}

    # -- applying ---------------------------------------------------------------------------
    def begin(self, into_open: bool) -> None:
        """Start applying into the palace open now (the host has opened or created the
        target already). A folder or chat export going into the open palace is planned again
        against it, so unchanged files are skipped and conversations imported before keep
        their rooms. Returns None."""
        if self.source is None:
            raise ValidationError("prepare the import first")
        if self.source.kind in ("folder", "chats") and into_open:
            lib = self.bridge.library
            self.plan = self.source.plan(palace=lib.store if lib is not None
                                         else self.bridge.palace)
        if self.plan is not None:
            self.applier = Applier(self.plan, self.bridge.call, self.batch)

    def step(self) -> dict[str, Any]:
        """Apply the next batch (the whole file for a palace file); return {"done",
        "total", "finished"} in planned calls. ImportInterrupted when a batch fails (the
        batches before it stay; importing the same source again adds only the rest)."""
        if self.document is not None:
            if self.imported is None:
                with text_first(self.bridge):
                    out = self.bridge.call("import", {"document": self.document,
                                                      "reindex": False})
                self.imported = out["imported"]
            return {"done": 1, "total": 1, "finished": True}
        if self.applier is None:
            raise ValidationError("begin the import first")
        with text_first(self.bridge):
            more = self.applier.step()
        a = self.applier
        return {"done": a.done, "total": a.total, "finished": not more or a.done >= a.total}

    def stop(self) -> None:
        """Stop before the next batch (the person cancelled). Returns None."""
        self.stopped = True

    def summary(self) -> dict[str, Any]:
        """Return {"text": one paragraph in words, "done", "total", "created", "calls",
        "skipped", "skipped_by_reason", "stopped"}: what landed and what did not, and why."""
        found = self.plan.summary if self.plan is not None else {}
        reasons = dict(found.get("skipped_by_reason") or {})
        skipped = len(found.get("skipped") or [])
        if self.document is not None:
            c = self.imported or {}
            done = 1 if self.imported is not None else 0
            text = (f"Loaded the palace file: {plural(c.get('drawers', 0), 'drawer')} in "
                    f"{plural(c.get('wings', 0), 'wing')}." if done
                    else "Nothing was imported.")
            return {"text": text, "done": done, "total": 1, "created": c, "calls": {},
                    "skipped": 0, "skipped_by_reason": {}, "stopped": self.stopped}
        a = self.applier
        result = a.result() if a is not None else {"total": 0, "calls": {}, "created": {}}
        text = describe(self.source.kind if self.source else "folder", found, result,
                        a.done if a else 0, self.stopped)
        return {"text": text, "done": a.done if a else 0, "total": result["total"],
                "created": result["created"], "calls": result["calls"], "skipped": skipped,
                "skipped_by_reason": reasons, "stopped": self.stopped}


def describe(kind: str, found: dict[str, Any], result: dict[str, Any], done: int,
             stopped: bool) -> str:
    """Return what an import did, in a few sentences: what was new, what was there already,
    what was skipped and why (grouped by reason), and, when stopped, how far it got."""
    created = result.get("created") or {}
    calls = result.get("calls") or {}
    parts: list[str] = []
    if kind == "chats":
        convs = calls.get("import_conversation", 0)
        turns = created.get("import_conversation", 0)
        parts.append(f"Imported {plural(convs, 'conversation')}: {plural(turns, 'new message')}.")
    else:
        drawers = calls.get("add_drawer", 0)
        new = created.get("add_drawer", 0)
        parts.append(f"Imported {plural(new, 'new drawer')}"
                     + (f" ({plural(drawers - new, 'was', 'were')} there already)"
                        if drawers > new else "") + ".")
        facts = created.get("kg_add", 0)
        if facts:
            parts.append(f"Added {plural(facts, 'fact')} to the knowledge graph.")
        diary = created.get("diary_write", 0)
        if diary:
            parts.append(f"Added {plural(diary, 'diary entry', 'diary entries')}.")
    unchanged = found.get("unchanged")
    if unchanged:
        count = len(unchanged) if isinstance(unchanged, list | tuple) else int(unchanged)
        parts.append(f"{plural(count, 'file')} had not changed.")
    reasons = found.get("skipped_by_reason") or {}
    if reasons:
        listed = "; ".join(f"{n} {why}" for why, n in sorted(reasons.items(),
                                                            key=lambda kv: -kv[1]))
        parts.append(f"Skipped {plural(sum(reasons.values()), 'item')}: {listed}.")
    else:
        parts.append("Nothing was skipped.")
    if stopped:
        parts.append(f"Stopped after {done:,} of {plural(result.get('total', 0), 'step')}: "
                     "what was imported stays; importing the same files again adds only the rest.")
    return " ".join(parts)


def found_text(summary: dict[str, Any], examples: int = 3, reasons: int = 8) -> str:
    """Return what a plan found, in a few lines for a person: the source and its format,
    what will be imported (conversations and messages by kind, or calls by operation), and
    what is left out, counted by reason with up to ``examples`` items each (the ``reasons``
    most frequent; the rest summed). The plan's full summary (every skipped item) stays for
    ``--json``: on a real export it runs to megabytes. Cost: one pass over the skipped list.
    """
    head = f"Found {summary.get('source', 'the source')} ({summary.get('format', '?')})"
    lines: list[str] = []
    if "conversations" in summary:
        kinds = summary.get("messages_by_kind") or {}
        by_kind = ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in kinds.items())
        lines.append(f"{head}: {plural(summary.get('messages', 0), 'message')} in "
                     f"{plural(summary['conversations'], 'conversation')}"
                     + (f" ({by_kind})" if len(kinds) > 1 else "") + ".")
    else:
        calls = summary.get("calls") or {}
        listed = ", ".join(f"{n:,} {name}" for name, n in sorted(calls.items()))
        if isinstance(summary.get("files"), int):  # a folder: what changed since last time
            unchanged = summary.get("unchanged") or []
            count = len(unchanged) if isinstance(unchanged, list) else int(unchanged)
            head += (f": {plural(summary['files'], 'file')}, {summary.get('indexed', 0):,} to "
                     f"index, {count:,} unchanged")
        lines.append(f"{head}: {listed or 'nothing to import'}.")
    skipped = summary.get("skipped") or []
    if not skipped:
        lines.append("Nothing is left out.")
        return "\n".join(lines)
    source = str(summary.get("source", ""))
    groups: dict[str, list[str]] = {}
    for s in skipped:
        item = s["item"]
        if source and item[len(source):len(source) + 1] in ("/", " ") \
                and item.startswith(source):
            item = item[len(source) + 1:]  # the place within the source says enough
        groups.setdefault(reason_group(s["reason"]), []).append(item)
    order = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    lines.append(f"Left out: {plural(len(skipped), 'item')}, by reason:")
    for why, items in order[:reasons]:
        shown = "; ".join(items[:examples]) + ("; …" if len(items) > examples else "")
        lines.append(f"  {len(items):,} {why} (e.g. {shown})")
    rest = order[reasons:]
    if rest:
        lines.append(f"  {sum(len(i) for _, i in rest):,} more for "
                     f"{plural(len(rest), 'other reason')}")
    return "\n".join(lines)

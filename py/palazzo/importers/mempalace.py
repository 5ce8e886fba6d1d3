"""Import a MemPalace palace: drawers, diaries and the temporal knowledge graph.

Two layouts are read (both checked against the real code, see the report):

**Python MemPalace** (PyPI ``mempalace``, checked with 3.11.0 and ChromaDB 1.5.9): a palace
folder holding ChromaDB's ``chroma.sqlite3``, and a ``knowledge_graph.sqlite3`` that MemPalace
keeps in one of three places: inside the palace (``mempalace mine``, the MCP server started
with ``--palace``), beside a folder named ``palace`` (the Hermes integration; the legacy
``~/.mempalace/palace`` layout), or at ``~/.mempalace/knowledge_graph.sqlite3``
(``knowledge_graph.DEFAULT_KG_PATH``, which the MCP server uses otherwise, also for the XDG
default palace ``~/.config/mempalace/palace``). They are tried in that order unless a path is
given, and the summary's ``notes`` say which was read and where it was looked for.

- Drawers are the records of the ChromaDB collection ``mempalace_drawers``, read straight from
  SQLite: ``collections`` -> ``segments`` -> ``embeddings`` (``embedding_id`` is MemPalace's
  drawer id) -> ``embedding_metadata`` (key/value rows; the text is the key
  ``chroma:document``, then ``wing``, ``room``, ``source_file``, ``chunk_index``, …). Vectors
  are not read: palazzo embeds the text again with its own embedder.
- Oversized entries that MemPalace split into ``…_chunk_NNNNNN`` records (metadata
  ``parent_drawer_id`` / ``parent_entry_id``, ``chunk_index``) are joined back into one
  drawer; palazzo chunks long drawers for the vector side itself.
- Diary entries (metadata ``type == "diary_entry"``, with ``agent`` and ``topic``) become
  ``diary_write`` calls, so they land in palazzo's diary of that agent.
- The ``mempalace_closets`` collection (AAAK pointer lines derived from drawers) is not
  imported; it is counted in the summary.
- Knowledge graph: ``entities(id, name, type, properties)`` and ``triples(id, subject,
  predicate, object, valid_from, valid_to, confidence, source_file, source_drawer_id,
  extracted_at, …)``, subject and object being entity ids. Every entity becomes a
  ``kg_entity`` call (type unless ``unknown``, properties when any), every triple a
  ``kg_add`` with the entity names.

**Rust MemPalace** (a port keeping everything in one ``palace.db``): ``drawers(id, wing,
room, content, source_file, added_by, filed_at)`` and ``triples(id, subject, predicate,
object, valid_from, valid_until, source_closet[, source_file, source_drawer_id])`` with
entity names as subject and object. Diary entries are drawers in wing ``wing_<agent>``,
room ``diary``, text ``[topic] entry``; they become ``diary_write`` calls.

Validity windows are kept. Python MemPalace treats a date-only ``valid_to`` (``2025-06-30``)
as lasting through that day (it compares it as ``…T23:59:59Z``), while palazzo's ``valid_to``
is an exclusive instant and a date means its 00:00 UTC, so such an end is imported as the
next day (``2025-07-01``). The Rust port compares ``valid_until`` as text with ``>`` (the fact
has ended from that value on), which is palazzo's meaning already, so it is kept as it is.
Datetimes are kept (SQLite's ``YYYY-MM-DD HH:MM:SS`` is read as UTC).

Drawer times: a drawer's ``authored_at`` (written by MemPalace's conversation miner: when the
chat happened) becomes ``add_drawer``'s ``created_at``. MemPalace's filing times
(``filed_at``) are not carried over, so a drawer without ``authored_at`` (and every diary
entry: ``diary_write`` takes no time) gets the time of the import.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import ImportRejected
from palazzo.importers import (
    Plan,
    PlanBuilder,
    check_unicode,
    end_of_day,
    is_sqlite,
    iso_when,
    number,
    open_sqlite,
    planned_drawer_id,
    require_columns,
    rows,
    table_columns,
    usable_name,
)
from palazzo.memory.kg import normalise_entity, normalise_predicate, parse_when

SOURCE = "mempalace"
DRAWERS = "mempalace_drawers"
CLOSETS = "mempalace_closets"
CHROMA_FILE = "chroma.sqlite3"
KG_FILE = "knowledge_graph.sqlite3"
RUST_FILE = "palace.db"
DOCUMENT_KEY = "chroma:document"
PARENT_KEYS = ("parent_drawer_id", "parent_entry_id")
AUTHORED = "authored_at"
# Microseconds from 0001-01-01Z (where a kg When's instant counts from) to 1970-01-01Z.
UNIX_AFTER_YEAR_ONE = (datetime(1970, 1, 1, tzinfo=UTC) - datetime(1, 1, 1, tzinfo=UTC)
                       ) // timedelta(microseconds=1)

__all__ = ["plan_mempalace"]


@dataclass(slots=True)
class _Drawer:
    """One MemPalace drawer (chunks joined), as read."""

    ids: list[str]  # MemPalace ids that map to it (the drawer, or the group and its chunks)
    text: str
    meta: dict[str, Any]
    where: str


@dataclass(slots=True)
class _Layout:
    kind: str  # "python", "rust" or "kg"
    drawers: Path | None
    kg: Path | None
    kg_note: str = ""  # where the knowledge graph was found or looked for, in words


@dataclass(slots=True)
class _State:
    builder: PlanBuilder
    id_map: dict[str, str] = field(default_factory=dict)  # MemPalace id -> palazzo drawer id
    counts: Counter[str] = field(default_factory=Counter)
    planned: dict[str, str] = field(default_factory=dict)  # palazzo drawer id -> where read
    unreadable: set[tuple[str, str]] = field(default_factory=set)  # (file, table) named

    def tables(self, conn: Any, path: Path) -> dict[str, set[str]]:
        """Return the readable tables of ``conn`` (see :func:`table_columns`); every table
        the driver cannot read is named once in the summary's skipped items."""
        bad: list[tuple[str, str]] = []
        found = table_columns(conn, bad)
        for table, reason in bad:
            if (str(path), table) not in self.unreadable:
                self.unreadable.add((str(path), table))
                self.builder.skip(f"{path} table {table!r}", reason)
        return found


# -- finding the files ---------------------------------------------------------------------------

def _locate(path: Path, kg_path: Path | None, home: Path | None) -> _Layout:
    """Return what ``path`` is (a Python palace, a Rust palace.db or a lone knowledge graph)
    and which files to read. ``kg_path``, when given, is the knowledge graph, unchecked here
    (reading it rejects a missing file); otherwise a Python palace's graph is searched for
    (:func:`_find_kg`). Raises ImportRejected when ``path`` is none of these. Cost: one
    read of a SQLite schema and a few ``stat`` calls."""
    if path.is_file():
        if not is_sqlite(path):
            raise ImportRejected(f"{path}: not a SQLite database")
        conn = open_sqlite(path)
        try:
            tables = set(table_columns(conn))
        finally:
            conn.close()
        if {"collections", "embeddings", "embedding_metadata"} <= tables:
            return _python(path, kg_path, home)
        if {"drawers", "triples"} <= tables:
            return _Layout("rust", path, kg_path)
        if {"triples", "entities"} <= tables:
            return _Layout("kg", None, path)
        raise ImportRejected(f"{path}: neither a MemPalace ChromaDB file, a Rust palace.db nor "
                             "a knowledge_graph.sqlite3 (tables: "
                             f"{', '.join(sorted(tables)) or 'none'})")
    if not path.is_dir():
        raise ImportRejected(f"{path}: no such file or folder")
    if (path / CHROMA_FILE).is_file():
        return _python(path / CHROMA_FILE, kg_path, home)
    if (path / RUST_FILE).is_file():
        return _Layout("rust", path / RUST_FILE, kg_path)
    if (path / "palace" / CHROMA_FILE).is_file():  # ~/.mempalace given instead of its palace
        return _python(path / "palace" / CHROMA_FILE, kg_path, home)
    if (path / KG_FILE).is_file():
        return _Layout("kg", None, kg_path or path / KG_FILE)
    raise ImportRejected(f"{path}: no {CHROMA_FILE}, {RUST_FILE} or {KG_FILE} here")


def _python(chroma: Path, kg_path: Path | None, home: Path | None) -> _Layout:
    """Return the layout of the Python palace whose ChromaDB file is ``chroma``: the graph
    ``kg_path`` when given (authoritative, not searched), else the one :func:`_find_kg`
    finds, with a note saying where it looked."""
    if kg_path is not None:
        return _Layout("python", chroma, kg_path, f"knowledge graph: given, {kg_path}")
    kg, note = _find_kg(chroma.parent, home)
    return _Layout("python", chroma, kg, note)


def _kg_candidates(palace_dir: Path, home: Path | None) -> list[tuple[Path, str]]:
    """Return, in the order they are tried, where MemPalace 3.11 may have put the knowledge
    graph of the palace in ``palace_dir``, each with who writes there:

    1. ``<palace>/knowledge_graph.sqlite3``: ``mempalace mine`` (``cli/cmd_mine.py``), the
       fact checker, and the MCP server started with ``--palace`` (``mcp_server/_guards.py``
       ``_resolve_kg_path``);
    2. ``<palace>/../knowledge_graph.sqlite3`` when the folder is named ``palace``: the Hermes
       integration (``_kg_db_path``, the palace's sibling) and the legacy layout, where it is
       ``~/.mempalace/knowledge_graph.sqlite3`` beside ``~/.mempalace/palace``;
    3. ``<home>/.mempalace/knowledge_graph.sqlite3``: ``knowledge_graph.DEFAULT_KG_PATH``,
       which the MCP server uses for whatever palace it serves unless started with
       ``--palace``, also when the palace is the XDG default ``~/.config/mempalace/palace``
       or set by ``MEMPALACE_PALACE_PATH``. It is ``expanduser("~/.mempalace/…")``:
       ``MEMPALACE_CONFIG_DIR`` and ``XDG_CONFIG_HOME`` do not move it.

    The third is left out when ``home`` is None. The same file reached twice is listed once.
    Cost: none (no file is touched)."""
    found = [(palace_dir / KG_FILE, "inside the palace")]
    if palace_dir.name == "palace":
        found.append((palace_dir.parent / KG_FILE, "beside the palace folder"))
    if home is not None:
        found.append((home / ".mempalace" / KG_FILE, "MemPalace's default graph"))
    seen: set[Path] = set()
    out = []
    for p, why in found:
        key = Path(os.path.abspath(p))
        if key not in seen:
            seen.add(key)
            out.append((p, why))
    return out


def _find_kg(palace_dir: Path, home: Path | None) -> tuple[Path | None, str]:
    """Return (the knowledge graph of the palace in ``palace_dir`` or None, a note saying
    where it was found and where it was looked for). The first of :func:`_kg_candidates`
    that is a file wins; other candidates that exist too are named in the note, not read
    (``--kg`` picks one). Cost: one ``stat`` a candidate."""
    tried = _kg_candidates(palace_dir, home)
    present = [(p, why) for p, why in tried if p.is_file()]
    if not present:
        return None, ("knowledge graph: not found at " + ", ".join(str(p) for p, _ in tried)
                      + "; pass its path (--kg) if it is elsewhere")
    chosen, why = present[0]
    missing = [str(p) for p, _ in tried[:tried.index(present[0])]]
    note = f"knowledge graph: found at {chosen} ({why})"
    if missing:
        note += f"; not found at {', '.join(missing)}"
    if len(present) > 1:
        note += ("; also present but not read: " + ", ".join(str(p) for p, _ in present[1:])
                 + " (pass one with --kg to read it instead)")
    return chosen, note


# -- Python MemPalace: ChromaDB ------------------------------------------------------------------

def _meta_value(r: Any, has_bool: bool) -> Any:
    for key in ("string_value", "int_value", "float_value"):
        if r[key] is not None:
            return r[key]
    if has_bool and r["bool_value"] is not None:
        return bool(r["bool_value"])
    return None


def _chroma_records(path: Path, collection: str, state: _State
                    ) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """Return ([(embedding id, metadata with the document)], records in the closets
    collection) of ``collection`` in ChromaDB's SQLite file."""
    conn = open_sqlite(path)
    try:
        tables = state.tables(conn, path)
        require_columns(path, tables, "collections", ("id", "name"))
        require_columns(path, tables, "segments", ("id", "collection"))
        require_columns(path, tables, "embeddings", ("id", "segment_id", "embedding_id"))
        require_columns(path, tables, "embedding_metadata",
                        ("id", "key", "string_value", "int_value", "float_value"))
        has_bool = "bool_value" in tables["embedding_metadata"]
        names = [r["name"] for r in rows(conn, path, "SELECT name FROM collections")]
        if collection not in names:
            raise ImportRejected(f"{path}: no ChromaDB collection {collection!r} (found: "
                                 f"{', '.join(sorted(names)) or 'none'})")
        join = ("FROM embeddings e JOIN segments s ON e.segment_id = s.id "
                "JOIN collections c ON s.collection = c.id WHERE c.name = ?")
        records = rows(conn, path, f"SELECT e.id, e.embedding_id {join} ORDER BY e.id",
                       (collection,))
        bool_col = ", m.bool_value" if has_bool else ""
        metas = rows(conn, path, "SELECT m.id, m.key, m.string_value, m.int_value, "
                     f"m.float_value{bool_col} FROM embedding_metadata m "
                     f"JOIN embeddings e ON e.id = m.id JOIN segments s ON e.segment_id = s.id "
                     "JOIN collections c ON s.collection = c.id WHERE c.name = ?",
                     (collection,))
        closets = 0
        if CLOSETS in names:
            closets = rows(conn, path, f"SELECT count(*) AS n {join}", (CLOSETS,))[0]["n"]
    finally:
        conn.close()
    by_row: dict[int, dict[str, Any]] = {}
    for m in metas:
        by_row.setdefault(m["id"], {})[m["key"]] = _meta_value(m, has_bool)
    return [(r["embedding_id"], by_row.get(r["id"], {})) for r in records], closets


def _python_drawers(path: Path, state: _State) -> list[_Drawer]:
    records, closets = _chroma_records(path, DRAWERS, state)
    state.counts["closet_records_not_imported"] = closets
    single: list[_Drawer] = []
    groups: dict[str, list[tuple[int, str, str, dict[str, Any]]]] = {}
    for eid, meta in records:
        where = f"{path} drawer {eid!r}"
        doc = meta.pop(DOCUMENT_KEY, None)
        if not isinstance(doc, str):
            state.builder.skip(where, "no document text")
            continue
        parent = next((meta[k] for k in PARENT_KEYS if isinstance(meta.get(k), str)), None)
        if parent is None:
            single.append(_Drawer([eid], doc, meta, where))
            continue
        index = meta.get("chunk_index")
        if isinstance(index, bool) or not isinstance(index, int):
            raise ImportRejected(f"{where}: a chunk needs an integer chunk_index")
        groups.setdefault(parent, []).append((index, eid, doc, meta))
    joined: list[_Drawer] = []
    for parent, group in groups.items():  # dicts keep first-seen order
        parts = sorted(group, key=lambda p: p[0])
        indices = [p[0] for p in parts]
        where = f"{path} drawer {parent!r} ({len(parts)} chunks)"
        if indices != list(range(len(parts))):
            raise ImportRejected(f"{where}: chunk_index values {indices} are not "
                                 f"0..{len(parts) - 1} (a chunk is missing or repeated)")
        joined.append(_Drawer([parent, *(p[1] for p in parts)], "".join(p[2] for p in parts),
                              parts[0][3], where))
        state.counts["chunked_entries_joined"] += 1
    return single + joined


def _plan_python_drawers(path: Path, state: _State) -> None:
    for d in _python_drawers(path, state):
        meta = d.meta
        if meta.get("type") == "diary_entry" or (meta.get("room") == "diary"
                                                and isinstance(meta.get("agent"), str)):
            _diary(state, meta.get("agent"), meta.get("topic"), d.text, d.where)
            continue
        _drawer(state, d.ids, meta.get("wing"), meta.get("room"), d.text,
                meta.get("source_file"), d.where, _authored_at(meta.get(AUTHORED), d.where))


def _authored_at(value: Any, where: str) -> float | None:
    """Return a drawer's ``authored_at`` as seconds since 1970 (``add_drawer``'s
    ``created_at``), or None when it has none (absent, empty or ``unknown``).

    MemPalace 3.11's conversation miner (``convo_miner.py``: ``_file_chunks_locked`` and
    ``file_conversation_exchange``) writes it: the latest per-line ``timestamp`` of a
    Claude Code / Codex JSONL transcript, as the transcript has it (``…T09:15:50.733Z``),
    else its own ``filed_at`` (``datetime.now().isoformat()``, local time without a zone).
    A time without a zone is read as UTC, as elsewhere in the importers. Raises
    ImportRejected for a value that is not ISO 8601 or lies before 1970 (a drawer time
    cannot). Cost: O(len(value))."""
    if isinstance(value, str) and value.strip().lower() == "unknown":
        return None
    text = iso_when(value, f"{where}: {AUTHORED}")
    if text is None:
        return None
    seconds = (parse_when(text).instant - UNIX_AFTER_YEAR_ONE) / 1_000_000
    if seconds < 0:
        raise ImportRejected(f"{where}: {AUTHORED} {value!r} is before 1970, which a drawer's "
                             "time cannot hold")
    return seconds


def _drawer(state: _State, ids: list[str], wing: Any, room: Any, text: str,
            source_file: Any, where: str, created_at: float | None = None) -> None:
    if wing is None or room is None:
        raise ImportRejected(f"{where}: a drawer needs a wing and a room")
    w, r = usable_name(wing), usable_name(room)
    if w is None or r is None:
        state.builder.skip(where, f"unusable wing/room name {wing!r}/{room!r}")
        return
    if not text.strip():
        state.builder.skip(where, "empty drawer")
        return
    did = planned_drawer_id(text, w, r)
    for i in ids:
        state.id_map[i] = did
    if did in state.planned:
        # palazzo keeps one drawer per text in a room; say so instead of counting it twice
        state.builder.skip(where, f"duplicate: the same text in {w}/{r} as {state.planned[did]}")
        return
    state.planned[did] = where
    args: dict[str, Any] = {"wing": w, "room": r, "content": text, "source": SOURCE,
                            "source_file": source_file if isinstance(source_file, str) else ""}
    if created_at is not None:
        args["created_at"] = created_at
        state.counts["drawers_dated_by_authored_at"] += 1
    state.builder.add("add_drawer", args, where)
    state.counts["drawers"] += 1


def _diary(state: _State, agent: Any, topic: Any, text: str, where: str) -> None:
    name = usable_name(agent)
    if name is None:
        state.builder.skip(where, f"diary entry with unusable agent name {agent!r}")
        return
    if not text.strip():
        state.builder.skip(where, "empty diary entry")
        return
    args = {"agent": name, "text": text}
    if (t := usable_name(topic)) is not None:
        args["topic"] = t
    state.builder.add("diary_write", args, where)
    state.counts["diary_entries"] += 1


# -- Rust MemPalace: palace.db -------------------------------------------------------------------

def _plan_rust_drawers(path: Path, state: _State) -> None:
    conn = open_sqlite(path)
    try:
        tables = state.tables(conn, path)
        require_columns(path, tables, "drawers", ("id", "wing", "room", "content"))
        cols = tables["drawers"]
        extra = [c for c in ("source_file", "added_by") if c in cols]
        order = "filed_at, rowid" if "filed_at" in cols else "rowid"
        found = rows(conn, path, f"SELECT {', '.join(['id', 'wing', 'room', 'content', *extra])}"
                     f" FROM drawers ORDER BY {order}")
    finally:
        conn.close()
    for r in found:
        where = f"{path} drawer {r['id']!r}"
        content = r["content"]
        if not isinstance(content, str):
            raise ImportRejected(f"{where}: content must be text")
        wing, room = r["wing"], r["room"]
        if room == "diary" and isinstance(wing, str) and wing.startswith("wing_"):
            by = r["added_by"] if "added_by" in extra else None
            agent = by if isinstance(by, str) and by.strip() else wing[len("wing_"):]
            topic, text = _split_topic(content)
            _diary(state, agent, topic, text, where)
            continue
        _drawer(state, [r["id"]], wing, room, content,
                r["source_file"] if "source_file" in extra else None, where)


def _split_topic(content: str) -> tuple[str, str]:
    """Return (topic, entry) of a Rust diary drawer's ``[topic] entry`` text."""
    if content.startswith("["):
        close = content.find("] ", 1)
        if close > 1:
            return content[1:close], content[close + 2:]
    return "general", content


# -- knowledge graph -----------------------------------------------------------------------------

def _plan_kg(path: Path, state: _State, end_column: str, names_are_ids: bool) -> None:
    """Plan the entities and triples of ``path``: a Python MemPalace knowledge graph
    (``names_are_ids``: subject/object are ids of ``entities``; a date-only ``valid_to`` lasts
    through its day) or a Rust palace.db (names; ``valid_until`` kept as it is)."""
    conn = open_sqlite(path)
    try:
        tables = state.tables(conn, path)
        if "triples" not in tables and not names_are_ids:
            return
        require_columns(path, tables, "triples",
                        ("id", "subject", "predicate", "object", "valid_from", end_column))
        cols = tables["triples"]
        optional = [c for c in ("confidence", "source_file", "source_drawer_id", "extracted_at")
                    if c in cols]
        triples = rows(conn, path, "SELECT " + ", ".join(
            ["id", "subject", "predicate", "object", "valid_from", end_column, *optional])
            + " FROM triples ORDER BY rowid")
        entities: list[dict[str, Any]] = []
        if names_are_ids and "entities" in tables:
            require_columns(path, tables, "entities", ("id", "name"))
            ecols = [c for c in ("type", "properties") if c in tables["entities"]]
            entities = [dict(r) for r in rows(
                conn, path, "SELECT " + ", ".join(["id", "name", *ecols])
                + " FROM entities ORDER BY rowid")]
    finally:
        conn.close()
    names: dict[str, str] = {}
    types: dict[str, str] = {}
    for e in entities:
        where = f"{path} entity {e['id']!r}"
        name = usable_name(e["name"]) or usable_name(e["id"])
        if name is None:
            state.builder.skip(where, "unusable entity name")
            continue
        names[e["id"]] = name
        args: dict[str, Any] = {"name": name}
        etype = e.get("type")
        if isinstance(etype, str) and etype.strip() and etype != "unknown":
            args["type"] = usable_name(etype) or "concept"
            types[e["id"]] = args["type"]
        props = e.get("properties")
        if props not in (None, "", "{}"):
            value = jsontext.loads(props, f"{where}: properties", ImportRejected) \
                if isinstance(props, str) else None
            if not isinstance(value, dict):
                raise ImportRejected(f"{where}: properties must be a JSON object")
            check_unicode(value, f"{where}: properties")
            if value:
                args["properties"] = value
        state.builder.add("kg_entity", args, where)
        state.counts["entities"] += 1
    for t in triples:
        _triple(path, state, t, end_column, optional, names, types, names_are_ids)


def _triple(path: Path, state: _State, t: Any, end_column: str, optional: list[str],
            names: dict[str, str], types: dict[str, str], whole_day_end: bool) -> None:
    where = f"{path} triple {t['id']!r}"
    for k in ("subject", "predicate", "object"):
        if not isinstance(t[k], str):
            raise ImportRejected(f"{where}: {k} must be text")
    subject = names.get(t["subject"]) or usable_name(t["subject"])
    obj = names.get(t["object"]) or usable_name(t["object"])
    if subject is None or obj is None or not normalise_predicate(t["predicate"]):
        state.builder.skip(where, "unusable subject, predicate or object")
        return
    if normalise_entity(subject) == normalise_entity(obj):
        state.builder.skip(where, "subject and object are the same entity")
        return
    args: dict[str, Any] = {"subject": subject, "predicate": t["predicate"], "object": obj}
    start = iso_when(t["valid_from"], f"{where} valid_from")
    end = iso_when(t[end_column], f"{where} {end_column}")
    if whole_day_end:
        end = end_of_day(end)
    if start is not None:
        args["valid_from"] = start
    if end is not None:
        args["valid_to"] = end
    if "confidence" in optional and t["confidence"] is not None:
        args["confidence"] = number(t["confidence"], f"{where} confidence", 0.0, 1.0)
    if "extracted_at" in optional and (seen := iso_when(t["extracted_at"],
                                                        f"{where} extracted_at")):
        args["observed_at"] = seen
    if "source_file" in optional and isinstance(t["source_file"], str) and t["source_file"]:
        args["source_file"] = t["source_file"]
    if "source_drawer_id" in optional and t["source_drawer_id"] in state.id_map:
        args["source_drawer"] = state.id_map[t["source_drawer_id"]]
    if t["subject"] in types:
        args["subject_type"] = types[t["subject"]]
    if t["object"] in types:
        args["object_type"] = types[t["object"]]
    state.builder.add("kg_add", args, where)
    state.counts["triples"] += 1


# -- entry point -----------------------------------------------------------------------------------

def _home() -> Path | None:
    """Return the user's home folder, or None when it cannot be told (no ``HOME`` and no
    password entry): then MemPalace's default graph is not looked for."""
    try:
        return Path.home()
    except (RuntimeError, KeyError):
        return None


def plan_mempalace(path: str | os.PathLike[str],
                   kg_path: str | os.PathLike[str] | None = None,
                   home: str | os.PathLike[str] | None = None) -> Plan:
    """Return the plan importing the MemPalace palace at ``path``.

    ``path`` is a Python palace folder (with ``chroma.sqlite3``), ``~/.mempalace`` itself, a
    Rust ``palace.db`` (or its folder), or a lone ``knowledge_graph.sqlite3``. ``kg_path``
    names the knowledge graph and is authoritative; without it a Python palace's graph is
    looked for inside the palace, beside it, then at ``<home>/.mempalace`` (``home``: the
    user's home, ``Path.home()`` unless given; see :func:`_kg_candidates`), and the summary's
    ``notes`` say where it was found or looked for. Drawers come first, then diary entries,
    entities and facts (a fact's ``source_drawer`` must already exist when it is added).
    Every file is read and checked before the plan is returned; nothing is written to the
    sources (they are opened read-only). Cost: one read of each database.
    """
    source = Path(path)
    layout = _locate(source, Path(kg_path) if kg_path is not None else None,
                     _home() if home is None else Path(home))
    state = _State(PlanBuilder(str(source), f"mempalace-{layout.kind}"))
    if layout.kind == "python" and layout.drawers is not None:
        _plan_python_drawers(layout.drawers, state)
    elif layout.kind == "rust" and layout.drawers is not None:
        _plan_rust_drawers(layout.drawers, state)
        _plan_kg(layout.drawers, state, "valid_until", names_are_ids=False)
    if layout.kg is not None:
        _plan_kg(layout.kg, state, "valid_to", names_are_ids=True)
    # Drawers before diaries before entities before facts, whatever order they were read in.
    rank = {"add_drawer": 0, "diary_write": 1, "kg_entity": 2, "kg_add": 3}
    state.builder.calls.sort(key=lambda c: rank.get(c.name, 9))
    notes = [layout.kg_note] if layout.kg_note else []
    if state.counts["drawers_dated_by_authored_at"]:
        notes.append(f"{state.counts['drawers_dated_by_authored_at']} drawers keep MemPalace's "
                     "authored_at as their time; the others get the time of the import")
    return state.builder.finish(
        layout=layout.kind,
        drawers_file=None if layout.drawers is None else str(layout.drawers),
        kg_file=None if layout.kg is None else str(layout.kg),
        vectors="not read: palazzo embeds the text again",
        notes=notes,
        **dict(state.counts),
    )

"""Build small MemPalace palaces with the real on-disk schemas, using only ``sqlite3``.

The tests call :func:`make_python_palace` and :func:`make_rust_palace` into ``tmp_path``,
so no binary fixture is committed. Run as a script to write both into a folder, or to
compare these schemas with a real palace::

    python tests/palazzo/data/importers/make_mempalace_fixtures.py OUT_DIR
    python tests/palazzo/data/importers/make_mempalace_fixtures.py --compare PALACE_DIR [KG]

Where the schemas come from:

- ``chroma.sqlite3``: the tables MemPalace 3.11.0 reads (collections, segments, embeddings,
  embedding_metadata, …), copied from a palace that the real ``mempalace`` 3.11.0 package
  (ChromaDB 1.5.9) built offline in a throw-away venv (``mempalace init`` + ``mempalace
  mine`` on a small folder, ``tool_add_drawer`` and ``tool_diary_write`` for a drawer and
  diary entries, one of them long enough to be split into ``_chunk_`` records, with a local
  stand-in for the embedding endpoint). Records and metadata keys follow that palace:
  drawers carry ``wing``, ``room``, ``source_file``, ``chunk_index``, ``added_by``,
  ``filed_at``…; diary entries ``type = diary_entry``, ``agent``, ``topic``, ``hall``;
  chunked entries ``parent_entry_id``/``parent_drawer_id``; the text is the
  ``chroma:document`` key. Vectors live in the HNSW segment folder and are not made here.
- ``knowledge_graph.sqlite3``: ``KnowledgeGraph._init_db`` of mempalace 3.11.0
  (``mempalace/knowledge_graph.py``), entity ids as MemPalace makes them
  (``name.lower().replace(" ", "_")``).
- ``palace.db``: ``Database::create_tables`` of the Rust MemPalace port (``src/db.rs``,
  found in the code corpus): drawers + FTS5 + triples with ``valid_until``; its sqlite-vec
  table ``vec_drawers`` is created only when the extension is loaded, so it is left out
  here too. Diary entries are drawers in ``wing_<agent>``/``diary`` with text
  ``[topic] entry`` (its ``mempalace_diary_write`` handler).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import uuid
from pathlib import Path
from typing import Any

CHROMA_DDL = """
CREATE TABLE migrations (
    dir TEXT NOT NULL,
    version INTEGER NOT NULL,
    filename TEXT NOT NULL,
    sql TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (dir, version)
);
CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    UNIQUE (id)
);
CREATE TABLE databases (
    id TEXT PRIMARY KEY, -- unique globally
    name TEXT NOT NULL, -- unique per tenant
    tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    UNIQUE (tenant_id, name) -- Ensure that a tenant has only one database with a given name
);
CREATE TABLE "collections" (
    id TEXT PRIMARY KEY, -- unique globally
    name TEXT NOT NULL, -- unique per database
    dimension INTEGER,
    database_id TEXT NOT NULL REFERENCES databases(id) ON DELETE CASCADE, config_json_str TEXT, schema_str TEXT,
    UNIQUE (name, database_id)
);
CREATE TABLE collection_metadata (
    collection_id TEXT REFERENCES collections(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    str_value TEXT,
    int_value INTEGER,
    float_value REAL, bool_value INTEGER,
    PRIMARY KEY (collection_id, key)
);
CREATE TABLE "segments" (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    scope TEXT NOT NULL,
    collection TEXT REFERENCES collection(id) NOT NULL
);
CREATE TABLE segment_metadata (
    segment_id TEXT  REFERENCES segments(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    str_value TEXT,
    int_value INTEGER,
    float_value REAL, bool_value INTEGER,
    PRIMARY KEY (segment_id, key)
);
CREATE TABLE embeddings (
    id INTEGER PRIMARY KEY,
    segment_id TEXT NOT NULL,
    embedding_id TEXT NOT NULL,
    seq_id BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    UNIQUE (segment_id, embedding_id)
);
CREATE TABLE embedding_metadata (
    id INTEGER REFERENCES embeddings(id),
    key TEXT NOT NULL,
    string_value TEXT,
    int_value INTEGER,
    float_value REAL, bool_value INTEGER,
    PRIMARY KEY (id, key)
);
CREATE TABLE max_seq_id (
    segment_id TEXT PRIMARY KEY,
    seq_id INTEGER);
CREATE TABLE embeddings_queue (
    seq_id INTEGER PRIMARY KEY,
    created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    operation INTEGER NOT NULL,
    topic TEXT NOT NULL,
    id TEXT NOT NULL,
    vector BLOB,
    encoding TEXT,
    metadata TEXT
);
CREATE INDEX embedding_metadata_int_value ON embedding_metadata (key, int_value) WHERE int_value IS NOT NULL;
CREATE INDEX embedding_metadata_float_value ON embedding_metadata (key, float_value) WHERE float_value IS NOT NULL;
CREATE INDEX embedding_metadata_string_value ON embedding_metadata (key, string_value) WHERE string_value IS NOT NULL;
"""  # noqa: E501 - verbatim DDL of chroma.sqlite3

KG_DDL = """
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT DEFAULT 'unknown',
    properties TEXT DEFAULT '{}',
    created_at TEXT DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS triples (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object TEXT NOT NULL,
    valid_from TEXT,
    valid_to TEXT,
    confidence REAL DEFAULT 1.0,
    source_closet TEXT,
    source_file TEXT,
    source_drawer_id TEXT,
    adapter_name TEXT,
    extracted_at TEXT DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (subject) REFERENCES entities(id),
    FOREIGN KEY (object) REFERENCES entities(id)
);

CREATE INDEX IF NOT EXISTS idx_triples_subject ON triples(subject);
CREATE INDEX IF NOT EXISTS idx_triples_object ON triples(object);
CREATE INDEX IF NOT EXISTS idx_triples_predicate ON triples(predicate);
CREATE INDEX IF NOT EXISTS idx_triples_valid ON triples(valid_from, valid_to);
"""

RUST_DDL = """
CREATE TABLE IF NOT EXISTS drawers (
    id TEXT PRIMARY KEY,
    wing TEXT NOT NULL,
    room TEXT NOT NULL,
    content TEXT NOT NULL,
    source_file TEXT,
    added_by TEXT,
    filed_at DATETIME DEFAULT CURRENT_TIMESTAMP
);

CREATE VIRTUAL TABLE IF NOT EXISTS drawers_fts USING fts5(
    content, wing, room,
    content='drawers',
    content_rowid='rowid'
);

CREATE TRIGGER IF NOT EXISTS drawers_ai AFTER INSERT ON drawers BEGIN
    INSERT INTO drawers_fts(rowid, content, wing, room)
    VALUES (new.rowid, new.content, new.wing, new.room);
END;

CREATE TRIGGER IF NOT EXISTS drawers_ad AFTER DELETE ON drawers BEGIN
    INSERT INTO drawers_fts(drawers_fts, rowid, content, wing, room)
    VALUES ('delete', old.rowid, old.content, old.wing, old.room);
END;

CREATE TABLE IF NOT EXISTS triples (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object TEXT NOT NULL,
    valid_from DATETIME,
    valid_until DATETIME,
    source_closet TEXT
);

CREATE INDEX IF NOT EXISTS idx_drawers_wing ON drawers(wing);
CREATE INDEX IF NOT EXISTS idx_drawers_room ON drawers(room);
CREATE INDEX IF NOT EXISTS idx_drawers_wing_room ON drawers(wing, room);
CREATE INDEX IF NOT EXISTS idx_triples_subject ON triples(subject);
CREATE INDEX IF NOT EXISTS idx_triples_predicate ON triples(predicate);
CREATE INDEX IF NOT EXISTS idx_triples_object ON triples(object);
CREATE TABLE IF NOT EXISTS vec_embedded (rowid INTEGER PRIMARY KEY);
"""

DATABASE_ID = "00000000-0000-0000-0000-000000000000"
DIARY_CHUNK = 800  # MemPalace's default chunk_size

# The default content of the fixture palaces (tests may pass their own).
PY_DRAWERS: list[dict[str, Any]] = [
    {"id": "drawer_proj_documentation_73816fa99120ee9e6a9ec337",
     "text": "Decided to move the database from MySQL to Postgres in March.",
     "meta": {"wing": "proj", "room": "documentation", "hall": "technical",
              "source_file": "/home/ana/proj/notes/decisions.md", "chunk_index": 0,
              "chunk_total": 1, "added_by": "mempalace", "id_recipe": "v3",
              "filed_at": "2026-12-02T16:21:10.510913", "source_mtime": 1796228466.615236,
              "normalize_version": 2}},
    {"id": "drawer_proj_general_59b68c56f9f41a228913e07d",
     "text": "The auth service uses JWT tokens with a 15 minute expiry.\n"
             "Refresh tokens live in Redis.",
     "meta": {"wing": "proj", "room": "general", "hall": "general",
              "source_file": "/home/ana/proj/docs/auth.md", "chunk_index": 0,
              "chunk_total": 1, "added_by": "mempalace", "id_recipe": "v3",
              "filed_at": "2026-12-02T16:21:10.557000"}},
    {"id": "drawer_wing_people_family_c5035272c269f8650ae3d8e3",
     "text": "Alice's son Max started swimming lessons.",
     "meta": {"wing": "wing_people", "room": "family", "source_file": "chat-2025-01.txt",
              "chunk_index": 0, "added_by": "mcp", "id_recipe": "v3",
              "filed_at": "2026-12-02T16:21:20.678764"}},
]
PY_DIARY: list[dict[str, str]] = [
    {"agent": "reviewer", "topic": "code-review",
     "text": "Looked at the auth PR; the refresh-token path lacks a test."},
    {"agent": "reviewer", "topic": "long",
     "text": " ".join(f"Observation {i}: the swarm revisited the auth room." for i in range(60))},
]
PY_ENTITIES: list[tuple[str, str, dict[str, Any]]] = [
    ("Max", "person", {"born": 2015}), ("Alice", "person", {}), ("swimming", "unknown", {}),
    ("Acme Corp", "unknown", {}), ("tea", "unknown", {}), ("Bob", "person", {}),
]
PY_TRIPLES: list[dict[str, Any]] = [
    {"s": "Max", "p": "child_of", "o": "Alice", "valid_from": "2015-04-01"},
    {"s": "Max", "p": "does", "o": "swimming", "valid_from": "2025-01-01",
     "valid_to": "2025-06-30", "confidence": 0.9,
     "source_drawer_id": "drawer_wing_people_family_c5035272c269f8650ae3d8e3"},
    {"s": "Alice", "p": "works_at", "o": "Acme Corp", "valid_from": "2020-01-01T09:00:00Z"},
    {"s": "Alice", "p": "likes", "o": "tea", "source_file": "chat-2025-01.txt"},
    {"s": "Max", "p": "visited", "o": "Acme Corp", "valid_from": "2026-05-06",
     "valid_to": "2026-05-06"},
]
RUST_DRAWERS: list[dict[str, Any]] = [
    {"wing": "proj", "room": "backend", "content": "The API gateway rate-limits to 100 rps.",
     "source_file": "/home/ana/proj/gateway.md", "added_by": "miner"},
    {"wing": "proj", "room": "frontend", "content": "The dashboard is built with Svelte.",
     "source_file": None, "added_by": "mcp"},
    {"wing": "wing_scout", "room": "diary", "content": "[exploration] Found a tunnel to ops.",
     "source_file": None, "added_by": "Scout"},
    {"wing": "wing_scout", "room": "diary", "content": "No topic on this one.",
     "source_file": None, "added_by": "Scout"},
]
RUST_TRIPLES: list[dict[str, Any]] = [
    {"s": "Ana", "p": "works_on", "o": "proj", "valid_from": "2024-02-01", "valid_until": None},
    {"s": "proj", "p": "uses", "o": "MySQL", "valid_from": "2023-01-01",
     "valid_until": "2026-03-01"},
    {"s": "proj", "p": "uses", "o": "Postgres", "valid_from": "2026-03-01T00:00:00Z",
     "valid_until": None},
]


def entity_id(name: str) -> str:
    """MemPalace's ``KnowledgeGraph._entity_id``."""
    return name.lower().replace(" ", "_").replace("'", "")


def _meta_rows(row_id: int, meta: dict[str, Any]) -> list[tuple[Any, ...]]:
    out = []
    for key, value in sorted(meta.items()):
        s = value if isinstance(value, str) else None
        i = value if isinstance(value, int) and not isinstance(value, bool) else None
        f = value if isinstance(value, float) else None
        b = int(value) if isinstance(value, bool) else None
        out.append((row_id, key, s, i, f, b))
    return out


def make_chroma(path: Path, drawers: list[dict[str, Any]], diary: list[dict[str, str]],
                closets: int = 1) -> None:
    """Write ``chroma.sqlite3`` with collections ``mempalace_drawers`` (the drawers, then
    the diary entries, long ones split into ``_chunk_`` records as MemPalace does) and
    ``mempalace_closets`` (``closets`` pointer records)."""
    conn = sqlite3.connect(path)
    conn.executescript(CHROMA_DDL)
    conn.execute("INSERT INTO tenants VALUES ('default_tenant')")
    conn.execute("INSERT INTO databases VALUES (?, 'default_database', 'default_tenant')",
                 (DATABASE_ID,))
    segments = {}
    for name in ("mempalace_drawers", "mempalace_closets"):
        cid = str(uuid.uuid5(uuid.NAMESPACE_URL, name))
        conn.execute("INSERT INTO collections (id, name, dimension, database_id, "
                     "config_json_str, schema_str) VALUES (?, ?, 384, ?, ?, NULL)",
                     (cid, name, DATABASE_ID, '{"_type": "CollectionConfigurationInternal"}'))
        meta_seg = str(uuid.uuid5(uuid.NAMESPACE_URL, name + "/metadata"))
        conn.execute("INSERT INTO segments VALUES (?, 'urn:chroma:segment/vector/"
                     "hnsw-local-persisted', 'VECTOR', ?)",
                     (str(uuid.uuid5(uuid.NAMESPACE_URL, name + "/vector")), cid))
        conn.execute("INSERT INTO segments VALUES (?, 'urn:chroma:segment/metadata/sqlite', "
                     "'METADATA', ?)", (meta_seg, cid))
        segments[name] = meta_seg
    records: list[tuple[str, str, str, dict[str, Any]]] = []
    for d in drawers:
        records.append(("mempalace_drawers", d["id"], d["text"], dict(d["meta"])))
    for n, e in enumerate(diary):
        entry_id = f"diary_wing_{e['agent']}_20261202_1621207{n:05d}_{n:012x}"
        base = {"wing": f"wing_{e['agent']}", "room": "diary", "hall": "hall_diary",
                "topic": e["topic"], "type": "diary_entry", "agent": e["agent"],
                "filed_at": "2026-12-02T16:21:20.708839", "date": "2026-12-02",
                "last_modified": "2026-12-02T16:21:20.708839"}
        text = e["text"]
        if len(text) <= DIARY_CHUNK:
            records.append(("mempalace_drawers", entry_id, text, {**base, "chunk_index": 0}))
            continue
        for i in range(0, len(text), DIARY_CHUNK):
            k = i // DIARY_CHUNK
            records.append(("mempalace_drawers", f"{entry_id}_chunk_{k:06d}",
                            text[i:i + DIARY_CHUNK],
                            {**base, "chunk_index": k, "parent_entry_id": entry_id,
                             "parent_drawer_id": entry_id}))
    for k in range(closets):
        records.append(("mempalace_closets", f"closet_proj_general_{k:024x}_01",
                        "proj/general/auth||2026-12-02:L1-L2|→drawer_proj_general",
                        {"wing": "proj", "room": "general", "drawer_count": 1}))
    for seq, (collection, eid, text, meta) in enumerate(records, start=1):
        cur = conn.execute("INSERT INTO embeddings (segment_id, embedding_id, seq_id, "
                           "created_at) VALUES (?, ?, ?, '2026-12-02 16:21:20')",
                           (segments[collection], eid, seq))
        conn.executemany("INSERT INTO embedding_metadata VALUES (?, ?, ?, ?, ?, ?)",
                         _meta_rows(cur.lastrowid, {**meta, "chroma:document": text}))
    conn.commit()
    conn.close()


def make_kg(path: Path, entities: list[tuple[str, str, dict[str, Any]]],
            triples: list[dict[str, Any]]) -> None:
    """Write ``knowledge_graph.sqlite3`` as MemPalace's ``add_entity``/``add_triple`` do."""
    conn = sqlite3.connect(path)
    conn.executescript(KG_DDL)
    for name, etype, props in entities:
        conn.execute("INSERT OR REPLACE INTO entities (id, name, type, properties) "
                     "VALUES (?, ?, ?, ?)", (entity_id(name), name, etype, json.dumps(props)))
    for n, t in enumerate(triples):
        for name in (t["s"], t["o"]):
            conn.execute("INSERT OR IGNORE INTO entities (id, name) VALUES (?, ?)",
                         (entity_id(name), name))
        sid, oid = entity_id(t["s"]), entity_id(t["o"])
        conn.execute(
            "INSERT INTO triples (id, subject, predicate, object, valid_from, valid_to, "
            "confidence, source_closet, source_file, source_drawer_id, adapter_name, "
            "extracted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (f"t_{sid}_{t['p']}_{oid}_{n:012x}", sid, t["p"], oid, t.get("valid_from"),
             t.get("valid_to"), t.get("confidence", 1.0), None, t.get("source_file"),
             t.get("source_drawer_id"), None, "2026-12-02 16:21:20"))
    conn.commit()
    conn.close()


def make_python_palace(folder: Path, drawers: list[dict[str, Any]] | None = None,
                       diary: list[dict[str, str]] | None = None,
                       entities: list[tuple[str, str, dict[str, Any]]] | None = None,
                       triples: list[dict[str, Any]] | None = None) -> Path:
    """Create a Python MemPalace palace folder (``chroma.sqlite3`` + the palace-local
    ``knowledge_graph.sqlite3``); return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    make_chroma(folder / "chroma.sqlite3", PY_DRAWERS if drawers is None else drawers,
                PY_DIARY if diary is None else diary)
    make_kg(folder / "knowledge_graph.sqlite3", PY_ENTITIES if entities is None else entities,
            PY_TRIPLES if triples is None else triples)
    return folder


def make_rust_palace(path: Path, drawers: list[dict[str, Any]] | None = None,
                     triples: list[dict[str, Any]] | None = None) -> Path:
    """Create a Rust MemPalace ``palace.db``; drawer ids as its ``add_drawer`` makes them
    (``drawer_<wing>_<room>_`` + 16 hex of MD5(content + wing + room)). Return the file."""
    import hashlib

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(RUST_DDL)
    for d in RUST_DRAWERS if drawers is None else drawers:
        digest = hashlib.md5((d["content"] + d["wing"] + d["room"]).encode()).hexdigest()
        conn.execute("INSERT OR IGNORE INTO drawers (id, wing, room, content, source_file, "
                     "added_by, filed_at) VALUES (?, ?, ?, ?, ?, ?, datetime('now'))",
                     (f"drawer_{d['wing']}_{d['room']}_{digest[:16]}", d["wing"], d["room"],
                      d["content"], d["source_file"], d["added_by"]))
    for n, t in enumerate(RUST_TRIPLES if triples is None else triples):
        conn.execute("INSERT INTO triples (id, subject, predicate, object, valid_from, "
                     "valid_until, source_closet) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                     (f"triple_{n:016x}", t["s"], t["p"], t["o"], t["valid_from"],
                      t["valid_until"]))
    conn.commit()
    conn.close()
    return path


def _columns(db: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')] for t in tables}
    finally:
        conn.close()


def compare(palace: Path, kg: Path | None = None) -> int:
    """Print how the generated schemas differ from a real palace's; return 1 if they do."""
    import tempfile

    problems = 0
    with tempfile.TemporaryDirectory() as tmp:
        ours = make_python_palace(Path(tmp) / "palace")
        pairs = [(ours / "chroma.sqlite3", palace / "chroma.sqlite3")]
        real_kg = kg or palace / "knowledge_graph.sqlite3"
        if real_kg.is_file():
            pairs.append((ours / "knowledge_graph.sqlite3", real_kg))
        for mine, real in pairs:
            a, b = _columns(mine), _columns(real)
            for table, cols in a.items():
                if table not in b:
                    print(f"{real.name}: no table {table}")
                    problems += 1
                elif cols != b[table]:
                    print(f"{real.name}.{table}: real {b[table]} vs generated {cols}")
                    problems += 1
            print(f"{real.name}: {len(a)} generated tables checked")
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--compare":
        return compare(Path(argv[1]), Path(argv[2]) if len(argv) > 2 else None)
    if len(argv) != 1:
        print(__doc__)
        return 2
    out = Path(argv[0])
    make_python_palace(out / "python-palace")
    make_rust_palace(out / "rust-palace" / "palace.db")
    print(f"wrote {out / 'python-palace'} and {out / 'rust-palace' / 'palace.db'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

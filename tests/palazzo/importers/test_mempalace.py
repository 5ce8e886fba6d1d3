"""MemPalace importer: Python palaces (ChromaDB + knowledge graph) and Rust palace.db files,
generated in tmp_path with the real schemas by data/importers/make_mempalace_fixtures.py."""

import importlib.util
from pathlib import Path

import pytest

from palazzo import bind, call
from palazzo.errors import ImportRejected
from palazzo.importers import apply
from palazzo.importers.mempalace import plan_mempalace
from palazzo.palace import Palace

pytestmark = pytest.mark.cpython_only

GENERATOR = Path(__file__).parents[1] / "data" / "importers" / "make_mempalace_fixtures.py"


@pytest.fixture(scope="module")
def fx():
    """The fixture generator (loaded here, not at import: it imports sqlite3, which the
    Pyodide run of the engine tests cannot import while collecting)."""
    spec = importlib.util.spec_from_file_location("make_mempalace_fixtures", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fact(palace, subject, predicate):
    facts = call(palace, "kg_query", {"entity": subject, "direction": "out",
                                     "predicate": predicate})["facts"]
    assert len(facts) == 1, facts
    return facts[0]


def test_python_palace_drawers_diaries_and_graph(fx, tmp_path):
    folder = fx.make_python_palace(tmp_path / "palace")
    plan = plan_mempalace(folder)
    s = plan.summary
    assert s["layout"] == "python"
    assert s["calls"] == {"add_drawer": 3, "diary_write": 2, "kg_entity": 6, "kg_add": 5}
    assert s["chunked_entries_joined"] == 1
    assert s["closet_records_not_imported"] == 1
    assert s["skipped"] == []
    names = [c.name for c in plan.calls]
    assert names == sorted(names, key=["add_drawer", "diary_write", "kg_entity",
                                       "kg_add"].index)

    palace = Palace()
    result = apply(plan, bind(palace))
    assert result["created"]["add_drawer"] == 3
    counts = palace.counts()
    assert counts["drawers"] == 5 and counts["entities"] == 6 and counts["agents"] == 1
    assert set(palace.wings) == {"proj", "wing_people", "agent-reviewer"}
    # The long diary entry was stored in MemPalace as 800-character chunks; it is one entry.
    entries = call(palace, "diary_read", {"agent": "reviewer"})["entries"]
    assert sorted(e["content"] for e in entries) == sorted(e["text"] for e in fx.PY_DIARY)
    assert {e["topic"] for e in entries} == {"code-review", "long"}
    drawer = palace.drawer(next(d for d in palace.drawers.ids if d and palace.drawers.content[
        palace.row(d)].startswith("Decided")))
    assert drawer.source == "mempalace"
    assert drawer.source_file == "/home/ana/proj/notes/decisions.md"

    swim = fact(palace, "Max", "does")
    assert swim["valid_from"] == "2025-01-01"
    assert swim["valid_to"] == "2025-07-01"  # MemPalace: through 2025-06-30 inclusive
    assert swim["confidence"] == 0.9
    source = palace.drawer(swim["source_drawer"])
    assert source.content == "Alice's son Max started swimming lessons."
    one_day = fact(palace, "Max", "visited")
    assert (one_day["valid_from"], one_day["valid_to"]) == ("2026-05-06", "2026-05-07")
    assert fact(palace, "Alice", "works_at")["valid_from"] == "2020-01-01T09:00:00Z"
    assert fact(palace, "Alice", "likes")["source_file"] == "chat-2025-01.txt"
    max_entity = call(palace, "kg_entity", {"name": "Max"})["entity"]
    assert max_entity["type"] == "person" and max_entity["properties"] == {"born": 2015}
    bob = call(palace, "kg_query", {"entity": "Bob"})
    assert bob["entity"]["type"] == "person" and bob["count"] == 0  # an entity with no facts

    again = apply(plan_mempalace(folder), bind(palace))
    assert again["created"] == {}
    assert palace.counts() == counts


def test_legacy_layout_finds_the_graph_one_level_up(fx, tmp_path):
    home = tmp_path / ".mempalace"
    (home / "palace").mkdir(parents=True)
    fx.make_chroma(home / "palace" / "chroma.sqlite3", fx.PY_DRAWERS, [])
    fx.make_kg(home / "knowledge_graph.sqlite3", fx.PY_ENTITIES, fx.PY_TRIPLES)
    for path in (home / "palace", home, home / "palace" / "chroma.sqlite3"):
        plan = plan_mempalace(path)
        assert plan.summary["kg_file"] == str(home / "knowledge_graph.sqlite3")
        assert plan.summary["calls"]["kg_add"] == 5
    only_graph = plan_mempalace(home / "knowledge_graph.sqlite3")
    assert only_graph.summary["layout"] == "kg"
    assert set(only_graph.summary["calls"]) == {"kg_entity", "kg_add"}


def test_explicit_graph_path_and_palace_without_graph(fx, tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    fx.make_chroma(folder / "chroma.sqlite3", fx.PY_DRAWERS, fx.PY_DIARY)
    plan = plan_mempalace(folder)
    assert plan.summary["kg_file"] is None
    assert "kg_add" not in plan.summary["calls"]
    elsewhere = tmp_path / "graphs" / "kg.sqlite3"
    elsewhere.parent.mkdir()
    fx.make_kg(elsewhere, [], fx.PY_TRIPLES[:2])
    plan = plan_mempalace(folder, kg_path=elsewhere)
    assert plan.summary["calls"]["kg_add"] == 2


def test_rust_palace(fx, tmp_path):
    db = fx.make_rust_palace(tmp_path / "rust" / "palace.db")
    for path in (db, db.parent):
        plan = plan_mempalace(path)
        assert plan.summary["layout"] == "rust"
        assert plan.summary["calls"] == {"add_drawer": 2, "diary_write": 2, "kg_add": 3}
    palace = Palace()
    apply(plan, bind(palace))
    entries = call(palace, "diary_read", {"agent": "Scout"})["entries"]
    assert sorted((e["topic"], e["content"]) for e in entries) == [
        ("exploration", "Found a tunnel to ops."), ("general", "No topic on this one.")]
    assert set(palace.rooms) == {("proj", "backend"), ("proj", "frontend"),
                                 ("agent-Scout", "diary")}
    mysql = [f for f in call(palace, "kg_query", {"entity": "proj", "predicate": "uses"})["facts"]
             if f["object"] == "mysql"]
    assert mysql[0]["valid_to"] == "2026-03-01"  # valid_until is already an exclusive end
    gateway = next(d for d in palace.drawers.ids if d and "gateway" in
                   palace.drawers.content[palace.row(d)])
    assert palace.drawer(gateway).source_file == "/home/ana/proj/gateway.md"
    counts = palace.counts()
    assert apply(plan_mempalace(db), bind(palace))["created"] == {}
    assert palace.counts() == counts


def test_plan_goes_through_a_journaled_store(fx, tmp_path):
    from palazzo.persist.palacestore import PalaceStore
    from palazzo.persist.storage import MemorySpace

    space = MemorySpace()
    store = PalaceStore(space, lambda **kw: Palace(**kw))
    plan = plan_mempalace(fx.make_python_palace(tmp_path / "palace"))
    seen = []
    apply(plan, store.call, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (len(plan), len(plan)) and len(seen) == len(plan)
    reopened = PalaceStore(space, lambda **kw: Palace(**kw))
    assert reopened.status.problem is None
    assert reopened.palace.counts() == store.palace.counts()
    assert reopened.palace.kg.stats() == store.palace.kg.stats()


def _reject(path, match, **kw):
    palace = Palace()
    call(palace, "add_drawer", {"wing": "w", "room": "r", "content": "already here"})
    before = palace.counts()
    with pytest.raises(ImportRejected, match=match):
        apply(plan_mempalace(path, **kw), bind(palace))
    assert palace.counts() == before


def test_malformed_sources_are_rejected_before_anything_is_written(fx, tmp_path):
    import sqlite3

    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    _reject(text, "not a SQLite database")
    _reject(tmp_path / "missing", "no such file")
    empty = tmp_path / "empty"
    empty.mkdir()
    _reject(empty, "no chroma.sqlite3")

    other = tmp_path / "other.sqlite3"
    sqlite3.connect(other).executescript("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
    _reject(other, "neither a MemPalace")

    renamed = fx.make_python_palace(tmp_path / "renamed")
    with sqlite3.connect(renamed / "chroma.sqlite3") as conn:
        conn.execute("UPDATE collections SET name = 'other' WHERE name = 'mempalace_drawers'")
    _reject(renamed, "no ChromaDB collection 'mempalace_drawers'")

    torn = fx.make_python_palace(tmp_path / "torn")
    with sqlite3.connect(torn / "chroma.sqlite3") as conn:
        conn.execute("DELETE FROM embeddings WHERE embedding_id LIKE '%_chunk_000001'")
    _reject(torn, r"chunk_index values \[0, 2, 3\]")

    bad_date = tmp_path / "bad_date"
    bad_date.mkdir()
    fx.make_chroma(bad_date / "chroma.sqlite3", fx.PY_DRAWERS, [])
    fx.make_kg(bad_date / "knowledge_graph.sqlite3", [],
               [{"s": "Max", "p": "joined", "o": "club", "valid_from": "2025-13-01"}])
    _reject(bad_date, r"triple 't_max_joined_club_.*valid_from")

    inverted = tmp_path / "inverted"
    inverted.mkdir()
    fx.make_chroma(inverted / "chroma.sqlite3", fx.PY_DRAWERS, [])
    fx.make_kg(inverted / "knowledge_graph.sqlite3", [],
               [{"s": "A", "p": "p", "o": "B", "valid_from": "2025-03-01T00:00:00Z",
                 "valid_to": "2025-02-01T00:00:00Z"}])
    _reject(inverted, "valid_to .* must be after valid_from")

    no_wing = tmp_path / "no_wing"
    no_wing.mkdir()
    fx.make_chroma(no_wing / "chroma.sqlite3",
                   [{"id": "d1", "text": "orphan", "meta": {"room": "r"}}], [])
    _reject(no_wing, "drawer 'd1': a drawer needs a wing and a room")

    rust = fx.make_rust_palace(tmp_path / "rust" / "palace.db")
    with sqlite3.connect(rust) as conn:
        conn.execute("ALTER TABLE triples RENAME COLUMN valid_until TO ends")
    _reject(rust, "table 'triples' has no column.*valid_until")


def test_items_palazzo_cannot_hold_are_skipped_with_a_reason(fx, tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    fx.make_chroma(folder / "chroma.sqlite3", [
        {"id": "ok", "text": "kept", "meta": {"wing": "w", "room": "r"}},
        {"id": "blank", "text": "   ", "meta": {"wing": "w", "room": "r"}},
        {"id": "tabs", "text": "kept too", "meta": {"wing": "a\tb", "room": "r"}},
    ], [])
    fx.make_kg(folder / "knowledge_graph.sqlite3", [],
               [{"s": "Max", "p": "is", "o": "max"}, {"s": "A", "p": "?!", "o": "B"}])
    plan = plan_mempalace(folder)
    assert plan.summary["calls"]["add_drawer"] == 2
    assert [c.args["wing"] for c in plan.calls if c.name == "add_drawer"] == ["w", "a b"]
    reasons = {s["reason"] for s in plan.summary["skipped"]}
    assert reasons == {"empty drawer", "subject and object are the same entity",
                       "unusable subject, predicate or object"}


def test_a_palace_written_by_the_real_mempalace_package_imports():
    from pathlib import Path

    from palazzo.importers import apply
    from palazzo.importers.mempalace import plan_mempalace
    from palazzo.palace import Palace

    real = Path(__file__).parents[1] / "data" / "importers" / "mempalace-3.11.0"
    plan = plan_mempalace(real, real / "knowledge_graph.sqlite3")
    assert plan.summary["format"] == "mempalace-python"
    assert plan.summary["chunked_entries_joined"] == 1
    p = Palace(clock=lambda: 0.0)
    apply(plan, bind(p))
    assert {"wing_people", "proj"} <= set(p.wings)
    facts = {(f["predicate"], f["object"], f["valid_from"], f["valid_to"])
             for f in call(p, "kg_query", {"entity": "Max"})["facts"]}
    assert ("child_of", "alice", "2015-04-01", None) in facts
    # MemPalace's date-only valid_to lasts through that day; palazzo's end is exclusive.
    assert ("does", "swimming", "2025-01-01", "2025-07-01") in facts
    assert call(p, "diary_read", {"agent": "Reviewer"})["entries"]
    before = p.counts()
    apply(plan, bind(p))
    assert p.counts() == before


# -- tables the driver cannot read, odd table names, nesting, duplicates ------------------------

VEC0 = Path(__file__).parents[1] / "data" / "importers" / "rust-vec0" / "palace.db"


def test_a_rust_palace_with_a_sqlite_vec_table_imports_and_names_the_table(fx):
    """palace.db written with the real sqlite-vec extension (see make_vec0_palace.py): this
    SQLite has no vec0 module, so its vec_drawers table cannot be read; it is skipped and
    named, and everything else imports."""
    import sqlite3

    with sqlite3.connect(f"{VEC0.resolve().as_uri()}?mode=ro", uri=True) as conn, \
            pytest.raises(sqlite3.OperationalError, match="no such module: vec0"):
        conn.execute("PRAGMA table_info(vec_drawers)")
    plan = plan_mempalace(VEC0)
    assert plan.summary["layout"] == "rust"
    assert plan.summary["skipped"] == [{"item": f"{VEC0} table 'vec_drawers'",
                                        "reason": "unreadable table: no such module: vec0"}]
    assert plan.summary["calls"]["add_drawer"] == plan.summary["drawers"] > 0
    palace = Palace()
    apply(plan, bind(palace))
    assert palace.counts()["drawers"] == plan.summary["drawers"] \
        + plan.summary.get("diary_entries", 0)


def test_table_names_with_quotes_are_read(fx, tmp_path):
    import sqlite3

    db = fx.make_rust_palace(tmp_path / "rust" / "palace.db")
    with sqlite3.connect(db) as conn:
        conn.execute('CREATE TABLE "odd""name" ("x""y" TEXT)')
        conn.execute('CREATE TABLE "a"" ; DROP TABLE drawers; --" (z)')
    plan = plan_mempalace(db)
    assert plan.summary["skipped"] == []
    assert plan.summary["calls"]["add_drawer"] > 0
    with sqlite3.connect(db) as conn:  # the source is untouched
        assert conn.execute("SELECT count(*) FROM drawers").fetchone()[0] > 0


def test_deeply_nested_entity_properties_are_a_clear_error(fx, tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    fx.make_chroma(folder / "chroma.sqlite3", fx.PY_DRAWERS, [])
    fx.make_kg(folder / "knowledge_graph.sqlite3", [], [])
    import sqlite3

    with sqlite3.connect(folder / "knowledge_graph.sqlite3") as conn:
        conn.execute("INSERT INTO entities (id, name, type, properties) VALUES (?, ?, ?, ?)",
                     ("deep", "Deep", "thing", '{"a":' * 100_000 + "1" + "}" * 100_000))
    _reject(folder, "entity 'deep': properties nests deeper than 100 levels")


def test_drawers_palazzo_keeps_once_are_counted_once(fx, tmp_path):
    folder = tmp_path / "p"
    folder.mkdir()
    fx.make_chroma(folder / "chroma.sqlite3", [
        {"id": "one", "text": "the same words", "meta": {"wing": "w", "room": "r"}},
        {"id": "two", "text": "the same words", "meta": {"wing": "w", "room": "r"}},
        {"id": "three", "text": "the same words", "meta": {"wing": "w", "room": "other"}},
    ], [])
    plan = plan_mempalace(folder)
    assert plan.summary["drawers"] == plan.summary["calls"]["add_drawer"] == 2
    assert [s["reason"].split(" as ")[0] for s in plan.summary["skipped"]] == \
        ["duplicate: the same text in w/r"]
    palace = Palace()
    assert apply(plan, bind(palace))["created"]["add_drawer"] == 2


def test_entity_properties_with_a_lone_surrogate_are_a_clear_error(fx, tmp_path):
    import sqlite3

    folder = tmp_path / "p"
    folder.mkdir()
    fx.make_chroma(folder / "chroma.sqlite3", fx.PY_DRAWERS, [])
    fx.make_kg(folder / "knowledge_graph.sqlite3", [], [])
    with sqlite3.connect(folder / "knowledge_graph.sqlite3") as conn:
        conn.execute("INSERT INTO entities (id, name, type, properties) VALUES (?, ?, ?, ?)",
                     ("odd", "Odd", "thing", '{"note": "a \\ud800 b"}'))
    _reject(folder, r"entity 'odd': properties: .note holds a lone surrogate")

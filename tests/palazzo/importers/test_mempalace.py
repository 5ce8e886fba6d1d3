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
REAL = Path(__file__).parents[1] / "data" / "importers" / "mempalace-3.11.0"


@pytest.fixture(autouse=True)
def no_real_home(tmp_path, monkeypatch):
    """The importer looks for MemPalace's default graph under the home folder: point HOME at
    an empty folder, so no test reads (or depends on) the real ~/.mempalace."""
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))


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

    palace = Palace(extract_on_add=False)  # the mapping alone (extraction adds entities)
    result = apply(plan, bind(palace))
    assert result["created"]["add_drawer"] == 3
    counts = palace.counts()
    assert counts["drawers"] == 5 and counts["entities"] == 6 and counts["agents"] == 1
    extracted = Palace()
    apply(plan, bind(extracted))  # with extraction: the same, plus what the drawers name
    assert set(extracted.entities) > set(palace.entities)
    assert extracted.kg.stats()["triples"] >= palace.kg.stats()["triples"]
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
    home = tmp_path / "home"
    plan = plan_mempalace(folder, home=home)
    assert plan.summary["kg_file"] is None
    assert "kg_add" not in plan.summary["calls"]
    assert plan.summary["notes"] == [
        f"knowledge graph: not found at {folder / 'knowledge_graph.sqlite3'}, "
        f"{home / '.mempalace' / 'knowledge_graph.sqlite3'}; pass its path (--kg) if it is "
        "elsewhere"]
    elsewhere = tmp_path / "graphs" / "kg.sqlite3"
    elsewhere.parent.mkdir()
    fx.make_kg(elsewhere, [], fx.PY_TRIPLES[:2])
    plan = plan_mempalace(folder, kg_path=elsewhere, home=home)
    assert plan.summary["calls"]["kg_add"] == 2
    assert plan.summary["notes"] == [f"knowledge graph: given, {elsewhere}"]


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


# -- where MemPalace 3.11 keeps the graph; authored_at ------------------------------------------

def _real_counts(chroma: Path, kg: Path) -> dict[str, int]:
    """Count what the real fixture holds, straight from its SQLite files (not through the
    importer): drawers and diary entries (chunks of one entry counted once), entities, facts,
    and the drawers carrying authored_at."""
    import sqlite3

    with sqlite3.connect(f"{chroma.resolve().as_uri()}?mode=ro", uri=True) as conn:
        records = conn.execute(
            "SELECT e.embedding_id, "
            "(SELECT string_value FROM embedding_metadata m WHERE m.id = e.id "
            " AND m.key = 'parent_drawer_id'), "
            "(SELECT string_value FROM embedding_metadata m WHERE m.id = e.id "
            " AND m.key = 'type'), "
            "(SELECT string_value FROM embedding_metadata m WHERE m.id = e.id "
            " AND m.key = 'authored_at') "
            "FROM embeddings e JOIN segments s ON e.segment_id = s.id "
            "JOIN collections c ON s.collection = c.id WHERE c.name = 'mempalace_drawers'"
        ).fetchall()
    entries = {(parent or eid, kind == "diary_entry", authored is not None)
               for eid, parent, kind, authored in records}
    with sqlite3.connect(f"{kg.resolve().as_uri()}?mode=ro", uri=True) as conn:
        entities = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
        triples = conn.execute("SELECT count(*) FROM triples").fetchone()[0]
    return {"drawers": sum(1 for _, diary, _ in entries if not diary),
            "diary": sum(1 for _, diary, _ in entries if diary),
            "authored": sum(1 for _, diary, dated in entries if dated and not diary),
            "entities": entities, "triples": triples}


def _default_home(tmp_path: Path) -> Path:
    """A home laid out as MemPalace 3.11 leaves it on a fresh machine (the colleague's
    measurement): the palace at the XDG default ``~/.config/mempalace/palace``, the graph its
    MCP server wrote at ``~/.mempalace/knowledge_graph.sqlite3``. Files from the real
    fixture."""
    import shutil

    home = tmp_path / "home"
    palace = home / ".config" / "mempalace" / "palace"
    palace.mkdir(parents=True)
    (home / ".mempalace").mkdir()
    shutil.copy(REAL / "chroma.sqlite3", palace / "chroma.sqlite3")
    shutil.copy(REAL / "knowledge_graph.sqlite3", home / ".mempalace" / "knowledge_graph.sqlite3")
    return home


def test_the_graph_mempalace_keeps_in_the_home_folder_is_found_and_named(fx, tmp_path):
    home = _default_home(tmp_path)
    palace_dir = home / ".config" / "mempalace" / "palace"
    graph = home / ".mempalace" / "knowledge_graph.sqlite3"
    want = _real_counts(palace_dir / "chroma.sqlite3", graph)
    assert want["entities"] == 5 and want["triples"] == 4  # as the colleague measured

    for path in (palace_dir, palace_dir / "chroma.sqlite3", home / ".config" / "mempalace"):
        plan = plan_mempalace(path, home=home)
        s = plan.summary
        assert s["kg_file"] == str(graph)
        assert s["calls"]["kg_entity"] == want["entities"]
        assert s["calls"]["kg_add"] == want["triples"]
        assert s["calls"]["add_drawer"] == want["drawers"]
        assert s["calls"]["diary_write"] == want["diary"]
        assert s["notes"][0] == (
            f"knowledge graph: found at {graph} (MemPalace's default graph); not found at "
            f"{palace_dir / 'knowledge_graph.sqlite3'}, "
            f"{home / '.config' / 'mempalace' / 'knowledge_graph.sqlite3'}")

    palace = Palace(extract_on_add=False)  # the mapping alone (extraction adds entities)
    apply(plan, bind(palace))
    assert palace.kg.stats()["entities"] == want["entities"]
    assert len(call(palace, "kg_query", {"entity": "Max"})["facts"]) == 2

    # An explicit graph stays authoritative: the home one is not read.
    other = tmp_path / "other.sqlite3"
    fx.make_kg(other, [], fx.PY_TRIPLES[:1])
    plan = plan_mempalace(palace_dir, kg_path=other, home=home)
    assert plan.summary["kg_file"] == str(other)
    assert plan.summary["calls"]["kg_add"] == 1
    assert plan.summary["notes"][0] == f"knowledge graph: given, {other}"


def test_a_graph_beside_the_palace_wins_and_the_other_is_named(tmp_path):
    import shutil

    home = _default_home(tmp_path)
    palace_dir = home / ".config" / "mempalace" / "palace"
    beside = home / ".config" / "mempalace" / "knowledge_graph.sqlite3"  # the Hermes place
    shutil.copy(REAL / "knowledge_graph.sqlite3", beside)
    note = plan_mempalace(palace_dir, home=home).summary["notes"][0]
    assert note == (
        f"knowledge graph: found at {beside} (beside the palace folder); not found at "
        f"{palace_dir / 'knowledge_graph.sqlite3'}; also present but not read: "
        f"{home / '.mempalace' / 'knowledge_graph.sqlite3'} (pass one with --kg to read it "
        "instead)")
    inside = palace_dir / "knowledge_graph.sqlite3"
    shutil.copy(REAL / "knowledge_graph.sqlite3", inside)
    plan = plan_mempalace(palace_dir, home=home)
    assert plan.summary["kg_file"] == str(inside)
    assert plan.summary["notes"][0].startswith(f"knowledge graph: found at {inside} (inside")


def test_legacy_home_palace_lists_its_graph_once(tmp_path):
    import shutil

    home = tmp_path / "home"
    (home / ".mempalace" / "palace").mkdir(parents=True)
    shutil.copy(REAL / "chroma.sqlite3", home / ".mempalace" / "palace" / "chroma.sqlite3")
    plan = plan_mempalace(home / ".mempalace", home=home)
    assert plan.summary["notes"][0] == (
        f"knowledge graph: not found at "
        f"{home / '.mempalace' / 'palace' / 'knowledge_graph.sqlite3'}, "
        f"{home / '.mempalace' / 'knowledge_graph.sqlite3'}; pass its path (--kg) if it is "
        "elsewhere")


def test_authored_at_of_the_real_palace_becomes_the_drawer_time(tmp_path):
    """MemPalace's conversation miner stamped the mined chat with its transcript's latest
    timestamp (2025-03-14T09:15:50.733Z); those drawers keep it, the others get the palace
    clock."""
    import sqlite3
    from datetime import datetime

    with sqlite3.connect(f"{(REAL / 'chroma.sqlite3').resolve().as_uri()}?mode=ro",
                         uri=True) as conn:
        dated = dict(conn.execute(
            "SELECT d.string_value, a.string_value FROM embedding_metadata a "
            "JOIN embedding_metadata d ON d.id = a.id AND d.key = 'chroma:document' "
            "WHERE a.key = 'authored_at'").fetchall())
    assert set(dated.values()) == {"2025-03-14T09:15:50.733Z"} and len(dated) == 2
    want = _real_counts(REAL / "chroma.sqlite3", REAL / "knowledge_graph.sqlite3")

    plan = plan_mempalace(REAL, home=tmp_path)
    assert plan.summary["drawers_dated_by_authored_at"] == want["authored"] == 2
    assert plan.summary["notes"][1] == ("2 drawers keep MemPalace's authored_at as their time; "
                                        "the others get the time of the import")
    palace = Palace(clock=lambda: 1_000.0)
    apply(plan, bind(palace))
    times = {palace.drawers.content[palace.row(d)]: palace.drawer(d).created_at
             for d in palace.drawers.ids if d}
    for text, authored in dated.items():
        assert times[text] == datetime.fromisoformat(authored).timestamp() == 1741943750.733
    assert {t for text, t in times.items() if text not in dated} == {1_000.0}

    # The time is an argument of the journaled call, so a reopened store has it too.
    from palazzo.importers import BATCH
    from palazzo.persist.palacestore import PalaceStore
    from palazzo.persist.storage import MemorySpace

    space = MemorySpace()
    apply(plan, PalaceStore(space, lambda **kw: Palace(**kw)).call, batch=BATCH)
    reopened = PalaceStore(space, lambda **kw: Palace(**kw)).palace
    assert sorted(reopened.drawer(d).created_at for d in reopened.drawers.ids if d
                  and reopened.drawers.content[reopened.row(d)] in dated) == [1741943750.733] * 2


@pytest.mark.parametrize(("authored", "created"), [
    ("2025-03-14T09:15:50.733Z", 1741943750.733),
    ("2025-03-14T10:15:50+01:00", 1741943750.0),
    ("2025-03-14T09:15:50.123456789", 1741943750.123456),  # no zone: UTC; ns cut
    ("2025-03-14 09:15:50", 1741943750.0),
    ("2025-03-14", 1741910400.0),
    ("unknown", None), ("", None), (None, None),
])
def test_authored_at_forms(fx, tmp_path, authored, created):
    folder = tmp_path / "p"
    folder.mkdir()
    meta = {"wing": "chats", "room": "general"}
    if authored is not None:
        meta["authored_at"] = authored
    fx.make_chroma(folder / "chroma.sqlite3", [{"id": "d1", "text": "hello", "meta": meta}], [])
    (call_,) = plan_mempalace(folder, home=tmp_path).calls
    assert call_.args.get("created_at") == created


@pytest.mark.parametrize(("authored", "match"), [
    ("14/03/2025", r"drawer 'd1'.*: authored_at is not an ISO 8601 date or datetime: "
                   r"'14/03/2025'"),
    ("1969-12-31T23:59:59Z", r"drawer 'd1'.*: authored_at '1969-12-31T23:59:59Z' is before "
                             "1970"),
])
def test_unreadable_authored_at_is_a_clear_error(fx, tmp_path, authored, match):
    folder = tmp_path / "p"
    folder.mkdir()
    fx.make_chroma(folder / "chroma.sqlite3", [{"id": "d1", "text": "hello", "meta": {
        "wing": "w", "room": "r", "authored_at": authored}}], [])
    _reject(folder, match, home=tmp_path)

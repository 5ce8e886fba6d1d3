"""dedup, merge_drawers and repair: what they find, what they change, and what they leave."""

import numpy as np
import pytest

from palazzo import bind, call
from palazzo.core.model import EdgeKind
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.formats.palacefile import export_palace, read_palace
from palazzo.ops import REGISTRY
from palazzo.palace import Palace


def _palace() -> Palace:
    ticks = iter(range(1_700_000_000, 1_800_000_000, 60))
    p = Palace(embedder=HashEmbedder(), clock=lambda: float(next(ticks)))
    for wing, room, text in (
            ("work", "db", "We moved the orders service to Postgres 16 in March."),
            ("work", "db2", "we moved the orders service to postgres 16 in march"),
            ("work", "db", "We moved the orders service to Postgres 16 in early March."),
            ("work", "db", "The billing service stays on MySQL for now."),
            ("home", "garden", "Prune the roses in late winter.")):
        call(p, "add_drawer", {"wing": wing, "room": room, "content": text})
    return p


def _ids(p: Palace) -> dict[str, str]:
    return {p.drawers.content[r]: p.drawers.ids[r] for r in p.drawers.live_rows()}


def test_dedup_groups_near_duplicates_under_the_oldest_and_changes_nothing():
    p = _palace()
    before = export_palace(p, exported_at=0)
    out = call(p, "dedup", {})  # the default 0.9; the hash embedder gives cosine 0.93 here
    assert out["count"] == 1 and out["drawers_to_merge"] == 2
    [group] = out["groups"]
    assert group["keeper"]["preview"].startswith("We moved the orders service to Postgres 16 in "
                                                 "March.")
    assert all(m["words"] >= 0.7 for m in group["merge"])
    assert export_palace(p, exported_at=0) == before
    # different texts sharing a topic are not duplicates; a strict threshold finds only
    # the case/spacing twin
    strict = call(p, "dedup", {"threshold": 1.0, "text_threshold": 1.0})
    assert [m["room"] for m in strict["groups"][0]["merge"]] == ["db2"]
    assert call(p, "dedup", {"wing": "home"})["count"] == 0
    at_95 = call(p, "dedup", {"threshold": 0.95})["groups"]  # only the case/spacing twin
    assert [m["room"] for g in at_95 for m in g["merge"]] == ["db2"]


def test_turns_and_diary_entries_are_never_duplicates():
    p = Palace(embedder=HashEmbedder())
    for conv in ("c1", "c2"):
        call(p, "add_turn", {"conversation": conv, "role": "user", "content": "thanks!"})
    call(p, "add_agent", {"name": "scout", "archetype": "explorer"})
    for _ in range(2):
        call(p, "diary_write", {"agent": "scout", "text": "walked the east wing", "topic": "a"})
    assert call(p, "dedup", {})["count"] == 0


def _file_of(p: Palace, did: str) -> tuple[str, str]:
    r = p.row(did)
    return p.drawers.wing[r], p.drawers.source_file[r].rpartition("#chunk-")[0]


def test_chunks_of_one_source_file_are_never_each_others_duplicates():
    """Two chunks of one file hold the same block: merging them would lose a piece of the
    file. The same text in another file, or in a drawer without a file, still groups."""
    ticks = iter(range(1_700_000_000, 1_800_000_000, 60))
    p = Palace(embedder=HashEmbedder(), clock=lambda: float(next(ticks)))
    text = "The nightly export failed again: disk full on /var/lib/export, retried at 02:10."
    for wing, source_file in (("w", "app.log#chunk-1"), ("w", "app.log#chunk-2"),
                              ("w2", "app.log#chunk-1"), ("w2", "app.log#chunk-2"),
                              ("w", "")):  # w2's app.log is another folder's file
        call(p, "add_drawer", {"wing": wing, "room": "logs", "content": text,
                               "source_file": source_file, "key": f"{wing}/{source_file}"})
    out = call(p, "dedup", {})
    assert out["count"] == 2 and out["drawers_to_merge"] == 3
    for g in out["groups"]:
        members = [g["keeper"]["drawer_id"], *(m["drawer_id"] for m in g["merge"])]
        files = [_file_of(p, d) for d in members if p.drawers.source_file[p.row(d)]]
        assert len(files) == len(set(files))  # never two chunks of one file in a group
        call(p, "merge_drawers", {"keeper": members[0], "drawers": members[1:]})
    assert sorted(p.drawers.source_file[r] for r in p.drawers.live_rows()) == \
        ["app.log#chunk-1", "app.log#chunk-2"]  # w's two chunks, kept
    assert call(p, "dedup", {})["count"] == 0


@pytest.mark.cpython_only
def test_an_indexed_file_with_a_repeated_block_keeps_every_chunk(tmp_path):
    """`palazzo index` then `palazzo dedup --yes`: the repeated block of one file is not
    merged, so the file still rebuilds and the next index adds nothing."""
    from palazzo.importers import apply
    from palazzo.importers.folder import plan_index

    block = ("Traceback (most recent call last):\n  File \"export.py\", line 88, in run\n"
             "    write_batch(rows)\nOSError: [Errno 28] No space left on device\n\n")
    text = "Nightly export log\n\n" + block * 3 + "Gave up at 02:20.\n"
    root = tmp_path / "logs"
    root.mkdir()
    (root / "export.log").write_text(text, encoding="utf-8")
    (root / "other.md").write_text("Disk alerts go to the ops channel.", encoding="utf-8")
    p = Palace(embedder=HashEmbedder())
    apply(plan_index(root, chunk_size=len(block)), bind(p))
    chunks = [p.drawers.content[r] for r in p.drawers.live_rows()
              if p.drawers.source_file[r].startswith("export.log#chunk-")]
    assert len(chunks) > len(set(chunks))  # the same text at two places of one file

    found = call(p, "dedup", {})
    for g in found["groups"]:  # what `palazzo dedup --yes` does
        call(p, "merge_drawers", {"keeper": g["keeper"]["drawer_id"],
                                  "drawers": [m["drawer_id"] for m in g["merge"]]})
    assert len(plan_index(root, chunk_size=len(block), palace=p)) == 0  # still rebuilds
    assert found["count"] == 0
    assert call(p, "dedup", {})["count"] == 0


def test_merge_keeps_the_merged_ids_as_aliases_and_the_best_signals():
    p = _palace()
    ids = _ids(p)
    keeper = ids["We moved the orders service to Postgres 16 in March."]
    dup = ids["We moved the orders service to Postgres 16 in early March."]
    row = p.row(dup)
    p.drawers.columns["importance"][row] = 0.9
    p.drawers.columns["exploitation"][row] = 0.4
    call(p, "kg_add", {"subject": "orders", "predicate": "uses", "object": "Postgres",
                       "source_drawer": dup})
    out = call(p, "merge_drawers", {"keeper": keeper, "drawers": [dup]})
    assert out == {"keeper": keeper, "merged": [dup]}
    got = call(p, "get_drawer", {"drawer_id": dup})["drawer"]
    assert got["id"] == keeper and got["importance"] == 0.9 and got["exploitation"] == 0.4
    assert call(p, "palace_status", {})["drawers"] == 4
    hits = call(p, "search", {"query": "orders Postgres", "limit": 10})["results"]
    assert dup not in {h["drawer_id"] for h in hits}
    assert call(p, "repair", {"dry_run": True})["problems"] == {}
    # the palace file keeps the alias
    again = read_palace(export_palace(p, exported_at=0),
                        lambda **kw: Palace(embedder=HashEmbedder(), **kw))
    assert again.drawer(dup).id == keeper


def test_merge_refuses_before_changing_anything():
    p = _palace()
    ids = _ids(p)
    keeper = ids["Prune the roses in late winter."]
    before = export_palace(p, exported_at=0)
    with pytest.raises(NotFound):
        call(p, "merge_drawers", {"keeper": keeper, "drawers": [ids[
            "The billing service stays on MySQL for now."], "drawer_nope"]})
    with pytest.raises(ValidationError):
        call(p, "merge_drawers", {"keeper": keeper, "drawers": [keeper]})
    assert export_palace(p, exported_at=0) == before


def _turn_and_entry(p: Palace) -> tuple[str, str]:
    """Add a conversation turn and a diary entry to ``p``; return their drawer ids."""
    turn = call(p, "add_turn", {"conversation": "c1", "role": "user",
                                "content": "We moved the orders service to Postgres 16."})
    entry = call(p, "diary_write", {"agent": "scout", "text": "walked the db room",
                                     "topic": "rounds"})
    return turn["turn"]["drawer_id"], entry["entry"]["drawer_id"]


def test_merge_refuses_turns_and_diary_entries_before_changing_anything():
    p = _palace()
    turn, entry = _turn_and_entry(p)
    note = _ids(p)["We moved the orders service to Postgres 16 in March."]
    before = export_palace(p, exported_at=0)
    for keeper, merged, said in ((note, [turn], "conversation turn"),
                                 (note, [entry], "diary entry"),
                                 (turn, [note], "conversation turn"),
                                 (entry, [note], "diary entry"),
                                 (note, [_ids(p)["Prune the roses in late winter."], turn],
                                  "conversation turn")):
        with pytest.raises(ValidationError, match=said) as err:
            call(p, "merge_drawers", {"keeper": keeper, "drawers": merged})
        assert "\n" not in str(err.value)
        assert export_palace(p, exported_at=0) == before


def test_merge_knows_a_turn_by_its_conversation_not_its_drawers_source():
    p = _palace()
    turn, _ = _turn_and_entry(p)
    note_text = "We moved the orders service to Postgres 16 in March."
    edited = call(p, "update_drawer", {"drawer_id": turn, "content": note_text,
                                       "source": "note"})["drawer"]["id"]
    [note] = [p.drawers.ids[r] for r in p.drawers.live_rows()
              if p.drawers.content[r] == note_text and p.drawers.ids[r] != edited]
    before = export_palace(p, exported_at=0)
    for did in (turn, edited):  # the turn's own id (now an alias) and the drawer's new one
        with pytest.raises(ValidationError, match="conversation turn"):
            call(p, "merge_drawers", {"keeper": note, "drawers": [did]})
    assert export_palace(p, exported_at=0) == before
    assert all(edited not in (g["keeper"]["drawer_id"], *(m["drawer_id"] for m in g["merge"]))
               for g in call(p, "dedup", {})["groups"])


def test_merge_refuses_an_empty_list_of_drawers():
    p = _palace()
    keeper = _ids(p)["Prune the roses in late winter."]
    before = export_palace(p, exported_at=0)
    with pytest.raises(ValidationError):  # by the schema (minItems) or the handler
        call(p, "merge_drawers", {"keeper": keeper, "drawers": []})
    with pytest.raises(ValidationError, match="at least one"):  # the handler, schema or not
        REGISTRY.get("merge_drawers").run(p, {"keeper": keeper, "drawers": []})
    assert REGISTRY.get("merge_drawers").schema["properties"]["drawers"]["minItems"] == 1
    assert export_palace(p, exported_at=0) == before


def test_repair_finds_and_fixes_what_is_derived():
    p = _palace()
    ids = _ids(p)
    roses = ids["Prune the roses in late winter."]
    row = p.row(roses)
    # break things: a lost index row, a NaN vector, an edge to nowhere, a lost parent edge,
    # an alias to nothing, a fact whose evidence is gone
    p.text_index.remove(row)
    p.drawers.vectors[p.row(ids["The billing service stays on MySQL for now."])] = np.nan
    p.edges.add(EdgeKind.RELATES_TO, roses, "drawer_gone")
    [parent] = [i for i in p.edges.inc[roses] if p.edges.kind[i] == EdgeKind.HAS_DRAWER]
    p.edges.remove(parent)
    p.drawers.aliases["drawer_old"] = "drawer_nowhere"
    gone = call(p, "add_drawer", {"wing": "w", "room": "r", "content": "soon gone"})
    call(p, "kg_add", {"subject": "a", "predicate": "b", "object": "c",
                       "source_drawer": gone["drawer_id"]})
    call(p, "delete_drawer", {"drawer_id": gone["drawer_id"]})
    assert call(p, "search", {"query": "roses winter", "mode": "bm25"})["results"] == []

    report = call(p, "repair", {"dry_run": True})
    assert report["problems"] == {"bad_vectors": 1, "dangling_edges": 1,
                                  "drawers_without_parent_edge": 1,
                                  "facts_whose_evidence_is_gone": 1, "stale_aliases": 1,
                                  "text_index_rows": 1}
    assert report["fixed"] == {} and report["examples"]["text_index_rows"] == [roses]
    fixed = call(p, "repair", {})
    assert fixed["fixed"] == {k: 1 for k in ("bad_vectors", "dangling_edges",
                                             "drawers_without_parent_edge", "stale_aliases",
                                             "text_index_rows")}
    after = call(p, "repair", {"dry_run": True})
    assert after["problems"] == {"facts_whose_evidence_is_gone": 1}  # reported, not invented
    hits = call(p, "search", {"query": "roses winter", "mode": "bm25"})["results"]
    assert hits[0]["drawer_id"] == roses
    assert np.isfinite(p.drawers.vectors[:p.drawers.size]).all()


def test_a_drawer_whose_id_is_not_its_text_is_reported_not_renamed():
    p = _palace()
    row = p.row(_ids(p)["Prune the roses in late winter."])
    p.drawers.content[row] = "Prune the roses in early spring."
    report = call(p, "repair", {})
    assert report["problems"]["id_not_from_text"] == 1
    assert "id_not_from_text" not in report["fixed"]

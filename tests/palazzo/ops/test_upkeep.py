"""dedup, merge_drawers and repair: what they find, what they change, and what they leave."""

import numpy as np
import pytest

from palazzo import call
from palazzo.core.model import EdgeKind
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.formats.palacefile import export_palace, read_palace
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

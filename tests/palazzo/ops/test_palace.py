"""The palace operations through palazzo.call, as every host uses them."""

import json

import pytest

from palazzo import call
from palazzo.core.model import drawer_id
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.formats.palacefile import export_palace
from palazzo.ops import catalog
from palazzo.palace import Palace

REQUIRED = {"palace_status", "list_wings", "list_rooms", "get_taxonomy", "add_wing",
            "add_room", "add_drawer", "get_drawer", "update_drawer", "delete_drawer",
            "check_duplicate", "search", "bulk_replace", "reindex", "export", "import"}


@pytest.fixture
def palace():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 7.0)
    call(p, "add_drawer", {"wing": "projects", "room": "search",
                          "content": "BM25 ranks drawers by shared words"})
    call(p, "add_drawer", {"wing": "projects", "room": "ui",
                          "content": "Panel shows pheromone heat per room"})
    call(p, "add_drawer", {"wing": "people", "room": "ada",
                          "content": "Ada prefers hybrid search with RRF", "importance": 0.8})
    return p


def test_catalog_lists_every_operation_with_a_schema():
    ops = {op["name"]: op for op in catalog()}
    assert set(ops) >= REQUIRED
    for op in ops.values():
        assert op["input_schema"]["type"] == "object" and op["summary"]
    assert ops["add_drawer"]["input_schema"]["required"] == ["wing", "room", "content"]
    assert ops["search"]["input_schema"]["required"] == ["query"]
    json.dumps(catalog())


def test_taxonomy_and_listings(palace):
    assert call(palace, "get_taxonomy")["taxonomy"] == {
        "people": {"ada": 1}, "projects": {"search": 1, "ui": 1}}
    wings = call(palace, "list_wings")["wings"]
    assert [(w["name"], w["rooms"], w["drawers"]) for w in wings] == [
        ("people", 1, 1), ("projects", 2, 2)]
    rooms = call(palace, "list_rooms", {"wing": "projects"})["rooms"]
    assert [r["name"] for r in rooms] == ["search", "ui"]
    with pytest.raises(NotFound):
        call(palace, "list_rooms", {"wing": "nowhere"})
    assert call(palace, "add_wing", {"name": "topics"}) == {"wing": "topics", "created": True}
    assert call(palace, "add_room", {"wing": "topics", "name": "x"})["created"] is True
    assert call(palace, "add_room", {"wing": "topics", "name": "x"})["created"] is False


def test_drawer_lifecycle(palace):
    did = call(palace, "add_drawer", {"wing": "w", "room": "r", "content": "v1"})["drawer_id"]
    assert call(palace, "get_drawer", {"drawer_id": did})["drawer"]["content"] == "v1"
    updated = call(palace, "update_drawer", {"drawer_id": did, "content": "v2 text"})
    new = updated["drawer"]["id"]
    assert new == drawer_id("v2 text", "w", "r") != did
    assert updated["drawer"]["content"] == "v2 text"
    assert call(palace, "get_drawer", {"drawer_id": did})["drawer"]["id"] == new  # old id finds it
    assert call(palace, "delete_drawer", {"drawer_id": did}) == {"drawer_id": new,
                                                                "deleted": True}
    for gone in (did, new):
        with pytest.raises(NotFound):
            call(palace, "get_drawer", {"drawer_id": gone})
    with pytest.raises(ValidationError):
        call(palace, "add_drawer", {"wing": "w", "room": "r"})


def test_search_filters_and_scores(palace):
    res = call(palace, "search", {"query": "hybrid search RRF", "limit": 5})["results"]
    assert res[0]["wing"] == "people"
    assert set(res[0]["scores"]) == {"vector", "bm25", "vector_rank", "bm25_rank",
                                      "pheromone", "recency", "rerank", "semantic",
                                      "structural", "event"}
    plain = call(palace, "search", {"query": "hybrid search RRF", "limit": 5, "enrich": 1})
    assert set(plain["results"][0]["scores"]) == {"vector", "bm25", "vector_rank", "bm25_rank",
                                                  "pheromone", "recency", "rerank", "event"}
    only = call(palace, "search", {"query": "search", "wing": "projects"})["results"]
    assert {r["wing"] for r in only} == {"projects"}
    room = call(palace, "search", {"query": "pheromone", "wing": "projects", "room": "ui"})
    assert [r["room"] for r in room["results"]] == ["ui"]
    for mode in ("vector", "bm25", "blend"):
        assert call(palace, "search", {"query": "Panel heat", "mode": mode})["results"]
    with pytest.raises(ValidationError):
        call(palace, "search", {"query": "x", "mode": "magic"})


def test_check_duplicate_finds_exact_and_near(palace):
    exact = call(palace, "check_duplicate", {"content": "BM25 ranks drawers by shared words"})
    assert exact["is_duplicate"] and exact["exact"]
    near = call(palace, "check_duplicate",
                       {"content": "BM25 ranks drawers by shared word", "threshold": 0.7})
    assert near["exact"] is None and near["near"][0]["wing"] == "projects"
    assert not call(palace, "check_duplicate", {"content": "zzz qqq"})["is_duplicate"]


def test_bulk_replace_dry_run_then_apply(palace):
    dry = call(palace, "bulk_replace", {"find": "RRF", "replace": "fusion", "dry_run": True})
    assert dry["matched"] == 1 and dry["changed"] == 0
    done = call(palace, "bulk_replace", {"find": "RRF", "replace": "fusion"})
    assert done["changed"] == 1
    hits = call(palace, "search", {"query": "fusion", "mode": "bm25"})["results"]
    assert hits and "fusion" in hits[0]["content"]
    with pytest.raises(ValidationError):
        call(palace, "bulk_replace", {"find": "Ada prefers hybrid search with fusion",
                                     "replace": ""})


def test_reindex_fills_missing_vectors(palace):
    palace.drawers.has_vector[:] = False
    assert call(palace, "reindex")["embedded"] == 3
    assert call(palace, "reindex")["embedded"] == 0
    assert call(palace, "reindex", {"force": True})["embedded"] == 3
    assert call(palace, "palace_status")["embedded"] == 3


def test_export_jsonl_and_json(palace):
    assert len(call(palace, "export", {"format": "jsonl"})["text"].splitlines()) == 3
    doc = call(palace, "export", {"vectors": "none"})["document"]
    assert doc["palace"]["vectors"] is None
    other = Palace(embedder=HashEmbedder())
    call(other, "import", {"text": json.dumps(doc)})
    assert call(other, "get_taxonomy") == call(palace, "get_taxonomy")


def test_reindex_refits_a_fitted_embedder_on_the_drawers():
    from palazzo.embed.registry import make

    p = Palace(embedder=make("tfidf"), clock=lambda: 7.0)
    for text in ["violin lessons with Marta", "garage door code 4417", "lentil soup recipe"]:
        call(p, "add_drawer", {"wing": "w", "room": "r", "content": text})
    unfitted = p.embedder.fingerprint
    result = call(p, "reindex")
    assert result["fingerprint"] != unfitted and result["embedded"] == 3
    assert call(p, "reindex")["embedded"] == 0  # same drawers, same fit: nothing to do
    hits = call(p, "search", {"query": "soup", "mode": "vector"})["results"]
    assert hits[0]["content"] == "lentil soup recipe"


def test_list_drawers_newest_first_with_paging_and_clear_errors():
    t = [0.0]

    def clock():
        t[0] += 1
        return t[0]

    p = Palace(clock=clock)
    for i in range(5):
        p.add_drawer("w", "r", f"drawer {i} " + "x" * 300)
    p.add_drawer("w", "other", "elsewhere")
    out = call(p, "list_drawers", {"wing": "w", "room": "r", "limit": 2, "offset": 1})
    assert out["total"] == 5
    assert [d["snippet"][:8] for d in out["drawers"]] == ["drawer 3", "drawer 2"]
    assert len(out["drawers"][0]["snippet"]) == 200 and out["drawers"][0]["chars"] > 300
    assert call(p, "list_drawers", {})["total"] == 6
    with pytest.raises(NotFound):
        call(p, "list_drawers", {"wing": "w", "room": "nowhere"})
    with pytest.raises(ValidationError):
        call(p, "list_drawers", {"room": "r"})


def test_edited_text_can_be_added_again():
    """Identity follows content: after friday -> monday, the friday text is new again."""
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0)
    did = call(p, "add_drawer", {"wing": "w", "room": "r",
                                "content": "the launch is on friday"})["drawer_id"]
    out = call(p, "bulk_replace", {"find": "friday", "replace": "monday"})
    assert out["changed"] == 1
    again = call(p, "add_drawer", {"wing": "w", "room": "r", "content": "the launch is on friday"})
    assert again == {"drawer_id": did, "created": True}
    monday = drawer_id("the launch is on monday", "w", "r")
    assert call(p, "get_drawer", {"drawer_id": monday})["drawer"]["content"].endswith("monday")
    assert p.drawer_aliases == {}  # did is a drawer of its own again, no longer an alias


def test_an_edit_that_would_merge_two_drawers_is_refused_whole():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0)
    a = call(p, "add_drawer", {"wing": "w", "room": "r", "content": "meet on friday"})
    call(p, "add_drawer", {"wing": "w", "room": "r", "content": "meet on monday"})
    call(p, "add_drawer", {"wing": "w", "room": "r", "content": "call on friday"})
    before = export_palace(p, exported_at=0.0)
    with pytest.raises(ValidationError, match="same text"):
        call(p, "bulk_replace", {"find": "friday", "replace": "monday"})
    assert export_palace(p, exported_at=0.0) == before
    with pytest.raises(ValidationError, match="already holds"):
        call(p, "update_drawer", {"drawer_id": a["drawer_id"], "content": "meet on monday"})
    assert export_palace(p, exported_at=0.0) == before


def test_edges_pheromones_and_diaries_follow_a_renamed_drawer():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, similar_threshold=0.0)
    a = call(p, "add_drawer", {"wing": "w", "room": "r", "content": "alpha beta gamma"})
    b = call(p, "add_drawer", {"wing": "w", "room": "r", "content": "alpha beta delta"})
    call(p, "add_agent", {"name": "scribe", "focus": "notes"})
    entry = call(p, "diary_write", {"agent": "scribe", "text": "alpha beta note"})
    old_edges = {(p.edges.kind[i], p.edges.src[i], p.edges.dst[i]) for i in p.edges.live()}
    new = call(p, "update_drawer", {"drawer_id": a["drawer_id"],
                                   "content": "alpha beta gamma!"})["drawer"]["id"]
    edges = {(p.edges.kind[i], p.edges.src[i], p.edges.dst[i]) for i in p.edges.live()}
    assert edges == {(k, new if s == a["drawer_id"] else s, new if d == a["drawer_id"] else d)
                     for k, s, d in old_edges}
    assert not p.edges.touching(a["drawer_id"])
    assert b["drawer_id"] in {p.edges.src[i] for i in p.edges.touching(new)} | \
        {p.edges.dst[i] for i in p.edges.touching(new)}
    d_new = call(p, "update_drawer", {"drawer_id": entry["entry"]["drawer_id"],
                                     "content": "alpha beta note, edited"})["drawer"]["id"]
    read = call(p, "diary_read", {"agent": "scribe"})
    assert [e["drawer_id"] for e in read["entries"]] == [d_new]


def test_metadata_and_goals_have_limits_in_their_schemas():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0)
    with pytest.raises(ValidationError, match="^Source is too long") as info:
        call(p, "add_drawer", {"wing": "w", "room": "r", "content": "x", "source": "s" * 10_001})
    assert info.value.field == "source"
    with pytest.raises(ValidationError, match="^Description is too long"):
        call(p, "add_wing", {"name": "w", "description": "d" * 10_001})
    with pytest.raises(ValidationError, match="^Content is too long"):
        call(p, "check_duplicate", {"content": "c" * 5_000_001})
    with pytest.raises(ValidationError, match="^Goal is too long"):
        call(p, "run_swarm", {"goal": "g" * 10_001})
    assert p.counts()["drawers"] == 0 and p.counts()["wings"] == 0


def test_status_counts_the_chunk_vectors_of_long_drawers():
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.palace import Palace

    p = Palace(embedder=HashEmbedder(dim=16), chunk_size=120)
    call(p, "add_drawer", {"wing": "w", "room": "r", "content": "short"})
    assert call(p, "palace_status")["chunk_vectors"] == 0
    long_text = " ".join(f"Sentence {i} about pears." for i in range(30))
    call(p, "add_drawer", {"wing": "w", "room": "r", "content": long_text})
    status = call(p, "palace_status")
    assert status["embedded"] == 2 and status["chunk_vectors"] == len(p.drawers.chunks) > 2
    assert status["event_sentences"] == 0
    p.add_drawer("w", "r", "Yesterday I fixed the bike. Then I read a book about trains.")
    assert call(p, "palace_status")["event_sentences"] == 1


def test_search_keeps_to_one_community():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0)
    for i in range(8):
        call(p, "add_drawer", {"wing": "w", "room": "r", "content":
                               f"roses tulips compost pruning garden note {i}"})
        call(p, "add_drawer", {"wing": "w", "room": "r", "content":
                               f"postgres replication vacuum schema garden note {i}"})
    listed = call(p, "communities", {"drawers": True})["communities"]
    assert len(listed) == 2
    for c in listed:
        for enrich in (0.9, 1):  # the graph's drawers keep to the community as well
            found = call(p, "search", {"query": "garden note", "community": c["id"],
                                       "limit": 20, "enrich": enrich})["results"]
            assert found and {r["drawer_id"] for r in found} <= set(c["drawer_ids"])
    with pytest.raises(NotFound):
        call(p, "search", {"query": "garden", "community": 2})
    with pytest.raises(ValidationError):
        call(p, "search", {"query": "garden", "community": -1})


def test_results_and_drawer_views_say_where_each_drawer_came_from(palace):
    """Issue 31 (sources everywhere): every search result (enriched or not, any mode, the
    enrich operation too), get_drawer and list_drawers carry a source object."""
    note = call(palace, "add_drawer", {"wing": "notes", "room": "notes",
                                       "content": "Tomatoes need six hours of sun",
                                       "source": "index", "source_file": "garden/tomatoes.md"})
    call(palace, "add_room", {"wing": "conversations", "name": "tomato-talk",
                              "description": "Growing tomatoes"})
    call(palace, "import_conversation", {"conversation": "tomato-talk", "messages": [
        {"role": "user", "content": "How much sun do tomatoes need?", "timestamp": 100.0},
        {"role": "assistant", "content": "Six hours of sun at least.", "timestamp": 160.0}]})
    runs = [{}, {"enrich": 1}, {"mode": "bm25"}, {"mode": "vector"}, {"rerank": "mmr"}]
    for how in runs:
        results = call(palace, "search", {"query": "tomatoes sun", "limit": 10, **how})[
            "results"]
        by_id = {r["drawer_id"]: r["source"] for r in results}
        assert by_id[note["drawer_id"]]["path"] == "garden/tomatoes.md", how
        talk = [s for s in by_id.values() if s["kind"] == "conversation"]
        assert talk and {s["title"] for s in talk} == {"Growing tomatoes"}, how
        assert {s["role"] for s in talk} <= {"user", "assistant"}
    enriched = call(palace, "enrich", {"query": "tomatoes sun"})["results"]
    assert all("source" in r for r in enriched)
    got = call(palace, "get_drawer", {"drawer_id": note["drawer_id"]})
    assert got["source"]["kind"] == "file" and got["drawer"]["source"] == "index"
    listed = call(palace, "list_drawers", {"wing": "conversations"})["drawers"]
    assert [d["source"]["role"] for d in listed] == ["assistant", "user"]  # newest first
    assert [d["source"]["created_at"] for d in listed] == [160.0, 100.0]
    plain = call(palace, "list_drawers", {"wing": "people"})["drawers"][0]["source"]
    assert plain == {"kind": "added", "via": "", "created_at": 7.0}

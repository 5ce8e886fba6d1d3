import copy

import pytest

from palazzo import call
from palazzo.core.model import EdgeKind
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ImportRejected, NotFound, ValidationError
from palazzo.formats.palacefile import export_palace, read_palace
from palazzo.palace import Palace

DAY = 86400.0


def make():
    t = [1764633600.0]  # 2025-12-02 00:00 UTC

    def clock():
        return t[0]

    p = Palace(embedder=HashEmbedder(), clock=clock)
    p.advance = lambda days: t.__setitem__(0, t[0] + days * DAY)
    return p


def test_write_read_latest_first_with_limit_and_dates():
    p = make()
    first = call(p, "diary_write", {"agent": "Scout", "text": "Mapped the east wing."})
    assert first["created"] and first["agent_created"]
    p.advance(1)
    call(p, "diary_write", {"agent": "Scout", "text": "Found a tunnel to the archive."})
    p.advance(1)
    call(p, "diary_write", {"agent": "Scout", "text": "Rested.", "topic": "misc"})
    entries = call(p, "diary_read", {"agent": "Scout"})["entries"]
    assert [e["content"] for e in entries] == ["Rested.", "Found a tunnel to the archive.",
                                               "Mapped the east wing."]
    assert entries[0]["topic"] == "misc" and entries[1]["topic"] == "general"
    assert [e["content"] for e in call(p, "diary_read", {"agent": "Scout", "limit": 1})
            ["entries"]] == ["Rested."]
    mid = call(p, "diary_read", {"agent": "Scout", "since": "2025-12-03", "until": "2025-12-03"})
    assert [e["content"] for e in mid["entries"]] == ["Found a tunnel to the archive."]
    assert call(p, "list_agents", {})["agents"][0]["diary_entries"] == 3


def test_entries_are_drawers_in_the_agents_wing_and_searchable():
    p = make()
    out = call(p, "diary_write", {"agent": "Scout", "text": "The violin is in the attic."})
    hit = call(p, "search", {"query": "violin attic"})["results"][0]
    assert hit["drawer_id"] == out["entry"]["drawer_id"]
    assert (hit["wing"], hit["room"]) == ("agent-Scout", "diary")
    assert p.edges.find(EdgeKind.WROTE, "agent:scout", hit["drawer_id"]) is not None


def test_same_text_twice_is_one_entry_and_bad_input_changes_nothing():
    p = make()
    call(p, "diary_write", {"agent": "Scout", "text": "Same."})
    again = call(p, "diary_write", {"agent": "Scout", "text": "Same."})
    assert again["created"] is False
    before = p.counts()
    with pytest.raises(ValidationError):
        call(p, "diary_write", {"agent": "Scout", "text": "   "})
    with pytest.raises(ValidationError):
        call(p, "diary_read", {"agent": "Scout", "since": "yesterday-ish"})
    with pytest.raises(NotFound):
        call(p, "diary_read", {"agent": "Nobody"})
    assert p.counts() == before


def test_aaak_is_kept_beside_the_verbatim_text():
    p = make()
    out = call(p, "diary_write", {"agent": "Scout", "text": "Decided to index the archive.",
                                 "aaak": True, "importance": 1.0})
    entry = out["entry"]
    assert entry["content"] == "Decided to index the archive."
    assert entry["aaak"].startswith("2025-12-02|SCO|") and "|*****|DECISION" in entry["aaak"]
    plain = call(p, "diary_write", {"agent": "Scout", "text": "No compact form."})
    assert plain["entry"]["aaak"] is None


def test_deleting_the_drawer_ends_the_entry():
    p = make()
    did = call(p, "diary_write", {"agent": "Scout", "text": "Gone soon."})["entry"]["drawer_id"]
    p.delete_drawer(did)
    assert call(p, "diary_read", {"agent": "Scout"})["entries"] == []


def test_round_trip_and_a_bad_diary_section_is_refused():
    p = make()
    call(p, "diary_write", {"agent": "Scout", "text": "One.", "aaak": True})
    call(p, "diary_write", {"agent": "Ada", "text": "Two."})
    doc = export_palace(p, vectors=None, exported_at=0.0)
    assert len(doc["palace"]["diaries"]) == 2
    q = make()
    call(q, "import", {"document": copy.deepcopy(doc), "reindex": False})
    assert export_palace(q, vectors=None, exported_at=0.0) == doc
    bad = copy.deepcopy(doc)
    bad["palace"]["diaries"][0]["agent_id"] = "agent:ghost"
    with pytest.raises(ImportRejected, match=r"palace\.diaries\[0\]\.agent_id"):
        read_palace(bad, lambda **kw: Palace(clock=lambda: 0.0, **kw))
    before = export_palace(q, vectors=None, exported_at=0.0)
    with pytest.raises(ImportRejected):
        call(q, "import", {"document": bad, "reindex": False})
    assert export_palace(q, vectors=None, exported_at=0.0) == before

"""Where a drawer came from (memory/sources.py): a file and its part, a conversation turn's
title, speaker and time, or what is known; the drawer -> turn map made once and again after a
turn is added; a palace's conversations left unread while no conversation drawer is asked
about; the thread around a turn (Conversations.thread) in the order said."""

import pytest

from palazzo import call
from palazzo.formats import snapshot
from palazzo.memory.conversation import WING
from palazzo.memory.sources import source_of, split_source_file
from palazzo.palace import Palace

T0 = 1_700_000_000.0


@pytest.fixture
def palace():
    return Palace(clock=lambda: T0)


def talk(palace, name="garden", title="Planning the garden"):
    """A titled conversation of four turns a minute apart; returns its import result."""
    if title:
        call(palace, "add_room", {"wing": WING, "name": name, "description": title,
                                  "source": f"chatgpt:{name}"})
    return call(palace, "import_conversation", {"conversation": name, "messages": [
        {"role": "user", "content": "When should I plant tomatoes?", "timestamp": T0},
        {"role": "assistant", "content": "After the last frost.", "timestamp": T0 + 60},
        {"role": "user", "content": "And the basil?", "timestamp": T0 + 120},
        {"role": "assistant", "content": "Basil wants warm nights.", "timestamp": T0 + 180},
    ]})


def source(palace, drawer_id):
    return source_of(palace, palace.row(drawer_id))


def test_a_note_says_its_file_and_its_part(palace):
    whole = call(palace, "add_drawer", {"wing": "notes", "room": "notes", "content": "Roses",
                                        "source": "index", "source_file": "roses.md"})
    part = call(palace, "add_drawer", {"wing": "notes", "room": "docs", "content": "Part 3",
                                       "source": "index", "source_file": "docs/big.md#chunk-3",
                                       "key": "docs/big.md#3"})
    other = call(palace, "add_drawer", {"wing": "m", "room": "r", "content": "From elsewhere",
                                        "source": "mempalace",
                                        "source_file": "/home/me/notes/x.txt"})
    assert source(palace, whole["drawer_id"]) == {
        "kind": "file", "path": "roses.md", "name": "roses.md", "part": None, "via": "index",
        "created_at": T0}
    got = source(palace, part["drawer_id"])
    assert (got["path"], got["name"], got["part"]) == ("docs/big.md", "big.md", 3)
    assert source(palace, other["drawer_id"])["name"] == "x.txt"
    assert split_source_file("a#chunk-x") == ("a#chunk-x", 0)  # not a chunk mark
    assert split_source_file("#chunk-2") == ("#chunk-2", 0)


def test_a_turn_says_its_conversation_speaker_time_and_place(palace):
    talk(palace)
    hits = call(palace, "search", {"query": "basil", "mode": "bm25", "limit": 5})["results"]
    got = hits[0]["source"]
    assert got == {"kind": "conversation", "conversation": "garden",
                   "title": "Planning the garden", "role": "user",
                   "turn_id": got["turn_id"], "turn": 3, "turns": 4, "created_at": T0 + 120,
                   "text_kind": "text"}
    assert palace.conversations.get(got["turn_id"]).drawer_id == hits[0]["drawer_id"]
    answer = source(palace, hits[1]["drawer_id"])
    assert (answer["role"], answer["turn"]) == ("assistant", 4)
    # Without a title (a conversation added by hand), the conversation's name is its title.
    talk(palace, "plain", title="")
    hit = call(palace, "search", {"query": "basil", "mode": "bm25", "room": "plain",
                                  "wing": WING, "limit": 1})["results"][0]
    assert hit["source"]["title"] == "plain"


def test_an_edited_turn_still_names_its_turn(palace):
    talk(palace)
    turn = palace.conversations.of("garden")[2]
    edited = call(palace, "update_drawer", {"drawer_id": turn.drawer_id,
                                            "content": "And the basil, too?"})["drawer"]
    assert edited["id"] != turn.drawer_id
    got = source(palace, edited["id"])
    assert (got["turn_id"], got["role"], got["turn"]) == (turn.id, "user", 3)


def test_other_drawers_say_what_is_known(palace):
    added = call(palace, "add_drawer", {"wing": "w", "room": "r", "content": "by hand"})
    demo = call(palace, "add_drawer", {"wing": "w", "room": "r", "content": "demo",
                                       "source": "demo"})
    call(palace, "diary_write", {"agent": "guide", "text": "walked the garden"})
    diary = [r for r in palace.drawers.live_rows() if palace.drawers.source[r] == "diary"]
    assert source(palace, added["drawer_id"]) == {"kind": "added", "via": "",
                                                  "created_at": T0}
    assert source(palace, demo["drawer_id"])["via"] == "demo"
    assert source_of(palace, int(diary[0]))["kind"] == "diary"


def test_the_drawer_to_turn_map_is_made_once_and_again_when_a_turn_is_added(palace):
    talk(palace)
    conv = palace.conversations
    first = conv.of("garden")[0]
    assert source(palace, first.drawer_id)["turn"] == 1
    made = conv._placed
    assert made is not None
    source(palace, conv.of("garden")[1].drawer_id)
    assert conv._placed is made  # kept: no second pass over the turns
    new, _ = conv.add_turn("garden", "user", "Thanks!", parents=[conv.of("garden")[-1].id])
    assert conv._placed is None  # a turn added: made again on the next lookup
    got = source(palace, new.drawer_id)
    assert (got["turn"], got["turns"]) == (5, 5)


def test_a_note_search_leaves_a_snapshots_conversations_unread():
    p = Palace(clock=lambda: T0)
    talk(p)
    call(p, "add_drawer", {"wing": "notes", "room": "notes", "content": "Roses like sun",
                           "source": "index", "source_file": "roses.md"})
    again = snapshot.read_snapshot(snapshot.write_snapshot(p), lambda **kw: Palace(**kw))
    hits = call(again, "search", {"query": "roses", "mode": "bm25"})["results"]
    assert hits[0]["source"]["path"] == "roses.md"
    assert again.unread("conversations") is not None
    call(again, "search", {"query": "basil", "mode": "bm25"})
    assert again.unread("conversations") is None  # a turn was asked about: read once


def branched(palace):
    """q -> a1, a2 (a regenerated answer, newer) -> f follows a2; g follows a1."""
    add = palace.conversations.add_turn
    q, _ = add("chat", "user", "Question?", created_at=T0)
    a1, _ = add("chat", "assistant", "First answer.", parents=[q.id], created_at=T0 + 10)
    a2, _ = add("chat", "assistant", "Second answer.", parents=[q.id], created_at=T0 + 20)
    g, _ = add("chat", "user", "On the first.", parents=[a1.id], created_at=T0 + 30)
    f, _ = add("chat", "user", "On the second.", parents=[a2.id], created_at=T0 + 40)
    return q, a1, a2, g, f


def test_the_thread_around_a_turn_is_one_line_in_the_order_said(palace):
    q, a1, a2, g, f = branched(palace)
    conv = palace.conversations
    turns, earlier, later = conv.thread(q.id, 0, 5)
    assert [t.id for t in turns] == [q.id, a2.id, f.id]  # at a branch: the newest version
    assert (earlier, later) == (False, False)
    turns, earlier, later = conv.thread(g.id, 5, 0)
    assert [t.id for t in turns] == [q.id, a1.id, g.id]  # back through its own parents
    assert (earlier, later) == (False, False)
    turns, earlier, later = conv.thread(a1.id, 0, 0)
    assert [t.id for t in turns] == [a1.id] and (earlier, later) == (True, True)
    assert conv.place_of(f.id) == 4

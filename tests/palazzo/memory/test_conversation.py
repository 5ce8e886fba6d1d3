"""Conversation memory as a DAG: turns, derived edges, import, drawers, the palace file."""

import copy
import json

import pytest

from palazzo import call
from palazzo.errors import ImportRejected, NotFound, ValidationError
from palazzo.formats.palacefile import export_palace, read_palace
from palazzo.memory.conversation import (
    WING,
    Conversations,
    content_hash,
    normalise_text,
    turn_id,
)
from palazzo.palace import Palace

T0 = 1_700_000_000.0


@pytest.fixture
def palace():
    return Palace(clock=lambda: T0)


def chain(palace, conversation="talk"):
    """root(user) -> a(assistant) -> {b, c}(branch) ; m merges b and c."""
    add = palace.conversations.add_turn
    root, _ = add(conversation, "user", "How do I bake bread?", phase="planning")
    a, _ = add(conversation, "assistant", "Flour, water, salt, yeast.", parents=[root.id])
    b, _ = add(conversation, "user", "And sourdough?", parents=[a.id], salience=0.9)
    c, _ = add(conversation, "user", "How long to knead?", parents=[a.id])
    m, _ = add(conversation, "assistant", "Both: knead 10 min, starter for sourdough.",
               parents=[c.id, b.id], phase="synthesis")
    return root, a, b, c, m


def snapshot(palace):
    return json.dumps(export_palace(palace, vectors=None, exported_at=0.0), sort_keys=True)


def test_edges_follow_the_documented_rule_and_depths(palace):
    root, a, b, c, m = chain(palace)
    conv = palace.conversations
    assert [t.depth for t in (root, a, b, c, m)] == [0, 1, 2, 2, 3]
    assert conv.edge_type(root.id, a.id) == "reply"
    assert conv.edge_type(a.id, b.id) == conv.edge_type(a.id, c.id) == "branch"
    assert conv.edge_type(b.id, m.id) == conv.edge_type(c.id, m.id) == "merge"
    assert m.parents == tuple(sorted([b.id, c.id]))
    assert conv.children_of(a.id) == sorted([b.id, c.id])
    assert conv.siblings_of(b.id) == [c.id]
    edges = conv.edges_among(conv.turns)
    assert edges == sorted(edges) and len(edges) == 5
    # A reply turns into a branch when a sibling arrives: edges describe the graph as it is.
    d, _ = conv.add_turn("talk", "assistant", "Bread needs time.", parents=[root.id])
    assert conv.edge_type(root.id, a.id) == "branch" == conv.edge_type(root.id, d.id)
    assert conv.summary("talk") == {"conversation": "talk", "turns": 6, "roots": 1,
                                    "leaves": 2, "merges": 1, "max_depth": 3,
                                    "first_at": T0, "last_at": T0}


def test_turn_ids_are_deterministic_and_the_first_write_wins(palace):
    root, a, *_ = chain(palace)
    conv = palace.conversations
    drawers = len(palace.drawers)
    again, created = conv.add_turn("talk", "assistant", "  Flour, water, salt, yeast.\r\n",
                                   parents=[root.id], phase="debugging", salience=0.1)
    assert not created and again is conv.turns[a.id] and again.phase == "exploration"
    assert len(palace.drawers) == drawers
    assert a.id == turn_id("talk", [root.id], "assistant",
                           content_hash("Flour, water, salt, yeast."))
    # Each part of the id matters.
    others = [conv.add_turn("talk", "user", "Flour, water, salt, yeast.", parents=[root.id]),
              conv.add_turn("talk", "assistant", "Flour, water, salt, yeast."),
              conv.add_turn("other", "assistant", "Flour, water, salt, yeast.")]
    assert len({a.id, *(t.id for t, created in others)}) == 4
    assert all(created for _, created in others)


def test_normalised_text_is_hashed_and_stored():
    assert normalise_text("  e\u0301\r\nx\r") == "\u00e9\nx"
    assert content_hash("e\u0301") == content_hash(" \u00e9 ")
    p = Palace(clock=lambda: T0)
    t, _ = p.conversations.add_turn("n", "user", "  caf\u0065\u0301\r\nbar  ")
    assert p.drawer(t.drawer_id).content == "caf\u00e9\nbar"
    assert content_hash(p.drawer(t.drawer_id).content) == t.content_hash


def test_turns_are_searchable_drawers(palace):
    root, a, b, c, m = chain(palace)
    hits = call(palace, "search", {"query": "sourdough starter", "wing": WING})["results"]
    assert hits[0]["drawer_id"] == m.drawer_id
    assert {h["drawer_id"] for h in hits} >= {b.drawer_id, m.drawer_id}
    d = palace.drawer(b.drawer_id)
    assert (d.wing, d.room, d.content, d.importance) == (WING, "talk", "And sourdough?", 0.9)
    assert d.created_at == T0


def test_add_turn_refuses_bad_input_and_changes_nothing(palace):
    root, *_ = chain(palace)
    other, _ = palace.conversations.add_turn("elsewhere", "user", "hi")
    before = snapshot(palace)
    add = palace.conversations.add_turn
    bad = [
        (ValidationError, dict(role="robot")),
        (ValidationError, dict(content="   ")),
        (ValidationError, dict(content=7)),
        (ValidationError, dict(phase="dreaming")),
        (ValidationError, dict(salience=1.5)),
        (ValidationError, dict(salience=float("nan"))),
        (ValidationError, dict(created_at="yesterday")),
        (ValidationError, dict(parents=[root.id, root.id])),
        (ValidationError, dict(parents=[other.id])),  # another conversation
        (ValidationError, dict(parents=root.id)),  # a string, not a list
        (NotFound, dict(parents=["turn_0000"])),
        (ValidationError, dict(conversation="")),
        (ValidationError, dict(conversation="a\x00b")),
    ]
    for error, change in bad:
        kw = {"conversation": "talk", "role": "user", "content": "fine", **change}
        with pytest.raises(error):
            add(**kw)
        assert snapshot(palace) == before, change


MESSAGES = [
    {"role": "system", "content": "You are a baker."},
    {"role": "user", "content": "Bread?", "phase": "planning", "timestamp": 10},
    {"role": "assistant", "content": [{"type": "text", "text": "Flour"}, "and water."],
     "salience": 0.8, "timestamp": "2024-01-02T03:04:05Z", "id": "ignored"},
    {"role": "user", "content": "Rye instead?", "parents": [1]},
    {"role": "assistant", "content": "Both work.", "parents": [2, 3], "phase": "synthesis"},
]


def test_import_builds_the_dag_and_reimport_adds_nothing(palace):
    out = palace.conversations.import_messages("bakery", MESSAGES, phase="debugging")
    assert out.created == 5 and len(out.turn_ids) == 5
    turns = [palace.conversations.turns[t] for t in out.turn_ids]
    assert [t.depth for t in turns] == [0, 1, 2, 2, 3]
    assert [t.phase for t in turns] == ["debugging", "planning", "debugging", "debugging",
                                        "synthesis"]
    assert turns[1].created_at == 10.0 and turns[0].created_at == T0
    assert turns[2].created_at == 1704164645.0 and turns[2].salience == 0.8
    assert palace.drawer(turns[2].drawer_id).content == "Flour\nand water."
    conv = palace.conversations
    assert conv.edge_type(turns[1].id, turns[2].id) == "branch"
    assert conv.edge_type(turns[3].id, turns[4].id) == "merge"
    before = snapshot(palace)
    again = conv.import_messages("bakery", json.dumps({"messages": MESSAGES}),
                                 phase="debugging")
    assert again.created == 0 and again.turn_ids == out.turn_ids
    assert snapshot(palace) == before
    # Continuing after the leaf adds only the new message.
    more = conv.import_messages("bakery", [{"role": "user", "content": "Thanks"}],
                                after=out.turn_ids[-1])
    assert more.created == 1 and conv.turns[more.turn_ids[0]].parents == (out.turn_ids[-1],)


def test_a_bad_message_anywhere_changes_nothing(palace):
    chain(palace)
    before = snapshot(palace)
    imp = palace.conversations.import_messages
    cases = [
        [*MESSAGES[:4], {"role": "user"}],
        [*MESSAGES[:4], {"role": "wizard", "content": "x"}],
        [*MESSAGES[:4], {"role": "user", "content": "x", "parents": [4]}],  # not earlier
        [*MESSAGES[:4], {"role": "user", "content": "x", "parents": [True]}],
        [*MESSAGES[:4], {"role": "user", "content": [{"type": "image"}]}],
        [*MESSAGES[:4], {"role": "user", "content": "x", "salience": -1}],
        [*MESSAGES[:4], {"role": "user", "content": "x", "timestamp": "noon"}],
        [*MESSAGES[:4], "not a message"],
        [],
        {"no": "messages"},
        "[{\"role\": \"user\", \"content\": \"x\"",  # truncated JSON text
    ]
    for messages in cases:
        with pytest.raises(ValidationError):
            imp("bakery", messages)
        assert snapshot(palace) == before, messages
    with pytest.raises(NotFound):
        imp("bakery", MESSAGES, after="turn_missing")
    with pytest.raises(ValidationError):
        imp("bakery", MESSAGES, phase="sleep")
    assert snapshot(palace) == before
    assert (WING, "bakery") not in palace.rooms


def test_palace_file_round_trip_keeps_turns_and_derived_edges(palace):
    turns = chain(palace)
    palace.conversations.import_messages("bakery", MESSAGES)
    doc = export_palace(palace, vectors=None, exported_at=0.0)
    section = doc["palace"]["conversations"]
    assert [t["id"] for t in section["turns"][:5]] == [t.id for t in turns]
    q = Palace(clock=lambda: 99.0)
    call(q, "import", {"document": copy.deepcopy(doc)})
    assert export_palace(q, vectors=None, exported_at=0.0) == doc
    conv = q.conversations
    assert conv.edges_among(conv.turns) == palace.conversations.edges_among(
        palace.conversations.turns)
    assert conv.siblings_of(turns[2].id) == [turns[3].id]
    # An empty palace and an older file without the section both read.
    empty = export_palace(Palace(clock=lambda: 0.0), vectors=None, exported_at=0.0)
    assert empty["palace"]["conversations"] == {"turns": []}
    del empty["palace"]["conversations"]
    read_palace(empty, lambda **kw: Palace(**kw))


def _reject(doc, match):
    with pytest.raises(ImportRejected, match=match):
        read_palace(doc, lambda **kw: Palace(clock=lambda: 0.0, **kw))


def test_import_rejects_bad_turns_naming_the_place(palace):
    chain(palace)
    doc = export_palace(palace, vectors=None, exported_at=0.0)

    def edited(fn):
        d = copy.deepcopy(doc)
        fn(d["palace"]["conversations"]["turns"])
        return d

    where = r"palace\.conversations\.turns\[4\]"
    _reject(edited(lambda ts: ts[4].update(content_hash="0" * 64)), where + r"\.id")
    _reject(edited(lambda ts: ts[4].update(role="robot")), where + ": role")
    _reject(edited(lambda ts: ts[4].update(phase="nap")), where + ": phase")
    _reject(edited(lambda ts: ts[4].update(salience=2)), where + ": salience")
    _reject(edited(lambda ts: ts[4].update(depth=9)), where + r"\.depth")
    _reject(edited(lambda ts: ts[4].update(parents=list(reversed(ts[4]["parents"])))),
            where + r"\.parents")
    _reject(edited(lambda ts: ts.insert(0, ts.pop(4))), r"turns\[0\]\.parents")
    _reject(edited(lambda ts: ts.append(ts[0])), r"turns\[5\]\.id .* twice")
    _reject(edited(lambda ts: ts[4].pop("drawer_id")), where + r"\.drawer_id is missing")
    _reject(edited(lambda ts: ts[4].update(extra=1)), where + " has unknown")
    _reject(edited(lambda ts: ts[4].update(conversation=" talk")), where + r"\.conversation")
    _reject(edited(lambda ts: ts.__setitem__(4, [])), where + " must be an object")
    # A parent in another conversation is refused even when the id was forged to match.
    p2 = Palace(clock=lambda: T0)
    other, _ = p2.conversations.add_turn("other", "user", "elsewhere")  # first in the file
    chain(p2)
    doc = export_palace(p2, vectors=None, exported_at=0.0)
    d = copy.deepcopy(doc)
    t = d["palace"]["conversations"]["turns"][2]
    t.update(parents=[other.id], depth=1)
    t["id"] = turn_id("talk", [other.id], t["role"], t["content_hash"])
    _reject(d, r"turns\[2\]\.parents: no earlier turn .* in conversation 'talk'")
    d = copy.deepcopy(doc)
    d["palace"]["conversations"] = {"turns": {}}
    _reject(d, r"conversations\.turns must be a list")
    d["palace"]["conversations"] = {"turns": [], "edges": []}
    _reject(d, "unknown field")


def test_lookups_raise_not_found(palace):
    with pytest.raises(NotFound):
        palace.conversations.get("turn_x")
    with pytest.raises(NotFound):
        palace.conversations.of("nobody")
    assert isinstance(Conversations.from_json(palace, {}, "x"), Conversations)


def test_a_turn_keeps_the_kind_of_its_text_through_files_and_snapshots(palace):
    from palazzo.formats.snapshot import read_snapshot, write_snapshot

    messages = [{"role": "user", "content": "Remind me to water the roses.", "kind": "voice"},
                {"role": "assistant", "content": "Noted."},
                {"role": "assistant", "content": "User grows roses.", "kind": "memory"}]
    done = call(palace, "import_conversation", {"conversation": "garden",
                                                "messages": messages})
    listed = call(palace, "list_turns", {"conversation": "garden"})["turns"]
    assert [t.get("kind", "text") for t in listed] == ["voice", "text", "memory"]
    assert "kind" not in listed[1]  # plain turns are written as before
    # The kind is not part of the id: the same message with another kind is the same turn.
    again = call(palace, "import_conversation", {"conversation": "garden", "messages": [
        {**m, "kind": "text"} for m in messages]})
    assert again["turn_ids"] == done["turn_ids"] and again["created"] == 0
    doc = export_palace(palace, vectors=None, exported_at=0.0)
    q = Palace(clock=lambda: 99.0)
    call(q, "import", {"document": copy.deepcopy(doc)})
    assert [q.conversations.turns[t].kind for t in done["turn_ids"]] == ["voice", "text",
                                                                          "memory"]
    r = read_snapshot(write_snapshot(palace), lambda **kw: Palace(**kw))
    assert [r.conversations.turns[t].kind for t in done["turn_ids"]] == ["voice", "text",
                                                                          "memory"]
    with pytest.raises(ValidationError, match="(?i)kind .*must be one of"):
        call(palace, "import_conversation", {"conversation": "garden", "messages": [
            {"role": "user", "content": "x", "kind": "hologram"}]})
    bad = copy.deepcopy(doc)
    bad["palace"]["conversations"]["turns"][0]["kind"] = "hologram"
    _reject(bad, r"turns\[0\]: kind must be one of")

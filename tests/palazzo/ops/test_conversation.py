"""The conversation operations through palazzo.call: conversation_around (the turns around a
drawer's turn, in the order said, for a person reading a hit in its conversation)."""

import pytest

from palazzo import call
from palazzo.errors import NotFound, ValidationError
from palazzo.palace import Palace

T0 = 1_700_000_000.0


@pytest.fixture
def palace():
    p = Palace(clock=lambda: T0)
    call(p, "add_room", {"wing": "conversations", "name": "bread",
                         "description": "Baking bread"})
    call(p, "import_conversation", {"conversation": "bread", "messages": [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i}",
         "timestamp": T0 + 60 * i} for i in range(12)]})
    return p


def drawer_of(palace, text):
    s = palace.drawers
    return next(s.ids[r] for r in s.live_rows() if s.content[r] == text)


def test_the_turns_around_a_drawer_in_order_with_its_own_marked(palace):
    out = call(palace, "conversation_around", {"drawer_id": drawer_of(palace,
                                                                      "message number 6"),
                                                "before": 2, "after": 3})
    assert (out["conversation"], out["title"], out["total"]) == ("bread", "Baking bread", 12)
    assert [t["text"] for t in out["turns"]] == [f"message number {i}" for i in range(4, 10)]
    assert [t["turn"] for t in out["turns"]] == list(range(5, 11))
    assert [t["here"] for t in out["turns"]] == [False, False, True, False, False, False]
    assert [t["role"] for t in out["turns"]][:3] == ["user", "assistant", "user"]
    assert [t["created_at"] for t in out["turns"]] == [T0 + 60 * i for i in range(4, 10)]
    assert all(t["drawer_id"] == drawer_of(palace, t["text"]) for t in out["turns"])
    assert (out["earlier"], out["later"]) == (True, True)
    here = next(t for t in out["turns"] if t["here"])
    assert out["turn_id"] == here["turn_id"]
    # the defaults (5 and 5), the ends, and the same turn asked by its id
    first = call(palace, "conversation_around", {"drawer_id": drawer_of(palace,
                                                                        "message number 0")})
    assert len(first["turns"]) == 6 and (first["earlier"], first["later"]) == (False, True)
    whole = call(palace, "conversation_around", {"turn_id": here["turn_id"], "before": 200,
                                                 "after": 200})
    assert len(whole["turns"]) == 12 and (whole["earlier"], whole["later"]) == (False, False)


def test_a_deleted_turn_text_shows_as_missing_and_an_edited_one_by_its_new_id(palace):
    gone = drawer_of(palace, "message number 5")
    call(palace, "delete_drawer", {"drawer_id": gone})
    edited = call(palace, "update_drawer", {"drawer_id": drawer_of(palace, "message number 7"),
                                            "content": "message seven, edited"})["drawer"]
    out = call(palace, "conversation_around", {"drawer_id": edited["id"], "before": 2,
                                               "after": 0})
    assert [t["text"] for t in out["turns"]] == [None, "message number 6",
                                                 "message seven, edited"]
    assert out["turns"][0]["drawer_id"] is None and out["turns"][-1]["here"]
    assert out["turns"][-1]["drawer_id"] == edited["id"]


def test_what_is_not_a_turn_is_refused_in_words(palace):
    note = call(palace, "add_drawer", {"wing": "notes", "room": "notes", "content": "a note",
                                       "source": "index", "source_file": "a.md"})
    with pytest.raises(NotFound, match="not a conversation turn: it came from the file a.md"):
        call(palace, "conversation_around", {"drawer_id": note["drawer_id"]})
    with pytest.raises(NotFound):
        call(palace, "conversation_around", {"drawer_id": "drawer_nope"})
    with pytest.raises(NotFound):
        call(palace, "conversation_around", {"turn_id": "turn_nope"})
    with pytest.raises(ValidationError, match="exactly one"):
        call(palace, "conversation_around", {})
    with pytest.raises(ValidationError):
        call(palace, "conversation_around", {"turn_id": "t", "before": 201})

"""add_drawer's created_at: a drawer put back (the interface's undo of a delete) keeps its time
and its id."""

import pytest

from palazzo import call
from palazzo.errors import ValidationError
from palazzo.palace import Palace


def test_a_deleted_drawer_added_back_with_its_fields_is_the_same_drawer():
    p = Palace(clock=lambda: 1000.0)
    did = call(p, "add_drawer", {"wing": "home", "room": "garden", "content": "Prune roses.",
                                 "importance": 0.8, "source": "notes.md", "closet": "spring",
                                 "key": "notes.md#3"})["drawer_id"]
    before = call(p, "get_drawer", {"drawer_id": did})["drawer"]
    call(p, "delete_drawer", {"drawer_id": did})
    p.clock = lambda: 5000.0
    fields = ("wing", "room", "content", "importance", "source", "source_file", "closet",
              "key", "created_at")
    out = call(p, "add_drawer", {k: before[k] for k in fields})
    assert out == {"drawer_id": did, "created": True}
    after = call(p, "get_drawer", {"drawer_id": did})["drawer"]
    assert {k: after[k] for k in fields} == {k: before[k] for k in fields}
    assert after["created_at"] == 1000.0 and after["accessed_at"] == 1000.0


def test_without_created_at_the_clock_gives_the_time_and_a_negative_time_is_refused():
    p = Palace(clock=lambda: 42.0)
    did = call(p, "add_drawer", {"wing": "w", "room": "r", "content": "x"})["drawer_id"]
    assert call(p, "get_drawer", {"drawer_id": did})["drawer"]["created_at"] == 42.0
    with pytest.raises(ValidationError):
        call(p, "add_drawer", {"wing": "w", "room": "r", "content": "y", "created_at": -1})

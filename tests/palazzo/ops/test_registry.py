import json

import pytest

from palazzo import (
    NotFound,
    Palace,
    PalazzoError,
    UnknownOperation,
    ValidationError,
    call,
    default_registry,
)
from palazzo.ops import Operation, Registry


def test_palace_status_reports_an_empty_palace():
    palace = Palace(name="atrium", clock=lambda: 1234.5)
    status = default_registry().call(palace, "palace_status")
    assert status["name"] == "atrium"
    assert status["created_at"] == 1234.5
    assert (status["wings"], status["rooms"], status["drawers"]) == (0, 0, 0)
    assert status["engine"]["version"]
    json.dumps(status)  # results cross process boundaries as JSON


def test_unknown_operation_lists_known_names():
    with pytest.raises(UnknownOperation) as info:
        default_registry().call(Palace(), "no_such_op")
    assert "palace_status" in str(info.value)


def test_arguments_are_validated_before_the_operation_runs():
    calls = []
    reg = Registry()
    reg.add(
        Operation(
            name="touch",
            summary="test op",
            schema={
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
                "additionalProperties": False,
            },
            run=lambda palace, args: calls.append(args) or {"ok": True},
            mutates=True,
        )
    )
    with pytest.raises(ValidationError):
        reg.call(Palace(), "touch", {"n": "one"})
    with pytest.raises(ValidationError):
        reg.call(Palace(), "touch", "not an object")  # type: ignore[arg-type]
    assert calls == []
    assert reg.call(Palace(), "touch", {"n": 1}) == {"ok": True}
    assert calls == [{"n": 1}]


def test_registering_a_name_twice_is_refused():
    reg = default_registry()
    with pytest.raises(ValueError):
        reg.add(reg.get("palace_status"))


def test_describe_publishes_schemas():
    (desc,) = [d for d in default_registry().describe() if d["name"] == "palace_status"]
    assert desc["input_schema"]["type"] == "object"
    assert desc["mutates"] is False


def test_errors_serialise_with_code_and_message():
    err = ValidationError("bad k")
    assert err.to_dict() == {
        "code": "invalid_arguments",
        "type": "ValidationError",
        "message": "bad k",
    }
    assert isinstance(err, PalazzoError)


def test_a_batch_runs_its_calls_in_order_and_returns_their_results():
    palace = Palace()
    out = call(palace, "batch", {"calls": [
        {"name": "add_wing", "args": {"name": "garden"}},
        {"name": "add_drawer", "args": {"wing": "garden", "room": "roses", "content": "Prune."}},
        {"name": "palace_status"}]})
    assert [sorted(r) for r in out["results"][:2]] == [["created", "wing"],
                                                       ["created", "drawer_id"]]
    assert out["results"][2]["drawers"] == 1


def test_a_batch_checks_every_call_before_running_any():
    palace = Palace()
    with pytest.raises(ValidationError, match=r"batch call 1 \(add_drawer\)"):
        call(palace, "batch", {"calls": [
            {"name": "add_wing", "args": {"name": "garden"}},
            {"name": "add_drawer", "args": {"wing": "garden", "room": "roses"}}]})
    with pytest.raises(ValidationError, match="cannot hold a batch"):
        call(palace, "batch", {"calls": [{"name": "batch", "args": {"calls": []}}]})
    with pytest.raises(UnknownOperation):
        call(palace, "batch", {"calls": [{"name": "no_such_op"}]})
    assert palace.counts()["wings"] == 0


def test_a_failing_call_of_a_batch_says_where_it_stands():
    palace = Palace()
    with pytest.raises(NotFound) as err:
        call(palace, "batch", {"calls": [
            {"name": "add_wing", "args": {"name": "garden"}},
            {"name": "get_drawer", "args": {"drawer_id": "drawer_nope"}}]})
    assert err.value.batch_index == 1

import pytest

from palazzo.core.schema import validate
from palazzo.errors import ValidationError

SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 5},
        "k": {"type": "integer", "minimum": 1, "maximum": 50},
        "mode": {"enum": ["vector", "bm25"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def test_valid_arguments_pass():
    validate({"query": "abc", "k": 3, "mode": "bm25", "tags": ["a"]}, SCHEMA)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required field 'query'"),
        ({"query": ""}, "at least 1 characters"),
        ({"query": "abcdef"}, "at most 5 characters"),
        ({"query": "a", "k": 0}, "at least 1"),
        ({"query": "a", "k": 51}, "at most 50"),
        ({"query": "a", "k": 2.5}, "must be integer"),
        ({"query": "a", "k": True}, "must be integer"),
        ({"query": "a", "mode": "x"}, "must be one of"),
        ({"query": "a", "tags": ["ok", 3]}, "tags[1] must be string"),
        ({"query": "a", "extra": 1}, "unknown field(s): extra"),
        ([], "must be object"),
    ],
)
def test_invalid_arguments_name_the_problem(args, message):
    with pytest.raises(ValidationError) as info:
        validate(args, SCHEMA)
    assert message in str(info.value)

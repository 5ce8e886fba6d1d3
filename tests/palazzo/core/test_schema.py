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
    ("args", "message", "field"),
    [
        ({}, "Query is missing: it is required.", "query"),
        ({"query": ""}, "Query is empty: it needs at least 1 character.", "query"),
        ({"query": "abcdef"}, "Query is too long: 6 characters, at most 5 are allowed.",
         "query"),
        ({"query": "a", "k": 0}, "K must be at least 1, not 0.", "k"),
        ({"query": "a", "k": 51}, "K must be at most 50, not 51.", "k"),
        ({"query": "a", "k": 2.5}, "K must be a whole number, not 2.5.", "k"),
        ({"query": "a", "k": True}, "K must be a whole number, not true.", "k"),
        ({"query": "a", "k": None}, "K is empty: it must be a whole number.", "k"),
        ({"query": "a", "mode": "x"}, "Mode must be one of 'vector', 'bm25', not 'x'.",
         "mode"),
        ({"query": "a", "tags": ["ok", 3]}, "Item 2 of tags must be text, not 3.", "tags[1]"),
        ({"query": "a", "extra": 1},
         "Unknown field(s) for arguments: extra (it takes: query, k, mode, tags).", None),
        ([], "arguments must be an object, not a list.", None),
    ],
)
def test_invalid_arguments_are_a_sentence_naming_the_field(args, message, field):
    with pytest.raises(ValidationError) as info:
        validate(args, SCHEMA)
    assert str(info.value) == message
    assert info.value.field == field
    assert info.value.code == "invalid_arguments"
    assert info.value.to_dict().get("field") == field


def test_nested_fields_and_titles_are_named_in_words():
    schema = {"type": "object", "properties": {
        "bundle": {"type": "object", "properties": {
            "token": {"type": "string", "minLength": 64},
            "valid_from": {"type": "string", "title": "start date", "minLength": 10}}}}}
    with pytest.raises(ValidationError) as info:
        validate({"bundle": {"token": "ab"}}, schema)
    assert str(info.value) == ("Token in bundle is too short: 2 characters, it needs at "
                               "least 64.")
    assert info.value.field == "bundle.token"
    with pytest.raises(ValidationError) as info:
        validate({"bundle": {"valid_from": "2020"}}, schema)
    assert str(info.value).startswith("Start date is too short")
    assert info.value.field == "bundle.valid_from"


def test_an_operation_names_its_field_in_a_sentence():
    from palazzo import Palace
    from palazzo.ops import default_registry

    with pytest.raises(ValidationError) as info:
        default_registry().call(Palace(), "add_drawer", {"wing": "", "room": "r",
                                                         "content": "x"})
    assert str(info.value) == "Wing is empty: it needs at least 1 character."
    assert info.value.field == "wing"


@pytest.mark.parametrize(("tags", "message"), [
    ([], "Tags is empty: it needs at least 1 item."),
    (["a"] * 4, "Tags has too many items: 4, at most 3 are allowed."),
])
def test_list_lengths_are_held_to_min_and_max_items(tags, message):
    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}}}
    with pytest.raises(ValidationError) as info:
        validate({"tags": tags}, schema)
    assert (str(info.value), info.value.field) == (message, "tags")


def test_quote_cuts_long_text_and_says_how_long_it_was():
    from palazzo.core.schema import quote

    assert quote("roses") == "'roses'"
    assert quote("x" * 1_000_000) == repr("x" * 80) + "… (1,000,000 characters)"
    assert quote("\ud800") == "'\\ud800'"  # printable: the surrogate is escaped
    assert quote(10 ** 400) == "an integer of 1329 bits"
    assert len(quote(list(range(100_000)))) < 100


@pytest.mark.parametrize(("value", "field", "said"), [
    ({"a": [1, {"b": float("nan")}]}, "a[1].b", "B in item 2 of a must be a finite number"),
    ({"a": {"x" * 200: "\udc80"}}, "a." + repr("x" * 80) + "… (200 characters)",
     "holds a lone surrogate"),
    ({"a": [[[[1]]]]}, None, None),
])
def test_plain_names_the_place_that_no_json_can_carry(value, field, said):
    from palazzo.core.schema import plain

    if said is None:
        plain(value)
        return
    with pytest.raises(ValidationError) as info:
        plain(value)
    assert info.value.field == field and said in str(info.value)

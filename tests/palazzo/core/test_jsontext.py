"""Nesting depth measured without a parser: strings and their escapes never count."""

import json

import pytest

from palazzo.core import jsontext
from palazzo.errors import ValidationError

CASES = ['[]', '[[1,{"a":[2]}]]', '"[[[["', '["a\\\\", [[]]]', '["\\"[[["]',
         '{"k": "\\\\\\"[["}', '{"a": "\\u005b[", "b": [{}]}', '[' * 50 + ']' * 50]


def parsed_depth(value):
    if isinstance(value, list):
        return 1 + max((parsed_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((parsed_depth(v) for v in value.values()), default=0)
    return 0


@pytest.mark.parametrize("text", CASES)
def test_depth_matches_the_parsed_document(text):
    assert jsontext.depth(text) == parsed_depth(json.loads(text))
    assert jsontext.depth(text.encode()) == parsed_depth(json.loads(text))


def test_a_limit_answers_whether_the_nesting_passes_it():
    deep = "[" * 101 + "]" * 101
    assert jsontext.depth(deep, 100) > 100
    assert jsontext.depth("[" * 100 + "]" * 100, 100) <= 100
    with pytest.raises(ValidationError, match="deeper than 100"):
        jsontext.loads(deep)


def test_long_runs_of_escapes_are_read_in_one_pass():
    text = '["' + "\\\\" * 2_000_000 + '", [[]]]'
    assert jsontext.depth(text) == 3
    assert jsontext.loads(text)[1] == [[]]


def test_chunks_join_to_exactly_what_json_dumps_gives():
    import json

    from palazzo.core.jsontext import chunks

    big = {"format": "palazzo", "palace": {
        "drawers": [{"id": f"d{i}", "content": "naïve 한국어 \"q\" \\ \n" * (i % 3),
                     "x": i / 7, "n": None, "ok": True} for i in range(700)],
        "empty": [], "nothing": {}, "nested": [[1, [2, {"a": []}]], {}],
        "keys": {str(i): i for i in range(300)}, "vectors": {"data": "QUJD" * 5000}},
        "exported_at": 1.5e9}
    for value in (big, [], {}, "text", 3.25, None, [1, 2], {"a": {"b": [1, {}]}}):
        want = json.dumps(value, ensure_ascii=False).encode()
        for size in (1, 64, 1 << 20):
            got = list(chunks(value, size))
            assert b"".join(got) == want
    pieces = list(chunks(big, 4096))
    assert len(pieces) > 10 and max(map(len, pieces)) < 4096 + 25_000  # the long string whole

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

"""What the registry's schema checker refuses for every operation: the documented list
lengths (minItems, maxItems), numbers no JSON holds (NaN, infinity, integers beyond a double),
nesting past the depth limit, lone surrogates; and how little of a huge input an error quotes.

Every host (CLI, MCP, browser) calls through the registry, so each refusal here is a
:class:`ValidationError` for all of them, with nothing changed."""

import math

import pytest

from palazzo import Palace, UnknownOperation, ValidationError, call
from palazzo.core.jsontext import MAX_DEPTH
from palazzo.errors import ImportRejected
from palazzo.ops import REGISTRY
from palazzo.ops.registry import MAX_BATCH

HUGE = "x" * 6_000_000  # a 6 MB argument
SHORT = 300  # characters an error about HUGE may have


def _schemas(schema, path=()):
    """Yield (path, schema) for ``schema`` and every schema inside it; a list item's path
    step is 0 (its first item)."""
    yield path, schema
    for key, sub in schema.get("properties", {}).items():
        yield from _schemas(sub, (*path, key))
    if "items" in schema:
        yield from _schemas(schema["items"], (*path, 0))


def _types(schema):
    kind = schema.get("type")
    return set(kind) if isinstance(kind, list) else {kind}


def _number_fields():
    """Return (operation, path) for every place an operation accepts a number."""
    return [(op.name, path) for op in map(REGISTRY.get, REGISTRY.names())
            for path, schema in _schemas(op.schema) if "number" in _types(schema)]


def _at(path, value):
    """Return the arguments holding ``value`` at ``path`` (keys and list positions)."""
    for step in reversed(path):
        value = [value] if isinstance(step, int) else {step: value}
    return value


def _field(path):
    """Return the ``field`` a ValidationError names for ``path`` ("messages[0].salience")."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def test_every_schema_keyword_is_one_the_checker_enforces():
    from palazzo.core.schema import KEYWORDS

    for name in REGISTRY.names():
        for path, schema in _schemas(REGISTRY.get(name).schema):
            assert set(schema) <= KEYWORDS, (name, path, set(schema) - KEYWORDS)
            assert schema.get("additionalProperties", False) is False, (name, path)


def test_the_number_fields_are_found():
    fields = _number_fields()
    assert ("search", ("enrich",)) in fields
    assert ("add_drawer", ("created_at",)) in fields
    assert ("import_conversation", ("messages", 0, "timestamp")) in fields
    assert len(fields) >= 30


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 10 ** 400, -(10 ** 400)],
                         ids=["nan", "inf", "-inf", "400 digits", "-400 digits"])
def test_every_number_argument_refuses_what_no_json_number_is(bad):
    for name, path in _number_fields():
        with pytest.raises(ValidationError) as info:
            REGISTRY.check(name, _at(path, bad))
        assert info.value.field == _field(path), (name, path)
        message = str(info.value)
        assert ("finite number" in message or "beyond the range" in message), message
        assert len(message) < SHORT, (name, path)


def test_a_nan_enrich_is_refused_before_the_search_runs():
    palace = Palace()
    palace.add_wing("garden")
    palace.add_drawer("garden", "roses", "Prune roses in March.")
    with pytest.raises(ValidationError, match="Enrich must be a finite number, not nan"):
        call(palace, "search", {"query": "roses", "enrich": math.nan})


@pytest.mark.parametrize(("name", "args"), [
    ("add_drawer", {"wing": "w", "room": "r", "content": "c", "created_at": 10 ** 400}),
    ("add_turn", {"conversation": "c", "role": "user", "content": "hi",
                  "timestamp": 10 ** 400}),
    ("import_conversation", {"conversation": "c", "messages": [
        {"role": "user", "content": "hi", "timestamp": -(10 ** 400)}]}),
])
def test_an_integer_beyond_a_double_changes_nothing(name, args):
    palace = Palace()
    before = palace.counts()
    with pytest.raises(ValidationError, match="beyond the range of a number"):
        call(palace, name, args)
    assert palace.counts() == before


def test_a_batch_holds_at_least_one_and_at_most_max_batch_calls():
    palace = Palace()
    with pytest.raises(ValidationError, match="Calls is empty: it needs at least 1 item") \
            as info:
        call(palace, "batch", {"calls": []})
    assert info.value.field == "calls"
    too_many = [{"name": "add_wing", "args": {"name": f"w{i}"}} for i in range(12_000)]
    with pytest.raises(ValidationError, match=f"12,000, at most {MAX_BATCH:,}") as info:
        call(palace, "batch", {"calls": too_many})
    assert info.value.field == "calls"
    assert palace.counts()["wings"] == 0
    assert len(call(palace, "batch", {"calls": too_many[:MAX_BATCH]})["results"]) == MAX_BATCH


def test_min_and_max_items_hold_inside_other_lists():
    with pytest.raises(ValidationError, match="has too many items: 4, at most 3") as info:
        REGISTRY.check("pheromone_deposit", {"path": [["a", "b", "HALL", "x"]]})
    assert info.value.field == "path[0]"
    with pytest.raises(ValidationError, match="Archetypes is empty"):
        REGISTRY.check("run_swarm", {"archetypes": []})


def _nested(levels):
    value = {"leaf": 1}
    for _ in range(levels):
        value = {"deeper": value}
    return value


@pytest.mark.parametrize(("name", "args", "field"), [
    ("kg_entity", {"name": "Ada", "properties": _nested(5_000)},
     "properties" + ".deeper" * (MAX_DEPTH - 1)),
    ("batch", {"calls": [{"name": "add_wing", "args": {"name": "w"}},
                         {"name": "kg_entity", "args": {"name": "Ada",
                                                        "properties": _nested(5_000)}}]},
     "calls[1].args.properties" + ".deeper" * (MAX_DEPTH - 1)),
])
def test_nesting_past_the_limit_is_refused_without_recursion(name, args, field):
    palace = Palace()
    with pytest.raises(ValidationError, match=f"deeper than {MAX_DEPTH} levels") as info:
        call(palace, name, args)
    assert len(str(info.value)) < SHORT
    assert info.value.field == field
    assert palace.counts()["entities"] == palace.counts()["wings"] == 0


@pytest.mark.parametrize("document", [_nested(5_000), {"palace": {"created_at": math.nan}}])
def test_an_imported_document_is_left_to_the_palace_file_reader(document):
    """The document's inside is checked as a palace file is (ImportRejected, naming the
    place in the file), not twice."""
    palace = Palace()
    with pytest.raises(ImportRejected):
        call(palace, "import", {"document": document})
    with pytest.raises(ValidationError, match="Reindex must be a finite number, not nan"):
        call(palace, "import", {"document": document, "reindex": math.nan})


def test_nesting_up_to_the_limit_passes_the_check():
    REGISTRY.check("kg_entity", {"name": "Ada", "properties": _nested(MAX_DEPTH - 2)})
    with pytest.raises(ValidationError, match="deeper"):  # the arguments' own level counts
        REGISTRY.check("kg_entity", {"name": "Ada", "properties": _nested(MAX_DEPTH - 1)})


@pytest.mark.parametrize(("name", "args", "field"), [
    ("search", {"query": "ro\ud800ses"}, "query"),
    ("add_drawer", {"wing": "w", "room": "r", "content": "a \udfff b"}, "content"),
    ("kg_entity", {"name": "Ada", "properties": {"born": ["1815", "\ud83d"]}},
     "properties.born[1]"),
    ("kg_entity", {"name": "Ada", "properties": {"b\ud800rn": "1815"}}, "properties"),
])
def test_a_lone_surrogate_is_refused_naming_its_field(name, args, field):
    palace = Palace()
    with pytest.raises(ValidationError, match="lone surrogate") as info:
        call(palace, name, args)
    assert info.value.field == field
    str(info.value).encode("utf-8")  # the message itself can be printed
    assert palace.counts()["drawers"] == 0


def test_a_paired_surrogate_is_text():
    REGISTRY.check("search", {"query": "roses \U0001f339"})


@pytest.mark.parametrize(("name", "args"), [
    ("list_tunnel_proposals", {"status": HUGE}),  # an enum
    ("navigate", {"goal": "palace", "context": HUGE}),  # an enum
    ("palace_status", {HUGE: 1}),  # an unknown field
    ("kg_entity", {"name": "Ada", "properties": {HUGE: math.nan}}),  # a key in a message
])
def test_an_error_quotes_a_few_characters_of_a_huge_input(name, args):
    with pytest.raises(ValidationError) as info:
        REGISTRY.check(name, args)
    message = str(info.value)
    assert len(message) < SHORT and len(info.value.field or "") < SHORT, message[:SHORT]
    assert "xxxxxxxxxx" in message or "xxxxxxxxxx" in info.value.field


def test_an_error_says_how_long_the_text_it_cut_was():
    with pytest.raises(ValidationError) as info:
        REGISTRY.check("list_tunnel_proposals", {"status": HUGE})
    assert "6,000,000 characters" in str(info.value)
    with pytest.raises(ValidationError, match=r"\(it takes: none\)") as info:
        REGISTRY.check("palace_status", {HUGE: 1, **{f"extra{i}": 1 for i in range(50)}})
    assert "and 41 more" in str(info.value) and len(str(info.value)) < 2 * SHORT


def test_an_unknown_operation_of_a_huge_name_is_quoted_short():
    with pytest.raises(UnknownOperation) as info:
        REGISTRY.get(HUGE)
    assert "6,000,000 characters" in str(info.value)
    assert len(str(info.value)) < SHORT + len(", ".join(REGISTRY.names()))


def _exported():
    palace = Palace()
    palace.add_wing("garden")
    palace.add_drawer("garden", "roses", "Prune roses in March.")
    call(palace, "kg_add", {"subject": "Ada", "predicate": "works at", "object": "Acme"})
    return call(palace, "export", {})["document"]


LONG = "q" * 70_000  # a 70 KB value: under a palace file's length caps, so it is quoted


@pytest.mark.parametrize("spoil", [
    lambda d: d.update(version=LONG),
    lambda d: d["palace"]["edges"][0].update(kind=LONG),
    lambda d: d["palace"]["edges"][0].update(src=LONG),
    lambda d: d["palace"]["kg"]["triples"][0].update(subject=LONG),
    lambda d: d["palace"]["kg"]["triples"][0].update(valid_from=LONG),
], ids=["version", "edge kind", "edge src", "subject", "valid_from"])
def test_a_palace_file_error_quotes_a_few_characters_of_a_long_value(spoil):
    document = _exported()
    spoil(document)
    palace = Palace()
    with pytest.raises(ImportRejected) as info:
        call(palace, "import", {"document": document})
    assert len(str(info.value)) < SHORT and "70,000 characters" in str(info.value)
    assert palace.counts()["drawers"] == 0

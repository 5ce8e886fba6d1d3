"""``palazzo call NAME --args JSON`` on input no palace can hold: a one-line error, a
non-zero exit, and the palace directory as it was (no traceback, nothing journaled)."""

import json

import pytest

from palazzo.hosts.cli import main

pytestmark = pytest.mark.cpython_only

HUGE = "x" * 6_000_000  # a 6 MB argument


@pytest.fixture
def palace(tmp_path, monkeypatch):
    path = tmp_path / "palace"
    monkeypatch.setenv("PALAZZO_PALACE", str(path))
    assert main(["init", "--embedder", "hash"]) == 0
    assert main(["add", "--wing", "garden", "--room", "roses", "--embedder", "hash",
                 "Prune the roses in March."]) == 0
    return path


def _files(path):
    """Return every file of the palace directory with its size and contents' hash."""
    return {p.name: (p.stat().st_size, hash(p.read_bytes())) for p in sorted(path.iterdir())
            if p.is_file()}


def refused(capsys, palace, tmp_path, name, args):
    """Run ``palazzo call name --args @file`` (``args`` written as given); assert a one-line
    error, exit 1 and the palace unchanged; return the error line."""
    capsys.readouterr()
    before = _files(palace)
    file = tmp_path / "args.json"
    file.write_text(args, encoding="utf-8")
    code = main(["call", name, "--args", f"@{file}", "--embedder", "hash"])
    out = capsys.readouterr()
    assert code == 1, out.out[:200]
    assert out.err.startswith("palazzo: ") and out.err.count("\n") == 1, out.err[:300]
    assert "Traceback" not in out.err and out.out == ""
    assert _files(palace) == before
    return out.err


def test_arguments_nested_5000_deep_are_one_line(palace, capsys, tmp_path):
    deep = '{"name": "Ada", "properties": ' + '{"a": ' * 5_000 + "1" + "}" * 5_001
    err = refused(capsys, palace, tmp_path, "kg_entity", deep)
    assert "deeper than 100 levels" in err


@pytest.mark.parametrize(("name", "args"), [
    ("search", '{"query": "ro\\ud800ses"}'),
    ("get_drawer", '{"drawer_id": "\\udfff"}'),
    ("list_drawers", '{"wing": "\\ud83d"}'),
    ("add_drawer", '{"wing": "garden", "room": "roses", "content": "a \\ud800 b"}'),
])
def test_a_lone_surrogate_is_one_line(palace, capsys, tmp_path, name, args):
    err = refused(capsys, palace, tmp_path, name, args)
    assert "lone surrogate" in err
    err.encode("utf-8")


@pytest.mark.parametrize(("name", "args"), [
    ("add_drawer", {"wing": "garden", "room": "roses", "content": "Water them.",
                    "created_at": "BIG"}),
    ("add_turn", {"conversation": "c1", "role": "user", "content": "hi",
                  "timestamp": "BIG"}),
    ("import_conversation", {"conversation": "c1", "messages": [
        {"role": "user", "content": "hi", "timestamp": "BIG"}]}),
])
def test_a_400_digit_integer_is_one_line(palace, capsys, tmp_path, name, args):
    text = json.dumps(args).replace('"BIG"', "1" + "0" * 400)
    err = refused(capsys, palace, tmp_path, name, text)
    assert "beyond the range of a number" in err and len(err) < 300


def test_a_400_digit_timestamp_inside_conversation_text_is_one_line(palace, capsys,
                                                                      tmp_path):
    messages = '[{"role": "user", "content": "hi", "timestamp": 1' + "0" * 400 + "}]"
    err = refused(capsys, palace, tmp_path, "import_conversation",
                  json.dumps({"conversation": "c1", "text": messages}))
    assert "beyond the range of a number" in err


def test_an_integer_of_5000_digits_is_one_line(palace, capsys, tmp_path):
    err = refused(capsys, palace, tmp_path, "add_drawer",
                  '{"wing": "w", "room": "r", "content": "c", "created_at": 1'
                  + "0" * 5_000 + "}")
    assert "--args" in err


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_not_printed(palace, capsys, tmp_path, number):
    err = refused(capsys, palace, tmp_path, "search",
                  '{"query": "roses", "enrich": ' + number + "}")
    assert "Enrich must be a finite number" in err


def test_a_batch_outside_its_documented_length_is_one_line(palace, capsys, tmp_path):
    err = refused(capsys, palace, tmp_path, "batch", '{"calls": []}')
    assert "Calls is empty" in err
    calls = [{"name": "add_wing", "args": {"name": f"w{i}"}} for i in range(12_000)]
    err = refused(capsys, palace, tmp_path, "batch", json.dumps({"calls": calls}))
    assert "12,000, at most 10,000" in err


@pytest.mark.parametrize(("name", "args"), [
    ("list_tunnel_proposals", {"status": HUGE}),
    ("palace_status", {HUGE: 1}),
    ("add_turn", {"conversation": "c1", "role": "user", "content": "hi", "timestamp": HUGE}),
    ("pheromone_deposit", {"path": [["room:garden/roses", "palace", HUGE]]}),
])
def test_an_error_about_a_6_mb_argument_is_short(palace, capsys, tmp_path, name, args):
    err = refused(capsys, palace, tmp_path, name, json.dumps(args))
    assert len(err) < 400 and "6,000,000 characters" in err


def test_an_unknown_operation_of_6_mb_is_quoted_short(palace, capsys):
    assert main(["call", HUGE, "--embedder", "hash"]) == 1
    err = capsys.readouterr().err
    assert len(err) < 300 and "6,000,000 characters" in err

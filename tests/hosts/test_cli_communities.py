"""``palazzo communities`` on a palace directory: one line a community, JSON on request,
one-line errors."""

import json

import pytest

from palazzo.hosts.cli import main

pytestmark = pytest.mark.cpython_only

TEXTS = ["roses tulips compost soil", "roses pruning compost mulch", "tulips soil mulch bloom",
         "postgres replication lag vacuum", "postgres schema migration replica",
         "vacuum replica lag schema"]


def run(capsys, *argv):
    code = main([*argv, "--embedder", "hash"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def palace(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PALAZZO_PALACE", str(tmp_path / "palace"))
    assert run(capsys, "init")[0] == 0
    for text in TEXTS:
        assert run(capsys, "add", "--wing", "notes", "--room", "mixed", text)[0] == 0


def test_communities_are_listed_named_and_as_json(palace, capsys):
    code, out, err = run(capsys, "communities")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and "2 of 2 communities over 6 drawers" in err
    assert "compost" in lines[0] + lines[1] and "postgres" in lines[0] + lines[1]
    code, out, _ = run(capsys, "communities", "--json", "--drawers", "--community", "1")
    [one] = json.loads(out)["communities"]
    assert code == 0 and one["id"] == 1 and len(one["drawer_ids"]) == 3


def test_bad_input_is_one_line_and_exit_1(palace, capsys):
    for argv in (["--community", "9"], ["--k", "0"], ["--resolution", "-1"]):
        code, out, err = run(capsys, "communities", *argv)
        assert code == 1 and out == "" and err.startswith("palazzo: ")
        assert len(err.strip().splitlines()) == 1

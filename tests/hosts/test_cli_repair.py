"""`palazzo repair`: a journal record that fails on replay keeps the palace read-only until
the user sets it aside; nothing is deleted. And the issue's case end to end: reopening a
palace with another embedder replays without a problem."""

import json

import pytest

from palazzo.hosts.cli import main
from palazzo.persist import journal
from palazzo.persist.journal import Record
from palazzo.persist.palacestore import journal_name

pytestmark = pytest.mark.cpython_only


def run(capsys, *argv, embedder="hash"):
    code = main([*argv, "--embedder", embedder])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def palace(tmp_path, monkeypatch):
    path = tmp_path / "palace"
    monkeypatch.setenv("PALAZZO_PALACE", str(path))
    assert main(["init", "--embedder", "hash"]) == 0
    return path


def test_repair_sets_a_failing_record_aside_after_asking(palace, capsys):
    assert run(capsys, "add", "--wing", "w", "--room", "r", "kept text")[0] == 0
    log = palace / journal_name(1)
    seq = journal.scan(log.read_bytes()).records[-1].seq
    with open(log, "ab") as f:
        f.write(journal.encode(Record(seq + 1, "delete_drawer", {"drawer_id": "drawer_x"}, 1.0)))
    data = log.read_bytes()
    code, out, _ = run(capsys, "status")
    status = json.loads(out)["storage"]
    assert code == 0 and status["read_only"] and status["stopped_at"] == seq + 1
    code, _, err = run(capsys, "add", "--wing", "w", "--room", "r", "refused")
    assert code != 0 and "palazzo repair" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "repair")
    assert code != 0 and "--yes" in err and log.read_bytes() == data
    code, out, _ = run(capsys, "repair", "--yes")
    result = json.loads(out)
    assert code == 0 and result["records"] == 1
    assert (palace / result["rejected"]).read_bytes() == data[-len(
        (palace / result["rejected"]).read_bytes()):]
    assert run(capsys, "add", "--wing", "w", "--room", "r", "accepted")[0] == 0
    status = json.loads(run(capsys, "status")[1])
    assert status["palace"]["drawers"] == 2 and status["storage"]["problem"] is None


def test_reopening_with_the_tfidf_embedder_keeps_its_fit_and_replays(palace, capsys):
    for i, text in enumerate(["garden water morning", "river walk evening", "garden river"]):
        assert run(capsys, "add", "--wing", "w", "--room", f"r{i}", text,
                   embedder="tfidf")[0] == 0
    assert run(capsys, "reindex", embedder="tfidf")[0] == 0
    assert run(capsys, "add", "--wing", "w", "--room", "r", "after the fit",
               embedder="tfidf")[0] == 0
    status = json.loads(run(capsys, "status", embedder="tfidf")[1])
    assert status["storage"]["problem"] is None
    assert status["palace"]["embedded"] == status["palace"]["drawers"] == 4

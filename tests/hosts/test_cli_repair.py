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


def _palace_file(tmp_path, n=8):
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.formats.palacefile import export_palace
    from palazzo.palace import Palace

    source = Palace(embedder=HashEmbedder(), clock=lambda: 1_700_000_000.0)
    for i in range(n):
        source.add_drawer("notes", f"room {i % 3}", f"Note {i}: the ferry leaves at {i} "
                          "o'clock from the harbour, the lighthouse keeps watch.")
    path = tmp_path / "palace.json"
    path.write_text(json.dumps(export_palace(source, exported_at=0.0)))
    return path


def _flip(path, at):
    data = bytearray(path.read_bytes())
    data[at] ^= 0x5A
    path.write_bytes(bytes(data))


def test_a_damaged_import_snapshot_is_told_kept_and_rebuilt_around_the_damage(palace, capsys,
                                                                             tmp_path):
    assert run(capsys, "import", str(_palace_file(tmp_path)))[0] == 0
    snaps = sorted(palace.glob("snapshot-*.pz"))
    newest = snaps[-1]
    _flip(newest, newest.stat().st_size // 2)  # the case: a byte in the middle
    before = {p.name: p.read_bytes() for p in palace.iterdir() if p.is_file()}
    code, out, _ = run(capsys, "status")
    status = json.loads(out)
    storage = status["storage"]
    assert code == 0 and storage["read_only"] and storage["damaged"]
    lost = storage["salvaged"]["drawers_lost_count"]
    assert status["palace"]["drawers"] == 8 - lost  # only what the damaged page held
    code, _, err = run(capsys, "add", "--wing", "w", "--room", "r", "refused")
    assert code == 1 and "damaged" in err and "repair" in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, "search", "ferry harbour")
    assert code == 0 and "warning: this palace is damaged" in err
    code, _, err = run(capsys, "check")
    assert code == 1 and "damaged" in err
    assert {p.name: p.read_bytes() for p in palace.iterdir() if p.is_file()} == before
    code, _, err = run(capsys, "repair")
    assert code == 1 and "--yes" in err
    code, out, _ = run(capsys, "repair", "--yes")
    result = json.loads(out)
    assert code == 0 and result["repaired"]
    assert (palace / f"damaged-{newest.name}").read_bytes() == before[newest.name]
    assert run(capsys, "check")[0] == 0
    status = json.loads(run(capsys, "status")[1])
    assert status["palace"]["drawers"] == 8 - lost and not status["storage"]["damaged"]
    assert run(capsys, "add", "--wing", "w", "--room", "r", "after the repair")[0] == 0


def test_a_reader_never_cuts_a_damaged_journal(palace, capsys):
    for i in range(5):
        assert run(capsys, "add", "--wing", "w", "--room", "r", f"note number {i}")[0] == 0
    log = sorted(palace.glob("journal-*.log"))[-1]
    _flip(log, 40)  # the case: byte 40 of the journal, then one search
    data = log.read_bytes()
    code, _, err = run(capsys, "search", "note")
    assert code == 0 and "damaged" in err
    assert log.read_bytes() == data  # the writer that opened it cut nothing
    status = json.loads(run(capsys, "status")[1])["storage"]
    assert status["problem"] and status["read_only"]
    assert json.loads(run(capsys, "status")[1])["palace"]["drawers"] == 4  # the rest is read

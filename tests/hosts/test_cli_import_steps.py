"""``palazzo import-chats`` is words first and durable: the drawers land in batches without
vectors (searchable by their words at once), then the vectors come in journaled steps, so a
kill while embedding loses at most the step that was running."""

import json

import pytest

from palazzo.bench.exportgen import write_export
from palazzo.hosts import embedding
from palazzo.hosts.cli import main
from palazzo.persist import journal

pytestmark = pytest.mark.cpython_only


def run(capsys, *argv):
    code = main([*argv, "--embedder", "hash"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _records(palace):
    out = []
    for log in sorted(palace.glob("journal-*.log")):
        out += journal.scan(log.read_bytes()).records
    return out


def test_an_import_lands_words_first_then_embeds_in_journaled_steps(palace, capsys, tmp_path):
    export = tmp_path / "conversations.json"
    write_export(export, 300, seed=3)
    code, _, err = run(capsys, "import-chats", str(export))
    assert code == 0, err
    records = _records(palace)
    batches = [r for r in records if r.op == "batch"]
    steps = [r for r in records if r.op == "reindex"]
    assert batches and all(r.effects["embedder"] is None for r in batches)  # no vector yet
    assert len(steps) > 1 and all(r.effects["embedder"]["vectors"] for r in steps[:-1])
    status = json.loads(run(capsys, "status")[1])["palace"]
    assert status["embedded"] == status["drawers"] > 0


def test_a_kill_while_embedding_keeps_the_drawers_and_every_finished_step(palace, capsys,
                                                                         tmp_path, monkeypatch):
    export = tmp_path / "conversations.json"
    write_export(export, 300, seed=3)
    real = embedding.embedding_steps

    def killed_after_two(call, limit):
        steps = iter(real(call, limit))

        def run_two():
            yield next(steps)
            yield next(steps)
            raise KeyboardInterrupt  # the user's ^C, or the machine going down

        return run_two()

    monkeypatch.setattr(embedding, "embedding_steps", killed_after_two)
    with pytest.raises(KeyboardInterrupt):
        main(["import-chats", str(export), "--embedder", "hash"])
    monkeypatch.setattr(embedding, "embedding_steps", real)
    capsys.readouterr()
    status = json.loads(run(capsys, "status")[1])["palace"]
    assert status["drawers"] > 128 and status["embedded"] == 128  # two steps of 64 kept
    code, out, _ = run(capsys, "search", "the")  # searchable by words meanwhile
    assert code == 0
    assert run(capsys, "reindex")[0] == 0  # and the rest goes on from there
    status = json.loads(run(capsys, "status")[1])["palace"]
    assert status["embedded"] == status["drawers"]

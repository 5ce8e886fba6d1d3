"""An import in steps, as the browser worker runs it: found, applied, stopped, summarised."""

import json
from pathlib import Path

import pytest

from palazzo import Palace
from palazzo.bench.exportgen import write_export
from palazzo.embed import registry
from palazzo.errors import ImportRejected
from palazzo.formats.palacefile import export_palace
from palazzo.hosts.bridge import Bridge
from palazzo.hosts.importing import ImportJob, describe, palace_name_for


def drop(tmp_path, name="drop"):
    root = tmp_path / name
    root.mkdir()
    return root


def run_all(job):
    steps = []
    while True:
        step = job.step()
        steps.append(step)
        if step["finished"]:
            return steps


def test_palace_names_are_valid_and_never_taken():
    assert palace_name_for("my notes", []) == "my notes"
    assert palace_name_for("my notes", ["my notes", "my notes 2"]) == "my notes 3"
    assert palace_name_for("../wé!rd:name.", []) == "w rd name"
    assert palace_name_for("", []) == "Imported"


def test_a_chatgpt_export_goes_in_batch_by_batch_with_its_summary(tmp_path):
    root = drop(tmp_path)
    write_export(root / "conversations.json", 400, seed=3)
    bridge = Bridge(Palace(embedder=registry.make("hash")))
    job = ImportJob(bridge, root, batch=20)
    found = job.prepare()
    assert (found["kind"], found["format"]) == ("chats", "chatgpt")
    assert found["counts"]["messages"] > 0 and found["calls"] > 20
    assert sum(found["by_kind"].values()) == found["counts"]["messages"]
    assert len(bridge.palace.drawers) == 0  # nothing written while preparing
    job.begin(into_open=True)
    steps = run_all(job)
    assert len(steps) > 1 and steps[-1]["done"] == steps[-1]["total"] == found["calls"]
    assert [s["done"] for s in steps] == sorted(s["done"] for s in steps)
    summary = job.summary()
    assert summary["created"]["import_conversation"] == len(bridge.palace.drawers)
    assert summary["text"].startswith(f"Imported {found['counts']['conversations']} "
                                      "conversations")
    # Text first: the batches left the vectors for later, the embedder is back.
    status = bridge.call("palace_status")
    assert status["embedded"] == 0 and bridge.palace.embedder is not None
    if found["skipped"]:
        assert "Skipped" in summary["text"]


def test_stopping_keeps_what_landed_and_importing_again_adds_the_rest(tmp_path):
    root = drop(tmp_path)
    write_export(root / "conversations.json", 300, seed=5)
    bridge = Bridge(Palace())
    job = ImportJob(bridge, root, batch=10)
    job.prepare()
    job.begin(into_open=True)
    job.step()
    job.stop()
    summary = job.summary()
    assert summary["stopped"] and 0 < summary["done"] < summary["total"]
    assert "Stopped after" in summary["text"]
    partial = len(bridge.palace.drawers)
    again = ImportJob(bridge, root, batch=10)
    again.prepare()
    again.begin(into_open=True)
    run_all(again)
    full = Bridge(Palace())
    whole = ImportJob(full, root)
    whole.prepare()
    whole.begin(into_open=True)
    run_all(whole)
    assert partial < len(bridge.palace.drawers) == len(full.palace.drawers)


def test_a_folder_again_into_the_same_palace_skips_unchanged_files(tmp_path):
    root = drop(tmp_path)
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("Alpha is the first letter.\n")
    (root / "notes" / "b.md").write_text("Beta comes second.\n")
    bridge = Bridge(Palace())
    for _ in range(2):
        job = ImportJob(bridge, root)
        assert job.prepare()["name"] == "notes"
        job.begin(into_open=True)
        run_all(job)
    assert len(bridge.palace.drawers) == 2
    assert "2 files had not changed" in job.summary()["text"]


def test_a_palace_file_loads_whole_and_keeps_the_open_palaces_name(tmp_path):
    source = Palace(name="from-file")
    Bridge(source).call("add_drawer", {"wing": "w", "room": "r", "content": "kept text"})
    root = drop(tmp_path)
    (root / "p.json").write_text(json.dumps(export_palace(source)))
    bridge = Bridge(Palace(name="mine"))
    job = ImportJob(bridge, root)
    found = job.prepare(taken=["from-file"])
    assert found["kind"] == "palace" and found["name"] == "from-file 2"
    assert found["counts"]["drawers"] == 1
    job.begin(into_open=True)
    assert job.step() == {"done": 1, "total": 1, "finished": True}
    assert bridge.palace.name == "mine" and len(bridge.palace.drawers) == 1
    assert job.summary()["text"] == "Loaded the palace file: 1 drawer in 1 wing."


def test_bad_sources_are_refused_before_anything_is_written(tmp_path):
    bridge = Bridge(Palace())
    root = drop(tmp_path)
    (root / "p.json").write_text('{"format": "palazzo", "version": 1, "palace": {"drawers": 7}}')
    with pytest.raises(ImportRejected, match="p.json"):
        ImportJob(bridge, root).prepare()
    bad = drop(tmp_path, "bad")
    (bad / "conversations.json").write_text('[{"mapping": 5}]')
    with pytest.raises(ImportRejected):
        ImportJob(bridge, bad).prepare()
    assert len(bridge.palace.drawers) == 0


def test_describe_names_reasons_and_counts():
    text = describe("folder", {"skipped_by_reason": {"binary": 2, "too large": 1}},
                    {"total": 3, "calls": {"add_drawer": 3}, "created": {"add_drawer": 2}},
                    3, False)
    assert text == ("Imported 2 new drawers (1 was there already). Skipped 3 items: 2 binary; "
                    "1 too large.")


def test_what_a_plan_found_is_a_few_lines_with_examples_and_kinds():
    from palazzo.hosts.importing import found_text

    skipped = [{"item": f"c{i}", "reason": f"reason {i % 10}"} for i in range(40)]
    text = found_text({"source": "x.json", "format": "chatgpt", "conversations": 3,
                       "messages": 12, "messages_by_kind": {"text": 10, "voice": 2},
                       "skipped": skipped}, examples=2, reasons=3)
    assert text.splitlines() == [
        "Found x.json (chatgpt): 12 messages in 3 conversations (10 text, 2 voice).",
        "Left out: 40 items, by reason:",
        "  4 reason 0 (e.g. c0; c10; …)",
        "  4 reason 1 (e.g. c1; c11; …)",
        "  4 reason 2 (e.g. c2; c12; …)",
        "  28 more for 7 other reasons"]
    drawers = found_text({"source": "notes", "format": "folder",
                          "calls": {"add_drawer": 5, "add_room": 2}, "skipped": []})
    assert drawers == "Found notes (folder): 5 add_drawer, 2 add_room.\nNothing is left out."
    folder = found_text({"source": "notes", "format": "folder", "calls": {"add_drawer": 3},
                         "files": 4, "indexed": 1, "unchanged": ["a", "b", "c"],
                         "skipped": []})
    assert folder.splitlines()[0] == ("Found notes (folder): 4 files, 1 to index, 3 unchanged: "
                                      "3 add_drawer.")


def png_bytes() -> bytes:
    """A minimal valid PNG (one pixel, written by zlib and struct: tests/palazzo/data)."""
    return (Path(__file__).resolve().parents[1] / "data" / "pixel.png").read_bytes()


@pytest.mark.parametrize("name", ["conversations.json", "photo.png", "chat.jsonl"])
def test_a_png_dropped_alone_is_refused_in_one_line_and_nothing_changes(tmp_path, name):
    from palazzo.hosts import worker

    bridge = worker.start_engine("memory")
    before = (bridge.library.root.palaces(), bridge.library.name,
              bridge.call("palace_status")["drawers"])
    root = drop(tmp_path)
    (root / name).write_bytes(png_bytes())
    out = json.loads(worker.import_prepare(bridge, str(root)))  # what the browser's drop runs
    assert not out["ok"] and out["error"]["code"] == "import_rejected"
    said = out["error"]["message"]
    assert said.startswith(f"{name}: a PNG image, not ") and "\n" not in said
    assert (bridge.library.root.palaces(), bridge.library.name,
            bridge.call("palace_status")["drawers"]) == before


def test_a_chat_export_name_on_text_that_is_not_json_is_refused(tmp_path):
    root = drop(tmp_path)
    (root / "conversations.json").write_text("these are my notes, not an export")
    with pytest.raises(ImportRejected, match="not JSON, so not a chat export"):
        ImportJob(Bridge(Palace()), root).prepare()

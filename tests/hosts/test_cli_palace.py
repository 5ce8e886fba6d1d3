"""The ``palazzo`` command line on a palace directory: every command, real files, one-line
errors with a non-zero exit."""

import json

import pytest

from palazzo.hosts.cli import main

pytestmark = pytest.mark.cpython_only


def run(capsys, *argv):
    code = main([*argv, "--embedder", "hash"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_search_status_export_and_import(palace, capsys, tmp_path):
    assert run(capsys, "add", "--wing", "notes", "--room", "cli",
               "The journal is synced before the command returns.")[0] == 0
    code, out, _ = run(capsys, "search", "journal synced")
    assert code == 0 and "[notes / cli]" in out
    code, out, _ = run(capsys, "status")
    status = json.loads(out)
    assert status["palace"]["drawers"] == 1 and status["storage"]["read_only"] is False
    export = tmp_path / "p.json"
    assert run(capsys, "export", "--out", str(export))[0] == 0
    other = tmp_path / "other"
    assert main(["init", "--palace", str(other), "--embedder", "hash"]) == 0
    capsys.readouterr()
    assert main(["import", str(export), "--palace", str(other), "--embedder", "hash"]) == 0
    assert "imported 1 drawers" in capsys.readouterr().out
    doc = json.loads(export.read_text())
    assert main(["export", "--palace", str(other), "--embedder", "hash"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["palace"]["drawers"] == doc["palace"]["drawers"]


def test_index_a_folder_twice_adds_nothing_the_second_time(palace, capsys, tmp_path):
    src = tmp_path / "docs"
    (src / "guide").mkdir(parents=True)
    (src / "guide" / "start.md").write_text("Open the page and wait for the demo palace.")
    (src / "notes.txt").write_text("The worker writes to OPFS.")
    (src / ".gitignore").write_text("secret.txt\n")
    (src / "secret.txt").write_text("do not index me")
    assert run(capsys, "index", str(src))[0] == 0
    first = json.loads(run(capsys, "status")[1])["palace"]["drawers"]
    assert first == 2
    assert run(capsys, "index", str(src))[0] == 0
    assert json.loads(run(capsys, "status")[1])["palace"]["drawers"] == 2
    assert "do not index" not in run(capsys, "export", "--format", "jsonl")[1]


def test_import_chats_bulk_replace_and_reindex(palace, capsys, tmp_path):
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "Where is the blue box?"},
                                {"role": "assistant", "content": "On the top shelf."}]))
    assert run(capsys, "import-chats", str(chat), "--name", "boxes")[0] == 0
    code, out, _ = run(capsys, "search", "blue box", "--json")
    assert code == 0 and json.loads(out)[0]["content"] == "Where is the blue box?"
    code, out, _ = run(capsys, "bulk-replace", "top shelf", "bottom shelf", "--dry-run")
    assert code == 0 and json.loads(out)
    assert run(capsys, "reindex", "--force")[0] == 0


def test_an_import_says_what_it_found_in_words_and_in_json_only_when_asked(
        palace, capsys, tmp_path):
    messages = [{"role": "system", "content": "Be brief."}]
    messages += [{"role": "tool", "content": f"result {i}"} for i in range(5)]
    messages += [{"role": "user", "content": "Where are the keys?"},
                 {"role": "assistant", "content": "In the drawer."}]
    chat = tmp_path / "keys.json"
    chat.write_text(json.dumps(messages))
    code, _, err = run(capsys, "import-chats", str(chat))
    assert code == 0
    assert f"Found {chat} (json): 2 messages in 1 conversation." in err
    assert "Left out: 6 items, by reason:" in err
    # Examples name the place within the file the summary's first line names.
    assert "  5 tool message (e.g. message 1; message 2; message 3; …)" in err
    assert "  1 system message (e.g. message 0)" in err
    detail = tmp_path / "summary.json"
    code, _, err = run(capsys, "import-chats", str(chat), "--json", "--summary", str(detail))
    found = json.loads(err.splitlines()[0])
    assert found["skipped_by_reason"] == {"tool message": 5, "system message": 1}
    assert json.loads(detail.read_text()) == found and len(found["skipped"]) == 6


@pytest.mark.parametrize("argv, message", [
    (["search", "x", "--palace", "/nonexistent/palace"], "no palace in"),
    (["add", "--wing", "w", "--room", "r"], "give the drawer's text"),
    (["import", "/nonexistent.json"], "No such file"),
    (["add", "--wing", "w", "--room", "r", "  "], "must not be empty"),
])
def test_user_mistakes_are_one_line_and_a_non_zero_exit(palace, capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 1 and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_palace_file_is_refused_and_changes_nothing(palace, capsys, tmp_path):
    run(capsys, "add", "--wing", "w", "--room", "r", "kept")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "palazzo", "version": 1, "palace": {"drawers": 7}}')
    code, _, err = run(capsys, "import", str(bad))
    assert code == 1 and "palace.name is missing" in err
    assert json.loads(run(capsys, "status")[1])["palace"]["drawers"] == 1


def test_import_and_reindex_count_the_vectors_written_and_name_drawers_without_one(
        palace, capsys, tmp_path):
    from palazzo.formats.palacefile import export_palace
    from palazzo.palace import Palace

    bare = Palace(clock=lambda: 0.0)
    ids = {bare.add_drawer("chat", "t", text)[0] for text in ("no", "d")}
    for text in ("The launch is on friday.", "Basil needs sun."):
        bare.add_drawer("chat", "t", text)
    doc = tmp_path / "chat.json"
    doc.write_text(json.dumps(export_palace(bare, vectors=None, exported_at=0.0)))
    code, out, _ = run(capsys, "import", str(doc))
    assert code == 0 and "embedded 2 drawers with hash" in out
    said = out.splitlines()[-1]
    assert said.startswith("2 drawers got no vector (no token the embedder can read): ")
    assert set(said.split(": ")[1].split(", ")) == ids
    status = json.loads(run(capsys, "status")[1])["palace"]
    assert (status["drawers"], status["embedded"]) == (4, 2)
    code, out, _ = run(capsys, "reindex")
    assert code == 0 and out.splitlines()[0] == "embedded 0 drawers with hash"
    assert "2 drawers got no vector" in out
    code, out, _ = run(capsys, "reindex", "--force")
    assert code == 0 and out.splitlines()[0] == "embedded 2 drawers with hash"


def test_vectors_are_saved_when_the_last_embedding_step_writes_none(palace, capsys, tmp_path):
    from palazzo.formats.palacefile import export_palace
    from palazzo.palace import Palace

    # 64 drawers fill the first step exactly; the second step finds only drawers that
    # cannot get a vector, writes none, and the run must still be saved.
    bare = Palace(clock=lambda: 0.0)
    for i in range(64):
        bare.add_drawer("notes", "violin", f"lesson {i}: scales and bowing")
    for i in range(3):
        bare.add_drawer("chat", f"t{i}", "no")
    doc = tmp_path / "p.json"
    doc.write_text(json.dumps(export_palace(bare, vectors=None, exported_at=0.0)))
    code, out, _ = run(capsys, "import", str(doc))
    assert code == 0 and "embedded 64 drawers with hash" in out
    status = json.loads(run(capsys, "status")[1])["palace"]  # a new process's view
    assert (status["drawers"], status["embedded"]) == (67, 64)


def test_call_runs_any_operation_and_the_first_class_commands(palace, capsys, tmp_path):
    code, out, _ = run(capsys, "call", "add_drawer", "--args",
                       '{"wing": "work", "room": "db", "content": "We chose Postgres."}')
    assert code == 0 and json.loads(out)["created"] is True
    args = tmp_path / "args.json"
    args.write_text('{"query": "postgres"}')
    code, out, _ = run(capsys, "call", "search", "--args", f"@{args}")
    assert json.loads(out)["results"][0]["content"] == "We chose Postgres."
    code, out, _ = run(capsys, "call", "--list")
    assert code == 0 and "wake_up" in out and "(writes)" in out
    # One-line errors, nothing changed.
    for argv, said in ((("call", "nope"), "no operation 'nope'"),
                       (("call", "search", "--args", "[1]"), "JSON object"),
                       (("call", "search", "--args", "{oops"), "not valid JSON"),
                       (("call", "search", "--args", '{"q": 1}'), "")):
        code, out, err = run(capsys, *argv)
        assert code == 1 and err.startswith("palazzo: ") and said in err
        assert err.count("\n") == 1
    # kg: add, query, timeline, stats
    assert run(capsys, "kg", "add", "Ada", "works at", "Acme", "--from", "2024-01-01")[0] == 0
    code, out, _ = run(capsys, "kg", "query", "ada")
    assert [f["object"] for f in json.loads(out)["facts"]] == ["acme"]
    assert json.loads(run(capsys, "kg", "timeline", "Ada")[1])["count"] == 1
    # the drawer's "We chose Postgres." was extracted when it was added
    assert json.loads(run(capsys, "kg", "stats")[1])["predicates"]["works_at"] == 1
    # wake-up: text by default, JSON on request
    code, out, err = run(capsys, "wake-up", "--budget", "200")
    assert code == 0 and "- Ada works at Acme (since 2024-01-01)" in out and "tokens" in err
    assert json.loads(run(capsys, "wake-up", "--json")[1])["budget"] == 800
    # navigate, slice, swarm go through their operations
    code, out, _ = run(capsys, "navigate", "palace", "work/db")
    assert code == 0 and json.loads(out)["found"] is True
    code, out, _ = run(capsys, "navigate", "palace", "--toward", "postgres")
    assert code == 0 and json.loads(out)["goal_choice"]["node"] == "room:work/db"
    code, out, _ = run(capsys, "call", "add_turn", "--args",
                       '{"conversation": "c1", "role": "user", "content": "Which db?"}')
    turn = json.loads(out)["turn"]["id"]
    code, out, _ = run(capsys, "slice", turn)
    assert code == 0 and json.loads(out)["bundle"]["token"]
    code, out, _ = run(capsys, "slice", turn, "--budget", "50", "--form", "text")
    assert code == 0 and json.loads(out)["context"] == "user: Which db?"
    code, _, err = run(capsys, "slice", turn, "--budget", "1")
    assert code == 1 and "budget" in err
    code, out, _ = run(capsys, "atlas", "--anchor", turn, "--top", "3")
    assert code == 0 and json.loads(out)["anchors"] == 1
    code, out, _ = run(capsys, "atlas", "--conversation", "c1", "--bundle")
    assert code == 0 and json.loads(out)["atlas"]["content_hash"]
    code, out, _ = run(capsys, "swarm", "--cycles", "3", "--agents", "2", "--seed", "1")
    assert code == 0 and "cycles" in out


def test_dedup_is_a_dry_run_until_yes_and_repair_reports_then_fixes(palace, capsys):
    for room in ("a", "b"):
        assert run(capsys, "add", "--wing", "w", "--room", room,
                   "The deploy key rotates every ninety days.")[0] == 0
    code, out, err = run(capsys, "dedup")
    assert code == 0 and json.loads(out)["count"] == 1 and "--yes" in err
    assert json.loads(run(capsys, "status")[1])["palace"]["drawers"] == 2
    code, out, _ = run(capsys, "dedup", "--yes")
    assert json.loads(out) == {"merged": 1, "groups": 1, "truncated": False}
    assert json.loads(run(capsys, "status")[1])["palace"]["drawers"] == 1
    code, out, _ = run(capsys, "repair")
    report = json.loads(out)
    assert code == 0 and report["repaired"] is False and report["palace"]["problems"] == {}
    assert report["palace"]["dry_run"] is True

import json

from palazzo.bench.metrics import ndcg_any, recall_all, recall_any
from palazzo.hosts.cli import main


def _question(i, gold_text):
    sessions = [
        [{"role": "user", "content": gold_text}, {"role": "assistant", "content": "noted"}],
        [{"role": "user", "content": f"unrelated chatter number {i} about the weather"}],
        [{"role": "user", "content": "recipes for lentil soup and bread"}],
    ]
    return {"question_id": f"q{i}", "question_type": "test", "question": gold_text.split(".")[0],
            "answer": "x", "haystack_session_ids": [f"s{i}a", f"s{i}b", f"s{i}c"],
            "haystack_sessions": sessions, "answer_session_ids": [f"s{i}a"]}


def test_bench_longmemeval_writes_rankings_and_metrics(tmp_path, capsys):
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([
        _question(1, "My violin teacher is called Marta. She is strict."),
        _question(2, "The garage door code changed to 4417. Remember it."),
    ]))
    out = tmp_path / "out.json"
    code = main(["bench", "longmemeval", "--data", str(data), "--out", str(out),
                 "--embedder", "hash", "--mode", "hybrid"])
    assert code == 0
    result = json.loads(out.read_text())
    assert [q["question_id"] for q in result["questions"]] == ["q1", "q2"]
    assert result["questions"][0]["ranked_session_ids"][0] == "s1a"
    assert len(result["questions"][0]["ranked_session_ids"]) == 3  # every session, ranked
    assert result["metrics"]["recall_any@1"] == 1.0
    assert set(result["metrics"]) >= {f"{m}@{k}" for m in ("recall_any", "recall_all",
                                                           "ndcg_any") for k in (1, 3, 5, 10)}


def test_bench_longmemeval_reports_each_question_type_and_several_modes(tmp_path, capsys):
    questions = [_question(1, "My violin teacher is called Marta. She is strict."),
                 _question(2, "The garage door code changed to 4417. Remember it."),
                 {**_question(3, "Lentil soup wants cumin. Add it late."),
                  "question_type": "other"}]
    questions[2]["answer_session_ids"] = ["s3b"]  # a miss in its own category
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(questions))
    out = tmp_path / "out.json"
    assert main(["bench", "longmemeval", "--data", str(data), "--out", str(out),
                 "--embedder", "hash", "--mode", "hybrid,bm25"]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [r["mode"] for r in runs] == ["hybrid", "bm25"]
    for r in runs:
        assert r["by_type"]["test"]["questions"] == 2
        assert r["by_type"]["test"]["recall_any@1"] == 1.0
        assert r["by_type"]["other"]["recall_any@1"] == 0.0
        assert r["metrics"]["recall_any@1"] == round(2 / 3, 4)
    printed = capsys.readouterr().out
    assert "| hybrid enrich_alpha=0.9 test | 2 | 1.000 |" in printed  # enriched by default
    assert "| bm25 other | 1 |" in printed


def test_bench_longmemeval_can_read_every_turn_of_a_session(tmp_path, capsys):
    q = _question(1, "Where did we leave the kayak?")
    q["question"] = "which harbour did you suggest for the kayak"
    q["haystack_sessions"][0] = [{"role": "user", "content": "Where did we leave the kayak?"},
                                 {"role": "assistant", "content": "I suggest the north harbour."}]
    q["haystack_sessions"][1] = [{"role": "user", "content": "kayak lessons at the harbour"}]
    q["answer_session_ids"] = ["s1a"]
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([q]))
    ranked = {}
    for turns in ("user", "all"):
        out = tmp_path / f"{turns}.json"
        assert main(["bench", "longmemeval", "--data", str(data), "--out", str(out),
                     "--embedder", "hash", "--mode", "bm25", "--turns", turns]) == 0
        result = json.loads(out.read_text())
        assert result["turns"] == turns
        ranked[turns] = result["questions"][0]["ranked_session_ids"][0]
    assert ranked == {"user": "s1b", "all": "s1a"}


def test_a_file_without_longmemeval_fields_is_one_clear_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question": "no ids"}]))
    code = main(["bench", "longmemeval", "--data", str(bad), "--out", str(tmp_path / "o"),
                 "--embedder", "hash"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("palazzo: ") and "not a LongMemEval file" in err
    assert "Traceback" not in err


def test_metrics_by_hand():
    ranked = ["a", "b", "c", "d"]
    assert recall_any(ranked, {"c"}, 2) == 0.0 and recall_any(ranked, {"c"}, 3) == 1.0
    assert recall_all(ranked, {"a", "d"}, 3) == 0.0 and recall_all(ranked, {"a", "d"}, 4) == 1.0
    assert ndcg_any(ranked, {"a"}, 10) == 1.0
    assert abs(ndcg_any(ranked, {"b"}, 10) - 1 / 1.584962500721156) < 1e-12


def test_make_longtext_groups_sessions_into_long_drawers(tmp_path, capsys):
    q = _question(1, "My violin teacher is called Marta.")
    q["haystack_session_ids"] += ["s1d", "s1e"]
    q["haystack_sessions"] += [[{"role": "user", "content": "garden plans"}],
                               [{"role": "assistant", "content": "no user turn"}]]
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([q]))
    out = tmp_path / "long.json"
    assert main(["bench", "make-longtext", "--data", str(data), "--out", str(out),
                 "--group", "2"]) == 0
    [long] = json.loads(out.read_text())
    assert long["haystack_session_ids"] == ["s1a+2", "s1c+2"]  # s1e has no user text
    assert long["answer_session_ids"] == ["s1a+2"]
    first = long["haystack_sessions"][0][0]["content"]
    assert first == ("My violin teacher is called Marta.\n\n"
                     "unrelated chatter number 1 about the weather")
    assert long["question"] == q["question"]


def test_bench_longmemeval_chunk_size_zero_embeds_drawers_whole(tmp_path):
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([_question(1, "My violin teacher is called Marta. " * 40)]))
    for size in ("0", "900"):
        out = tmp_path / f"out{size}.json"
        assert main(["bench", "longmemeval", "--data", str(data), "--out", str(out),
                     "--embedder", "hash", "--mode", "vector", "--chunk-size", size]) == 0
        result = json.loads(out.read_text())
        assert result["chunk_size"] == (int(size) or None)
        assert result["questions"][0]["ranked_session_ids"][0] == "s1a"

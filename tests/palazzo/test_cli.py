import json

from palazzo.bench.metrics import ndcg_any, recall_all, recall_any
from palazzo.cli import main


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

"""The LongMemEval benchmark's reading of a file: session dates become drawer times."""

from datetime import UTC, datetime

from palazzo.bench import longmemeval
from palazzo.embed.hashing import HashEmbedder


def test_session_time_reads_longmemevals_dates():
    when = longmemeval.session_time("2023/05/20 (Sat) 07:46")
    assert when == datetime(2023, 5, 20, 7, 46, tzinfo=UTC).timestamp()
    assert longmemeval.session_time("2023/05/20") == datetime(2023, 5, 20, tzinfo=UTC).timestamp()
    for bad in (None, "", "yesterday", 17):
        assert longmemeval.session_time(bad) is None


def _question(dates):
    sessions = [[{"role": "user", "content": "I live in Lisbon, I live near the river"}],
                [{"role": "user", "content": "I moved to Denver, where I live"}],
                [{"role": "user", "content": "tomatoes and basil in the garden"}]]
    return {"question_id": "q", "question_type": "t", "question": "where do I live now?",
            "haystack_session_ids": ["old", "new", "other"], "haystack_dates": dates,
            "haystack_sessions": sessions, "answer_session_ids": ["new"]}


def test_a_present_question_sees_the_session_dates():
    dated = _question(["2023/01/01 (Sun) 10:00", "2023/06/01 (Thu) 10:00", None])
    undated = _question(None)
    plain = longmemeval.rank_question(undated, HashEmbedder(), "hybrid")
    timed = longmemeval.rank_question(dated, HashEmbedder(), "hybrid",
                                      fusion={"recency": 10.0})
    assert plain[0] == "old" and timed[0] == "new"


def test_a_drawer_per_turn_ranks_a_session_by_its_best_turn():
    q = _question(None)
    q["haystack_sessions"][2] = [
        {"role": "user", "content": "tomatoes and basil in the garden"},
        {"role": "assistant", "content": "a lighthouse keeper rows out"},
        {"role": "user", "content": "I live in Porto by the sea, I live here now"}]
    q["question"] = "where do I live by the sea?"
    ranked = longmemeval.rank_question(q, HashEmbedder(), "bm25", drawers="turn")
    assert ranked[0] == "other" and sorted(ranked) == ["new", "old", "other"]
    # An assistant's turn is a drawer of its own only when every turn is read.
    q["question"] = "lighthouse keeper"
    assert longmemeval.rank_question(q, HashEmbedder(), "bm25", drawers="turn",
                                     turns="all")[0] == "other"
    assert longmemeval.rank_question(q, HashEmbedder(), "bm25", drawers="turn",
                                     turns="user")[0] == "old"  # no list ranks any


def test_pooled_questions_are_asked_of_one_palace_of_every_session(tmp_path):
    import json

    first = _question(None)
    second = {**_question(None), "question_id": "q2", "question": "tomatoes basil garden",
              "haystack_session_ids": ["other", "far"], "answer_session_ids": ["other"],
              "haystack_sessions": [first["haystack_sessions"][2],
                                    [{"role": "user", "content": "tomatoes and basil "
                                                                 "where I live, tomatoes"}]]}
    path = tmp_path / "two.json"
    path.write_text(json.dumps([first, second]))
    palace, sessions_of = longmemeval.build([first, second], HashEmbedder())
    # "other" is in both haystacks and becomes one drawer; "far" only in the second.
    assert sorted(s for ids in sessions_of.values() for s in ids) == ["far", "new", "old",
                                                                      "other"]
    apart = longmemeval.run(path, HashEmbedder(), "bm25")
    pooled = longmemeval.run(path, HashEmbedder(), "bm25", pooled=True)
    assert pooled["pooled"] and not apart["pooled"]
    # Asked of every session, the first question's ranking holds the second's "far" too
    # (it shares "live" with the question).
    first_pooled = pooled["questions"][0]["ranked_session_ids"]
    assert "far" in first_pooled
    assert "far" not in apart["questions"][0]["ranked_session_ids"]

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

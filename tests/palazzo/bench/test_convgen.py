"""The generated long-conversation set (:mod:`palazzo.bench.convgen`): deterministic, in
LongMemEval's shape, sessions of realistic length, every question type, and evidence that
really holds the answer (for updated facts: the latest session the new value, an earlier one
the old)."""

import json
import re
from pathlib import Path

import pytest

from palazzo.bench import convgen, longmemeval

COMMITTED = Path(__file__).parents[1] / "data" / "longconv_dev.json"
FIELDS = {"question_id", "question_type", "question", "answer", "question_date",
          "haystack_session_ids", "haystack_dates", "haystack_sessions", "answer_session_ids"}


@pytest.fixture(scope="module")
def asked():
    return convgen.generate(3, seed=5)


def _text(session):
    return "\n".join(t["content"] for t in session)


def test_same_seed_same_output_other_seed_differs():
    a = json.dumps(convgen.make(2, seed=1))
    assert a == json.dumps(convgen.make(2, seed=1))
    assert a != json.dumps(convgen.make(2, seed=2))


def test_shape_ids_and_dates(asked):
    for a in asked:
        q = a.record
        assert q.keys() >= FIELDS
        ids = q["haystack_session_ids"]
        assert len(ids) == len(set(ids)) == len(q["haystack_dates"]) == len(
            q["haystack_sessions"])
        assert convgen.MIN_SESSIONS <= len(ids) <= convgen.MAX_SESSIONS
        assert q["answer_session_ids"] and set(q["answer_session_ids"]) <= set(ids)
        days = [convgen.parse_date(d) for d in q["haystack_dates"]]
        assert days == sorted(days) and (days[-1] - days[0]).days >= 30
        assert convgen.parse_date(q["question_date"]) > days[-1]
        for s in q["haystack_sessions"]:
            assert {t["role"] for t in s} == {"user", "assistant"}
            assert convgen.MIN_CHARS <= len(_text(s)) <= convgen.MAX_CHARS
            assert 500 <= len(_text(s).split()) * 1.3 <= 1500  # tokens, roughly


def test_every_type_and_six_to_eight_questions_a_person(asked):
    assert {a.record["question_type"] for a in asked} == {"single-hop", "multi-hop",
                                                          "temporal"}
    people: dict[str, int] = {}
    for a in asked:
        person = a.record["question_id"].rsplit("-", 1)[0]
        people[person] = people.get(person, 0) + 1
    assert len(people) == 3 and all(6 <= n <= 8 for n in people.values())
    for a in asked:
        if a.record["question_type"] == "multi-hop":
            assert len(a.record["answer_session_ids"]) >= 2
        if a.record["question_type"] == "single-hop":
            assert len(a.record["answer_session_ids"]) == 1


def test_evidence_holds_the_fact(asked):
    for a in asked:
        q = a.record
        assert set(a.keys) == set(q["answer_session_ids"])
        where = dict(zip(q["haystack_session_ids"],
                         zip(q["haystack_dates"], q["haystack_sessions"], strict=True),
                         strict=True))
        for sid, value in a.keys.items():
            stamp, session = where[sid]
            assert value in _text(session) or stamp.startswith(value), (q["question"], sid)
        if q["answer"] not in ("before", "after"):
            assert q["answer"] in a.keys.values() and q["answer"] not in q["question"]


def test_updates_latest_holds_new_value_earlier_holds_old(asked):
    updates = [a for a in asked if a.superseded]
    assert updates
    for a in updates:
        q = a.record
        ids = q["haystack_session_ids"]
        texts = dict(zip(ids, map(_text, q["haystack_sessions"]), strict=True))
        (new_sid, new), = a.keys.items()
        assert new == q["answer"] and new in texts[new_sid]
        for old_sid, old in a.superseded.items():
            assert ids.index(old_sid) < ids.index(new_sid)
            assert old in texts[old_sid] and old != new


def test_questions_do_not_copy_the_evidence(asked):
    for a in asked:
        q = a.record
        texts = [_text(s) for s, sid in zip(q["haystack_sessions"], q["haystack_session_ids"],
                                            strict=True) if sid in q["answer_session_ids"]]
        assert all(q["question"].rstrip("?") not in t for t in texts)


def test_names_asked_about_appear_in_the_evidence_only():
    # A sibling asked about by name must have no decoy fact elsewhere (no second answer).
    named = [a for a in convgen.generate(12, seed=3)
             if re.match(r"What is (\w+)'s profession", a.record["question"])]
    assert named
    for a in named:
        q = a.record
        name = re.match(r"What is (\w+)'s", q["question"]).group(1)
        where = [sid for sid, s in zip(q["haystack_session_ids"], q["haystack_sessions"],
                                       strict=True) if name in _text(s)]
        assert where == q["answer_session_ids"]


def test_file_loads_with_longmemeval(tmp_path):
    path = tmp_path / "longconv.json"
    path.write_text(json.dumps(convgen.make(1, seed=0)), encoding="utf-8")
    questions = longmemeval.load(path)
    assert questions and all(q["question_type"] for q in questions)


def test_people_must_be_positive():
    with pytest.raises(ValueError):
        convgen.make(0)


@pytest.mark.skipif(not COMMITTED.exists(), reason="the committed set is not here")
def test_committed_set_is_what_its_command_makes():
    # longconv_dev.md says: make-longconv --people 5 --seed 0.
    assert COMMITTED.read_text(encoding="utf-8") == json.dumps(convgen.make(5, seed=0))

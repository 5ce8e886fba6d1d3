"""The learning-from-use simulation on a tiny LongMemEval-shaped file."""

import json

from palazzo.bench import learning
from palazzo.embed.hashing import HashEmbedder
from palazzo.hosts.cli import main


def _question(i, question, gold, others):
    sessions = [[{"role": "user", "content": t}] for t in (gold, *others)]
    ids = [f"q{i}s{j}" for j in range(len(sessions))]
    return {"question_id": f"q{i}", "question_type": "test", "question": question,
            "answer": "x", "haystack_session_ids": ids, "haystack_sessions": sessions,
            "answer_session_ids": [ids[0]]}


QUESTIONS = [
    # The gold session says less about the query words than a distractor does, so it starts
    # second; feedback should lift it to first for the workload.
    _question(0, "violin lesson Marta",
              "Marta moved my lesson; bring the violin and the new rosin and the metronome",
              ["violin lesson Marta violin lesson Marta", "tomatoes need water"]),
    _question(1, "garage door code",
              "the garage code is 4417 now, the old one stopped working last week",
              ["garage door code garage door code", "basil likes sun"]),
    _question(2, "dentist appointment",
              "dentist appointment on Friday", ["the cat sleeps all day"]),
    _question(3, "passport renewal",
              "passport renewal form is in the blue folder", ["lentil soup recipe"]),
]


def test_simulation_control_is_flat_and_feedback_lifts_the_workload():
    palace, sessions_of = learning.build_palace(QUESTIONS, HashEmbedder())
    assert len(sessions_of) == 10
    workload, held = QUESTIONS[:2], QUESTIONS[2:]
    control = learning.simulate(palace, sessions_of, workload, held, 0.0, rounds=3)
    assert len(control["workload"]) == 4
    assert all(m == control["workload"][0] for m in control["workload"])
    assert control["held_apart"]["before"] == control["held_apart"]["after"]
    assert control["workload"][0]["recall_any@1"] == 0.0  # both golds start second

    learned = learning.simulate(palace, sessions_of, workload, held, 2.0, rounds=3)
    assert learned["deposits"] == 6  # both golds were shown in every round
    assert learned["workload"][0] == control["workload"][0]  # round 1: no feedback yet
    assert learned["workload"][-1]["recall_any@1"] == 1.0


def test_split_is_seeded_and_complete():
    a = learning.split(QUESTIONS, seed=3)
    b = learning.split(QUESTIONS, seed=3)
    assert a == b
    assert sorted(q["question_id"] for q in a[0] + a[1]) == ["q0", "q1", "q2", "q3"]
    assert len(a[0]) == 2


def test_cli_writes_every_weight(tmp_path, capsys):
    data = tmp_path / "lme.json"
    data.write_text(json.dumps(QUESTIONS))
    out = tmp_path / "learning.json"
    assert main(["bench", "learning", "--data", str(data), "--out", str(out), "--embedder",
                 "hash", "--weights", "0,1", "--rounds", "2"]) == 0
    result = json.loads(out.read_text())
    assert [r["weight"] for r in result["runs"]] == [0.0, 1.0]
    assert result["questions"] == {"workload": 2, "held_apart": 2}
    assert len(result["table"]) == 2 and result["rounds"] == 2

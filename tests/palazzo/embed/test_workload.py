"""The model work of the drawers waiting for vectors, as the background embedding's rate and
time left count it: what each drawer's next step asks, and what comes after."""

import numpy as np

from palazzo import call
from palazzo.core.columns import WINDOW
from palazzo.embed import workload
from palazzo.embed.hashing import HashEmbedder
from palazzo.palace import Palace

PIECE = workload.PIECE


class _EnglishOnly(HashEmbedder):
    name = "minilm"  # reads English only: what the palace knows of it comes from its name


def _palace():
    """A person's long question (4 windows of 120), a short answer, a long answer, a note."""
    palace = Palace(clock=lambda: 0.0, chunk_size=120)
    call(palace, "import_conversation", {"conversation": "chat", "messages": [
        {"role": "user", "content": "How do I prune roses in winter? " * 12, "timestamp": 1.0},
        {"role": "assistant", "content": "Cut above a bud.", "timestamp": 2.0},
        {"role": "user", "content": "And the climbers, in a word?", "timestamp": 3.0},
        {"role": "assistant", "content": "Tie them in flat, then prune. " * 10,
         "timestamp": 4.0}]})
    palace.add_drawer("notes", "n", "A long note about the garden beds. " * 10)
    palace.set_embedder(_EnglishOnly())
    return palace


def test_each_drawer_costs_what_its_next_step_asks_of_the_model():
    palace = _palace()
    s = palace.drawers
    rows = palace.embedding_queue()
    by_text = {s.content[int(r)][:12]: i for i, r in enumerate(rows.tolist())}
    lengths = [len(s.content[int(r)]) for r in rows]
    now, later = workload.costs(palace, rows)
    question, answer = by_text["How do I pru"], by_text["Tie them in "]
    note, short = by_text["A long note "], by_text["Cut above a "]
    assert now[short] == lengths[short] + PIECE  # one piece
    assert now[answer] == 120 + PIECE  # an answer: its opening window alone
    windows = np.ceil(lengths[question] / 120)
    assert now[question] == lengths[question] + PIECE * windows  # every window
    assert now[note] == lengths[note] + PIECE * np.ceil(lengths[note] / 120)
    assert not later.any()
    # Opening first: the question asks for its opening window now, the rest later; together
    # what one pass asks.
    now2, later2 = workload.costs(palace, rows, opening_first=True)
    assert now2[question] == 120 + PIECE and later2[question] == now[question] - now2[question]
    assert np.array_equal(np.delete(now2, question), np.delete(now, question))
    # Once it holds its opening window's vector, the rest is what it asks.
    call(palace, "reindex", {"limit": 10, "opening_first": True})
    waiting = palace.embedding_queue()
    assert [s.content[int(r)][:12] for r in waiting] == ["How do I pru"]
    rest, after = workload.costs(palace, waiting, opening_first=True)
    assert rest[0] == later2[question] and after[0] == 0


def test_ahead_sums_the_next_drawers_work_in_blocks_with_the_second_steps_last():
    now = np.arange(1.0, 121.0)  # 120 drawers costing 1, 2, ... 120
    later = np.zeros(120)
    later[[0, 5]] = 1000.0  # two long turns opened first: their rests come last
    out = workload.ahead(now, later, done=10)
    assert out["done"] == sum(range(1, 11))
    assert out["drawers"] == 110 + 2
    assert out["left"] == sum(range(11, 121)) + 2000
    assert out["block"] == workload.BLOCK == 50
    # cumulative at 50 and 100 drawers, then at the last (112)
    assert out["next"] == [sum(range(11, 61)), sum(range(11, 111)), out["left"]]


def test_reindex_steps_report_their_work_and_it_adds_up():
    palace = _palace()
    first = call(palace, "reindex", {"limit": 2, "opening_first": True})["work"]
    total = first["done"] + first["left"]
    done = first["done"]
    while True:
        out = call(palace, "reindex", {"limit": 2, "opening_first": True})
        done += out["work"]["done"]
        if not out["remaining"]:
            break
    assert done == total and out["work"]["left"] == 0 and out["work"]["next"] == []
    assert "work" not in call(palace, "reindex", {"force": True})  # not a step: no work


def test_the_drawers_next_are_counted_from_their_texts_event_sentences_too():
    palace = Palace(clock=lambda: 0.0, chunk_size=120)
    turn = ("Today I passed my driving test on the first attempt. "
            + "We talked about the routes and the roundabouts near the harbour. " * 6
            + "On 2026-03-14 we signed the lease.")
    call(palace, "import_conversation", {"conversation": "chat", "messages": [
        {"role": "user", "content": turn, "timestamp": 1.0},
        {"role": "assistant", "content": "That sounds like a big year. " * 8, "timestamp": 2.0},
        {"role": "user", "content": "Sam adopted a parrot last month.", "timestamp": 3.0}]})
    palace.set_embedder(_EnglishOnly())
    rows = palace.embedding_queue()
    now, later = workload.costs(palace, rows, opening_first=True, exact=len(rows))

    def work(texts):
        return sum(len(t) + PIECE for t in texts)

    asked = [palace.embedding_texts(int(r), True)[0] for r in rows]
    assert now.tolist() == [work(texts) for texts in asked]
    s = palace.drawers
    long_turn = next(i for i, r in enumerate(rows.tolist()) if s.content[r].startswith("Today"))
    whole, kinds = palace.parts(s.content[int(rows[long_turn])])
    assert set(kinds) - {WINDOW}  # its event sentences are embedded too, and counted
    assert later[long_turn] == work(whole) - work(whole[:1])
    # Beyond ``exact`` the estimate from lengths stands (no event sentences).
    est_now, _ = workload.costs(palace, rows, opening_first=True, exact=0)
    assert est_now[long_turn] == 120 + PIECE

"""The palace worker's Python side with the remote embedder: what it plans, what it is given,
and what it says is left (the worker decides from ``unembedded`` whether a reply waits)."""

import json

import numpy as np
import pytest

from palazzo.embed.minilm import MiniLMEmbedder
from palazzo.hosts import worker


@pytest.fixture
def engine(tiny_npz, tiny_vocab):
    """A worker bridge on the demo palace with the remote embedder, and the NumPy model of the
    same weights standing in for the embedding worker."""
    model = MiniLMEmbedder(tiny_npz())
    bridge = worker.start_engine("memory")
    card = json.dumps({"fingerprint": model.fingerprint, "max_seq_length": 16})
    worker.attach_remote_embedder(bridge, tiny_vocab, card, "test runtime")
    return bridge, model


def work(bridge, model, plan) -> None:
    """Do what the embedding worker does with a plan: vectors of each batch's ids."""
    number, batches = plan
    for index, (ids, n, t) in enumerate(batches):
        rows = np.frombuffer(ids, np.int32).reshape(n, t)
        tokens = [list(row[row != 0]) for row in rows]
        worker.embed_supply(bridge, number, index, model._forward(tokens).tobytes())


def test_a_new_palace_is_left_to_embed_until_the_worker_supplies_its_vectors(engine):
    bridge, model = engine
    drawers = bridge.call("palace_status")["drawers"]
    assert drawers > 0 and worker.unembedded(bridge) == drawers
    assert worker.embed_step(bridge, 64)["embedded"] == 0  # nothing supplied yet
    for _ in range(drawers):
        plan = worker.embed_plan(bridge, 8)
        if not plan:
            break
        work(bridge, model, plan)
        worker.embed_step(bridge, 8)
    assert worker.unembedded(bridge) == 0 and worker.embed_plan(bridge, 8) == []
    status = bridge.call("palace_status")
    assert status["embedded"] == drawers
    assert status["embedder"]["runtime"] == "test runtime"


def test_an_added_drawer_counts_as_unembedded_until_embedded(engine):
    bridge, model = engine
    while plan := worker.embed_plan(bridge, 64):
        work(bridge, model, plan)
        worker.embed_step(bridge, 64)
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "the palace memory note"})
    assert worker.unembedded(bridge) == 1
    work(bridge, model, worker.embed_plan(bridge, 16))
    assert worker.embed_step(bridge, 16) == {"embedded": 1, "remaining": 0}
    assert worker.unembedded(bridge) == 0
    hits = bridge.call("search", {"query": "the palace memory note", "limit": 1})["results"]
    assert hits[0]["wing"] == "w"


def test_a_plan_asks_for_an_answers_opening_window_only_and_that_is_enough(engine):
    bridge, model = engine
    while plan := worker.embed_plan(bridge, 64):  # the demo palace first
        work(bridge, model, plan)
        worker.embed_step(bridge, 64)
    palace = bridge.palace
    question = "How do I prune the roses in winter without hurting the buds? " * 16
    answer = "Cut above an outward-facing bud at an angle, in dry weather. " * 20
    bridge.call("import_conversation", {"conversation": "garden", "messages": [
        {"role": "user", "content": question, "timestamp": 1_000.0},
        {"role": "assistant", "content": answer, "timestamp": 1_001.0}]})
    windows = palace.pieces(answer.strip())
    asked = palace.pieces(question.strip())
    assert len(windows) > 1 and len(asked) > 2
    number, batches = worker.embed_plan(bridge, 64)
    # The question's opening window first (a person's long turn), and the answer's first
    # window: no more.
    assert sum(n for _, n, _ in batches) == 2
    work(bridge, model, [number, batches])
    assert worker.embed_step(bridge, 64) == {"embedded": 2, "remaining": 1}
    status = bridge.call("palace_status")
    assert status["to_embed"] == 0 and status["to_complete"] == 1
    # The background goes on for the rest; a page call waits only for drawers with no vector.
    assert worker.unembedded(bridge) == 1 and worker.unembedded(bridge, rests=False) == 0
    # Then the rest of the question: its later windows and event sentences only.
    number, batches = worker.embed_plan(bridge, 64)
    assert sum(n for _, n, _ in batches) == len(asked) - 1
    work(bridge, model, [number, batches])
    assert worker.embed_step(bridge, 64) == {"embedded": 1, "remaining": 0}
    assert worker.unembedded(bridge) == 0 and worker.embed_plan(bridge, 64) == []
    assert bridge.call("palace_status")["to_complete"] == 0


def test_a_query_plan_asks_only_for_texts_not_known(engine):
    bridge, model = engine
    plan = worker.query_plan(bridge, json.dumps(["the palace", "the palace"]))
    assert plan and len(plan[1]) == 1 and plan[1][0][1] == 1
    work(bridge, model, plan)
    assert worker.query_plan(bridge, ["the palace"]) == []


def test_a_query_plan_asks_for_the_event_clauses_of_a_question_too(engine):
    bridge, model = engine
    query = "Which company employed me when the road exam happened?"
    plan = worker.query_plan(bridge, [query])
    assert plan and sum(batch[1] for batch in plan[1]) == 2  # the question and its clause
    work(bridge, model, plan)
    assert worker.query_plan(bridge, [query, "the road exam"]) == []


def test_nothing_is_counted_without_the_remote_embedder():
    bridge = worker.start_engine("memory")
    assert worker.unembedded(bridge) == 0 and worker.embed_plan(bridge) == []


def test_export_streams_the_palace_file_in_pieces_and_says_when_it_is_saved():
    bridge = worker.start_engine("memory")
    said = []
    bridge.hooks.exported = lambda name, size, error: said.append((name, size, error))
    begun = json.loads(worker.export_begin(bridge))
    assert begun["ok"] and begun["result"]["name"].endswith(".json")
    pieces = []
    while (piece := worker.export_next(bridge)) is not None:
        pieces.append(piece)
    doc = json.loads(b"".join(pieces))
    whole = bridge.call("export", {"vectors": "float16"})["document"]
    assert doc["palace"]["drawers"] == whole["palace"]["drawers"] and doc["format"] == "palazzo"
    worker.export_end(bridge)
    assert said == [(begun["result"]["name"], sum(map(len, pieces)), None)]
    assert worker.export_next(bridge) is None  # nothing left over for the next export


def test_an_operation_names_the_packages_it_imports_that_are_not_loaded(monkeypatch):
    import importlib.util

    bridge = worker.start_engine("memory")
    assert worker.packages_for(bridge, "atlas") == []  # SciPy is there under CPython
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "scipy" else real(name, *a))
    assert worker.packages_for(bridge, "atlas") == ["scipy"]  # as in the page before use
    assert worker.packages_for(bridge, "search") == [] and worker.packages_for(bridge, "x") == []

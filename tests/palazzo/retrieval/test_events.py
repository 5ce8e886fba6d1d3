"""The event list of hybrid search: a question's event clause against the event sentences."""

import numpy as np
import pytest

from palazzo import call
from palazzo.core.columns import EVENT_OTHER, EVENT_OWN, WINDOW
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.palace import Palace
from palazzo.retrieval import events, fusion
from palazzo.retrieval.search import search


@pytest.mark.parametrize(("query", "found"), [
    ("Which company employed me when the road exam happened?", ["the road exam"]),
    ("Where was I based at the time of the family celebration?", ["the family celebration"]),
    ("When did I throw the party for my parents?", ["I throw the party for my parents"]),
    ("Did I adopt Pickles before or after I joined Greenleaf Foods?",
     ["I joined Greenleaf Foods", "I adopt Pickles"]),
    ("What did I do after the concert took place?", ["the concert"]),
    ("What's my parrot called?", []),
    ("Which cuisine do I like best?", []),
])
def test_the_event_clauses_of_a_question(query, found):
    assert events.clauses(query) == found


FILLER = ["The weather was grey and the bus was late again.",
          "I keep meaning to sort out the spare room shelves.",
          "Work has been busy with the quarterly planning meetings.",
          "The new coffee place near the station is decent.",
          "I read two chapters of a novel about lighthouses."]


def long_text(i: int, extra: str = "") -> str:
    body = " ".join(FILLER[(i + j) % len(FILLER)] for j in range(12))
    return f"{body} Session {i} notes. {extra}".strip()


@pytest.fixture
def palace():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, similar_threshold=None)
    for i in range(20):
        p.add_drawer("w", "r", long_text(i))
    p.add_drawer("w", "r", long_text(20, "Today I passed my driving test at last."))
    p.add_drawer("w", "r", long_text(21, "My friend Sam passed his driving test last week."))
    return p


def test_event_sentences_are_embedded_apart_from_the_windows(palace):
    chunks = palace.drawers.chunks
    own, other = (palace.drawers.row_of[palace.drawers.ids[r]] for r in (20, 21))
    assert [chunks.kind[s] for s in chunks.of_row[own]][-1] == EVENT_OWN
    assert [chunks.kind[s] for s in chunks.of_row[other]][-1] == EVENT_OTHER
    assert all(chunks.kind[s] == WINDOW for s in chunks.of_row[0])
    # The drawer's own vector is the mean of its windows: the event sentence adds nothing.
    slots = [s for s in chunks.of_row[own] if chunks.kind[s] == WINDOW]
    mean = chunks.vectors[slots].sum(axis=0)
    assert np.allclose(palace.drawers.vectors[own], mean / np.linalg.norm(mean), atol=1e-6)


def test_a_question_naming_an_event_gets_the_event_list(palace):
    query = "Which company employed me when the driving test happened?"
    hits = {h.drawer_id: h for h in search(palace, query, limit=22)}
    own, other = palace.drawers.ids[20], palace.drawers.ids[21]
    assert hits[own].event > 0
    # First person: someone else's event counts OTHER_PENALTY (0.2) less. Cosines to the
    # clause with this embedder: own 0.64, Sam's 0.50, so at a floor of 0.4 Sam's drops out
    # for "me" and stays for a question about Sam.
    with events.tuned(min_cosine=0.4, other_penalty=0.2):
        first = {h.drawer_id: h for h in search(palace, query, limit=22)}
        third = {h.drawer_id: h for h in search(palace, "What did Sam do when the driving "
                                                "test happened?", limit=22)}
    assert first[own].event > 0 and first[other].event == 0.0
    assert third[own].event > 0 and third[other].event > 0
    assert hits[palace.drawers.ids[0]].event == 0.0
    plain = {h.drawer_id: h for h in search(palace, query, limit=22, events=0)}
    assert plain[own].event is None
    assert hits[own].score == pytest.approx(plain[own].score + hits[own].event)


def test_the_z_term_is_the_best_drawers_standing_in_standard_deviations(palace):
    query = "Which company employed me when the driving test happened?"
    mask = palace.drawers.mask(None, None)
    (best,) = events.clause_scores(palace, query, mask)
    z = fusion.zscore(best, mask)  # over the drawers that hold event sentences
    out = events.z_term(palace, query, mask, 0.5)
    top = fusion.top_k(best, events.DEPTH, mask & (best >= events.MIN_COSINE))
    assert len(top) and np.flatnonzero(out).tolist() == sorted(
        r for r in top.tolist() if z[r] > 0)
    assert out[top].tolist() == pytest.approx((0.5 * np.maximum(z[top], 0)).tolist())
    assert events.z_term(palace, "driving test", mask, 0.5) is None  # no event clause
    # the RRF term is the same list in rank units
    rrf = events.term(palace, query, mask, 2.0)
    assert np.flatnonzero(rrf).tolist() == sorted(top.tolist())


def test_a_z_fusion_adds_the_event_list_in_standard_deviations(palace):
    query = "Which company employed me when the driving test happened?"
    n = palace.drawers.size
    hits = {h.drawer_id: h for h in search(palace, query, limit=n, fuse="z", events=0.5)}
    plain = {h.drawer_id: h for h in search(palace, query, limit=n, fuse="z", events=0)}
    own = palace.drawers.ids[20]
    assert len(hits) == n and hits[own].event > 0
    assert hits[own].score == pytest.approx(plain[own].score + hits[own].event)
    with pytest.raises(ValidationError, match="fuse"):
        search(palace, query, fuse="borda")


def test_a_question_without_an_event_clause_is_searched_as_before(palace):
    query = "driving test"
    with_list = search(palace, query, limit=5)
    without = search(palace, query, limit=5, events=0)
    assert [h.drawer_id for h in with_list] == [h.drawer_id for h in without]
    assert all(h.event is None for h in with_list)


def test_the_event_term_is_reported_and_validated_by_the_operation(palace):
    query = {"query": "What did I do when the driving test happened?", "enrich": 1}
    top = call(palace, "search", query)["results"]
    assert top[0]["drawer_id"] == palace.drawers.ids[20] and top[0]["scores"]["event"] > 0
    with pytest.raises(ValidationError):
        call(palace, "search", {**query, "events": 6})


def test_windows_alone_decide_an_ordinary_vector_search(palace):
    n = palace.drawers.size
    q = palace.embedder.embed(["passed my driving test"])[0]
    windows = palace.drawers.chunks.best(q, n)
    sentences = palace.drawers.chunks.best_event(q, n)
    assert sentences[20] > windows[20]  # the short sentence is nearer than its window
    assert np.isneginf(sentences[0])  # no event sentence
    penalised = palace.drawers.chunks.best_event(q, n, other_penalty=0.5)
    assert penalised[21] == pytest.approx(sentences[21] - 0.5, abs=1e-6)
    assert penalised[20] == pytest.approx(sentences[20], abs=1e-6)


def test_event_slots_are_a_drawers_event_sentences_in_order(palace):
    chunks = palace.drawers.chunks
    slots = chunks.event_slots(20)
    assert len(slots) == 1 and chunks.kind[slots[0]] == EVENT_OWN
    assert [s for s in chunks.of_row[20] if chunks.kind[s] != WINDOW] == slots.tolist()
    assert len(chunks.event_slots(0)) == 0 and len(chunks.event_slots(999)) == 0


def adoption_palace() -> Palace:
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, similar_threshold=None)
    for i in range(6):
        p.add_drawer("w", "r", long_text(i))
    p.add_drawer("w", "r", long_text(6, "Today Maria adopted a puppy with a white paw at the "
                                        "shelter near the old mill."))
    p.add_drawer("w", "r", long_text(7, "Today Maria adopted a little dog called Shadow."))
    return p


def test_a_clauses_rare_words_raise_the_sentence_that_holds_them():
    p = adoption_palace()
    n = p.drawers.size
    clause = "Maria adopt Shadow"
    q = p.embedder.embed([clause])[0]
    mask = np.ones(n, dtype=bool)
    best = p.drawers.chunks.best_event(q, n)
    with events.tuned(words=0.5):
        scored = events._with_words(p, clause, q, best, mask, 0.0)
    # Each drawer's score is its best sentence's cosine plus 0.5 x the share of the clause's
    # IDF weight its words hold: "Shadow" is in drawer 7's sentence only.
    idf = p.text_index.idf(set(p.text_index.tokenizer(clause)))
    total = sum(idf.values())
    holds = {6: idf["maria"] + idf["adopt"], 7: total}
    for row, weight in holds.items():
        assert scored[row] == pytest.approx(best[row] + 0.5 * weight / total, abs=1e-6)
    assert scored[7] - best[7] > scored[6] - best[6]
    assert np.isneginf(scored[0])  # no event sentence: no score from words alone
    with events.tuned(words=0.0):  # off: the event list is meaning alone, as before
        assert events.term(p, "When did Maria adopt Shadow?", mask) is not None


def test_the_event_list_names_the_best_drawers_of_its_depth():
    p = adoption_palace()
    query = "When did Maria adopt Shadow?"
    with events.tuned(depth=1, words=0.5, min_cosine=0.0):
        one = search(p, query, limit=8)
    with events.tuned(depth=2, words=0.5, min_cosine=0.0):
        two = search(p, query, limit=8)
    named = [h.drawer_id for h in one if h.event]
    assert named == [p.drawers.ids[7]]
    assert {h.drawer_id for h in two if h.event} == set(p.drawers.ids[6:8])

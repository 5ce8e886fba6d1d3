"""The retrieval tokenizer and the incremental BM25 index, checked against a plain reference."""

import importlib.util
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palazzo.retrieval.bm25 import ENGLISH_STOPWORDS, BM25Index, Tokenizer, normalise, tokenize

HAS_SCIPY = importlib.util.find_spec("scipy") is not None
BACKENDS = [
    "numpy",
    pytest.param("scipy", marks=pytest.mark.skipif(not HAS_SCIPY, reason="SciPy not installed")),
]


# --- tokenizer -------------------------------------------------------------------------------


def test_tokenize_lowercases_folds_and_splits():
    text = "The CAFÉ's ﬁnance_team, Straße 42!"
    assert tokenize(text, None) == ["the", "cafe", "s", "finance", "team", "strasse", "42"]
    assert tokenize(text) == ["cafe", "finance", "team", "strasse", "42"]


def test_tokenize_keeps_combining_marks_of_other_scripts():
    # Python's \w alone would cut these words at every vowel sign / haraka.
    assert tokenize("हिन्दी भाषा", None) == ["हिन्दी", "भाषा"]
    assert tokenize("العَرَبِيَّة", None) == ["العَرَبِيَّة"]


def test_tokenize_splits_han_and_kana_into_characters():
    assert tokenize("日本語のテキスト abc", None) == [*"日本語のテキスト", "abc"]


def test_tokenize_empty_and_punctuation_only():
    assert tokenize("") == []
    assert tokenize("  ... !!! --- ") == []
    assert tokenize("the and of") == []


def test_stopwords_are_normalised_lower_case_terms():
    assert all(tokenize(w, None) == [w] for w in ENGLISH_STOPWORDS)
    assert Tokenizer()("I am the cat") == ["cat"]
    assert Tokenizer(frozenset())("I am the cat") == ["i", "am", "the", "cat"]


def test_normalise_is_idempotent():
    s = "Ａｂｃ Çà ﬁ Σίσυφος"
    assert normalise(normalise(s)) == normalise(s)


# --- reference BM25 --------------------------------------------------------------------------


def reference_scores(docs, query, capacity, k1=1.5, b=0.75, stopwords=ENGLISH_STOPWORDS):
    """Okapi BM25 written plainly: docs maps row -> text."""
    terms = {row: tokenize(text, stopwords) for row, text in docs.items()}
    n = len(terms)
    out = np.zeros(capacity)
    if n == 0:
        return out
    avgdl = sum(len(t) for t in terms.values()) / n or 1.0
    for row, doc in terms.items():
        tf = Counter(doc)
        score = 0.0
        for q in tokenize(query, stopwords):  # repeated query terms count again
            if q not in tf:
                continue
            df = sum(1 for d in terms.values() if q in d)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf[q] * (k1 + 1) / (tf[q] + k1 * (1 - b + b * len(doc) / avgdl))
        out[row] = score
    return out


def assert_matches(index, docs, query, rows=None):
    got = index.scores(query, rows)
    assert got.dtype == np.float32
    assert got.shape == (index.capacity,)
    want = reference_scores(docs, query, index.capacity, index.k1, index.b)
    if rows is not None:
        keep = np.zeros(index.capacity, dtype=bool)
        if np.asarray(rows).dtype == bool:
            keep[: len(rows)] = np.asarray(rows)[: index.capacity]
        else:
            keep[[r for r in rows if r < index.capacity]] = True
        want = np.where(keep, want, 0.0)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


WORDS = ["cat", "dog", "mat", "sat", "fish", "the", "a", "Cat", "DOG!", "bird's", "x_y", "42"]
texts = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 9), texts),
        st.tuples(st.just("remove"), st.integers(0, 11), st.just("")),
        st.tuples(st.just("query"), st.integers(0, 0), texts),
        st.tuples(st.just("filter"), st.integers(0, 1023), texts),
    ),
    max_size=40,
)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("floor", [0, 3, 2048])
@settings(max_examples=60, deadline=None)
@given(ops=ops, k1=st.sampled_from([1.5, 0.9, 2.0]), b=st.sampled_from([0.75, 0.0, 1.0]))
def test_scores_equal_reference_through_any_history(backend, floor, ops, k1, b):
    index = BM25Index(k1=k1, b=b, backend=backend)
    index.rebuild_floor = floor  # small floors force snapshot rebuilds and compactions
    index.tail_share = 2
    docs = {}
    for op, row, text in ops:
        if op == "add":
            index.add(row, text)
            docs[row] = text
        elif op == "remove":
            index.remove(row)
            docs.pop(row, None)
        elif op == "query":
            assert_matches(index, docs, text)
        else:
            mask = np.array([(row >> i) & 1 for i in range(10)], dtype=bool)
            assert_matches(index, docs, text, rows=mask)
            assert_matches(index, docs, text, rows=np.flatnonzero(mask))
        assert len(index) == len(docs)
    assert_matches(index, docs, "cat dog fish mat sat bird 42 x y")


@pytest.mark.parametrize("backend", BACKENDS)
def test_large_corpus_with_default_thresholds(backend):
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(300)]
    index = BM25Index(backend=backend)
    docs = {}
    for row in range(1500):
        docs[row] = " ".join(rng.choice(vocab, size=rng.integers(0, 30)))
        index.add(row, docs[row])
    assert_matches(index, docs, "w1 w2 w3 w299 w1")
    assert index.backend == backend
    for row in range(0, 1500, 3):
        index.remove(row)
        del docs[row]
    for row in range(0, 1500, 6):
        docs[row] = " ".join(rng.choice(vocab, size=10))
        index.add(row, docs[row])
    assert_matches(index, docs, "w1 w2 w3 w299 w1")
    assert_matches(index, docs, "w7 w8", rows=np.arange(0, 1500, 2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_removal_leaves_no_stale_scores(backend):
    index = BM25Index(backend=backend)
    index.rebuild_floor = 0
    index.add(0, "red apples")
    index.add(1, "green apples")
    assert index.scores("apples").tolist() != [0.0, 0.0]
    index.remove(0)
    index.remove(1)
    assert len(index) == 0
    assert index.scores("apples").tolist() == [0.0, 0.0]
    index.remove(1)  # removing an empty slot is a no-op
    assert 1 not in index


@pytest.mark.parametrize("backend", BACKENDS)
def test_row_reuse_replaces_the_text(backend):
    index = BM25Index(backend=backend)
    index.rebuild_floor = 0
    index.add(0, "red apples")
    index.add(1, "pears")
    index.scores("apples")  # take a snapshot holding row 0's old postings
    index.add(0, "blue bananas")
    assert len(index) == 2
    assert index.scores("apples")[0] == 0.0
    assert index.scores("bananas")[0] > 0.0
    index.remove(0)
    index.add(0, "apples again")
    assert index.scores("apples")[0] > 0.0
    assert index.scores("bananas")[0] == 0.0


def test_filtering_by_mask_or_rows():
    index = BM25Index()
    for row, text in enumerate(["cat", "cat dog", "dog", "cat cat"]):
        index.add(row, text)
    full = index.scores("cat")
    mask = np.array([True, False, True, True])
    np.testing.assert_array_equal(index.scores("cat", mask), np.where(mask, full, 0))
    np.testing.assert_array_equal(index.scores("cat", np.array([3, 1])), [0, full[1], 0, full[3]])
    # A mask shorter than the index counts missing rows as excluded; extra rows are ignored.
    assert index.scores("cat", np.array([True])).tolist() == [full[0], 0, 0, 0]
    assert index.scores("cat", np.array([99, 0])).tolist() == [full[0], 0, 0, 0]
    with pytest.raises(ValueError):
        index.scores("cat", np.array([-1]))


def test_scores_of_unknown_or_empty_queries_are_zero():
    index = BM25Index()
    assert index.scores("anything").shape == (0,)
    index.add(2, "hello world")
    assert index.scores("").tolist() == [0.0, 0.0, 0.0]
    assert index.scores("the of and").tolist() == [0.0, 0.0, 0.0]
    assert index.scores("unseen").tolist() == [0.0, 0.0, 0.0]


def test_size_reserve_and_clear():
    index = BM25Index()
    index.add(1, "apple")
    assert index.scores("apple", size=4).shape == (4,)
    assert index.scores("apple", size=1).tolist() == [0.0]
    index.reserve(10)
    assert index.capacity == 10
    assert index.scores("apple").shape == (10,)
    index.clear()
    assert len(index) == 0 and index.capacity == 0
    assert index.scores("apple").shape == (0,)


def test_empty_text_is_a_document():
    index = BM25Index()
    index.add(0, "")
    index.add(1, "apple pie")
    assert len(index) == 2 and 0 in index
    assert_matches(index, {0: "", 1: "apple pie"}, "apple")


def test_backends_agree_and_auto_works_without_scipy():
    docs = {r: f"w{r % 7} w{r % 3} common" for r in range(50)}
    results = []
    for backend in ["numpy", "auto"] + (["scipy"] if HAS_SCIPY else []):
        index = BM25Index(backend=backend)
        index.rebuild_floor = 0
        for row, text in docs.items():
            index.add(row, text)
        results.append(index.scores("w1 w2 common"))
        assert index.backend == ("numpy" if backend == "auto" and not HAS_SCIPY else index.backend)
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], rtol=1e-6)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        BM25Index(k1=-1)
    with pytest.raises(ValueError):
        BM25Index(b=1.5)
    with pytest.raises(ValueError):
        BM25Index(backend="torch")
    index = BM25Index()
    with pytest.raises(ValueError):
        index.add(-1, "x")
    with pytest.raises(ValueError):
        index.add(True, "x")
    with pytest.raises(ValueError):
        index.remove(-2)


def test_the_bm25_tokenizer_stems_plain_latin_words_only():
    tok = Tokenizer()
    assert tok("She hikes; we hiked, hiking trails") == ["hike", "hike", "hike", "trail"]
    assert tok("attended sessions") == ["attend", "session"]
    # Words with digits, other scripts and Han characters are kept as tokenize gives them.
    assert tok("mp3s 2024 ελληνικά 東京") == tokenize("mp3s 2024 ελληνικά 東京")
    assert Tokenizer(stemmer=None)("hikes hiking") == ["hikes", "hiking"]
    with pytest.raises(ValueError, match="unknown stemmer"):
        Tokenizer(stemmer="klingon")


def test_a_query_meets_the_drawer_in_another_form_of_its_words():
    for stemmer, found in (("english", True), (None, False)):
        index = BM25Index(tokenizer=Tokenizer(stemmer=stemmer))
        index.add(0, "We went hiking on two consecutive weekends")
        index.add(1, "a quiet week of reading")
        assert bool(index.scores("how long were the hikes", size=2)[0] > 0) is found


def test_the_stemmer_travels_with_the_state_and_old_states_stay_unstemmed():
    index = BM25Index()
    index.add(0, "hiking boots")
    again = BM25Index.from_state(index.state())
    assert again.tokenizer.stemmer == "english+russian" and again.scores("hikes", size=1)[0] > 0
    old = BM25Index(tokenizer=Tokenizer(stemmer=None))
    old.add(0, "hiking boots")
    state = old.state()
    del state["stemmer"]  # what a snapshot written before stemming holds
    restored = BM25Index.from_state(state)
    assert restored.tokenizer.stemmer is None
    assert restored.scores("hiking", size=1)[0] > 0 and restored.scores("hikes", size=1)[0] == 0


def test_hangul_is_indexed_in_two_syllable_pieces_across_particles_and_compounds():
    from palazzo.retrieval.bm25 import hangul_bigrams

    assert hangul_bigrams("휴가와") == ["휴가", "가와"]
    assert hangul_bigrams("python으로") == ["python", "으로"]
    assert hangul_bigrams("돈") == ["돈"]
    assert Tokenizer()("금융소득 the hikes") == ["금융", "융소", "소득", "hike"]
    assert Tokenizer(hangul=None)("금융소득 휴가와") == ["금융소득", "휴가와"]
    index = BM25Index()
    index.add(0, "유급 휴가를 포함한 휴식과 여가의 권리를 가진다.")
    index.add(1, "모든 사람은 교육을 받을 권리를 가진다.")
    scores = index.scores("휴가와 여가", size=2)  # the particles differ from the drawer's
    assert scores[0] > 0 and scores[1] == 0


def test_russian_words_are_stemmed_and_other_scripts_left_as_written():
    assert Tokenizer()("пытками пыткам") == ["пытк", "пытк"]
    assert Tokenizer(stemmer="english")("пыток пытками") == ["пыток", "пытками"]
    assert Tokenizer()("hiking Ölçü 東京") == ["hike", "olcu", "東", "京"]
    index = BM25Index()
    index.add(0, "Никто не должен подвергаться пыткам.")
    assert index.scores("запрет на пытки", size=1)[0] > 0


def test_an_index_saved_before_hangul_pieces_and_russian_stems_keeps_reading_as_it_was():
    old = BM25Index(tokenizer=Tokenizer(stemmer="english", hangul=None))
    old.add(0, "금융소득 종합과세")
    state = old.state()
    del state["hangul"]  # what a snapshot written before Hangul pieces holds
    restored = BM25Index.from_state(state)
    assert restored.tokenizer == Tokenizer(stemmer="english", hangul=None)
    assert restored.tokenizer != Tokenizer()  # so a palace opening it tokenises again
    assert restored.scores("금융소득", size=1)[0] > 0


def test_idf_is_the_weight_scores_give_a_term():
    index = BM25Index()
    for i, text in enumerate(["red fox", "red hen", "blue whale"]):
        index.add(i, text)
    idf = index.idf(["red", "whale", "absent"])
    assert idf["absent"] == 0.0
    assert idf["whale"] > idf["red"] > 0
    # One term, one occurrence: the score is the IDF times BM25's length factor.
    assert index.scores("whale")[2] == pytest.approx(idf["whale"] * 2.5 / (1 + 1.5), rel=1e-5)


@pytest.mark.cpython_only  # (Pyodide starts no threads)
def test_threads_stem_at_once_and_get_what_one_thread_gets(race):
    """A Snowball stemmer keeps its word in the instance: threads (the palace server's two
    copies of a palace) each get their own, so none gets another's stem."""
    from palazzo.retrieval import bm25

    words = [f"{w}{s}" for w in ("connect", "run", "happi", "generaliz", "lantern", "wick")
             for s in ("", "s", "ing", "ed", "ation", "ness", "ly")]
    expected = {w: bm25._english()(w) for w in words}
    wrong = []

    def work(_):
        stem_word = bm25._english()
        for _ in range(200):
            for w in words:
                if stem_word(w) != expected[w]:
                    wrong.append(w)

    assert race(work) == [] and wrong == []

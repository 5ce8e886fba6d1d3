"""Keyword retrieval: the retrieval tokenizer and an incremental Okapi BM25 index.

The tokenizer
-------------
:func:`tokenize` turns text into the terms BM25 and the TF-IDF embedder count:

1. Unicode compatibility normalisation (NFKC): ligatures, full-width forms and circled
   digits become their plain letters (``ﬁ`` -> ``fi``, ``Ａ`` -> ``A``).
2. Latin/Greek/Cyrillic diacritics are folded (``café`` -> ``cafe``): the combining marks
   U+0300–U+036F are dropped after a canonical decomposition. Marks of other scripts are kept.
3. Case folding (``Straße`` -> ``strasse``).
4. Words are maximal runs of letters and digits (Python's ``\\w`` without the underscore, so
   ``snake_case`` gives ``snake``, ``case``), extended with combining marks: Python's ``\\w``
   does not match the vowel signs of Indic scripts or Arabic harakat, and would cut
   ``हिन्दी`` into single letters. Apostrophes and other punctuation separate words
   (``don't`` -> ``don``, ``t``; the fragments are stopwords).
5. Han ideographs and kana, written without spaces, become one term per character.
6. Optionally, English stopwords (:data:`ENGLISH_STOPWORDS`, a short explicit list) are dropped.

:func:`tokenize` does not stem (the TF-IDF and hashing embedders count its terms as they are).
BM25's :class:`Tokenizer` then stems the words written in plain Latin letters with the
Snowball English stemmer (the ``snowballstemmer`` package: ``hikes``, ``hiking`` -> ``hike``;
``attended`` -> ``attend``), so a question and the drawer that answers it meet whatever form
each uses. Measured on the development split: hybrid R@5 any 0.96 -> 0.98, NDCG@10 0.919 ->
0.935 (docs/benchmarks.md, "Stemming"). Other scripts and words with digits are kept as they
are. Tokenizing a text costs O(len(text)) plus one dictionary lookup a word (stems are cached).

The index
---------
:class:`BM25Index` scores integer row slots (a palace's drawer rows, reused after deletion).
Postings live in an append-only log (row, term, tf, live flag); removing a row only clears its
live flags and updates the document frequencies. A term-major snapshot of the log (a SciPy CSC
matrix, or the same layout in plain NumPy when SciPy is not loaded yet) answers queries by
slicing the query terms' columns; postings appended since the snapshot (its *tail*) are scanned
directly. The snapshot is rebuilt lazily, at query time, once the tail or the dead postings
outgrow a fixed share of the index, so each posting is re-sorted O(1) times amortised and a
query never touches postings of terms it does not contain beyond that bounded tail.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Backend = Literal["auto", "scipy", "numpy"]

# Function words that carry no topic, plus the fragments contractions split into
# ("don't" -> "don", "t"). Kept short and explicit; edit here, never at run time.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    (
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
        "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
        "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for",
        "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
        "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
        "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on",
        "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same",
        "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
        "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
        "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
        "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself",
        "yourselves", "d", "ll", "m", "o", "re", "s", "t", "ve", "y", "aren", "couldn", "didn",
        "doesn", "don", "hadn", "hasn", "haven", "isn", "mightn", "mustn", "needn", "shan",
        "shouldn", "wasn", "weren", "won", "wouldn",
    )
)

# Combining marks are searched for only in the blocks where scripts written with them live,
# so building the table costs about a millisecond at import instead of a scan of all Unicode.
_MARK_BLOCKS = (
    (0x0300, 0x1DFF),
    (0x20D0, 0x20FF),
    (0x2CEF, 0x2DFF),
    (0x302A, 0x309A),
    (0xA66F, 0xABFF),
    (0xFB1E, 0xFB1E),
    (0xFE00, 0xFE2F),
)
_HAN_AND_KANA = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
)
# Canonical decomposition splits é into e + U+0301; dropping U+0300–U+036F folds the accent.
_FOLDED_DIACRITICS = dict.fromkeys(range(0x0300, 0x0370))


def _mark_class() -> str:
    """Return a regex character-class body of every combining mark in :data:`_MARK_BLOCKS`."""
    ranges: list[tuple[int, int]] = []
    for lo, hi in _MARK_BLOCKS:
        for cp in range(lo, hi + 1):
            if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me"):
                if ranges and ranges[-1][1] == cp - 1:
                    ranges[-1] = (ranges[-1][0], cp)
                else:
                    ranges.append((cp, cp))
    return "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in ranges)


# One Han/kana character, or a run of letters/digits that may carry combining marks. (Written
# as letters+ (marks+ letters*)* so the common case never tests the long mark class.)
_LETTER = f"[^\\W_{_HAN_AND_KANA}]"
_TERM = re.compile(f"[{_HAN_AND_KANA}]|{_LETTER}+(?:[{_mark_class()}]+{_LETTER}*)*")


def normalise(text: str) -> str:
    """Return ``text`` compatibility-normalised, with Latin diacritics folded and case folded.

    Cost: O(len(text)).
    """
    text = unicodedata.normalize("NFKD", text).translate(_FOLDED_DIACRITICS)
    return unicodedata.normalize("NFC", text).casefold()


def tokenize(text: str, stopwords: Iterable[str] | None = ENGLISH_STOPWORDS) -> list[str]:
    """Return the retrieval terms of ``text`` in order (see the module docstring).

    ``stopwords`` (already normalised, lower-case) are dropped; pass ``None`` to keep every
    term. Cost: O(len(text)).
    """
    terms = _TERM.findall(normalise(text))
    if not stopwords:
        return terms
    stop = stopwords if isinstance(stopwords, frozenset | set) else frozenset(stopwords)
    return [t for t in terms if t not in stop]


# What Tokenizer.stemmer may name (None: no stemming): English alone (indexes saved before
# Russian was stemmed), or English for plain Latin words and Russian for Cyrillic ones.
STEMMERS = ("english", "english+russian")
_PLAIN_WORD = re.compile(r"[a-z]+")
_CYRILLIC_WORD = re.compile(r"[а-яё]+")
_STEM_CACHE_LIMIT = 200_000  # distinct words whose stems are kept (about 30 MB at most)


_STEMMERS = threading.local()  # this thread's Snowball stemmers, by language


def _stemmer(language: str):
    """Return this thread's Snowball ``language`` stemmer's ``stemWord`` (imported on first
    use: importing ``snowballstemmer`` loads all its languages, about 0.1 s).

    Why one a thread: a Snowball stemmer keeps the word it works on in the instance, so two
    threads stemming with one (the palace server's two copies, one writing and one
    reading) get each other's stems or an IndexError; a wrong stem would then be cached."""
    word = getattr(_STEMMERS, language, None)
    if word is None:
        from snowballstemmer import stemmer

        word = stemmer(language).stemWord
        setattr(_STEMMERS, language, word)
    return word


def _english():
    """Return this thread's Snowball English stemmer's ``stemWord``."""
    return _stemmer("english")


def _russian():
    """Return this thread's Snowball Russian stemmer's ``stemWord``."""
    return _stemmer("russian")


@functools.lru_cache(maxsize=_STEM_CACHE_LIMIT)
def stem_cyrillic(term: str) -> str:
    """Return the Snowball Russian stem of ``term`` when it is a word of Cyrillic letters
    (lower case, as :func:`tokenize` leaves them), else :func:`stem` of it.

    Why: Russian inflects nouns by case (``пытка``, ``пыток``, ``пытками``), so a question and
    the drawer that answers it rarely share a word form; on the UDHR set Russian R@5 was 0.67
    with words as written. Cached; the first call imports the stemmer."""
    if not _CYRILLIC_WORD.fullmatch(term):
        return stem(term)
    return _russian()(term)


@functools.lru_cache(maxsize=_STEM_CACHE_LIMIT)
def stem(term: str) -> str:
    """Return the Snowball English stem of ``term`` when it is a word of plain Latin letters
    (a-z, as :func:`tokenize` leaves them), else ``term`` unchanged. Cached; the first call
    imports the stemmer."""
    if not _PLAIN_WORD.fullmatch(term):
        return term
    return _english()(term)


HANGUL = ("bigram",)  # what Tokenizer.hangul may name (None: a Hangul word is one term)
# Hangul syllables, jamo and compatibility jamo: the letters of Korean.
_HANGUL_RUN = re.compile("([\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]+)")


def hangul_bigrams(term: str) -> list[str]:
    """Return ``term`` with each run of Hangul in it as its overlapping two-syllable pieces
    (a run of one syllable stays whole) and the rest of the term as it is:
    ``휴가와`` -> ``휴가``, ``가와``; ``python으로`` -> ``python``, ``으로``.

    Why: Korean glues particles and endings to words (``휴가와``, ``휴가를``, ``휴가``), and
    writes compounds as one word (``금융소득``), so a word-per-term index missed most Korean
    questions (UDHR set: Korean R@5 0.46, three queries with no result at all). Two-syllable
    pieces match across particles and inside compounds, the way search engines index
    Korean and Chinese without a dictionary. Cost: O(len(term))."""
    out: list[str] = []
    for i, part in enumerate(_HANGUL_RUN.split(term)):
        if not part:
            continue
        if i % 2 == 0 or len(part) == 1:  # the text between runs, or a lone syllable
            out.append(part)
        else:
            out.extend(part[j : j + 2] for j in range(len(part) - 1))
    return out


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """The retrieval tokenizer with its stopword list, stemmer and Hangul rule bound:
    ``Tokenizer()(text)`` -> terms. ``stemmer`` None keeps words as :func:`tokenize` gives
    them (what indexes saved before stemming used); ``hangul`` None keeps a Hangul word one
    term (what indexes saved before :func:`hangul_bigrams` used)."""

    stopwords: frozenset[str] = ENGLISH_STOPWORDS
    stemmer: str | None = "english+russian"
    hangul: str | None = "bigram"

    def __post_init__(self) -> None:
        if self.stemmer is not None and self.stemmer not in STEMMERS:
            raise ValueError(f"unknown stemmer {self.stemmer!r} (known: {', '.join(STEMMERS)})")
        if self.hangul is not None and self.hangul not in HANGUL:
            raise ValueError(f"unknown Hangul rule {self.hangul!r} (known: {', '.join(HANGUL)})")

    def __call__(self, text: str) -> list[str]:
        """Return the terms of ``text`` (see :func:`tokenize`), stemmed, Hangul in two-syllable
        pieces. Cost: O(len(text)); a text without Hangul pays one regex search for it."""
        terms = tokenize(text, self.stopwords)
        if self.stemmer == "english":
            terms = [stem(t) for t in terms]
        elif self.stemmer is not None:
            terms = [stem_cyrillic(t) if not t.isascii() else stem(t) for t in terms]
        if self.hangul is not None and _HANGUL_RUN.search(text):
            terms = [p for t in terms for p in
                     (hangul_bigrams(t) if not t.isascii() else (t,))]
        return terms


def _grown(a: np.ndarray, need: int) -> np.ndarray:
    """Return ``a`` itself if it holds ``need`` items, else a zero-padded copy at least twice
    as long (amortised O(1) per appended item)."""
    if need <= len(a):
        return a
    out = np.zeros(max(need, 2 * len(a), 16), dtype=a.dtype)
    out[: len(a)] = a
    return out


def _small(values: np.ndarray) -> np.ndarray:
    """Return non-negative integers ``values`` in the smallest unsigned type holding them."""
    top = int(values.max()) if len(values) else 0
    return values.astype(np.min_scalar_type(top))


def _load_sparse():
    """Return the ``scipy.sparse`` module, or None while SciPy cannot be imported.

    Tried again at every snapshot rebuild: in the browser SciPy arrives after the first render.
    """
    try:
        import scipy.sparse as sparse
    except ImportError:
        return None
    return sparse


class BM25Index:
    """Okapi BM25 over integer row slots, updated in place.

    ``score(row) = Σ_t qtf(t) · idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`` over the
    query's distinct terms ``t`` (``qtf``: how often ``t`` occurs in the query), with
    ``idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5))``, ``N`` the number of rows present, ``df`` the
    rows containing ``t``, ``dl`` a row's term count and ``avgdl`` the mean over present rows.
    A row whose text has no terms still counts in ``N`` and ``avgdl``. Statistics are always
    those of the whole index, also when a query is restricted to some rows.

    ``backend`` picks the snapshot layout: ``"scipy"`` (CSC matrix, column slices),
    ``"numpy"`` (the same layout by hand) or ``"auto"`` (SciPy when importable). Scores do not
    depend on it.
    """

    # The snapshot is rebuilt when the unsnapshotted tail holds more than ``rebuild_floor``
    # postings and more than 1/``tail_share`` of the snapshot, or when dead postings outnumber
    # both the floor and the live ones. (Class constants; tests shrink them on an instance.)
    rebuild_floor = 2048
    tail_share = 8

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        *,
        tokenizer: Tokenizer | None = None,
        backend: Backend = "auto",
    ) -> None:
        if not k1 >= 0.0:
            raise ValueError(f"k1 must be >= 0, got {k1}")
        if not 0.0 <= b <= 1.0:
            raise ValueError(f"b must be between 0 and 1, got {b}")
        if backend not in ("auto", "scipy", "numpy"):
            raise ValueError(f"backend must be 'auto', 'scipy' or 'numpy', got {backend!r}")
        if backend == "scipy" and _load_sparse() is None:
            raise ImportError("backend='scipy' needs SciPy, which cannot be imported here")
        self.k1 = float(k1)
        self.b = float(b)
        self.tokenizer = tokenizer if tokenizer is not None else Tokenizer()
        self._backend_choice: Backend = backend
        # True when this index was rebuilt from the drawers because the one saved was
        # tokenised another way (before stemming): the store then saves it at once.
        self.retokenised = False
        self.clear()

    # --- size -----------------------------------------------------------------------------

    def clear(self) -> None:
        """Forget every row and term. Cost: O(1) (arrays are reallocated small)."""
        self._vocab: dict[str, int] = {}
        self._df = np.zeros(64, dtype=np.intp)
        # The postings log: one entry per (row, distinct term) of every add, in add order.
        self._p_row = np.zeros(1024, dtype=np.int32)
        self._p_term = np.zeros(1024, dtype=np.int32)
        self._p_tf = np.zeros(1024, dtype=np.int32)
        self._p_live = np.zeros(1024, dtype=bool)
        self._p_len = 0
        self._p_dead = 0
        # Per row slot: its postings are log[start:stop] while present.
        self._capacity = 0
        self._start = np.zeros(64, dtype=np.intp)
        self._stop = np.zeros(64, dtype=np.intp)
        self._dl = np.zeros(64, dtype=np.float64)
        self._present = np.zeros(64, dtype=bool)
        self._n_docs = 0
        self._total_len = 0
        # The term-major snapshot of log[:_snap_len] over the first _snap_terms term ids.
        self._snap = None
        self._snap_kind: str | None = None
        self._snap_len = 0
        self._snap_terms = 0

    def __len__(self) -> int:
        """Return the number of rows present (rows with empty text included)."""
        return self._n_docs

    def __contains__(self, row: object) -> bool:
        return isinstance(row, int | np.integer) and 0 <= row < self._capacity and bool(
            self._present[row]
        )

    def lengths(self, size: int) -> np.ndarray:
        """Return each of the first ``size`` row slots' term count, -1 where no document is
        indexed: what ``repair`` compares with an index rebuilt from the drawers' text.
        Cost: O(size)."""
        out = np.full(size, -1, dtype=np.int64)
        n = min(size, self._capacity)
        present = self._present[:n].astype(bool)
        out[:n][present] = self._dl[:n][present]
        return out

    @property
    def capacity(self) -> int:
        """Length of the arrays :meth:`scores` returns: one past the highest row slot seen."""
        return self._capacity

    @property
    def backend(self) -> str | None:
        """``"scipy"`` or ``"numpy"``: the layout of the current snapshot (None before one)."""
        return self._snap_kind

    def reserve(self, capacity: int, postings: int = 0, rows: int = 0) -> None:
        """Make :meth:`scores` return at least ``capacity`` slots (empty ones score 0), and
        make room for ``rows`` more slots and ``postings`` more (term, document) entries
        without changing what :meth:`scores` returns, so that adding documents copies
        nothing until that room is used up. O(cap) when anything grows."""
        if capacity > self._capacity:
            self._grow_rows(capacity)
        if self._capacity + rows > len(self._start):
            capacity = self._capacity
            self._grow_rows(capacity + rows)
            self._capacity = capacity
        need = self._p_len + postings
        if need > len(self._p_row):
            self._p_row = _grown(self._p_row, need)
            self._p_term = _grown(self._p_term, need)
            self._p_tf = _grown(self._p_tf, need)
            self._p_live = _grown(self._p_live, need)

    def _grow_rows(self, capacity: int) -> None:
        self._start = _grown(self._start, capacity)
        self._stop = _grown(self._stop, capacity)
        self._dl = _grown(self._dl, capacity)
        self._present = _grown(self._present, capacity)
        self._capacity = capacity

    # --- updates --------------------------------------------------------------------------

    def add(self, row: int, text: str) -> None:
        """Index ``text`` as the document of ``row``, replacing its previous text.

        Cost: O(len(text)) plus amortised O(1) per distinct term; nothing is rebuilt here.
        """
        row = self._check_row(row)
        if row < self._capacity and self._present[row]:
            self.remove(row)
        counts = Counter(self.tokenizer(text))
        ids = np.fromiter(
            (self._term_id(t) for t in counts), dtype=np.int32, count=len(counts)
        )
        tf = np.fromiter(counts.values(), dtype=np.int32, count=len(counts))
        self._df[ids] += 1  # ids are distinct, so plain fancy-index addition is exact

        m, lo = len(ids), self._p_len
        hi = lo + m
        self.reserve(0, m)
        self._p_row[lo:hi] = row
        self._p_term[lo:hi] = ids
        self._p_tf[lo:hi] = tf
        self._p_live[lo:hi] = True
        self._p_len = hi

        if row >= self._capacity:
            self._grow_rows(row + 1)
        dl = int(tf.sum())
        self._start[row], self._stop[row] = lo, hi
        self._dl[row] = dl
        self._present[row] = True
        self._n_docs += 1
        self._total_len += dl

    def remove(self, row: int) -> None:
        """Drop the document of ``row`` (no-op if the slot is empty). Cost: O(its terms)."""
        row = self._check_row(row)
        if row >= self._capacity or not self._present[row]:
            return
        lo, hi = int(self._start[row]), int(self._stop[row])
        self._df[self._p_term[lo:hi]] -= 1
        self._p_live[lo:hi] = False
        self._p_dead += hi - lo
        self._n_docs -= 1
        self._total_len -= int(self._dl[row])
        self._dl[row] = 0.0
        self._present[row] = False
        if self._p_dead > max(self.rebuild_floor, self._p_len - self._p_dead):
            self._rebuild()  # keeps the log's garbage bounded when nobody queries

    @staticmethod
    def _check_row(row: int) -> int:
        if not isinstance(row, int | np.integer) or isinstance(row, bool) or row < 0:
            raise ValueError(f"row must be a non-negative integer, got {row!r}")
        return int(row)

    def _term_id(self, term: str) -> int:
        tid = self._vocab.get(term)
        if tid is None:
            tid = self._vocab[term] = len(self._vocab)
            self._df = _grown(self._df, tid + 1)
        return tid

    # --- saving -----------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Return the whole index as arrays and numbers, what a columnar palace snapshot
        stores so that opening a palace never tokenises a drawer again.

        The postings log comes without its dead postings, with the term-major layout of
        :meth:`_rebuild`'s NumPy backend (``snap_indptr``, ``snap_order``) so a restored index
        answers its first query without a rebuild; ``vocab`` lists the terms in id order.
        Cost: O(P log P) for P live postings (one stable argsort); the index is not changed.
        """
        n = self._p_len
        live = self._p_live[:n]
        before = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(live, out=before[1:])
        keep = np.flatnonzero(live)
        cap = self._capacity
        present = self._present[:cap]
        terms = self._p_term[keep]
        n_terms = len(self._vocab)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=indptr[1:])
        return {
            "k1": self.k1, "b": self.b, "stopwords": sorted(self.tokenizer.stopwords),
            "stemmer": self.tokenizer.stemmer, "hangul": self.tokenizer.hangul,
            "vocab": list(self._vocab), "df": self._df[:n_terms].astype(np.int64),
            # A row's postings lie together in the log, so rows are not stored: from_state
            # spreads each present row over its start:stop. Numbers go in the smallest
            # integer type that holds them.
            "p_term": _small(terms), "p_tf": _small(self._p_tf[keep]),
            "start": np.where(present, before[self._start[:cap]], 0),
            "stop": np.where(present, before[self._stop[:cap]], 0),
            "dl": self._dl[:cap].copy(), "present": present.copy(),
            "n_docs": self._n_docs, "total_len": self._total_len,
            "snap_indptr": indptr,
            "snap_order": _small(np.argsort(terms, kind="stable")),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> BM25Index:
        """Return the index :meth:`state` described, ready to answer queries (its term-major
        layout is taken as stored). Arrays already of the index's own types are taken as
        they are, not copied: a snapshot's views become the index's arrays (the caller gives
        arrays the index may change). Cost: O(terms) for the vocabulary dict plus the
        postings' row numbers and type conversions; no text is tokenised."""
        # An index saved before stemming has no "stemmer": it keeps reading words unstemmed.
        # One saved before Hangul bigrams has no "hangul": it keeps Hangul words whole.
        index = cls(state["k1"], state["b"], tokenizer=Tokenizer(
            frozenset(state["stopwords"]), state.get("stemmer"), state.get("hangul")))
        index._vocab = {term: i for i, term in enumerate(state["vocab"])}
        index._df = np.asarray(state["df"], dtype=np.intp)
        m = len(state["p_term"])
        # np.intp: wasm32 NumPy refuses int64 counts in np.repeat (and indices in bincount).
        start = np.asarray(state["start"], dtype=np.intp)
        stop = np.asarray(state["stop"], dtype=np.intp)
        rows = np.flatnonzero(state["present"])
        rows = rows[np.argsort(start[rows], kind="stable")]
        index._p_row = np.repeat(rows, stop[rows] - start[rows]).astype(np.int32)
        if len(index._p_row) != m:
            raise ValueError("the index's rows do not cover its postings")
        index._p_term = np.asarray(state["p_term"], dtype=np.int32)
        index._p_tf = np.asarray(state["p_tf"], dtype=np.int32)
        index._p_live = np.ones(m, dtype=bool)
        index._p_len, index._p_dead = m, 0
        cap = len(state["present"])
        index._capacity = cap
        index._start = start
        index._stop = stop
        index._dl = np.asarray(state["dl"], dtype=np.float64)
        index._present = np.asarray(state["present"], dtype=bool)
        index._n_docs = int(state["n_docs"])
        index._total_len = int(state["total_len"])
        index._snap = (np.asarray(state["snap_indptr"], dtype=np.intp),
                       np.asarray(state["snap_order"], dtype=np.intp))
        index._snap_kind = "numpy"
        index._snap_len = m
        index._snap_terms = len(index._vocab)
        return index

    # --- snapshot -------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Rebuild the snapshot if the tail or the dead postings have grown too large."""
        live = self._p_len - self._p_dead
        tail = self._p_len - self._snap_len
        floor = self.rebuild_floor
        if tail > max(floor, self._snap_len // self.tail_share) or self._p_dead > max(floor, live):
            self._rebuild()

    def _rebuild(self) -> None:
        """Compact the log to its live postings and snapshot it term-major. O(P log P)."""
        n = self._p_len
        live = self._p_live[:n]
        before = np.zeros(n + 1, dtype=np.intp)
        np.cumsum(live, out=before[1:])
        keep = np.flatnonzero(live)
        present = self._present[: self._capacity]
        self._start[: self._capacity] = np.where(present, before[self._start[: self._capacity]], 0)
        self._stop[: self._capacity] = np.where(present, before[self._stop[: self._capacity]], 0)
        m = len(keep)
        self._p_row[:m] = self._p_row[keep]
        self._p_term[:m] = self._p_term[keep]
        self._p_tf[:m] = self._p_tf[keep]
        self._p_live[:m] = True
        self._p_len, self._p_dead = m, 0

        n_terms = len(self._vocab)
        rows, terms = self._p_row[:m], self._p_term[:m]
        sparse = None if self._backend_choice == "numpy" else _load_sparse()
        if sparse is not None:
            # Data holds log position + 1 (a stored 0 could be dropped as an explicit zero).
            pos1 = np.arange(1, m + 1, dtype=np.intp)
            self._snap = sparse.csc_matrix(
                (pos1, (rows, terms)), shape=(max(self._capacity, 1), max(n_terms, 1))
            )
            self._snap_kind = "scipy"
        else:
            order = np.argsort(terms, kind="stable")
            indptr = np.zeros(n_terms + 1, dtype=np.intp)
            np.cumsum(np.bincount(terms, minlength=n_terms), out=indptr[1:])
            self._snap = (indptr, order.astype(np.intp))
            self._snap_kind = "numpy"
        self._snap_len = m
        self._snap_terms = n_terms

    def _postings(self, qids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (log positions, index into ``qids``) of every posting of the sorted term ids
        ``qids``, dead ones included. Cost: O(their postings + tail)."""
        parts_pos, parts_col = [], []
        in_snap = qids[qids < self._snap_terms]
        if len(in_snap) and self._snap is not None:
            if self._snap_kind == "scipy":
                sub = self._snap[:, in_snap]
                pos = sub.data.astype(np.intp) - 1
                col = np.repeat(np.arange(len(in_snap)), np.diff(sub.indptr))
            else:
                indptr, order = self._snap
                lo, hi = indptr[in_snap], indptr[in_snap + 1]
                lens = hi - lo
                col = np.repeat(np.arange(len(in_snap)), lens)
                # Concatenated ranges lo[i]..hi[i]: a running index shifted per range.
                offsets = np.repeat(lo - (np.cumsum(lens) - lens), lens)
                pos = order[np.arange(int(lens.sum())) + offsets]
            parts_pos.append(pos)
            parts_col.append(col)
        if self._p_len > self._snap_len:
            tail = np.arange(self._snap_len, self._p_len)
            tterm = self._p_term[tail]
            j = np.minimum(np.searchsorted(qids, tterm), len(qids) - 1)
            hit = qids[j] == tterm
            parts_pos.append(tail[hit])
            parts_col.append(j[hit])
        if not parts_pos:
            return np.empty(0, np.intp), np.empty(0, np.intp)
        return np.concatenate(parts_pos), np.concatenate(parts_col)

    # --- queries --------------------------------------------------------------------------

    def idf(self, terms: Iterable[str]) -> dict[str, float]:
        """Return the IDF (as :meth:`scores` weighs it) of each of ``terms`` (tokenised
        terms, not text); 0 for a term no row holds. Why: the event list weighs a clause's
        words in a sentence by how rare they are in the palace. Cost: O(len(terms))."""
        n = float(self._n_docs)
        out = {}
        for t in terms:
            tid = self._vocab.get(t)
            df = float(self._df[tid]) if tid is not None else 0.0
            out[t] = float(np.log1p((n - df + 0.5) / (df + 0.5))) if df > 0 and n > 0 else 0.0
        return out

    def scores(
        self,
        query: str,
        rows: np.ndarray | None = None,
        *,
        size: int | None = None,
    ) -> np.ndarray:
        """Return the float32 BM25 score of every row slot for ``query``.

        The result has :attr:`capacity` entries (or ``size``, padded with zeros or cut);
        empty and removed slots score 0, as do rows sharing no term with the query. ``rows``
        restricts scoring to a subset: a boolean mask over slots (missing entries count as
        False) or an array of row numbers; the other rows score 0.

        Cost: tokenizing the query, then O(postings of its terms + unsnapshotted tail) and
        one O(capacity) output array; occasionally an amortised snapshot rebuild.
        """
        n_out = self._capacity if size is None else int(size)
        out = np.zeros(n_out, dtype=np.float32)
        qcounts = Counter(t for t in self.tokenizer(query) if t in self._vocab)
        if not qcounts or self._n_docs == 0 or n_out == 0:
            return out
        self._refresh()
        pairs = sorted((self._vocab[t], c) for t, c in qcounts.items())
        qids = np.array([p[0] for p in pairs], dtype=np.intp)
        qtf = np.array([p[1] for p in pairs], dtype=np.float64)

        pos, col = self._postings(qids)
        keep = self._p_live[pos]
        row = self._p_row[pos]
        if rows is not None:
            keep &= self._row_mask(rows)[row]
        pos, col, row = pos[keep], col[keep], row[keep]

        n = float(self._n_docs)
        df = self._df[qids].astype(np.float64)
        weight = qtf * np.log1p((n - df + 0.5) / (df + 0.5))
        avgdl = self._total_len / n if self._total_len > 0 else 1.0
        tf = self._p_tf[pos].astype(np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * self._dl[row] / avgdl)
        contrib = weight[col] * tf * (self.k1 + 1.0) / (tf + norm)
        total = np.bincount(row, weights=contrib, minlength=self._capacity)
        m = min(n_out, self._capacity)
        out[:m] = total[:m]
        return out

    def _row_mask(self, rows: np.ndarray) -> np.ndarray:
        """Return a boolean mask of length :attr:`capacity` from a mask or a row array."""
        rows = np.asarray(rows)
        mask = np.zeros(self._capacity, dtype=bool)
        if rows.dtype == bool:
            m = min(len(rows), self._capacity)
            mask[:m] = rows[:m]
        else:
            r = rows.astype(np.intp, copy=False).ravel()
            if len(r) and r.min() < 0:
                raise ValueError("row numbers must be non-negative")
            mask[r[r < self._capacity]] = True
        return mask

    # --- reading the postings ---------------------------------------------------------------

    def postings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (rows, term ids, term counts) of every live posting, one a (row, distinct
        term) pair, in the log's order: the index read as a sparse row × term matrix (what
        the communities' naming and their no-vector fallback count). Cost: O(postings)."""
        n = self._p_len
        keep = np.flatnonzero(self._p_live[:n])
        return self._p_row[keep], self._p_term[keep], self._p_tf[keep]

    def vocabulary(self) -> list[str]:
        """Return the index's terms in term-id order (the ids :meth:`postings` gives), as the
        tokenizer left them (stemmed when it stems). Cost: O(terms)."""
        return list(self._vocab)

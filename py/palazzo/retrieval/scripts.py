"""Which writing systems an embedder reads, and whether a text is written in them.

MiniLM (all-MiniLM-L6-v2) was trained on English sentence pairs: for Korean, Japanese,
Chinese, Arabic or Cyrillic text its word pieces are mostly single characters or unknown
tokens, and its vectors say little about meaning. A query in such a script then ranks
unrelated drawers first by "meaning" (a Korean query about income tax put a GitHub-upload chat
first in a real export). So hybrid search asks :func:`reads` whether the palace's embedder
reads the query's script; when it does not, the vector list stays out of the fusion and BM25
decides (the hit says so: ``scores.vector_read`` false).

What an embedder reads is known by its name (:data:`READS`); embedders not listed (the hash
and TF-IDF embedders, which work on the characters and words themselves) read every script.
Cost: one pass over the text's characters.
"""

from __future__ import annotations

import re
from typing import Any

LATIN = "latin"
# Embedders by name, and the script each reads well; absent: every script.
READS = {"minilm": LATIN}
# Letters of the Latin script: ASCII, Latin-1, Latin Extended-A/B, Latin Extended Additional.
_LATIN = re.compile(r"[A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F\u1E00-\u1EFF]")
_LETTER = re.compile(r"[^\W\d_]")
SHARE = 0.5  # the share of a text's letters that must be in the script read


def latin_share(text: str) -> float:
    """Return the share of ``text``'s letters that are Latin (1.0 for a text without any
    letter: digits and signs read the same in every script). Cost: two regex scans."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return 1.0
    return len(_LATIN.findall(text)) / letters


def reads(embedder: Any) -> str | None:
    """Return the script ``embedder`` reads well (``"latin"``), or None when it reads every
    script (or there is none)."""
    return None if embedder is None else READS.get(getattr(embedder, "name", None))


def readable(text: str, embedder: Any) -> bool:
    """Return whether ``embedder`` reads ``text``'s script: always for an embedder without
    a limit, else when at least :data:`SHARE` of its letters are in the script it reads."""
    script = reads(embedder)
    return script is None or latin_share(text) >= SHARE

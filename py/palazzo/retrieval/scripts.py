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
import weakref
from typing import Any

import numpy as np

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


SAMPLE = 600  # characters of a drawer's opening read to tell its script


class Unread:
    """Which drawers of a palace are written in a script its embedder does not read.

    Such drawers get no vector: MiniLM's vector of a Korean text says little about its
    meaning and ranked unrelated drawers first, so embedding it is model work for nothing
    (most of a mostly-Korean export's). Their words rank them (a drawer without a vector
    keeps the place BM25 gives it: retrieval.search.unembedded_term), the embedding queue
    leaves them out, and the status line says semantic search reads English only for them.

    Kept per palace (:func:`unread_mask`) as drawer id → read or not: an id names a drawer's text
    (an edit gives a new id), so an answer stays right until the text changes. Why a cache:
    the status is asked after every change, and reading every drawer's letters each time
    would cost ~1 s at 20k drawers. Cost: the first look at a drawer reads :data:`SAMPLE`
    characters of it (a drawer's opening tells its script); later ones a dict lookup."""

    __slots__ = ("script", "seen")

    def __init__(self, script: str) -> None:
        self.script = script
        self.seen: dict[str, bool] = {}

    def mask(self, store: Any, rows: np.ndarray) -> np.ndarray:
        """Return, for ``rows`` of the drawer ``store``, whether each is NOT read."""
        seen = self.seen
        if len(seen) > 2 * max(store.size, 1024):  # ids of drawers gone since: start again
            seen.clear()
        out = np.zeros(len(rows), dtype=bool)
        for i, r in enumerate(rows.tolist()):
            did = store.ids[r]
            read = seen.get(did)
            if read is None:
                read = seen[did] = latin_share(store.content[r][:SAMPLE]) >= SHARE
            out[i] = not read
        return out


# Per palace, weakly: a palace switched away from is not kept alive by its count.
_UNREAD: weakref.WeakKeyDictionary[Any, Unread] = weakref.WeakKeyDictionary()


def unread_mask(palace: Any, rows: np.ndarray) -> np.ndarray | None:
    """Return, for ``rows`` of ``palace``'s drawers, whether its embedder does not read each
    (a bool array), or None when the embedder reads every script (or there is none). Cost:
    :meth:`Unread.mask`."""
    script = reads(palace.embedder)
    if script is None:
        return None
    held = _UNREAD.get(palace)
    if held is None or held.script != script:
        held = _UNREAD[palace] = Unread(script)
    return held.mask(palace.drawers, np.asarray(rows, dtype=np.intp))

"""Context forms: an admissible bundle as a model reads it (seed 002 §7, "token budget-aware
context construction with pluggable output formats").

- ``messages``: ``[{role, content, turn}]``, the turns in conversation order (time, then
  depth, then id), for a chat model's message list;
- ``text``: one string, ``"role: content"`` blocks in that order, separated by blank lines;
- ``triples``: ``{subject, predicate, object, turn, kind}`` rows: the knowledge-graph facts
  whose evidence (``source_drawer``) is the drawer of a turn in the slice (``kind`` "fact",
  with the fact's id and whether it is current), then the slice's DAG edges as
  ``child replies_to/branches_from/merges_from parent`` (``kind`` "edge").

A turn whose text is gone (its drawer deleted or edited since) is left out of ``messages`` and
``text``: only text that still hashes to what the token binds is shown. The forms are views of
a verified bundle and are not signed themselves; the bundle beside them is.

**Budgets.** A budgeted slice counts each turn as ``ceil(characters / 4) + 4`` tokens
(:func:`palazzo.provenance.kernel.turn_tokens`). The ``text`` form adds at most 13 characters
a turn (the longest role, ``": "`` and the blank line), which is within the 4 a turn already
counted, so ``ceil(len(text) / 4)`` never exceeds the budget; ``messages`` carry exactly the
texts counted. ``triples`` are facts about the kept turns and are not counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from palazzo.provenance.kernel import AdmissibleEvidenceBundle, require_admissible
from palazzo.provenance.records import SliceTurn

FORMS = ("messages", "text", "triples")
EDGE_PREDICATES = {"reply": "replies_to", "branch": "branches_from", "merge": "merges_from"}


def conversation_order(bundle: AdmissibleEvidenceBundle) -> list[SliceTurn]:
    """Return the bundle's turns in conversation order: time, depth, then id. O(k log k)."""
    return sorted(require_admissible(bundle).turns,
                  key=lambda t: (t.created_at, t.depth, t.id))


def as_messages(bundle: AdmissibleEvidenceBundle) -> list[dict[str, str]]:
    """Return the turns with text as ``{role, content, turn}`` in conversation order."""
    return [{"role": t.role, "content": t.content, "turn": t.id}
            for t in conversation_order(bundle) if t.content is not None]


def as_text(bundle: AdmissibleEvidenceBundle) -> str:
    """Return the turns with text as ``"role: content"`` blocks joined by blank lines."""
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in as_messages(bundle))


def as_triples(bundle: AdmissibleEvidenceBundle, facts: Iterable[Any]) -> list[dict[str, Any]]:
    """Return the facts evidenced by the bundle's turns, then its edges, as rows.

    ``facts`` are knowledge-graph triples (anything with ``id``, ``subject``, ``predicate``,
    ``object``, ``source_drawer`` and ``current``). Fact rows are sorted by (turn, subject,
    predicate, object, id), edge rows by (child, parent). Cost: O(facts + k log k).
    """
    turn_of = {t.drawer_id: t.id for t in require_admissible(bundle).turns}
    rows = [{"subject": f.subject, "predicate": f.predicate, "object": f.object,
             "turn": turn_of[f.source_drawer], "kind": "fact", "fact": f.id,
             "current": f.current}
            for f in facts if f.source_drawer in turn_of]
    rows.sort(key=lambda r: (r["turn"], r["subject"], r["predicate"], r["object"], r["fact"]))
    edges = sorted(bundle.edges, key=lambda e: (e.child, e.parent))
    rows += [{"subject": e.child, "predicate": EDGE_PREDICATES[e.type], "object": e.parent,
              "turn": e.child, "kind": "edge"} for e in edges]
    return rows


def render(bundle: AdmissibleEvidenceBundle, form: str, facts: Iterable[Any] = ()) -> Any:
    """Return ``bundle`` in ``form`` (one of :data:`FORMS`); ``facts`` feed ``triples``.
    ValueError for another form (operations check it against their schema first)."""
    if form == "messages":
        return as_messages(bundle)
    if form == "text":
        return as_text(bundle)
    if form == "triples":
        return as_triples(bundle, facts)
    raise ValueError(f"unknown context form {form!r}; forms are {', '.join(FORMS)}")

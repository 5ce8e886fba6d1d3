"""Ranking metrics at session level, as LongMemEval's retrieval evaluation defines them."""

from __future__ import annotations

import math
from collections.abc import Sequence

KS = (1, 3, 5, 10)


def recall_any(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Return 1.0 when any gold id is among the first ``k`` ranked ids, else 0.0."""
    return float(any(r in gold for r in ranked[:k]))


def recall_all(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Return 1.0 when every gold id is among the first ``k`` ranked ids, else 0.0."""
    return float(gold <= set(ranked[:k]))


def ndcg_any(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Return NDCG@k with binary relevance (each gold id counts once)."""
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(ranked[:k]) if r in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def by_category(rows: list[tuple[Sequence[str], set[str]]],
                categories: Sequence[str | None]) -> dict[str, dict[str, float]]:
    """Return {category: {"questions": n, **summarise(its rows)}} for rows labelled by
    ``categories`` (LongMemEval's ``question_type``; None counts as "unlabelled"), so a
    change shows where it helps and where it hurts. Cost: one pass per category."""
    groups: dict[str, list[tuple[Sequence[str], set[str]]]] = {}
    for row, cat in zip(rows, categories, strict=True):
        groups.setdefault(cat or "unlabelled", []).append(row)
    return {cat: {"questions": len(g), **summarise(g)} for cat, g in sorted(groups.items())}


def summarise(rows: list[tuple[Sequence[str], set[str]]]) -> dict[str, float]:
    """Return the mean of each metric at each k over (ranked, gold) pairs."""
    out: dict[str, float] = {}
    n = len(rows)
    for k in KS:
        for name, fn in (("recall_any", recall_any), ("recall_all", recall_all),
                         ("ndcg_any", ndcg_any)):
            out[f"{name}@{k}"] = round(sum(fn(r, g, k) for r, g in rows) / n, 4) if n else 0.0
    return out

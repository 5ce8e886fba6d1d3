"""The mixed-language set (real UDHR text, written queries) and ``palazzo bench languages``
on small slices of it with the hash embedder."""

import hashlib
import json
from pathlib import Path

import pytest

from palazzo.bench import languages
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import PalazzoError
from palazzo.hosts.cli import main

# The set beside the tests (the bench's default path is the checkout's: in Pyodide the
# package is an installed wheel, and only the tests' own folder is there).
DATA = Path(__file__).resolve().parents[1] / "data" / "mixed_language.json"

# The queries' sha256 as recorded when they were written, before any search ran on the set.
WRITTEN = "b0d8861ff44240ba240193c588b54250148e80e0d0d085fb8c36fdc6c65035a7"


class EnglishOnly(HashEmbedder):
    """The hash embedder under MiniLM's name: search knows the scripts an embedder reads by
    its name (palazzo.retrieval.scripts), so this one says ``by_words`` as MiniLM would."""

    name = "minilm"


def test_the_set_loads_and_its_questions_are_the_ones_written_first():
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    assert raw["questions_sha256"] == WRITTEN
    text = json.dumps(raw["queries"], ensure_ascii=False, sort_keys=True,
                      separators=(",", ":"))
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == WRITTEN
    assert languages.questions_sha256(raw["queries"]) == WRITTEN
    data = languages.load(DATA)
    assert data.languages == ["en", "de", "fr", "es", "ru", "ko", "ja", "zh"]
    # The preamble and the 30 articles in each language; every query's gold in its language.
    for lang in data.languages:
        assert sorted(d.article for d in data.drawers if d.lang == lang) == list(range(31))
    assert len(data.queries) == 94
    assert all(g.startswith(f"{q.lang}-") for q in data.queries for g in q.gold)
    assert data.provenance["package"] == "udhr" and data.provenance["version"] == "6.0.0"
    assert len(data.provenance["sha256"]) == 64
    # Real text in its own script: article 1 in Korean and Russian.
    first = {d.lang: d.content for d in data.drawers if d.article == 1}
    assert "인간" in first["ko"] and "люди" in first["ru"]
    assert DATA.stat().st_size < 300_000


def test_changed_questions_are_refused(tmp_path):
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    raw["queries"][0]["query"] += " please"
    bad = tmp_path / "set.json"
    bad.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(PalazzoError, match="sha256"):
        languages.load(bad)


def test_select_cuts_languages_and_queries():
    data = languages.load(DATA).select(["en", "ko"], per_language=2)
    assert data.languages == ["en", "ko"] and len(data.drawers) == 62
    assert [q.id for q in data.queries] == ["en-q01", "en-q02", "ko-q01", "ko-q02"]
    with pytest.raises(PalazzoError, match="xx"):
        languages.load(DATA).select(["xx"])


def test_a_drawers_own_sentence_finds_it_first():
    data = languages.load(DATA).select(["en", "ko", "de"])
    palace, ids = languages.build(data, HashEmbedder())
    assert len(ids) == 93 and set(ids.values()) == {d.id for d in data.drawers}
    for wanted in ("en-13", "ko-14", "de-05"):
        sentence = next(d for d in data.drawers if d.id == wanted).content.split("\n")[0]
        words = languages.ask(palace, ids, sentence, "bm25")
        assert words.ranked[0] == wanted and not words.by_words
        assert languages.rank_of(words.ranked, [wanted]) == 1
        assert languages.ask(palace, ids, sentence, "default").ranked[0] == wanted
    # Under MiniLM's name a Korean query is ranked by its words, and the op says so.
    palace, ids = languages.build(data, EnglishOnly())
    korean = next(d for d in data.drawers if d.id == "ko-14").content.split("\n")[0]
    answer = languages.ask(palace, ids, korean, "default")
    assert answer.by_words and answer.ranked[0] == "ko-14"
    assert not languages.ask(palace, ids, "freedom of movement", "default").by_words


def test_summarise_counts_ranks():
    q = languages.Query("ko-q01", "ko", "x", ("ko-14",))
    rows = [(q, languages.Answer(("ko-14", "ko-13"), True)),
            (q, languages.Answer(("en-14", "ko-13", "ko-14"), False)),
            (q, languages.Answer(("ko-01",), False))]
    s = languages.summarise(rows)
    assert s == {"queries": 3, "hit@1": 0.3333, "R@5": 0.6667, "MRR": round(4 / 9, 4),
                 "other_language@1": 0.3333, "by_words": 1, "no_results": 0}
    assert languages.summarise([(q, languages.Answer((), True))])["no_results"] == 1


def test_cli_runs_a_slice_with_the_hash_embedder(tmp_path, capsys):
    out = tmp_path / "languages.json"
    assert main(["bench", "languages", "--data", str(DATA), "--embedder", "hash",
                 "--languages", "en,ru,ja",
                 "--per-language", "3", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["benchmark"] == "languages" and result["embedder"] == "hash"
    assert result["drawers"] == 93 and result["queries"] == 9
    assert result["questions_sha256"] == WRITTEN
    for mode in ("bm25", "default"):
        m = result["modes"][mode]
        assert sorted(m["by_language"]) == ["en", "ja", "ru"]
        assert m["all"]["queries"] == 9 and m["non_english"]["queries"] == 6
        for key in ("hit@1", "R@5", "MRR", "other_language@1"):
            assert 0.0 <= m["all"][key] <= 1.0
        assert m["all"]["hit@1"] <= min(m["all"]["MRR"], m["all"]["R@5"])
    assert result["modes"]["default"]["all"]["by_words"] == 0  # hash reads every script
    assert len(result["per_query"]) == 9
    printed = capsys.readouterr().out
    assert "| all | 9 |" in printed and "| non_english | 6 |" in printed

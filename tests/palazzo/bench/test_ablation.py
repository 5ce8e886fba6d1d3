"""The ablation benchmark scores its variants from shared arrays; its hybrid is the engine's."""

import json

import pytest

from palazzo.bench import ablation, convgen, longmemeval
from palazzo.embed.hashing import HashEmbedder


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("abl") / "lc.json"
    p.write_text(json.dumps(convgen.make(1, 3)), encoding="utf-8")
    return p


def test_hybrid_variants_give_the_engines_figures(path):
    result = ablation.run(path, HashEmbedder(), "all", ["hybrid", "hybrid+recency"])
    for variant, recency in zip(result["variants"], (0.0, 1.0), strict=True):
        # The ablation's variants fuse the vector and BM25 lists (and the time prior); the
        # event list is measured with bench longmemeval, so the engine runs without it here.
        engine = longmemeval.run(path, HashEmbedder(), "hybrid", turns="all",
                                 fusion={"recency": recency, "events": 0.0})
        assert variant["metrics"] == engine["metrics"]
        assert variant["by_type"] == engine["by_type"]


def test_every_variant_scores_every_question(path):
    result = ablation.run(path, HashEmbedder(), "all")
    assert [v["variant"] for v in result["variants"]] == list(ablation.VARIANTS)
    n = result["questions"]
    for v in result["variants"]:
        assert sum(t["questions"] for t in v["by_type"].values()) == n
        assert all(0.0 <= x <= 1.0 for x in v["metrics"].values())
    lines = ablation.table(result).splitlines()
    assert len(lines) == 2 + len(ablation.VARIANTS) and "temporal R@5 any/all" in lines[0]


def test_by_session_reads_a_sessions_chunks():
    import numpy as np

    q = ablation.Question("q", None, "x", ["a", "b"], {"a"}, np.array([0.0, 0.0]),
                          np.zeros(2), np.zeros(3), np.zeros(3), np.array([0, 0, 1]))
    scores = np.array([1.0, 3.0, 2.0])
    assert ablation.by_session(scores, q).tolist() == [3.0, 2.0]
    assert ablation.by_session(scores, q, "top2").tolist() == [2.0, 2.0]
    soft = ablation.by_session(scores, q, "soft")
    assert soft[0] > 3.0 and soft[1] == pytest.approx(2.0)


def test_chunks_are_cut_at_the_size_asked_for(path):
    small = ablation.prepare(path, HashEmbedder(), "all", size=300, overlap=50)
    large = ablation.prepare(path, HashEmbedder(), "all", size=1200, overlap=200)
    assert sum(len(q.ccos) for q in small) > 3 * sum(len(q.ccos) for q in large)
    assert ablation.run(path, HashEmbedder(), "all", ["hybrid"], size=300,
                        overlap=50)["chunk_size"] == 300


def test_without_common_drops_the_words_nearly_every_session_holds():
    texts = [f"Maria: day {i} with John, the garden and the dog" for i in range(9)]
    texts.append("Maria: John found a certificate")
    # "Maria" and "John" are in all ten, "garden" in nine (0.9 is not above 0.9).
    assert ablation.without_common("What did John tell Maria about the garden?", texts) == \
        "What did  tell  about the garden?"
    assert ablation.without_common("certificate?", texts) == "certificate?"


def test_standout_is_how_far_the_best_score_stands_from_the_rest():
    import numpy as np

    flat = np.array([1.0, 1.0, 1.0, 1.0])
    peaked = np.array([4.0, 1.0, 1.0, 1.0, -np.inf])
    assert ablation.standout(flat, False, False) == 0.0
    assert ablation.standout(peaked, False, False) == pytest.approx(3.0 / np.sqrt(3.0))
    # Over the fused candidates only: BM25's list holds its positive scores.
    bm = np.array([3.0, 1.0, 2.0, 0.0, 0.0, 0.0])
    assert ablation.standout(bm, True, True) == pytest.approx(1.0 / np.std([3.0, 1.0, 2.0]))
    # Over every session the zeros count: the best stands further out (2 / 1.155).
    assert ablation.standout(bm, True, False) == pytest.approx(2.0 / np.std(bm))
    assert ablation.standout(np.array([1.0, 2.0]), True, True) == 0.0


def test_below_names_the_cells_a_variant_loses_against_a_reference():
    def variant(name, overall, by_type):
        cells = {"recall_any@5": overall, "recall_all@5": overall, "ndcg_any@10": overall,
                 "recall_any@10": overall}
        return {"variant": name, "metrics": cells,
                "by_type": {t: {**cells, "recall_any@5": v} for t, v in by_type.items()}}

    result = {"variants": [variant("bm25", 0.8, {"a": 0.9, "b": 0.5}),
                           variant("new", 0.85, {"a": 0.8, "b": 0.6})]}
    found = ablation.below(result, "bm25")
    assert found["bm25"] == []
    # Higher overall, but type a's R@5 any is lower: that one cell, with its difference.
    assert found["new"] == [("a", "recall_any@5", -0.1)]
    lines = ablation.below_table(result, ["bm25"]).splitlines()
    assert lines[2] == "| bm25 | 0 |"
    assert lines[3] == "| new | 1 (worst a recall_any@5 -0.100) |"

"""The communities benchmark: its agreement figures on known cases, and the benchmark end to
end at a small size (no timings are checked: they belong to the machine)."""

import numpy as np

from palazzo.bench import communities as bench
from palazzo.embed.hashing import HashEmbedder
from palazzo.memory.communities import Settings


def test_agreement_of_a_partition_with_itself_and_with_a_coarser_one():
    truth = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    same = bench.agreement(np.array([5, 5, 5, 7, 7, 7, 9, 9]), truth)
    assert same == {"nmi": 1.0, "ari": 1.0, "completeness": 1.0, "purity": 1.0}
    merged = bench.agreement(np.array([0, 0, 0, 0, 0, 0, 1, 1]), truth)
    assert merged["completeness"] == 1.0 and merged["purity"] == 0.625
    assert 0 < merged["ari"] < 1 and 0 < merged["nmi"] < 1


def test_the_benchmark_runs_small_and_every_drawer_knows_its_truth():
    result = bench.run(300, HashEmbedder(), [Settings(), Settings(resolution=2.0)],
                       memory=False)
    assert result["drawers"] == 300 and len(result["runs"]) == 2
    assert set(result["languages"]) <= {"en", "de", "fr", "es", "ru", "ja"}
    run = result["runs"][0]
    assert run["communities"] >= 1 and run["similarity"] == "vectors"
    assert set(run["seconds"]) == {"knn", "graph", "louvain", "naming", "total"}
    assert 0 <= run["conversations"]["nmi"] <= 1 and 0 < run["language_purity"] <= 1
    assert "drawers" in bench.table(result)

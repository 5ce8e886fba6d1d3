"""``palazzo bench scale`` at a tiny size: the generated export goes through the CLI's
import, the cold commands run as processes and find the palace, every figure the docs quote is
there (no timings are asserted), and nothing is left behind."""

import json

from palazzo.hosts.cli import main


def test_cli_scale_measures_import_cold_commands_and_warm_search(tmp_path):
    out = tmp_path / "scale.json"
    assert main(["bench", "scale", "--messages", "300", "--queries", "3", "--out", str(out),
                 "--workdir", str(tmp_path / "work")]) == 0
    r = json.loads(out.read_text())
    assert r["import"]["exit"] == 0 and not r["import"]["timed_out"]
    assert r["counts"]["drawers"] == r["counts"]["embedded"] == 300
    assert r["counts"]["edges"] > 0 and r["counts"]["rooms"] == r["export"]["conversations"]
    b = r["palace_bytes"]
    assert b["total"] == sum(b["files"].values()) > r["export"]["text_bytes"]
    assert b["text_and_all_vectors"] == b["text_and_vectors"] + b["chunk_vectors"] * 384 * 4
    assert b["ratio"] >= b["ratio_all_vectors"] > 0
    for step in ("cold_open", "cold_status", "cold_search"):
        assert r[step]["exit"] == 0 and r[step]["seconds"] > 0 and r[step]["peak_rss_mb"] > 0
    assert r["cold_search"]["hits"] > 0
    for mode in ("bm25", "vector", "hybrid"):
        assert r["warm_search"][mode]["queries"] == 3
        assert r["warm_search"][mode]["queries_with_hits"] > 0
    assert list((tmp_path / "work").iterdir()) == []  # the export and palace are gone

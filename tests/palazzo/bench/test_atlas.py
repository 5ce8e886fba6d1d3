"""The atlas benchmark: a small run through the command line, and its figures reproducible."""

import json

from palazzo.bench import atlas
from palazzo.hosts.cli import main

TIMES = ("import_seconds",)


def _without_times(result):
    runs = [{k: v for k, v in r.items() if not k.endswith("_s") and k != "batch_speedup"}
            for r in result["runs"]]
    narrow = [{k: v for k, v in r.items() if not k.endswith("_s")} for r in result["narrow"]]
    palace = {k: v for k, v in result["palace"].items() if k not in TIMES}
    return {"palace": palace, "runs": runs, "narrow": narrow}


def test_a_small_atlas_run_is_complete_and_reproducible(tmp_path, capsys):
    out = tmp_path / "atlas.json"
    assert main(["bench", "atlas", "--messages", "200", "--anchors", "4,12", "--repeat", "1",
                 "--budget", "4000", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["palace"]["turns"] == 200 and result["palace"]["conversations"] > 1
    assert [(r["anchors"], r["pool"]) for r in result["runs"]] == [
        (4, "palace"), (4, "longest_conversation"), (12, "palace"),
        (12, "longest_conversation")]
    for r in result["runs"]:
        assert r["batch_equals_one_by_one"] and r["deterministic"]
        assert r["budget_tokens_per_slice_max"] <= 4000
    again = atlas.run(200, (4, 12), budget=4000, repeat=1)
    assert _without_times(again) == _without_times(result)

"""``palazzo bench structure`` at a tiny size: both cases run through the CLI, a wing of N
rooms holds N rooms and a flat folder is one room, and every figure the docs quote is there
(no timings are asserted)."""

import json

from palazzo.bench import structure
from palazzo.hosts.cli import main


def test_generated_folders_are_reproducible(tmp_path):
    assert structure.write_flat(tmp_path / "a", 7, seed=3) == \
        structure.write_flat(tmp_path / "b", 7, seed=3)
    assert [p.read_bytes() for p in sorted((tmp_path / "a").iterdir())] == \
        [p.read_bytes() for p in sorted((tmp_path / "b").iterdir())]
    structure.write_rooms(tmp_path / "r", 4)
    assert sorted(p.parent.name for p in (tmp_path / "r").glob("*/note.md")) == \
        [f"topic-{i:05d}" for i in range(4)]


def test_cli_structure_measures_both_cases(tmp_path):
    out = tmp_path / "structure.json"
    assert main(["bench", "structure", "--rooms", "30", "--files", "40", "--out", str(out),
                 "--workdir", str(tmp_path / "work")]) == 0
    r = json.loads(out.read_text())
    rooms, flat = r["rooms_case"], r["flat_case"]
    assert rooms["counts"] == {"wings": 1, "rooms": 30, "drawers": 30,
                               "edges": rooms["counts"]["edges"]}
    assert flat["counts"]["rooms"] == 1 and flat["counts"]["drawers"] == 40
    for case in (rooms, flat):
        assert case["index"]["exit"] == 0 and not case["index"]["timed_out"]
        assert case["index"]["seconds"] > 0 and case["index"]["peak_rss_mb"] > 0
        assert case["index"]["drawers_added"] == case["counts"]["drawers"]
        assert case["palace_bytes"]["snapshot"] > 0
        assert case["palace_bytes"]["total"] > case["source"]["bytes"]
        assert case["cold_status"]["exit"] == 0
        assert case["index_unchanged"]["exit"] == 0 and case["index_unchanged"]["calls"] == 0
        assert case["command"].startswith("palazzo index ")
    # Edges grow with the rooms, not with their square: fewer than the halls of every pair.
    assert rooms["counts"]["edges"] < 30 * 29 // 2
    assert list((tmp_path / "work").iterdir()) == []  # the temporary folders are gone

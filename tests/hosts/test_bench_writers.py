"""``palazzo bench writers`` at a tiny size: two MCP servers, the command line and an importer
write one palace at once through real processes; nothing is refused, lost or stored twice and
every read sees the last acknowledged write (no timings are asserted)."""

import json

from palazzo.bench import writers
from palazzo.hosts.cli import main


def test_four_real_writers_on_one_palace_lose_nothing(tmp_path):
    out = tmp_path / "writers.json"
    assert main(["bench", "writers", "--drawers", "300", "--seconds", "4", "--out", str(out),
                 "--workdir", str(tmp_path / "work")]) == 0
    r = json.loads(out.read_text())
    acked = r["acknowledged"]
    assert acked["server"] >= 2 and acked["cli"] >= 1 and acked["imported"] > 0
    assert acked["notes"] == acked["server"] + acked["cli"]
    assert r["refused"] == 0 and r["reads_missing_a_write"] == 0
    for k in (0, 1):
        assert r[f"server_{k}"]["reads"] >= 1
    end = r["end"]
    assert (end["lost"], end["duplicated"], end["unexplained"]) == (0, 0, 0)
    assert end["drawers"] == end["expected"] == r["start"]["drawers"] + acked["server"] + \
        acked["cli"] + acked["imported"]
    assert end["status_problem"] is None
    # taking turns, each process followed every record of the other's (the first write of
    # the first process had none before it)
    turns = r["alternate"]
    assert turns["records_followed"] == 2 * writers.TURNS - 1
    assert turns["after_another_process"]["count"] == 2 * writers.TURNS - 2
    assert turns["after_its_own"]["count"] == writers.TURNS
    assert list((tmp_path / "work").iterdir()) == []  # the temporary folders are gone

"""``palazzo bench serve`` at a tiny size: HTTP clients on a real ``palazzo serve``, killed with
SIGKILL and started again halfway; no error, every acknowledged write kept (no timings are
asserted)."""

import json

import pytest

from palazzo.hosts.cli import main

pytest.importorskip("uvicorn")


def test_clients_on_a_server_killed_halfway_lose_no_acknowledged_write(tmp_path):
    out = tmp_path / "serve.json"
    assert main(["bench", "serve", "--drawers", "300", "--seconds", "6", "--clients", "5",
                 "--out", str(out), "--workdir", str(tmp_path / "work")]) == 0
    r = json.loads(out.read_text())
    assert r["search"]["count"] > 0 and r["add_drawer"]["count"] > 0
    assert r["errors"] == 0, r["error_examples"]
    assert r["restart"]["seconds_until_answering"] > 0
    end = r["end"]
    assert end["acknowledged_adds"] > 0 and end["lost"] == 0
    assert end["status_problem"] is None
    assert list((tmp_path / "work").iterdir()) == []

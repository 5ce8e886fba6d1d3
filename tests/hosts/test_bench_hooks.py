"""``palazzo bench hooks`` at a tiny size: a played Claude Code session's hooks through a real
``palazzo serve``, an MCP server writing beside them; every hook answered, every message and
every acknowledged note kept once (no timings are asserted)."""

import json

import pytest

from palazzo.hosts.cli import main

pytest.importorskip("uvicorn")


def test_hooks_beside_an_mcp_writer_lose_and_repeat_nothing(tmp_path):
    out = tmp_path / "hooks.json"
    assert main(["bench", "hooks", "--drawers", "200", "--rounds", "2", "--turns", "4",
                 "--writer", "--out", str(out), "--workdir", str(tmp_path / "work")]) == 0
    r = json.loads(out.read_text())
    assert r["stop"]["count"] == 2 and r["session_start"]["count"] == 2
    assert r["failures"] == 0, r["failure_examples"]
    assert r["end"] == {"messages_written": 16, "lost": 0, "twice": 0, "status_problem": None}
    writer = r["mcp_writer"]
    assert writer["acknowledged"] > 0 and writer["lost"] == 0 and writer["twice"] == 0
    assert list((tmp_path / "work").iterdir()) == []

"""The scale benchmark's generated ChatGPT export: its shape, that the real importer reads it
whole (branches and all), and the benchmark end to end at a small size (no timings are
checked: they belong to the machine)."""

import json
import unicodedata

import pytest

from palazzo import bind, call
from palazzo.bench import exportgen
from palazzo.palace import Palace


def _script(text):
    """Return the set of scripts (Latin, Cyrillic, CJK/kana) ``text`` is written in."""
    found = set()
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            found.add(next((s for s in ("LATIN", "CYRILLIC", "CJK", "HIRAGANA", "KATAKANA")
                            if name.startswith(s)), "OTHER"))
    return found


def test_same_seed_same_export_and_exact_message_count():
    a, stats = exportgen.make_export(400, seed=3)
    b, _ = exportgen.make_export(400, seed=3)
    c, _ = exportgen.make_export(400, seed=4)
    assert json.dumps(a) == json.dumps(b) and json.dumps(a) != json.dumps(c)
    assert stats.messages == 400
    for n in (2, 3, 7, 61):
        assert exportgen.make_export(n)[1].messages == n


def test_export_has_the_chatgpt_shape():
    conversations, _ = exportgen.make_export(300, seed=1)
    for conv in conversations:
        mapping = conv["mapping"]
        roots = [k for k, v in mapping.items() if v["parent"] is None]
        assert len(roots) == 1 and mapping[roots[0]]["message"] is None
        assert conv["current_node"] in mapping and not mapping[conv["current_node"]]["children"]
        assert conv["id"] == conv["conversation_id"] and conv["title"]
        for key, node in mapping.items():
            assert node["id"] == key
            for child in node["children"]:
                assert mapping[child]["parent"] == key
            msg = node["message"]
            if msg is not None:
                assert msg["author"]["role"] in ("system", "user", "assistant", "tool")
                assert isinstance(msg["content"]["parts" if "parts" in msg["content"]
                                                 else "text"], list | str)
                assert msg["create_time"] >= conv["create_time"]


@pytest.mark.cpython_only
def test_real_importer_reads_it_whole_with_branches_long_texts_and_scripts(tmp_path):
    # The importers run on the CPython host only (they read files and SQLite databases).
    from palazzo.importers import apply
    from palazzo.importers.chats import plan_chats

    path = tmp_path / "conversations.json"
    stats = exportgen.write_export(path, 600, seed=2)
    plan = plan_chats(path)
    s = plan.summary
    assert s["format"] == "chatgpt"
    assert stats.messages == 600 and stats.code_runs >= 1
    # The visible messages, and each python call with its output (kept as code).
    assert s["messages"] == stats.messages + 2 * stats.code_runs
    assert s["messages_by_kind"] == {"text": 600, "code": stats.code_runs,
                                     "code_output": stats.code_runs}
    assert s["conversations"] == stats.conversations
    assert s["branched"] >= 1 and stats.branch_points >= 1
    # Only the hidden system messages are left out.
    assert set(s["skipped_by_reason"]) == {"hidden message"}
    assert len(s["skipped"]) == stats.skipped_nodes
    texts = [m["content"] for c in plan.calls if c.name == "import_conversation"
             for m in c.args["messages"]]
    assert max(map(len, texts)) >= 2_000 and min(map(len, texts)) < 200
    scripts = set().union(*map(_script, texts))
    assert {"LATIN", "CYRILLIC", "CJK"} <= scripts and scripts & {"HIRAGANA", "KATAKANA"}
    palace = Palace()
    apply(plan, bind(palace))
    assert palace.counts()["drawers"] == s["messages"]
    listed = call(palace, "list_conversations")["conversations"]
    assert len(listed) == stats.conversations
    assert any(c["leaves"] > 1 for c in listed)  # a regenerated answer or an edit: a branch


def test_queries_come_from_the_text():
    conversations, _ = exportgen.make_export(200, seed=5)
    asked = exportgen.queries(conversations, 20, seed=5)
    assert len(asked) == 20 and asked == exportgen.queries(conversations, 20, seed=5)
    blob = json.dumps(conversations, ensure_ascii=False)
    assert all(all(w in blob for w in q.split()) for q in asked)


@pytest.mark.cpython_only
def test_cli_scale_measures_every_step(tmp_path):
    from palazzo.hosts.cli import main

    out = tmp_path / "scale.json"
    assert main(["bench", "scale", "--messages", "120", "--queries", "5", "--out", str(out),
                 "--workdir", str(tmp_path / "work")]) == 0
    r = json.loads(out.read_text())
    assert r["import"]["exit"] == 0 and not r["import"]["timed_out"]
    # 120 messages, and each python call's code and output (kept as turns of their own).
    assert r["counts"]["drawers"] == 120 + 2 * r["export"]["code_runs"]
    assert r["counts"]["edges"] > 0
    b = r["palace_bytes"]
    assert b["total"] == sum(b["files"].values()) > r["export"]["text_bytes"]
    assert b["text_and_all_vectors"] == b["text_and_vectors"] + b["chunk_vectors"] * 384 * 4
    assert b["ratio"] >= b["ratio_all_vectors"] > 0
    for step in ("cold_open", "cold_status", "cold_search"):
        assert r[step]["exit"] == 0 and r[step]["seconds"] > 0 and r[step]["peak_rss_mb"] > 0
    assert r["cold_search"]["hits"] > 0
    for mode in ("bm25", "vector", "hybrid"):
        assert r["warm_search"][mode]["queries"] == 5
    assert r["machine"]["cpu_count"] >= 1
    assert list((tmp_path / "work").iterdir()) == []  # the temporary palace is gone

"""claude.ai's projects.json and memories.json (claude-export-samples; where each shape comes
from, and which parts are constructed: that folder's README). Expected counts are worked out
here by walking the JSON, independently of the readers, then compared with what they keep by
kind and leave out by reason."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from palazzo import bind, call
from palazzo.errors import ImportRejected, NotFound
from palazzo.importers import apply
from palazzo.importers.chats import plan_transcripts, room_names
from palazzo.importers.claudeai import (
    EMPTY_DOC,
    EMPTY_MEMORY_FILE,
    EMPTY_PROJECT_MEMORY,
    MEMORIES,
    MEMORIES_TITLE,
    STARTER,
    front_matter,
    markdown_items,
    read_memories,
    read_projects,
    sniff_memories,
    sniff_projects,
)
from palazzo.importers.transcript import epoch
from palazzo.palace import Palace

SAMPLES = Path(__file__).parents[1] / "data" / "importers" / "claude-export-samples"
SHARED = Path(__file__).parents[1] / "data" / "importers" / "chatgpt-shared-samples"


def load(name: str):
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"))


def outcome(convs) -> tuple[Counter, Counter]:
    """Return (kept by kind, skipped by reason) over the readers' transcripts, silent
    messages not counted."""
    kept: Counter = Counter()
    skipped: Counter = Counter()
    for conv in convs:
        skipped.update(reason for _, reason in conv.skipped)
        for m in conv.nodes:
            if m.skip:
                skipped[m.skip] += not m.silent
            else:
                kept[m.kind] += 1
    return kept, skipped


def imported(convs) -> tuple[Palace, dict[str, str]]:
    """Plan the transcripts as ``chats`` does and apply the plan to a new palace."""
    rooms = room_names(convs)
    palace = Palace()
    apply(plan_transcripts(convs, "export", "claude.ai"), bind(palace))
    return palace, rooms


# -- projects -------------------------------------------------------------------------------

def expected_projects(doc: list[dict]) -> tuple[Counter, Counter]:
    """What each project should become, from its JSON alone."""
    kept: Counter = Counter()
    skipped: Counter = Counter()
    for p in doc:
        parts = []
        if (p.get("description") or "").strip():
            parts.append("text")
        if (p.get("prompt_template") or "").strip():
            parts.append("instructions")
        for d in p.get("docs") or []:
            parts.append("text" if (d.get("content") or "").strip() else EMPTY_DOC)
        for part in parts:
            if p.get("is_starter_project"):
                skipped[STARTER] += 1
            elif part == EMPTY_DOC:
                skipped[EMPTY_DOC] += 1
            else:
                kept[part] += 1
    return kept, skipped


def with_more_docs() -> list[dict]:
    doc = load("projects.json")
    garden = doc[0]
    garden["docs"].append({**copy.deepcopy(garden["docs"][0]), "uuid": "d-empty", "content": ""})
    garden["docs"].append({"uuid": "d-nameless", "content": "Compost: two bins.",
                           "created_at": None})
    doc[1]["docs"] = None
    return doc


@pytest.mark.parametrize("make", [lambda: load("projects.json"), with_more_docs])
def test_projects_kept_by_kind_and_skipped_by_reason_match_the_json(make):
    doc = make()
    convs = read_projects(doc, "projects.json")
    assert [c.name for c in convs] == [f"claude-project:{p['uuid']}" for p in doc]
    assert [c.title for c in convs] == [p["name"].strip() for p in doc]
    assert outcome(convs) == expected_projects(doc)
    records = sum(bool((p.get("description") or "").strip())
                  + bool((p.get("prompt_template") or "").strip())
                  + len(p.get("docs") or []) for p in doc)
    kept, skipped = outcome(convs)
    assert sum(kept.values()) + sum(skipped.values()) == records


def test_each_project_part_becomes_readable_text():
    doc = with_more_docs()
    garden = doc[0]
    conv = read_projects(doc, "projects.json")[0]
    texts = {m.key: m for m in conv.nodes}
    assert texts["description"].text == f"[project description]\n{garden['description']}"
    instructions = texts["instructions"]
    assert instructions.kind == "instructions" and instructions.role == "user"
    assert instructions.text == f"[project instructions]\n{garden['prompt_template']}"
    assert instructions.timestamp == epoch(garden["created_at"], "t")
    beds = texts["doc/0"]
    assert beds.text == f"[knowledge file: beds.md]\n{garden['docs'][0]['content']}"
    assert beds.timestamp == epoch(garden["docs"][0]["created_at"], "t")
    assert texts["doc/1"].text.startswith("[knowledge file: notes/watering.txt]\n")
    assert texts["doc/3"].text.startswith("[knowledge file: untitled]\n")
    assert texts["doc/3"].timestamp is None
    assert all(m.role == "user" for m in conv.nodes)
    assert [m.parent for m in conv.nodes] == [None] + [m.key for m in conv.nodes[:-1]]


def test_a_single_project_file_reads_as_a_list_of_one():
    doc = load("projects.json")
    (one,) = read_projects(doc[0], "projects/x.json")
    (same,) = read_projects(doc[:1], "projects/x.json")
    assert [(m.key, m.text) for m in one.nodes] == [(m.key, m.text) for m in same.nodes]


def test_projects_import_and_the_empty_ones_leave_no_room():
    doc = with_more_docs()
    convs = read_projects(doc, "projects.json")
    palace, rooms = imported(convs)
    out = call(palace, "list_turns", {"conversation": rooms[convs[0].name]})
    kinds = [t.get("kind", "text") for t in out["turns"]]
    assert kinds == ["text", "instructions", "text", "text", "text"]
    with pytest.raises(NotFound, match="no conversation named"):
        call(palace, "list_turns", {"conversation": rooms[convs[1].name]})


@pytest.mark.parametrize(("change", "error"), [
    (lambda d: "projects", r"p\.json: projects\.json must be a list"),
    (lambda d: d + [3], r"p\.json project 3: a project must be an object"),
    (lambda d: [{**d[0], "uuid": None}], r"project 0: a project needs a 'uuid'"),
    (lambda d: [d[0], d[0]], r"project 1: repeats the uuid"),
    (lambda d: [{**d[0], "docs": {}}], r"project 0: docs must be a list"),
    (lambda d: [{**d[0], "docs": ["x"]}], r"project 0 doc 0: a knowledge file must be"),
    (lambda d: [{**d[0], "docs": [{"filename": "a", "content": 1}]}],
     r"project 0 doc 0: content must be a string"),
    (lambda d: [{**d[0], "prompt_template": ["x"]}], r"project 0: prompt_template must be"),
    (lambda d: [{**d[0], "name": 7}], r"project 0: name must be a string"),
    (lambda d: [{**d[0], "created_at": "last tuesday"}], r"project 0: timestamp"),
    (lambda d: [{**d[0], "is_starter_project": "no"}], r"project 0: is_starter_project"),
])
def test_malformed_projects_are_a_clear_error(change, error):
    with pytest.raises(ImportRejected, match=error):
        read_projects(change(load("projects.json")), "p.json")


# -- memories -------------------------------------------------------------------------------

HEADING = re.compile(r"\*\*[^*]+\*\*|\*[^*]+\*")


def expected_items(markdown: str) -> int:
    """Count the items of Claude's Markdown by its own rules: blocks between blank lines,
    a block that is one bold or italic line a heading, a list block one item a bullet."""
    count = 0
    for block in re.split(r"\n\s*\n", markdown):
        lines = [x for x in block.split("\n") if x.strip()]
        if len(lines) == 1 and HEADING.fullmatch(lines[0].strip()):
            continue
        if lines and lines[0].startswith("- "):
            count += sum(x.startswith("- ") for x in lines)
        elif lines:
            count += 1
    return count


def file_body(content: str) -> str:
    return content.split("\n---\n", 1)[1] if content.startswith("---\n") else content


def expected_memories(doc: list[dict]) -> tuple[int, Counter]:
    """Return (memories kept, skipped by reason) from the JSON alone."""
    kept = 0
    skipped: Counter = Counter()
    for record in doc:
        kept += expected_items(record.get("conversations_memory") or "")
        for text in (record.get("project_memories") or {}).values():
            n = expected_items(text)
            kept += n
            skipped[EMPTY_PROJECT_MEMORY] += not n
        for f in record.get("memory_files") or []:
            n = expected_items(file_body(f["content"]))
            kept += n
            skipped[EMPTY_MEMORY_FILE] += not n
    return kept, +skipped


def with_project_memories() -> list[dict]:
    # The shape {project uuid: Markdown} as parsers pinned to real exports give it (see the
    # README); the real sample has none. "  " is an empty one.
    doc = load("memories.json")
    doc[0]["project_memories"] = {
        "0190a1b2-0000-7000-8000-00000000c0de": "**Purpose & context**\n\nClient work.\n\n"
                                                "**Key learnings**\n\n- Beds first\n- Then water",
        "0190a1b2-0000-7000-8000-00000000c0df": "  "}
    doc[0]["memory_files"].append({"path": "/topics/empty.md", "content": "---\nname: e\n---\n",
                                   "updated_at": "2026-07-13T21:45:50.000000+00:00"})
    return doc


@pytest.mark.parametrize("make", [lambda: load("memories.json"), with_project_memories])
def test_memories_kept_and_skipped_match_the_json(make):
    doc = make()
    convs = read_memories(doc, "memories.json")
    (conv,) = convs
    assert (conv.name, conv.title) == (MEMORIES, MEMORIES_TITLE)
    kept, skipped = outcome(convs)
    assert (kept["memory"], skipped) == expected_memories(doc)
    assert set(kept) == {"memory"}
    assert {m.role for m in conv.nodes} == {"assistant"}
    assert [m.parent for m in conv.nodes] == [None] + [m.key for m in conv.nodes[:-1]]


def test_each_memory_is_headed_by_where_it_sits():
    doc = with_project_memories()
    conv = read_memories(doc, "memories.json")[0]
    texts = [m.text for m in conv.nodes if not m.skip]
    assert texts[0].startswith("[Work context]\nPedro operates under the brand **FerrazCode**")
    assert any(t.startswith("[Brief history › Recent months]\nPedro also made progress")
               for t in texts)
    assert any(t.startswith("[Brief history › Long-term background]\n") for t in texts)
    project = "[project memory claude-project:0190a1b2-0000-7000-8000-00000000c0de"
    assert f"{project} › Purpose & context]\nClient work." in texts
    assert f"{project} › Key learnings]\nThen water" in texts
    bruno = [m for m in conv.nodes if "/people/bruno.md" in m.text]
    assert [m.text.split("\n")[0] for m in bruno] == \
        ["[memory file /people/bruno.md: Client for the PraiaGo platform]"] * 2
    assert bruno[0].text.split("\n")[1].startswith("[stated] Client who contracted Pedro")
    assert bruno[0].timestamp == epoch(doc[0]["memory_files"][1]["updated_at"], "t")
    assert all(m.timestamp is None for m in conv.nodes if "/f" not in m.key)


def test_a_single_memories_file_and_several_accounts():
    doc = load("memories.json")
    (one,) = read_memories(doc[0], "memories/a.json")
    (same,) = read_memories(doc, "memories.json")
    assert [m.text for m in one.nodes] == [m.text for m in same.nodes]
    two = [doc[0], {"account_uuid": "acct-2", "conversations_memory": "**Work**\n\nBakes bread."}]
    (both,) = read_memories(two, "memories.json")
    assert both.nodes[-1].text == "[account acct-2 › Work]\nBakes bread."
    assert both.nodes[0].text.startswith(f"[account {doc[0]['account_uuid']} › Work context]")


def test_no_memory_is_no_transcript():
    assert read_memories([], "m.json") == []
    assert read_memories([{"conversations_memory": "", "project_memories": {},
                           "account_uuid": "a"}], "m.json") == []
    assert read_memories({"project_memories": [], "memory_files": []}, "m.json") == []


def test_memories_import_as_memory_turns():
    convs = read_memories(with_project_memories(), "memories.json")
    palace, rooms = imported(convs)
    out = call(palace, "list_turns", {"conversation": rooms[MEMORIES]})
    kept, _ = outcome(convs)
    assert len(out["turns"]) == kept["memory"]
    assert {t.get("kind") for t in out["turns"]} == {"memory"}


@pytest.mark.parametrize(("change", "error"), [
    (lambda d: "memory", r"m\.json: memories\.json must be a list"),
    (lambda d: d + [1], r"m\.json account 1: a memory record must be an object"),
    (lambda d: [{**d[0], "account_uuid": 3}], r"account 0: account_uuid must be a string"),
    (lambda d: [{**d[0], "conversations_memory": ["x"]}],
     r"account 0: conversations_memory must be a string"),
    (lambda d: [{**d[0], "project_memories": ["x"]}], r"account 0: project_memories must map"),
    (lambda d: [{**d[0], "project_memories": {"p": 1}}],
     r"account 0 project_memories 'p': a project memory must be a string"),
    (lambda d: [{**d[0], "memory_files": {}}], r"account 0: memory_files must be a list"),
    (lambda d: [{**d[0], "memory_files": ["x"]}],
     r"account 0 memory_files 0: a memory file must be an object"),
    (lambda d: [{**d[0], "memory_files": [{"path": "/a.md", "content": None,
                                           "updated_at": "soon"}]}],
     r"account 0 memory_files 0: timestamp"),
    (lambda d: [{**d[0], "memory_files": [{"path": "/a.md", "content": 2}]}],
     r"account 0 memory_files 0: content must be a string"),
])
def test_malformed_memories_are_a_clear_error(change, error):
    with pytest.raises(ImportRejected, match=error):
        read_memories(change(load("memories.json")), "m.json")


# -- the Markdown and front matter of memories ----------------------------------------------

def test_markdown_items_follow_headings_and_bullets():
    text = ("# Top\n\nIntro line one\nline two\n\n## Sub\n\n- a\n  more of a\n- b\n\n"
            "**Bold head**\n*Italic head*\nUnder both\n\n# Next\n\n1. one\n2) two")
    assert markdown_items(text) == [
        (("Top",), "Intro line one\nline two"),
        (("Top", "Sub"), "a\nmore of a"),
        (("Top", "Sub"), "b"),
        (("Top", "Sub", "Bold head", "Italic head"), "Under both"),
        (("Next",), "one"),
        (("Next",), "two"),
    ]
    assert markdown_items("") == markdown_items(" \n\n ") == []
    assert markdown_items("**A** and **B** are inline") == [((), "**A** and **B** are inline")]


def test_a_heading_nothing_follows_is_kept_as_an_item():
    assert markdown_items("**Always answer in Portuguese**") == \
        [((), "Always answer in Portuguese")]
    assert markdown_items("**A**\n\n*B*\n\n**C**\n\ntext") == [(("A",), "B"), (("C",), "text")]
    assert markdown_items("**A**\n\ntext\n\n**B**") == [(("A",), "text"), ((), "B")]


def test_front_matter_is_read_line_by_line():
    meta, body = front_matter('---\nname: x\ndescription: "A: with colon"\n---\n- [stated] y')
    assert meta == {"name": "x", "description": "A: with colon"}
    assert body == "- [stated] y"
    assert front_matter("no front matter") == ({}, "no front matter")
    assert front_matter("---\nunclosed: yes\n") == ({}, "---\nunclosed: yes\n")


# -- recognising the files ------------------------------------------------------------------

def test_sniffers_know_their_files_and_nothing_else():
    projects, memories = load("projects.json"), load("memories.json")
    shared = json.loads((SHARED / "shared_conversations.json").read_text(encoding="utf-8"))
    conversations = [{"uuid": "c", "name": "x", "chat_messages": [], "docs": []}]
    assert sniff_projects(projects) and sniff_projects(projects[0])
    assert sniff_memories(memories) and sniff_memories(memories[0])
    for other in (memories, shared, conversations, [], {}, "x", [1]):
        assert not sniff_projects(other)
    for other in (projects, shared, conversations, [], {}, "x", [1]):
        assert not sniff_memories(other)


def test_a_knowledge_file_too_long_for_one_turn_is_left_out_with_a_reason():
    doc = load("projects.json")[:1]
    doc[0]["docs"][0]["content"] = "x" * 5_000_001
    conv = read_projects(doc, "projects.json")[0]
    assert conv.nodes[2].skip == "knowledge file longer than 5,000,000 characters"
    assert conv.nodes[3].skip is None

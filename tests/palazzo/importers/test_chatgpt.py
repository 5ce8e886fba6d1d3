"""The ChatGPT reader over real export node shapes (chatgpt-samples/conversations.json; where
each node comes from: that folder's README). The expected counts are worked out here by
walking the JSON, independently of the reader, then compared with what it keeps by kind and
leaves out by reason."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from palazzo.errors import ImportRejected
from palazzo.importers.chatgpt import MEMORIES, MEMORIES_TITLE, SAVED_MEMORY, read_chatgpt
from palazzo.importers.chats import plan_chats

SAMPLES = Path(__file__).parents[1] / "data" / "importers" / "chatgpt-samples"
EXPORT = SAMPLES / "conversations.json"


def export() -> list[dict]:
    return json.loads(EXPORT.read_text(encoding="utf-8"))


def read(doc: list[dict], where: str = "conversations.json"):
    convs = list(read_chatgpt(doc, where))
    memories = [c for c in convs if c.name == MEMORIES]
    return [c for c in convs if c.name != MEMORIES], (memories[0] if memories else None)


# -- the expected outcome, from the JSON alone ------------------------------------------------

def expected_shape(node: dict) -> tuple[str, str] | None:
    """("kind", k) for a node the reader should keep, ("skip", reason) for one it should
    leave out, ("canvas", create|update) for a canvas call, None for the empty root."""
    m = node["message"]
    if m is None:
        return None
    content, role = m["content"], m["author"]["role"]
    ctype, recipient = content["content_type"], m.get("recipient") or "all"
    if ctype == "user_editable_context":
        return "kind", "instructions"
    if ctype in ("thoughts", "reasoning_recap"):
        return "kind", "reasoning"
    if ctype == "execution_output":
        return "kind", "code_output"
    if recipient.startswith("canmore."):
        return "canvas", recipient.rsplit("_", 1)[0].rsplit(".", 1)[1]
    if recipient == "python":
        return "kind", "code"
    if recipient == "bio":
        return "skip", SAVED_MEMORY
    if role == "tool":
        return "skip", f"tool output from {m['author']['name']}"
    if recipient != "all":
        return "skip", f"tool call to {recipient}"
    if m["metadata"].get("is_visually_hidden_from_conversation"):
        return "skip", "hidden message"
    parts = content["parts"]
    if any(isinstance(p, dict) and p.get("content_type") == "audio_transcription"
           and p["text"].strip() for p in parts):
        return "kind", "voice"
    if any(isinstance(p, str) and p.strip() for p in parts):
        return "kind", "text"
    if m["metadata"].get("attachments"):
        return "kind", "attachments"
    raise AssertionError(f"a shape this test does not know: {node['id']}")


def expected(doc: list[dict]) -> tuple[Counter, Counter, int]:
    """Return (kept by kind, skipped by reason, memories) for the export ``doc``: each canvas
    create is one document kept; each update supersedes one earlier version."""
    kinds: Counter = Counter()
    reasons: Counter = Counter()
    for conv in doc:
        for node in conv["mapping"].values():
            shape = expected_shape(node)
            if shape is None:
                continue
            what, value = shape
            if what == "kind":
                kinds[value] += 1
            elif what == "skip":
                reasons[value] += 1
            elif value == "create":
                kinds["canvas"] += 1
            else:
                reasons["earlier canvas version (the latest is kept)"] += 1
    return kinds, reasons, reasons[SAVED_MEMORY]


def test_the_samples_hold_every_shape():
    kinds, reasons, memories = expected(export())
    assert set(kinds) == {"text", "voice", "canvas", "code", "code_output", "reasoning",
                          "instructions", "attachments"}
    assert memories == 2 and reasons["hidden message"] == 1


def test_kept_by_kind_and_skipped_by_reason_match_the_json():
    doc = export()
    kinds, reasons, memories = expected(doc)
    convs, saved = read(doc)
    kept = Counter(m.kind for c in convs for m in c.nodes if m.skip is None)
    left_out = Counter(m.skip for c in convs for m in c.nodes if m.skip and not m.silent)
    assert kept == kinds
    assert left_out == reasons
    assert saved is not None and len(saved.nodes) == memories
    assert {m.kind for m in saved.nodes} == {"memory"}


def test_the_plan_imports_them_all():
    doc = export()
    kinds, reasons, memories = expected(doc)
    plan = plan_chats(EXPORT)
    s = plan.summary
    assert s["format"] == "chatgpt"
    assert s["conversations"] == len(doc) + 1  # and the saved memories
    assert s["messages"] == sum(kinds.values()) + memories
    assert s["skipped_by_reason"] == dict(reasons)
    assert s["rooms"][MEMORIES] == "chatgpt-saved-memories"
    assert s["titles"]["chatgpt-saved-memories"] == MEMORIES_TITLE
    # The all-voice conversation is there, both turns.
    room = next(r for source, r in s["rooms"].items() if source.endswith("-voice"))
    voice = next(c for c in plan.calls if c.name == "import_conversation"
                 and c.args["conversation"] == room)
    assert [m["role"] for m in voice.args["messages"]] == ["user", "assistant"]
    assert voice.args["messages"][0]["content"] == "part on AutoZone for me."


# -- what each shape becomes ----------------------------------------------------------------------

def node(convs, key):
    return next(m for c in convs for m in c.nodes if m.key == key)


def test_each_shape_becomes_readable_text():
    convs, saved = read(export())
    # Custom instructions: the user's words without ChatGPT's preamble.
    ci = node(convs, "3529f258-4e3d-4601-b832-e64a0ca43830")
    assert (ci.role, ci.kind) == ("user", "instructions")
    assert ci.text.startswith("[custom instructions]\nAbout me:\nPreferred name: DONALD")
    assert "How to respond:\nDONALD의" in ci.text and "quietly think" not in ci.text
    only = node(convs, "2025073c-f179-4a2d-9512-d4c81cbe64cb")
    assert only.text.startswith("[custom instructions]\nHow to respond:\nNo bullshit.")
    # Attachments and images: one line naming them; an image named by its attachment once.
    md = node(convs, "9756974a-a206-4b27-8078-0d7871cd4016")
    assert md.text.endswith("\n[attachments: ba324d39-4d9a-4367-9e70-5d55f6d07756.md]")
    img = node(convs, "72605258-161d-4cdc-afb1-6ed56b33120c")
    assert img.kind == "text" and img.text.endswith(
        "\n[attachments: 4ec848aa-3f0b-4508-bc2b-0b2dfb91bd7f.png]")
    zipped = node(convs, "26d4e0a6-9535-415b-871f-103259ee9bf1")
    assert (zipped.kind, zipped.text) == ("attachments",
                                          "[attachments: BIBLEs_FOR_PROSE_ENGINE.zip]")
    # Canvas: the latest version, under the title the tool gave it, where it was written.
    first = node(convs, "da47c9bd-27db-4d49-9365-11ac013da365")
    latest = node(convs, "constructed-update-1")
    assert first.skip == "earlier canvas version (the latest is kept)"
    assert (latest.role, latest.kind, latest.skip) == ("assistant", "canvas", None)
    assert latest.text.startswith("[canvas: Day 1 Log]\n# 🧭 Day_1_Log")
    assert "기본 구조(뼈대) 생성" in latest.text and "skeleton" not in latest.text
    manus = node(convs, "651a2518-4bab-4ba6-98aa-1f885dc9fd95")
    assert manus.text.startswith("[canvas: Manus AI Handoff — OmniMeta Repo Upgrade")
    # Code and its output: fenced, shown as the assistant's.
    code = node(convs, "126400d5-e323-4849-8441-7c229cc56025")
    assert (code.role, code.kind) == ("assistant", "code")
    assert code.text.startswith("```python\n# Retry the process") and code.text.endswith("```")
    in_text = node(convs, "26d046fa-1f3a-4617-a8ed-89b7f9a0d9c7")
    assert in_text.kind == "code" and in_text.text.startswith("```python\n# Inspect")
    out = node(convs, "b1906007-d102-4294-ad06-4d03db3a6ece")
    assert (out.role, out.kind) == ("tool", "code_output")
    assert out.text.startswith("```\n{'extract_dir'") and out.text.endswith("}\n```")
    # Reasoning: marked, summary in bold, then what was thought.
    thought = node(convs, "209575be-466c-46ee-b279-188fa27cd9d4")
    assert thought.text.startswith("[reasoning]\n**Proposing next steps for integration**\n"
                                   "I noticed the file")
    recap = node(convs, "dc420aea-253d-4a1c-828a-92eda8cdcbfb")
    assert (recap.kind, recap.text) == ("reasoning", "[reasoning]\n8s 동안 생각함")
    # Voice: the transcript, not the audio.
    said = node(convs, "2170aecb-800a-452d-aa2d-bd0f7732da6e")
    assert (said.role, said.kind) == ("assistant", "voice")
    assert said.text.startswith("Well, look at that") and "sediment" not in said.text
    # Memories: their own transcript, oldest first, each after the one before.
    assert saved is not None and saved.title == MEMORIES_TITLE
    assert [m.text for m in saved.nodes] == [
        "User is referencing specific page ranges in their bibliography entries.",
        "매일 작업 종료 시 반드시 ‘AutoTraderAgent 일일 종료 보고’ 고정 템플릿을 사용해 "
        "진도(% 완료) 점검을 진행하길 원함."]
    assert [m.parent for m in saved.nodes] == [None, saved.nodes[0].key]
    assert len({m.key for m in saved.nodes}) == 2


def test_kept_nodes_hang_off_their_nearest_kept_ancestor():
    plan = plan_chats(EXPORT)
    conv = next(c for c in plan.calls if c.name == "import_conversation"
                and c.args["conversation"] == plan.summary["rooms"][
                    "chatgpt:693dfdd5-cb00-8332-b643-38791c63d0a3"])
    texts = [m["content"] for m in conv.args["messages"]]
    # The memory and the bio tool's answer are left out; the answer follows the question.
    assert texts[0].startswith('"2️⃣') and texts[1].startswith("**질문21")
    assert all("parents" not in m for m in conv.args["messages"])


# -- what is still left out, and malformed shapes --------------------------------------------------

def mutate(doc, conv, key):
    return doc[conv]["mapping"][key]["message"]


def test_left_out_shapes_are_counted_with_a_reason():
    doc = export()
    voice = mutate(doc, 3, "02192704-dade-4ad6-b5d9-26dbf57c4522")
    voice["content"]["parts"][0]["text"] = ""
    image = mutate(doc, 1, "72605258-161d-4cdc-afb1-6ed56b33120c")
    image["content"]["parts"] = image["content"]["parts"][:1]
    image["metadata"] = {}
    snapshot = mutate(doc, 2, "2025073c-f179-4a2d-9512-d4c81cbe64cb")
    snapshot["content"] = {"content_type": "model_editable_context",
                           "model_set_context": "1. [2024-10-26]. User prefers Python."}
    bad_json = mutate(doc, 4, "651a2518-4bab-4ba6-98aa-1f885dc9fd95")
    bad_json["content"]["text"] = '{"name": "Manus'
    convs, _ = read(doc)
    assert node(convs, "02192704-dade-4ad6-b5d9-26dbf57c4522").skip == \
        "audio only (no transcript)"
    assert node(convs, "72605258-161d-4cdc-afb1-6ed56b33120c").skip == \
        "image only (no text or file name)"
    assert node(convs, "2025073c-f179-4a2d-9512-d4c81cbe64cb").skip.startswith(
        "memory snapshot")
    assert node(convs, "651a2518-4bab-4ba6-98aa-1f885dc9fd95").skip == \
        "canvas call that is not valid JSON"


@pytest.mark.parametrize("pattern", ["no such words", "(unclosed", "(a+)+$", "(x|xy)*z"])
def test_a_canvas_update_that_does_not_apply_keeps_the_version_before(pattern):
    doc = export()
    update = mutate(doc, 0, "constructed-update-1")
    update["content"]["text"] = json.dumps({"updates": [{"pattern": pattern,
                                                         "replacement": "x"}]})
    convs, _ = read(doc)
    assert node(convs, "constructed-update-1").skip == "canvas update that did not apply"
    first = node(convs, "da47c9bd-27db-4d49-9365-11ac013da365")
    assert first.skip is None and "skeleton" in first.text


MALFORMED = [
    # (conversation, node, change, error)
    (3, "02192704-dade-4ad6-b5d9-26dbf57c4522",
     lambda m: m["content"]["parts"][0].update(text=5),
     r"part 0 \(audio_transcription\) text must be text"),
    (3, "2170aecb-800a-452d-aa2d-bd0f7732da6e",
     lambda m: m["content"].update(parts="spoken"), r"content.parts must be a list"),
    (1, "72605258-161d-4cdc-afb1-6ed56b33120c",
     lambda m: m["content"]["parts"].append(7), r"part 2 must be text or an object"),
    (1, "72605258-161d-4cdc-afb1-6ed56b33120c",
     lambda m: m["metadata"].update(attachments={"name": "a.png"}),
     r"metadata.attachments must be a list"),
    (0, "9756974a-a206-4b27-8078-0d7871cd4016",
     lambda m: m["metadata"]["attachments"][0].update(name=3), r"attachment 0 name must be text"),
    (4, "209575be-466c-46ee-b279-188fa27cd9d4",
     lambda m: m["content"].update(thoughts="thinking"), r"content.thoughts must be a list"),
    (4, "209575be-466c-46ee-b279-188fa27cd9d4",
     lambda m: m["content"]["thoughts"].append("x"), r"thought 1 must be an object"),
    (4, "209575be-466c-46ee-b279-188fa27cd9d4",
     lambda m: m["content"]["thoughts"][0].update(summary=["a"]),
     r"thought 0 summary must be text"),
    (1, "dc420aea-253d-4a1c-828a-92eda8cdcbfb",
     lambda m: m["content"].update(content=8), r"reasoning_recap content must be text"),
    (4, "b1906007-d102-4294-ad06-4d03db3a6ece",
     lambda m: m["content"].update(text=["1"]), r"execution_output text must be a string"),
    (4, "126400d5-e323-4849-8441-7c229cc56025",
     lambda m: m["content"].update(text=None), r"content.text must be a string"),
    (4, "26d046fa-1f3a-4617-a8ed-89b7f9a0d9c7",
     lambda m: m["content"].update(parts={"0": "x"}), r"content.parts must be a list"),
    (0, "3529f258-4e3d-4601-b832-e64a0ca43830",
     lambda m: m["content"].update(user_profile=1), r"content.user_profile must be text"),
    (0, "da47c9bd-27db-4d49-9365-11ac013da365",
     lambda m: m["content"].update(parts=None), r"content.parts must be a list"),
    (5, "a220bd6a-98c1-4ada-9651-0bbb7fff60b7",
     lambda m: m["content"].update(parts="memory"), r"content.parts must be a list"),
    (5, "a220bd6a-98c1-4ada-9651-0bbb7fff60b7",
     lambda m: m.update(recipient=["bio"]), r"recipient must be a string"),
]


@pytest.mark.parametrize(("conv", "key", "change", "error"), MALFORMED)
def test_malformed_shapes_are_a_clear_error(conv, key, change, error):
    doc = copy.deepcopy(export())
    change(mutate(doc, conv, key))
    with pytest.raises(ImportRejected, match=rf"^conversations.json conversation {conv} node "
                                             rf"'{key}': {error}$"):
        read(doc)


@pytest.mark.parametrize("pattern, multiple, replaced", [
    ("skeleton", True, "뼈대"), (r"skel\eton", False, None), (r"skel\.eton", True, None),
    (r"ske\leton", True, None), (".*", False, "")])
def test_canvas_patterns_are_text_or_the_whole_document_never_run_as_regexes(
        pattern, multiple, replaced):
    doc = export()
    update = mutate(doc, 0, "constructed-update-1")
    update["content"]["text"] = json.dumps({"updates": [{
        "pattern": pattern, "multiple": multiple, "replacement": "뼈대"}]})
    convs, _ = read(doc)
    out = node(convs, "constructed-update-1")
    if replaced is None:  # \e and \l are regex syntax, \. is text not in the document
        assert out.skip == "canvas update that did not apply"
    elif pattern == ".*":
        assert out.skip is None and out.text.rstrip("`\n").endswith("뼈대")
    else:
        assert out.skip is None and "skeleton" not in out.text and "뼈대" in out.text


def test_a_tool_named_by_an_internal_id_is_called_unnamed():
    from palazzo.importers.chatgpt import tool_words

    assert tool_words("t2uay3k.sj1i4kz") == "an unnamed tool (id t2uay3k.sj1i4kz)"
    assert [tool_words(n) for n in ("python", "browser.search", "dalle.text2im", None)] == \
        ["python", "browser.search", "dalle.text2im", "a tool"]

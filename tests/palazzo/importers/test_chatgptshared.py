"""ChatGPT's shared_conversations.json over real records (chatgpt-shared-samples; where each
comes from: that folder's README). What the file holds is counted here from the JSON itself,
then compared with the links the reader lists and the records it leaves out."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from palazzo import bind, call
from palazzo.errors import ImportRejected
from palazzo.importers import apply
from palazzo.importers.chatgptshared import (
    REPEATED,
    SHARE_URL,
    SHARED,
    SHARED_TITLE,
    read_shared,
    sniff_shared,
)
from palazzo.importers.chats import plan_transcripts, room_names
from palazzo.palace import Palace

SAMPLES = Path(__file__).parents[1] / "data" / "importers" / "chatgpt-shared-samples"
EXPORT = SAMPLES / "shared_conversations.json"
CLAUDE = Path(__file__).parents[1] / "data" / "importers" / "claude-export-samples"


def export() -> list[dict]:
    return json.loads(EXPORT.read_text(encoding="utf-8"))


def listed(text: str) -> tuple[list[str], list[str]]:
    """Return (the listing's lines, the share ids its links name)."""
    lines = [line for line in text.split("\n") if line.startswith("- ")]
    return lines, re.findall(re.escape(SHARE_URL) + r"([0-9a-f-]+)", text)


def test_every_share_is_listed_once_and_nothing_is_lost():
    doc = export()
    ids = [s["id"] for s in doc]
    conversations = {s["conversation_id"] for s in doc}
    (conv,) = read_shared(doc, "shared_conversations.json")
    assert (conv.name, conv.title) == (SHARED, SHARED_TITLE)
    (msg,) = conv.nodes
    assert (msg.role, msg.kind, msg.timestamp, msg.skip) == ("user", "text", None, None)
    lines, links = listed(msg.text)
    assert len(lines) == len(conversations)  # a conversation shared twice is one line
    assert sorted(links) == sorted(set(ids))
    assert len(links) + len(conv.skipped) == len(doc)
    for share in doc:
        line = next(x for x in lines if f"chatgpt:{share['conversation_id']})" in x)
        assert line.startswith(f"- {share['title'].strip()}: ")
        assert SHARE_URL + share["id"] in line


def test_the_samples_hold_a_conversation_shared_twice_and_titles_that_repeat():
    doc = export()
    by_conversation: dict[str, int] = {}
    for s in doc:
        by_conversation[s["conversation_id"]] = by_conversation.get(s["conversation_id"], 0) + 1
    assert max(by_conversation.values()) == 2
    titles = [s["title"] for s in doc]
    assert len(set(titles)) < len(set(by_conversation))  # two conversations, one title


def test_a_repeated_share_record_is_left_out_with_a_reason():
    doc = export()
    doc.append(copy.deepcopy(doc[0]))
    (conv,) = read_shared(doc, "shared_conversations.json")
    assert conv.skipped == [(f"shared_conversations.json share {len(doc) - 1}", REPEATED)]
    _, links = listed(conv.nodes[0].text)
    assert len(links) + len(conv.skipped) == len(doc)


def test_a_share_with_the_users_name_says_so():
    doc = export()
    doc[1]["is_anonymous"] = False  # every real sample is anonymous; the flag is a bool
    text = read_shared(doc, "s.json")[0].nodes[0].text
    (line,) = [x for x in text.split("\n") if doc[1]["id"] in x]
    assert line.endswith("(shared with your name)")
    assert text.count("shared with your name") == 1


def test_nothing_shared_is_no_transcript():
    assert read_shared([], "shared_conversations.json") == []


def test_an_untitled_share_is_listed_as_untitled():
    doc = export()[:1]
    doc[0]["title"] = None
    assert "- untitled: " + SHARE_URL in read_shared(doc, "s.json")[0].nodes[0].text


def test_the_listing_imports_as_one_turn():
    convs = read_shared(export(), "shared_conversations.json")
    rooms = room_names(convs)
    palace = Palace()
    apply(plan_transcripts(convs, "shared_conversations.json", "chatgpt-shared"),
          bind(palace))
    out = call(palace, "list_turns", {"conversation": rooms[SHARED]})
    assert [t["role"] for t in out["turns"]] == ["user"]


@pytest.mark.parametrize(("change", "error"), [
    (lambda d: {"shares": d}, r"s\.json: shared_conversations\.json must be a list"),
    (lambda d: d[:2] + ["x"], r"s\.json share 2: a share must be an object"),
    (lambda d: [{**d[0], "id": ""}], r"share 0: id must be a non-empty string"),
    (lambda d: [{k: v for k, v in d[0].items() if k != "conversation_id"}],
     r"share 0: conversation_id must be a non-empty string"),
    (lambda d: [{**d[0], "title": 5}], r"share 0: title must be a string"),
    (lambda d: [{**d[0], "is_anonymous": "yes"}], r"share 0: is_anonymous must be true"),
])
def test_malformed_records_are_a_clear_error(change, error):
    with pytest.raises(ImportRejected, match=error):
        read_shared(change(export()), "s.json")


def test_sniff_knows_the_file_and_nothing_else():
    claude = json.loads((CLAUDE / "projects.json").read_text(encoding="utf-8"))
    memories = json.loads((CLAUDE / "memories.json").read_text(encoding="utf-8"))
    assert sniff_shared(export())
    feedback = [{"id": "f1", "conversation_id": "c1", "message_id": "m1", "rating": "thumbsUp",
                 "is_anonymous": True}]
    conversations = [{**export()[0], "mapping": {}}]
    for other in ([], {}, claude, memories, feedback, conversations, [1, 2], "text"):
        assert not sniff_shared(other)

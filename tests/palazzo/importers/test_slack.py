"""The Slack export reader, on an export assembled from public sample files
(tests/palazzo/data/importers/slack-samples/README.md) and on small made-up exports for shapes
the samples do not hold. Counts are taken from the JSON here, not from the reader.
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from palazzo.errors import ImportRejected
from palazzo.importers.chats import plan_transcripts
from palazzo.importers.slack import is_slack_export, read_slack
from palazzo.importers.transcript import Transcript

EXPORT = Path(__file__).parents[1] / "data" / "importers" / "slack-samples" / "export"
LIMIT = 1 << 30
# Subtypes that are somebody's words (the rest are joins, leaves, deletions, …).
WORDS = {None, "thread_broadcast", "file_share", "bot_message"}


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _channels() -> dict[str, str]:
    """{channel name: id} from channels.json."""
    return {c["name"]: c["id"] for c in _json(EXPORT / "channels.json")}


def _raw(folder: str, root: Path = EXPORT) -> list[dict[str, Any]]:
    """Every message of a channel folder, day files in name order."""
    return [m for day in sorted((root / folder).glob("*.json")) for m in _json(day)]


def _read(root: Path = EXPORT, limit: int = LIMIT) -> dict[str, Transcript]:
    return {t.title: t for t in read_slack(root, limit)}


def _kept(conv: Transcript) -> list[str]:
    return [m.text for m in conv.nodes if m.skip is None]


def _by_key(conv: Transcript) -> dict[str, Any]:
    return {m.key: m for m in conv.nodes}


# -- recognising an export ----------------------------------------------------------------------

def _zip(tmp: Path, top: str = "") -> Path:
    out = tmp / "export.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for file in sorted(EXPORT.rglob("*")):
            if file.is_file():
                z.write(file, top + file.relative_to(EXPORT).as_posix())
    return out


def test_is_slack_export(tmp_path):
    assert is_slack_export(EXPORT)
    assert is_slack_export(_zip(tmp_path))
    assert not is_slack_export(EXPORT / "general")
    assert not is_slack_export(EXPORT / "users.json")
    assert not is_slack_export(tmp_path / "missing")
    (tmp_path / "half").mkdir()
    shutil.copy(EXPORT / "channels.json", tmp_path / "half")
    assert not is_slack_export(tmp_path / "half")
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("channels.json", "[]")
        z.writestr("elsewhere/users.json", "[]")
    assert not is_slack_export(other)


# -- the sample export --------------------------------------------------------------------------

def test_one_transcript_per_channel_with_a_folder():
    convs = read_slack(EXPORT, LIMIT)
    ids = _channels()
    assert [(c.name, c.title) for c in convs] == [
        (f"slack:{ids[n]}", f"#{n}") for n in ("B75B4C7", "random", "general")]
    assert "feedback" in ids and not (EXPORT / "feedback").exists()
    assert convs[0].where == str(EXPORT / "B75B4C7")
    assert all(not c.skipped for c in convs)


@pytest.mark.parametrize("folder", ["B75B4C7", "random", "general"])
def test_every_message_is_kept_or_skipped_with_a_reason(folder):
    raw = _raw(folder)
    conv = _read()[f"#{folder}"]
    assert [m.key for m in conv.nodes] == sorted((m["ts"] for m in raw), key=float)
    kept = [m for m in conv.nodes if m.skip is None]
    skipped = [m for m in conv.nodes if m.skip is not None]
    spoken = [m for m in raw if m.get("subtype") in WORDS]
    assert len(kept) == len(spoken) and len(kept) + len(skipped) == len(raw)
    assert not any(m.silent for m in conv.nodes)
    expected = Counter(m["subtype"] for m in raw if m.get("subtype") not in WORDS)
    assert Counter(m.skip.split()[1] for m in skipped) == expected
    for node in conv.nodes:
        assert node.timestamp == float(node.key)
        assert node.where.startswith(str(EXPORT / folder)) and " message " in node.where


def test_fixture_totals():
    convs = read_slack(EXPORT, LIMIT)
    nodes = [m for c in convs for m in c.nodes]
    assert len(nodes) == sum(len(_raw(f)) for f in ("B75B4C7", "random", "general")) == 50
    assert Counter(m.skip for m in nodes if m.skip) == {
        "Slack channel_join message (a member joined the channel)": 7,
        "Slack channel_leave message (a member left the channel)": 1,
        "Slack channel_purpose message (the channel description was changed)": 1,
        "Slack tombstone message (a deleted message (its replies are kept))": 1,
    }


def _thread_of(conv: Transcript, raw: list[dict[str, Any]]) -> dict[str, str]:
    """{reply ts: thread parent ts} from the JSON."""
    present = {m["ts"] for m in raw}
    return {m["ts"]: m["thread_ts"] for m in raw
            if m.get("thread_ts") not in (None, m["ts"]) and m["thread_ts"] in present}


@pytest.mark.parametrize("folder", ["B75B4C7", "random"])
def test_threads_are_branches_below_their_parent(folder):
    raw = _raw(folder)
    conv = _read()[f"#{folder}"]
    nodes = _by_key(conv)
    replies = _thread_of(conv, raw)
    assert replies  # both channels hold threads
    per_thread = Counter(replies.values())
    for m in raw:  # the parents' own reply counts agree with the replies the export holds
        if "reply_count" in m:
            assert per_thread[m["ts"]] == m["reply_count"]
    for thread, count in per_thread.items():
        chain = sorted((ts for ts, t in replies.items() if t == thread), key=float)
        assert len(chain) == count
        assert nodes[chain[0]].parent == thread  # the first reply hangs below the parent
        for earlier, later in zip(chain, chain[1:], strict=False):
            assert nodes[later].parent == earlier  # each later one below the reply before
    top = [m for m in conv.nodes if m.key not in replies]
    assert top[0].parent is None
    assert all(b.parent == a.key for a, b in zip(top, top[1:], strict=False))


def test_a_thread_spans_day_files():
    conv = _read()["#B75B4C7"]
    nodes = _by_key(conv)
    parent = "1736478630.905399"
    assert parent in {m["ts"] for m in _json(EXPORT / "B75B4C7" / "2025-01-10.json")}
    assert nodes["1736554746.482349"].parent == parent  # in 2025-01-11.json
    assert nodes["1736554783.040199"].parent == "1736554746.482349"


def test_speaker_names_and_roles():
    convs = _read()
    first = {}
    for conv in convs.values():
        for m in conv.nodes:
            if m.skip is None:
                first.setdefault(m.text.split("**: ")[0] + "**", m.role)
    assert first == {
        "**WgO268Xc0KtFylJ**": "user",  # users.json profile.real_name (display_name empty)
        "**YTX35tuC1zyFhKZL**": "user",  # users.json profile.display_name
        "**2NR0w**": "assistant",  # an app: its bot_profile.name
        "**U2147483697**": "user",  # not in users.json and no user_profile: by id
        "**Jane**": "user", "**Jon**": "user",  # users.json real_name, no profile
        "**k._**": "user", "**Steve**": "user", "**Rhea**": "user",
        "**cecilytechuan**": "user", "**josemonkey**": "user",  # from user_profile
        "**BUEBX9AUR**": "assistant",  # a bot_message with only a bot_id
        "**Peter**": "user",  # user_profile of other messages by the same author
    }


def test_text_rendering():
    convs = _read()
    general, random = _kept(convs["#general"]), _kept(convs["#random"])
    assert "**Peter**: #C079A3FA12P #rich-text-blocks #general" in general
    assert "**Peter**: @Peter test user mention @U074VRHQ11T" in general
    assert "**Rhea**: @channel" in random and "**Rhea**: @everyone" in random
    assert ("**k._**: @k._ uploaded a file: [dirac72.md](https://plan8team.slack.com/files/"
            "U6006P1CN/F8VSW87RR/dirac72.md) and commented: test upload attachment\n"
            "[attachments: dirac72.md]") in random
    (links,) = [t for t in general if "Netflix" in t]
    assert "&amp;" not in links and "?trackId=13752289&tctx=" in links
    assert links.startswith("**cecilytechuan**: Maybe something to watch with the kids this "
                            "summer: https://offspring.lifehacker.com/")
    assert "• Brian Regan has two specials on Netflix: _[Nunchucks and Flamethrowers](https://"\
        in links
    (poll,) = [t for t in general if t.startswith("**BUEBX9AUR**")]
    assert poll.split("\n") == [
        "**BUEBX9AUR**: Some question?", "*Poll title*", ":one: this is one    `8`",
        "@U12345678, @U12345679, @U12345680, @U12345681, @U12345682, @U12345683, @U12345684,"
        " @U12345685", ":two: this is two    `3`", "@U12345687, @U12346720, @U12345686",
        "Created by @U12345678 with /poll"]


def test_edits_reactions_and_files():
    convs = _read()
    edited = _json(EXPORT / "general" / "2012-12-14.json")[0]
    assert "edited" in edited
    assert _by_key(convs["#general"])[edited["ts"]].text == f"**U2147483697**: {edited['text']}"
    reacted = _json(EXPORT / "random" / "2012-12-14.json")[0]
    assert reacted["reactions"]
    assert _by_key(convs["#random"])[reacted["ts"]].text == "**U2147483697**: Hello world"
    nodes = _by_key(convs["#B75B4C7"])
    only_file = nodes["1736582524.607359"]
    assert (only_file.kind, only_file.text) == (
        "attachments",
        "**WgO268Xc0KtFylJ**: [attachments: befvnsUNVjwGzKFcKxuIlJ2dYo5z59neCfT8P2Y3t]")
    with_text = nodes["1736560990.444379"]
    assert with_text.kind == "text" and with_text.text.endswith(
        "\n[attachments: UYt6OUsnR7j1SfHiJNZr8nvykMlRPheYNHLmEsOgRi27CyoQqusJrRksBRvrSx4CW]")
    canvas = _by_key(convs["#general"])["1772636065.551219"]
    assert canvas.text == ("**Peter**: message with *files  @U074VRHQ11T* \nF07A32DC2GG\n"
                           "[attachments: Untitled, channels.json]")


def test_planned_turns_keep_threads_as_branches():
    conv = _read()["#random"]
    plan = plan_transcripts([conv], "x", "slack")
    messages = plan.calls[-1].args["messages"]
    assert len(messages) == len(_kept(conv))
    assert len(plan.summary["skipped"]) == 4
    texts = [m["content"] for m in messages]
    root = texts.index("**Jane**: thread message")
    after = texts.index("**k._**: edfadfa")  # the next top-level message
    assert messages[root + 1].get("parents") is None  # the first reply follows the parent
    assert messages[after]["parents"] == [root]  # the channel goes on from the parent too
    assert {m["role"] for m in messages} == {"user"}


# -- the zip form and the byte budget -----------------------------------------------------------

@pytest.mark.parametrize("top", ["", "Acme Slack export Jan 1 2012 - Dec 4 2026/"])
def test_zip_reads_like_the_folder(tmp_path, top):
    archive = _zip(tmp_path, top)
    assert is_slack_export(archive)
    from_zip, from_folder = read_slack(archive, LIMIT), read_slack(EXPORT, LIMIT)
    assert [(c.name, c.title) for c in from_zip] == [(c.name, c.title) for c in from_folder]
    for z, f in zip(from_zip, from_folder, strict=True):
        assert [(m.key, m.parent, m.text, m.skip, m.timestamp) for m in z.nodes] == \
            [(m.key, m.parent, m.text, m.skip, m.timestamp) for m in f.nodes]
    where = from_zip[0].nodes[0].where
    assert where == f"{archive}!{top}B75B4C7/2025-01-10.json message 0"


def test_byte_limit_counts_every_file(tmp_path):
    total = sum(f.stat().st_size for f in EXPORT.rglob("*.json"))
    assert read_slack(EXPORT, total)
    with pytest.raises(ImportRejected, match=rf"more than the {total - 1} bytes"):
        read_slack(EXPORT, total - 1)
    with pytest.raises(ImportRejected, match=r"more than the 1000 bytes"):
        read_slack(_zip(tmp_path), 1000)


# -- malformed exports --------------------------------------------------------------------------

def _copy(tmp: Path) -> Path:
    root = tmp / "export"
    shutil.copytree(EXPORT, root)
    return root


def _edit_day(root: Path, name: str, change) -> None:
    path = root / name
    doc = _json(path)
    doc = change(doc)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")


def _first(key: str, value: Any):
    def change(doc):
        if value is None:
            del doc[0][key]
        else:
            doc[0][key] = value
        return doc
    return change


@pytest.mark.parametrize("name, change, message", [
    ("general/2018-03-01.json", lambda d: {"messages": d},
     r"general/2018-03-01\.json: a day file must be a JSON list of messages"),
    ("general/2018-03-01.json", _first("ts", None),
     r"general/2018-03-01\.json message 0: 'ts' must be a Slack timestamp"),
    ("general/2018-03-01.json", _first("ts", 1519927200.000267),
     r"general/2018-03-01\.json message 0: 'ts' must be a Slack timestamp"),
    ("general/2018-03-01.json", _first("thread_ts", "yesterday"),
     r"general/2018-03-01\.json message 0: 'thread_ts' must be a Slack timestamp"),
    ("general/2018-03-01.json", _first("text", ["a"]),
     r"general/2018-03-01\.json message 0: 'text' must be text"),
    ("general/2018-03-01.json", _first("files", {"name": "a"}),
     r"general/2018-03-01\.json message 0: 'files' must be a list"),
    ("general/2018-03-01.json", lambda d: [*d, 7],
     r"general/2018-03-01\.json message 4: a message must be a JSON object"),
    ("general/2018-03-01.json", lambda d: [*d, {**d[0], "text": "changed"}],
     r"general/2018-03-01\.json message 4: repeats the ts 1519927200\.000267 of "
     r".*general/2018-03-01\.json message 0 with different content"),
    ("general/2018-03-01.json", lambda d: json.dumps(d)[:-5],
     r"general/2018-03-01\.json is not valid JSON"),
    ("users.json", lambda d: {"members": d}, r"users\.json: users\.json must be a JSON list"),
    ("users.json", lambda d: [*d[:2], {"name": "x"}],
     r"users\.json item 2: a user must be an object with an 'id'"),
    ("channels.json", lambda d: [d[0], {"name": "random"}],
     r"channels\.json item 1: a conversation must be an object with an 'id'"),
])
def test_malformed_export_names_file_and_place(tmp_path, name, change, message):
    root = _copy(tmp_path)
    _edit_day(root, name, change)
    with pytest.raises(ImportRejected, match=message):
        read_slack(root, LIMIT)


def test_not_an_export(tmp_path):
    with pytest.raises(ImportRejected, match=r"not a Slack export \(no channels\.json"):
        read_slack(tmp_path, LIMIT)
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(ImportRejected, match=r"junk\.zip: not a Slack export"):
        read_slack(junk, LIMIT)
    with pytest.raises(ImportRejected, match=r"no such file or folder"):
        read_slack(tmp_path / "missing.zip", LIMIT)


def test_nul_bytes_are_refused(tmp_path):
    root = _copy(tmp_path)
    (root / "general" / "2018-03-01.json").write_bytes(b"[" + b"\x00" * 64 + b"]")
    with pytest.raises(ImportRejected, match=r"2018-03-01\.json: not JSON text \(a NUL byte"):
        read_slack(root, LIMIT)


# -- shapes the samples do not hold -------------------------------------------------------------

def _export(tmp: Path, days: dict[str, list[dict[str, Any]]], **lists: list[Any]) -> Path:
    root = tmp / "made"
    root.mkdir()
    users = [{"id": "U1", "name": "ana", "real_name": "Ana Ruiz",
              "profile": {"display_name": "", "real_name": "Ana Ruiz"}},
             {"id": "U2", "name": "bo", "profile": {"display_name": "Bo"}},
             {"id": "U3", "name": "helper", "is_bot": True, "profile": {"real_name": "Helper"}}]
    (root / "users.json").write_text(json.dumps(users))
    (root / "channels.json").write_text(json.dumps(
        lists.pop("channels", [{"id": "C1", "name": "general"}])))
    for name, doc in lists.items():
        (root / f"{name}.json").write_text(json.dumps(doc))
    for path, messages in days.items():
        (root / path).parent.mkdir(exist_ok=True)
        (root / path).write_text(json.dumps(messages))
    return root


def test_direct_messages_groups_and_unlisted_folders(tmp_path):
    hi = [{"type": "message", "user": "U1", "text": "hi", "ts": "1700000000.000100"}]
    root = _export(tmp_path, {"D1/2023-11-14.json": hi, "mpdm-ana--bo-1/2023-11-14.json": hi,
                              "secret/2023-11-14.json": hi, "stray/2023-11-14.json": hi,
                              "general/2023-11-14.json": hi, "general/canvas.json": hi},
                   dms=[{"id": "D1", "members": ["U1", "U2"]}],
                   mpims=[{"id": "G2", "name": "mpdm-ana--bo-1", "members": ["U1", "U2", "U9"]}],
                   groups=[{"id": "G1", "name": "secret"}])
    convs = read_slack(root, LIMIT)
    assert [(c.name, c.title) for c in convs] == [
        ("slack:C1", "#general"), ("slack:G1", "#secret"),
        ("slack:D1", "direct message: Ana Ruiz, Bo"),
        ("slack:G2", "group direct message: Ana Ruiz, Bo, U9"),
        ("slack:stray", "#stray")]
    assert convs[0].skipped == [(str(root / "general" / "canvas.json"),
                                 "not a day file (YYYY-MM-DD.json)")]
    assert all(_kept(c) == ["**Ana Ruiz**: hi"] for c in convs)


def test_other_shapes(tmp_path):
    msgs = [
        {"type": "message", "user": "U2", "text": "a &lt;b&gt; &amp; <!here> <!subteam^S1|@devs>"
         " <mailto:a@b.c|a@b.c> <#C1> <@U1|ana>", "ts": "1700000000.000100"},
        {"type": "message", "user": "U2", "text": "a reply whose parent is not exported",
         "ts": "1700000001.000100", "thread_ts": "1600000000.000100"},
        {"type": "message", "subtype": "bot_message", "username": "deploybot", "text": "",
         "attachments": [{"fallback": "deployed v2", "color": "good"}],
         "ts": "1700000002.000100"},
        {"type": "message", "user": "U3", "text": "beep", "ts": "1700000003.000100"},
        {"type": "message", "user": "U1", "text": "", "ts": "1700000004.000100"},
        {"type": "message", "subtype": "huddle_thread", "user": "U1", "text": "",
         "ts": "1700000005.000100"},
        {"type": "message", "subtype": "some_future_subtype", "user": "U1", "text": "x",
         "ts": "1700000006.000100"},
        {"type": "message", "user": "U1", "ts": "1700000007.000100", "blocks": [
            {"type": "rich_text", "elements": [
                {"type": "rich_text_quote", "elements": [{"type": "text", "text": "quoted"}]},
                {"type": "rich_text_preformatted", "elements": [{"type": "text", "text": "x=1"}]},
                {"type": "rich_text_section", "elements": [
                    {"type": "user", "user_id": "U2"}, {"type": "text", "text": " see "},
                    {"type": "channel", "channel_id": "C1"}]}]}]},
    ]
    root = _export(tmp_path, {"general/2023-11-14.json": msgs,
                              "general/2023-11-15.json": [msgs[0]]})
    (conv,) = read_slack(root, LIMIT)
    got = [(m.key, m.parent, m.role, m.text, m.skip) for m in conv.nodes]
    assert got == [
        ("1700000000.000100", None, "user",
         "**Bo**: a <b> & @here @devs [a@b.c](mailto:a@b.c) #general @Ana Ruiz", None),
        ("1700000001.000100", "1700000000.000100", "user",
         "**Bo**: a reply whose parent is not exported", None),
        ("1700000002.000100", "1700000001.000100", "assistant",
         "**deploybot**: deployed v2", None),
        ("1700000003.000100", "1700000002.000100", "assistant", "**Helper**: beep", None),
        ("1700000004.000100", "1700000003.000100", "user", "",
         "empty message (no text, blocks or files)"),
        ("1700000005.000100", "1700000004.000100", "user", "",
         "Slack huddle_thread message (a huddle notice)"),
        ("1700000006.000100", "1700000005.000100", "user", "x",
         "Slack some_future_subtype message (a subtype this reader does not keep)"),
        ("1700000007.000100", "1700000006.000100", "user",
         "**Ana Ruiz**: > quoted\n```\nx=1\n```\n@Bo see #general", None),
    ]
    # the same message in two day files is counted once and noted
    assert conv.skipped == [(str(root / "general" / "2023-11-15.json") + " message 0",
                             "repeats the message at "
                             f"{root / 'general' / '2023-11-14.json'} message 0")]


# -- what an export must not make the reader do ------------------------------------------------

@pytest.mark.cpython_only
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_the_export_is_left_out_never_opened(tmp_path, in_time):
    from palazzo.importers.chats import plan_chats

    hi = [{"type": "message", "user": "U1", "text": "hi", "ts": "1700000000.000100"}]
    root = _export(tmp_path, {"general/2023-11-14.json": hi})
    day, top = root / "general" / "2023-11-15.json", root / "dms.json"
    for fifo in (day, top):
        os.mkfifo(fifo)
    plan = in_time(lambda: plan_chats(root), day, top)
    assert plan.summary["conversations"] == 1
    assert {s["item"]: s["reason"] for s in plan.summary["skipped"]
            if s["reason"].startswith("not a regular")} == {
        str(day): "not a regular file (a FIFO)", str(top): "not a regular file (a FIFO)"}


def test_a_zipped_day_file_that_inflates_like_a_bomb_is_refused(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for file in sorted(EXPORT.rglob("*.json")):
            z.write(file, file.relative_to(EXPORT).as_posix())
        z.writestr("general/2099-01-01.json", b"\t \n" * (8 << 20))
    with pytest.raises(ImportRejected, match=r"bomb\.zip!general/2099-01-01\.json: inflates "
                                             r"to more than 16777216 bytes.*zip bomb"):
        read_slack(archive, LIMIT)

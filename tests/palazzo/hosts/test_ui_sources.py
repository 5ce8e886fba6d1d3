"""Sources everywhere (issue 31), the views under CPython: the source line of a result card
and of the opened drawer, "Read the conversation" (the turns around it in order, its own
marked, Earlier and Later), "Show on the map" (the Map tab with the room selected and the
drawer marked), the room list's "from" column, and everything escaped. The same flows run in
Chromium in tests/browser/test_ui_sources.py."""

import time

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace, call  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import TABS, build_app  # noqa: E402
from palazzo.hosts.ui.drawers import conversation_html, shown  # noqa: E402
from palazzo.hosts.ui.hits import moment, source_line, source_short  # noqa: E402

T0 = 1_700_000_000.0
XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def palace():
    p = Palace(clock=lambda: T0 + 3600)
    call(p, "add_drawer", {"wing": "notes", "room": "notes", "source": "index",
                           "source_file": "tomatoes.txt", "key": "tomatoes.txt#0",
                           "content": "Tomatoes need six hours of sun."})
    call(p, "add_drawer", {"wing": "notes", "room": "notes", "source": "index",
                           "source_file": "roses.md", "key": "roses.md#0",
                           "content": "Prune climbing roses in late winter."})
    call(p, "add_room", {"wing": "conversations", "name": "garden-chat",
                         "description": f"Garden {XSS}"})
    call(p, "import_conversation", {"conversation": "garden-chat", "messages": [
        {"role": "user" if i % 2 == 0 else "assistant", "timestamp": T0 + 60 * i,
         "content": f"garden message {i}" + (" about basil" if i == 8 else "")}
        for i in range(16)]})
    return p


def app_for(p):
    app = build_app(Bridge(p)).palazzo_app
    app.search.now = lambda: T0 + 3600
    return app


def test_the_source_line_in_words():
    assert source_line({"kind": "file", "path": "roses/pruning.md", "part": 2}) == \
        "From roses/pruning.md · part 2"
    assert source_line({"kind": "file", "path": "a.md", "part": None}) == "From a.md"
    talk = {"kind": "conversation", "conversation": "c", "title": "Bread", "role": "user",
            "turn": 3, "turns": 40, "created_at": T0}
    assert source_line(talk) == f"Conversation “Bread” · user · {moment(T0)} · message 3 of 40"
    t = time.localtime(T0)
    assert moment(T0).endswith(f", {t.tm_hour:02d}:{t.tm_min:02d}") and moment(0) == ""
    assert source_line({"kind": "added", "via": "demo", "created_at": 0}) == "From demo"
    assert source_line({"kind": "added", "via": ""}) == "Added directly"
    assert source_line({"kind": "diary", "created_at": T0}).startswith("Diary entry · ")
    assert source_line(None) == "" and source_short(None) == ""
    assert source_short({"kind": "file", "path": "a.md", "part": 4}) == "a.md · part 4"
    assert source_short(talk) == f"user · {moment(T0)}"


def test_cards_and_the_opened_drawer_show_where_they_came_from():
    p = palace()
    app = app_for(p)
    s = app.search
    s.query.value = "tomatoes sun"
    card = s.cards.objects[0]
    assert card.objects[0].name == "notes / notes"
    assert 'data-testid="search-source">From tomatoes.txt</div>' in card.objects[1].object
    read, where, _ = card.objects[2].objects
    assert not shown(read) and shown(where)  # a note has no conversation to read
    card.objects[0].clicks += 1
    assert 'data-testid="drawer-source">From tomatoes.txt<' in s.meta.object
    assert not shown(s.read_it) and shown(s.map_it)

    s.query.value = "basil"
    body = s.cards.objects[0].objects[1].object
    assert "Conversation “Garden &lt;img" in body and "<img" not in body
    assert "· user ·" in body and "message 9 of 16" in body
    assert shown(s.cards.objects[0].objects[2].objects[0])


def test_read_the_conversation_shows_the_turns_around_in_order_with_earlier_and_later():
    p = palace()
    app = app_for(p)
    s = app.search
    s.query.value = "basil"
    s.cards.objects[0].objects[2].objects[0].clicks += 1  # the card's Read the conversation
    assert "garden message 8 about basil" in s.meta.object  # the drawer is open
    html = s.conversation.object
    turns = html.split('data-testid="conversation-turn"')[1:]
    assert len(turns) == 11  # 5 before, the turn, 5 after
    texts = [f"garden message {i}" for i in range(3, 14)]
    assert all(f">{x}" in t for t, x in zip(turns, texts, strict=True))  # in order
    assert sum('aria-current="true"' in t for t in turns) == 1
    assert 'data-here="true"' in turns[5] and "this drawer" in turns[5]
    assert "Garden &lt;img" in html and "<img" not in html and "<script" not in html
    assert shown(s.earlier) and shown(s.later)
    s.earlier.clicks += 1
    assert s.conversation.object.count('data-testid="conversation-turn"') == 14
    assert not shown(s.earlier) and shown(s.later)  # from the first message on
    s.later.clicks += 1
    assert s.conversation.object.count('data-testid="conversation-turn"') == 16
    assert not shown(s.later)
    # Opening another drawer clears it; a note has nothing to read.
    s.query.value = "roses"
    s.cards.objects[0].objects[0].clicks += 1
    assert s.conversation.object == "" and not shown(s.read_it) and not shown(s.earlier)


def test_show_on_the_map_switches_tabs_selects_the_room_and_marks_the_drawer():
    p = palace()
    app = app_for(p)
    s = app.search
    s.query.value = "roses winter"
    did = s.shown[0]["drawer_id"]
    s.cards.objects[0].objects[2].objects[1].clicks += 1  # the card's Show on the map
    assert app.tabs.active == TABS.index("Map")
    rooms = app.map.rooms
    index = rooms.selected.indices[0]
    assert (rooms.data["wing"][index], rooms.data["room"][index]) == ("notes", "notes")
    assert app.map.focus_ring.data["x"] == [rooms.data["x"][index]]
    listed = app.map.drawers.object
    assert 'data-testid="room-title">notes / notes (2 drawers)' in listed
    assert f'data-testid="room-drawer-marked" data-drawer="{did}"' in listed
    assert listed.count('data-testid="room-drawer-marked"') == 1
    assert "<td>roses.md</td>" in listed and "<td>tomatoes.txt</td>" in listed
    # From the opened drawer as well, and a tap on a room afterwards is a plain listing.
    app.show("Search")
    s.query.value = "basil"
    s.cards.objects[0].objects[0].clicks += 1
    s.map_it.clicks += 1
    assert app.tabs.active == TABS.index("Map")
    assert "conversations / garden-chat (16 drawers)" in app.map.drawers.object
    assert "<td>user · " in app.map.drawers.object
    app.map.rooms.selected.indices = [app.map._room_index("notes", "notes")]
    assert "room-drawer-marked" not in app.map.drawers.object
    assert app.map.focus_ring.data["x"] == []


def test_a_room_made_after_the_map_was_drawn_is_found_and_its_drawer_beyond_the_list():
    p = palace()
    app = app_for(p)
    for i in range(205):
        call(p, "add_drawer", {"wing": "big", "room": "many", "content": f"drawer {i}",
                               "created_at": T0 + i})
    first = next(p.drawers.ids[r] for r in p.drawers.live_rows()
                 if p.drawers.content[r] == "drawer 0")  # the oldest: beyond the 200 listed
    assert app.map._room_index("big", "many") is None  # not refreshed yet
    assert app.map.focus("big", "many", first)
    listed = app.map.drawers.object
    assert "(205 drawers)" in listed and f'data-drawer="{first}"' in listed
    assert listed.index("room-drawer-marked") < listed.index('"room-drawer"')  # listed first


def test_conversation_html_escapes_and_marks():
    out = conversation_html({"conversation": "c", "title": XSS, "total": 3, "earlier": False,
                             "later": True, "turns": [
                                 {"role": "user", "created_at": T0, "turn": 1, "text": XSS,
                                  "drawer_id": "d1", "here": False, "versions": 2},
                                 {"role": "assistant", "created_at": T0, "turn": 2,
                                  "text": None, "drawer_id": None, "here": True}]})
    assert "<img" not in out and "<script" not in out and "one of 2 versions" in out
    assert "the text of this message was deleted" in out
    assert 'data-testid="conversation-later"' in out
    assert 'data-testid="conversation-earlier"' not in out

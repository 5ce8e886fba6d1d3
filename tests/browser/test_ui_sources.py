"""Sources everywhere (issue 31, point 3), end to end in Chromium: a flat folder of notes and
a ChatGPT export go into a palace as a person gives them, a search shows where each result
came from (the note's file, the chat's title, speaker, time and place), "Read the
conversation" (by keyboard) shows the turns around the hit in order with its own marked,
"Show on the map" opens the Map tab with the room selected and the drawer marked, and the
Search tab fits 390 px.

The page runs with ``?embedder=hash`` (as tests/browser/test_ui_import.py, whose folder
picker and drop it drives the same way).
"""

from __future__ import annotations

import base64
import json

import pytest

from .conftest import new_guarded_context
from .test_ui import open_page, tab, wait_text
from .test_ui_import import DROP, status
from .test_ui_search import FIND_ALL

pytestmark = pytest.mark.browser

T0 = 1_767_000_000.0
NOTES = {
    "tomatoes.txt": "Tomatoes need six hours of sun.\n",
    "roses.md": "Prune climbing roses in late winter.\n",
    "zucchini.md": "Zucchini plants need a lot of room; one plant feeds a family.\n",
}
TITLE = "Planning the vegetable garden"
TALK = [
    ("user", "I want to plan the vegetable garden this spring."),
    ("assistant", "Start with a sketch of the beds and how much light each gets."),
    ("user", "The south bed is bright all day."),
    ("assistant", "Then it suits tomatoes and peppers."),
    ("user", "What about the shady corner by the shed?"),
    ("assistant", "Lettuce and spinach cope with shade."),
    ("user", "Should I grow zucchini as well?"),  # message 7: the one searched for
    ("assistant", "One or two plants are plenty: they spread wide."),
    ("user", "When do I sow the beans?"),
    ("assistant", "After the last frost, straight into the soil."),
    ("user", "And the garlic?"),
    ("assistant", "Garlic goes in during autumn."),
]


def chatgpt_export() -> list[dict]:
    """One ChatGPT conversation of TALK, a minute between messages, in the export's shape."""
    mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent = "root"
    for i, (role, text) in enumerate(TALK):
        nid = f"m{i:02d}"
        mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": {
            "id": nid, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": T0 + 60 * i, "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully", "recipient": "all", "metadata": {}}}
        mapping[parent]["children"].append(nid)
        parent = nid
    cid = "c0ffee00-0000-4000-8000-000000000001"
    return [{"title": TITLE, "create_time": T0, "update_time": T0 + 60 * len(TALK),
             "mapping": mapping, "current_node": parent, "id": cid, "conversation_id": cid}]


@pytest.fixture(scope="module")
def page(browser, site_url, tmp_path_factory):
    context, guard = new_guarded_context(browser, viewport={"width": 1280, "height": 900})
    pg = open_page(context, site_url + "?embedder=hash")
    pg.set_default_timeout(60_000)
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"{m.type}: {m.text}")
          if m.type in ("warning", "error") else None)
    pg.console = console
    base = tmp_path_factory.mktemp("sources")
    notes = base / "field notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    # The flat folder through the dialog's folder picker, into a new palace named after it.
    tab(pg, "Palaces & files")
    pg.locator(".pz-import-open").click()
    pg.locator("#import-folder-input").set_input_files(str(notes))
    assert status(pg, "^Found").startswith("Found a folder of 3 files")
    pg.locator("#import-go").click()
    assert status(pg, "^Imported").startswith("Imported 3 new drawers")
    pg.locator("#import-close").click()
    # The chat export dropped on the page, into the open palace.
    data = json.dumps(chatgpt_export()).encode()
    pg.evaluate(DROP, ["conversations.json", base64.b64encode(data).decode()])
    assert status(pg, "^Found").startswith("Found a chat export (chatgpt)")
    pg.locator('input[name="import-target"][value="open"]').check()
    pg.locator("#import-go").click()
    status(pg, "^Imported")
    pg.locator("#import-close").click()
    yield pg
    context.close()
    assert guard.outside == [] and guard.failed == []
    assert pg.errors == [] and pg.dialogs == []


def texts(page, testid: str) -> list[str]:
    """Return the text of every element with ``testid`` (shadow roots included)."""
    return page.evaluate(f"({FIND_ALL})('[data-testid={testid}]').map(e => e.textContent)")


def search(page, query: str) -> list[str]:
    """Search for ``query`` in the Search tab; return the source lines of its result cards."""
    tab(page, "Search")
    box = page.locator(".pz-search-query input")
    box.fill(query)
    box.press("Enter")
    wait_text(page, "search-summary", query)
    page.wait_for_function(f"({FIND_ALL})('[data-testid=search-source]').length > 1")
    return texts(page, "search-source")


def card(page, text: str):
    """The result card whose text holds ``text``."""
    return page.locator(".pz-card").filter(has_text=text).first


def test_a_flat_folder_is_a_room_named_after_it_and_its_files_stay_apart(page):
    rooms = page.evaluate("window.palazzo.call('list_rooms', {wing: 'field notes'})")["rooms"]
    assert [(r["name"], r["drawers"]) for r in rooms] == [("field notes", 3)]
    listed = page.evaluate("window.palazzo.call('list_drawers', {wing: 'field notes'})")
    assert sorted(d["source"]["path"] for d in listed["drawers"]) == sorted(NOTES)


def test_each_result_says_where_it_came_from(page):
    lines = search(page, "zucchini")
    assert "From zucchini.md" in lines
    chat = [x for x in lines if x.startswith(f"Conversation “{TITLE}”")]
    assert chat and "· user ·" in chat[0] and chat[0].endswith("· message 7 of 12")
    found = page.evaluate("window.palazzo.call('search', {query: 'zucchini'})")["results"]
    note = next(h for h in found if h["source"]["kind"] == "file")
    assert (note["wing"], note["room"], note["source"]["name"]) == (
        "field notes", "field notes", "zucchini.md")
    assert page.locator(".pz-result-open button", has_text="field notes / field notes").count()
    # A note has nothing to read; a chat turn has; both can be shown on the map.
    note_card, chat_card = card(page, "From zucchini.md"), card(page, "message 7 of 12")
    assert not note_card.locator(".pz-result-read button").is_visible()
    assert chat_card.locator(".pz-result-read button").is_visible()
    assert note_card.locator(".pz-result-map button").is_visible()


def test_read_the_conversation_by_keyboard_shows_the_turns_around_in_order(page):
    search(page, "zucchini")
    read = card(page, "message 7 of 12").locator(".pz-result-read button")
    read.focus()
    page.keyboard.press("Enter")
    wait_text(page, "conversation-title", TITLE)
    assert "message 7 of 12" in wait_text(page, "drawer-source", "message 7")
    turns = page.evaluate(f"""({FIND_ALL})('[data-testid=conversation-turn]').map(e => [
        e.dataset.role, e.dataset.here, e.querySelector('.pz-turn-text').textContent])""")
    assert [t[2] for t in turns] == [text for _, text in TALK[1:12]]  # 5 before, 5 after
    assert [t[0] for t in turns] == [role for role, _ in TALK[1:12]]
    assert [t[1] for t in turns].count("true") == 1 and turns[5][1] == "true"
    assert turns[5][2] == "Should I grow zucchini as well?"
    # the first message is not shown; the last one is (message 12)
    assert texts(page, "conversation-earlier") and texts(page, "conversation-later") == []
    assert not page.locator(".pz-conversation-later button").is_visible()
    page.locator(".pz-conversation-earlier button").click()
    page.wait_for_function(f"({FIND_ALL})('[data-testid=conversation-turn]').length == 12")
    assert texts(page, "conversation-earlier") == []
    assert not page.locator(".pz-conversation-earlier button").is_visible()


def test_show_on_the_map_selects_the_room_and_marks_the_drawer(page):
    search(page, "zucchini")
    found = page.evaluate("window.palazzo.call('search', {query: 'zucchini'})")["results"]
    note = next(h for h in found if h["source"]["kind"] == "file")
    card(page, "From zucchini.md").locator(".pz-result-map button").click()
    page.wait_for_function(f"""() => ({FIND_ALL})('[role=tab][aria-selected=true]')
                               .some(t => t.textContent.trim() === 'Map')""")
    assert "field notes / field notes (3 drawers)" in wait_text(page, "room-title",
                                                                 "field notes")
    marked = page.evaluate(f"""({FIND_ALL})('[data-testid=room-drawer-marked]').map(e =>
        [e.dataset.drawer, e.getAttribute('aria-current'), e.textContent])""")
    assert len(marked) == 1 and marked[0][:2] == [note["drawer_id"], "true"]
    assert "zucchini.md" in marked[0][2]
    others = texts(page, "room-drawer")
    assert {n for n in NOTES if any(n in x for x in others)} == {"tomatoes.txt", "roses.md"}
    # From the opened drawer too: the chat's room.
    search(page, "zucchini")
    card(page, "message 7 of 12").locator(".pz-result-open button").click()
    wait_text(page, "drawer-source", "message 7")
    page.locator(".pz-drawer-map button").click()
    wait_text(page, "room-title", "conversations / planning-the-vegetable-garden")
    assert any("user ·" in x for x in texts(page, "room-drawer-marked"))
    assert [m for m in page.console if "could not set initial ranges" not in m] == []


def test_the_sources_and_actions_fit_390_px(page):
    search(page, "zucchini")
    card(page, "message 7 of 12").locator(".pz-result-read button").click()
    wait_text(page, "conversation-title", TITLE)
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.wait_for_function(f"""() => ({FIND_ALL})('.pz-drawer-pane')[0]
                                   .getBoundingClientRect().right <= 390""")
        for sel in (".pz-card", ".pz-result-read button", ".pz-result-map button",
                    ".pz-drawer-read button", ".pz-drawer-map button",
                    ".pz-drawer-conversation", ".pz-drawer-pane"):
            loc = page.locator(sel)
            for i in range(loc.count()):
                b = loc.nth(i).bounding_box()
                if b is not None and b["width"] > 0:
                    assert b["x"] >= 0 and b["x"] + b["width"] <= 391, (sel, b)
        lines = page.evaluate(f"""({FIND_ALL})(
            '[data-testid=search-source], [data-testid=conversation-turn]')
            .map(e => e.getBoundingClientRect().right)""")
        assert lines and max(lines) <= 391
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})

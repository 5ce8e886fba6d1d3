"""Heat from use (issue 31), the views under CPython: a search explores the rooms of its hits,
opening a result, copying it and "Helpful" make them valuable, a nearby drawer opened from
another walks the link between their rooms; the map and the Heat tab show it after each
action without reloading every view. The same flow runs in Chromium in
tests/browser/test_ui_heat_use.py."""

import re

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from bokeh.models import Button as BokehButton  # noqa: E402

from palazzo import Palace, call  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app  # noqa: E402
from palazzo.hosts.ui.palacemap import MEANING  # noqa: E402

NOTES = [("garden", "roses", "Prune climbing roses in late winter."),
         ("garden", "roses", "Roses like a sunny wall."),
         ("garden", "tomatoes", "Tomatoes need six hours of sun."),
         ("kitchen", "bread", "Sourdough wants a warm kitchen."),
         ("kitchen", "soup", "Leek soup with potatoes.")]


def palace():
    p = Palace(clock=lambda: 1_700_000_000.0)
    for wing, room, text in NOTES:
        call(p, "add_drawer", {"wing": wing, "room": room, "content": text})
    return p


def heat(app, kind, wing, room):
    m = app.map
    i = m._room_index(wing, room)
    m.kind.value = kind
    return float(np.asarray(m.rooms.data["heat"])[i])


def rooms_with_some(app, kind):
    app.map.kind.value = kind
    found = re.search(r"(\d+) of (\d+) rooms? ha(?:ve|s) some", app.map.legend.object)
    return int(found.group(1)), int(found.group(2))


def test_search_then_open_warms_the_map_and_the_heat_tab():
    app = build_app(Bridge(palace())).palazzo_app
    s = app.search
    for kind in MEANING:
        assert rooms_with_some(app, kind) == (0, 4)
    reloads = []
    app.ctx.on_refresh(lambda: reloads.append(1))

    s.query.value = "roses"
    hits = s.shown
    assert hits and {(h["wing"], h["room"]) for h in hits} == {("garden", "roses")}
    assert rooms_with_some(app, "exploration") == (1, 4)
    assert heat(app, "exploration", "garden", "roses") == pytest.approx(0.1 * len(hits))
    assert rooms_with_some(app, "exploitation") == (0, 4)  # a search only explores

    s.cards.objects[0].objects[0].clicks += 1  # open the first result
    assert s.opened == hits[0]["drawer_id"]
    assert heat(app, "exploitation", "garden", "roses") == pytest.approx(0.3)
    assert rooms_with_some(app, "exploitation") == (1, 4)
    assert "exploitation</b> heat" in app.map.legend.object
    assert "opened, copied or marked Helpful" in app.map.legend.object
    # The Heat tab shows it too, hottest first.
    app.heat.sort.value = "exploitation"
    # exploration: 0.1 for each of the two hits, 0.1·(1 − 0.3) for the open.
    assert "<td>garden</td><td>roses</td><td>2</td><td>0.270</td><td>0.300</td>" in \
        app.heat.table.object
    assert reloads == []  # only the heat was reloaded, not every view


def test_helpful_and_copy_say_so_and_deposit_more():
    p = palace()
    app = build_app(Bridge(p)).palazzo_app
    s = app.search
    assert s.helpful.disabled and s.copy.disabled  # no drawer open yet
    s.query.value = "tomatoes sun"
    s.cards.objects[0].objects[0].clicks += 1
    assert not s.helpful.disabled and not s.copy.disabled
    s.helpful.clicks += 1
    assert s.helpful.name == "Marked helpful" and s.helpful.disabled
    assert 'data-testid="drawer-used">Marked as helpful' in s.used.object
    assert heat(app, "exploitation", "garden", "tomatoes") == pytest.approx(1.3)
    s.copy.clicks += 1
    assert "Copied the text to the clipboard" in s.used.object
    assert heat(app, "exploitation", "garden", "tomatoes") == pytest.approx(1.9)
    # The page copies the editor's text in the click itself (a worker has no clipboard).
    buttons = [m for m in app.layout.get_root().references()
               if isinstance(m, BokehButton) and "pz-drawer-copy" in m.css_classes]
    copy = buttons[0].js_event_callbacks["button_click"][0]
    assert "navigator.clipboard.writeText(value)" in copy.code
    assert "pz-drawer-edit" in copy.args["text"].css_classes
    # Opening another drawer offers Helpful again.
    s.query.value = "roses"
    s.cards.objects[0].objects[0].clicks += 1
    assert s.helpful.name == "Helpful" and not s.helpful.disabled and s.used.object == ""


def test_helpful_from_a_search_leaves_a_trail_that_search_reads_for_that_query():
    from palazzo.stigmergy.trails import QueryTrails

    p = palace()
    app = build_app(Bridge(p)).palazzo_app
    s = app.search
    s.query.value = "tomatoes sun"
    s.cards.objects[0].objects[0].clicks += 1
    found = s.opened
    region = QueryTrails.region(p.text_index.tokenizer, "tomatoes sun")
    assert p.trails.strengths(region) == {found: pytest.approx(0.3)}  # the open
    s.helpful.clicks += 1
    assert "searches like “tomatoes sun” will remember it" in s.used.object
    assert p.trails.strengths(region) == {found: pytest.approx(1.3)}
    learned = call(p, "search", {"query": "tomatoes sun", "pheromone": 1.0})["results"]
    assert learned[0]["drawer_id"] == found and learned[0]["scores"]["pheromone"] > 0
    # A result's own "This helped" marks it for the search without opening it.
    s.query.value = "roses"
    card = s.cards.objects[1]
    helped = card.objects[2].objects[2]
    assert helped.name == "This helped" and not helped.disabled
    other = s.card_ids[1]
    helped.clicks += 1
    assert helped.name == "Marked helpful" and not helped.disabled  # (disabled: hidden)
    roses = QueryTrails.region(p.text_index.tokenizer, "roses")
    assert p.trails.strengths(roses) == {other: pytest.approx(1.0)}
    helped.clicks += 1  # once is enough
    assert p.trails.strengths(roses) == {other: pytest.approx(1.0)}
    s.query.value = "roses pruning"  # new results: the button is offered again
    assert card.objects[2].objects[2].name == "This helped"
    s.query.value = "roses"  # the same search again: what helped comes first
    assert s.card_ids[0] == other
    s.query.value = "tomatoes sun"
    # A drawer opened from another's neighbours, not from results, leaves no trail.
    before = len(p.trails)
    s.open(s.opened, came_from=found)
    assert len(p.trails) == before


def test_saving_an_edit_is_not_another_open():
    p = palace()
    app = build_app(Bridge(p)).palazzo_app
    s = app.search
    s.query.value = "leek soup"
    s.cards.objects[0].objects[0].clicks += 1
    row = p.row(s.opened)
    assert p.drawers.columns["exploitation"][row] == pytest.approx(0.3)
    s.text.value = "Leek soup with potatoes and thyme."
    s.save.clicks += 1
    assert p.drawers.columns["exploitation"][p.row(s.opened)] == pytest.approx(0.3)


def test_a_nearby_drawer_opened_from_another_walks_the_hall_between_their_rooms():
    app = build_app(Bridge(palace())).palazzo_app
    s = app.search
    s.query.value = "roses wall"
    s.cards.objects[0].objects[0].clicks += 1
    assert rooms_with_some(app, "traversal") == (0, 4)
    tomato = next(d["id"] for d in call(app.ctx.bridge.palace, "list_drawers",
                                        {"wing": "garden", "room": "tomatoes"})["drawers"])
    s.open(tomato, came_from=s.opened)  # as a "Nearby drawers" button does
    assert rooms_with_some(app, "traversal") == (2, 4)  # the HALL roses - tomatoes
    assert heat(app, "recency", "garden", "tomatoes") == 1.0
    assert heat(app, "success", "garden", "roses") == pytest.approx(0.3)
    s.helpful.clicks += 1  # success along the walked link, not another walk
    assert heat(app, "success", "garden", "tomatoes") == pytest.approx(1.3)
    assert heat(app, "traversal", "garden", "tomatoes") == pytest.approx(0.1)


def test_a_tab_that_only_reads_the_palace_searches_and_opens_and_says_why_helpful_failed():
    from palazzo.hosts import worker

    writer = worker.start_engine("opfs", [], True)  # the browser's engine: the demo palace
    name = writer.call("list_palaces")["open"]
    files: dict[str, bytes] = {}
    for op, _, file, data in worker.drain(writer):  # what the page writes to storage
        if op in ("write", "mark"):
            files[file] = bytes(data)
        elif op == "append":
            files[file] += bytes(data)
    reader = worker.start_engine("opfs", [name], False, name, files)  # another tab's lock
    app = build_app(reader).palazzo_app
    s = app.search
    s.query.value = "roses pruning"
    assert s.shown
    s.cards.objects[0].objects[0].clicks += 1
    assert s.opened == s.shown[0]["drawer_id"] and s.used.object == ""
    s.helpful.clicks += 1
    assert "Not marked as helpful: this palace is open for writing elsewhere" in s.used.object
    assert s.helpful.name == "Helpful" and not s.helpful.disabled
    s.copy.clicks += 1
    assert "Copied the text to the clipboard, but the copy left no heat" in s.used.object
    assert reader.call("pheromone_status")["nodes"]["exploitation"]["total"] == 0.0

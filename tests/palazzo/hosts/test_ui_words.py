"""The interface in plain words (issue 31): no schema checker's sentence, engine jargon or
internal id where a person reads what to do."""

import asyncio
import concurrent.futures

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace, bind  # noqa: E402
from palazzo.hosts import demo  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app  # noqa: E402
from palazzo.hosts.ui.forms import in_words  # noqa: E402
from palazzo.persist.library import Library  # noqa: E402
from palazzo.persist.storage import MemoryRoot  # noqa: E402


def run(coro):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def demo_app():
    p = Palace(clock=lambda: 1764633600.0)
    demo.build(bind(p))
    return build_app(Bridge(p)).palazzo_app, p


def test_navigate_says_what_to_type_and_offers_the_closest_names():
    app, _ = demo_app()
    nav = app.navigate
    nav.start.value, nav.goal.value = "핸드폰", "Projects / palazzo"
    assert nav.run() is None
    said = nav.out.object
    assert "node id" not in said and "pair" not in said
    assert "is not a wing or room of this palace" in said and "Type a wing" in said
    nav.start.value = "gardn"
    nav.run()
    assert "Closest: Home / garden" in nav.out.object


def test_navigate_goes_toward_a_topic_and_names_links_in_words():
    app, _ = demo_app()
    nav = app.navigate
    nav.start.value, nav.goal.value = "Home / garden", "tomatoes and roses"
    out = nav.run()
    assert out is not None and out["found"] and out["goal_choice"] is not None
    said = nav.out.object
    assert 'data-testid="nav-toward"' in said and "Toward “tomatoes and roses”" in said
    assert "a room and its drawer (HAS_DRAWER)" in said  # the engine's name second
    assert "<td>room:" not in said and "the drawer that matches it best, in Home / garden" \
        in said  # places as a person reads them
    assert "semantic (how far the place is in meaning" in said


def test_deleting_a_palace_without_its_name_says_what_to_type():
    lib = Library(MemoryRoot(), lambda **kw: Palace(clock=lambda: 0.0, **kw))
    lib.new_palace("First")
    app = build_app(Bridge(library=lib)).palazzo_app
    app.files.palaces.value = "First"
    app.files.confirm.value = ""
    run(app.files._delete())
    said = app.files.palace_note.object
    assert "is empty" not in said and "Confirm" not in said
    assert "name, First, exactly" in said
    app.files.new_name.value = "  "
    run(app.files._new())
    assert "Type a name for the new palace" in app.files.palace_note.object


def test_a_blank_field_says_fill_it_in():
    box = pn.widgets.TextInput(name="Token")
    assert in_words("Bundle is empty: it needs at least 1 character.", box) == \
        "Fill in “Token”."
    assert in_words("Entity is missing: it is required.", box) == "Fill in “Token”."
    assert in_words("Budget must be at least 1, not 0.", box) == \
        "Budget must be at least 1, not 0."


def test_node_pheromones_are_explained_in_words():
    app, _ = demo_app()
    run(app.agents.run(2, 5, 3))
    app.agents.show_nodes()
    said = app.agents.nodes.object
    assert "balance (Q_edge)" in said and "Proved useful:" in said
    assert "<th>Q_edge</th>" not in said


def test_switching_palaces_drops_what_the_tabs_showed_of_the_old_one():
    lib = Library(MemoryRoot(), lambda **kw: Palace(clock=lambda: 0.0, **kw))
    lib.new_palace("Old")
    bridge = Bridge(library=lib)
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "tulips in the old one"})
    bridge.call("kg_add", {"subject": "Ada", "predicate": "likes", "object": "tulips"})
    app = build_app(bridge).palazzo_app
    app.search.query.value = "tulips"
    old = app.search.shown[0]["drawer_id"]
    app.search.open(old)
    app.map.show_room("w", "r")
    app.knowledge.open("Ada")
    assert "tulips" in app.search.cards.objects[0].objects[1].object
    app.files.new_name.value = "New"
    run(app.files._new())  # another palace is open now
    s = app.search
    assert s.shown == [] and s.opened is None and s.card_ids[0] is None
    assert "tulips" not in s.meta.object and s.summary.object == "" and s.text.value == ""
    assert s.ask.disabled and s.undo.disabled
    s._delete()  # a stale Delete… has nothing left to delete
    assert "no drawer" not in s.note.object
    assert app.map.drawers.object == "" and app.knowledge.opened is None
    assert "Ada" not in app.knowledge.facts.object
    app.files.palaces.value = "Old"
    run(app.files._open())
    assert app.search.opened is None  # back again: nothing of "New" either


def test_a_swarm_run_says_before_and_after_which_wing_it_adds():
    app, p = demo_app()
    a = app.agents
    before = a.adds.object
    assert "will add 1 wing to the palace: agent-specialist-3 (room “diary”)" in before
    a.archetypes.value = ["explorer"]
    assert "adds no wing" in a.adds.object
    a.archetypes.value = []
    run(a.run(5, 60, 0))
    assert "agent-specialist-3" in p.wings
    assert "Added 1 wing to the palace: agent-specialist-3" in a.note.object
    assert "adds no wing" in a.adds.object  # the diary wing is there now
    run(a.run(5, 5, 1))
    assert "No wing was added." in a.note.object


def test_making_a_slice_says_so_while_it_runs():
    app, _ = demo_app()
    prov = app.provenance
    seen = []
    real = prov.make_slice
    prov.make_slice = lambda: (seen.append((prov.slice.object, prov.make.disabled)), real())[1]
    run(prov._slice_clicked())
    assert 'data-testid="prov-busy"' in seen[0][0] and seen[0][1] is True
    assert 'data-testid="prov-slice-id"' in prov.slice.object and not prov.make.disabled

"""Communities, agents that act and the atlas in the Panel views under CPython: the map
coloured by community with its list, the search filter by community (and when communities are
found at all), a swarm of chosen archetypes with what each agent did, tunnel proposals approved
and rejected, diaries and node pheromones, budgeted slices in three forms, and the atlas's
influential turns; text escaped, errors shown as the operation's sentence (the browser walk:
tests/browser/test_ui_agents_atlas.py)."""

import asyncio
import concurrent.futures

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace, bind  # noqa: E402
from palazzo.embed.hashing import HashEmbedder  # noqa: E402
from palazzo.hosts import demo  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app, communities  # noqa: E402
from palazzo.hosts.ui.agents import crew, place, tally  # noqa: E402
from palazzo.hosts.ui.communities import OTHER, community_colour, room_community  # noqa: E402

XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
BREAD = ("Sourdough starter wants flour and water twice a day.",
         "Knead the sourdough and let it rise overnight in the fridge.",
         "Bake the sourdough loaf at a high heat with steam.")


@pytest.fixture(autouse=True)
def at_once(monkeypatch):
    """Run the map's deferred work at once. ``soon`` waits for the page to draw when an event
    loop runs; in the whole suite Playwright's sync API (the browser tests) leaves one set as
    running in this process, and nothing would ever run the deferred call."""
    from palazzo.hosts.ui import palacemap

    monkeypatch.setattr(palacemap, "soon", lambda fn: fn())


def run(coro):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def bakeries():
    """A palace with vectors where two rooms of two wings hold the same texts (a tunnel's
    obvious candidates and one community), and a few rooms about other things."""
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1764633600.0)
    for wing, room in (("Kitchen", "bread"), ("Notebook", "baking")):
        for text in BREAD:
            p.add_drawer(wing, room, text)
    p.add_drawer("Garden", "roses", "Prune the climbing roses in late winter.")
    p.add_drawer("Garden", "tomatoes", "Tomato seedlings go out in May.")
    p.add_drawer("Music", "violin", f"Scales every morning on the violin {XSS}.")
    return build_app(Bridge(p)).palazzo_app, p


@pytest.fixture
def demo_app():
    p = Palace(clock=lambda: 1764633600.0)
    demo.build(bind(p))
    return build_app(Bridge(p)).palazzo_app, p


# -- communities ------------------------------------------------------------------------------

def test_the_map_is_coloured_by_community_and_back_by_heat():
    app, _ = bakeries()
    m = app.map
    assert m.dots.glyph.fill_color.field == "heat" and m.bar.visible
    assert set(m.rooms.data["group"]) == {OTHER}  # nothing found while coloured by heat
    m.colour_by.value = "community"
    assert m.dots.glyph.fill_color.field == "group" and not m.bar.visible
    assert m.kind.disabled  # the heat kind means nothing now
    at = dict(zip(m.rooms.data["label"], m.rooms.data["group"], strict=True))
    assert at["Kitchen/bread"] == at["Notebook/baking"] == community_colour(0)
    assert len(set(at.values())) >= 3
    assert all(m.rooms.data["community"])  # the hover names each room's community
    assert 'data-testid="community-list"' in m.groups.object
    assert "sourdough" in m.groups.object.lower() or "flour" in m.groups.object
    assert "communities over 9 drawers" in m.legend.object
    m.colour_by.value = "heat"
    assert m.dots.glyph.fill_color.field == "heat" and m.bar.visible and not m.kind.disabled
    assert m.groups.object == ""


def test_the_community_list_escapes_names_and_wings():
    found = {"total": 14, "communities": [
        {"id": i, "name": f"{XSS} {i}", "size": 2, "wings": {XSS: 2}, "rooms": [
            {"wing": XSS, "room": f"r{i}", "drawers": 2}]} for i in range(14)]}
    html = communities.legend_html(found)
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "…and 2 smaller communities" in html
    assert room_community(found)[(XSS, "r3")]["id"] == 3
    assert community_colour(20) == OTHER


def test_a_room_takes_the_community_of_most_of_its_drawers():
    found = {"communities": [
        {"id": 0, "rooms": [{"wing": "w", "room": "a", "drawers": 1},
                            {"wing": "w", "room": "b", "drawers": 2}]},
        {"id": 1, "rooms": [{"wing": "w", "room": "a", "drawers": 3},
                            {"wing": "w", "room": "b", "drawers": 2}]}]}
    got = room_community(found)
    assert got[("w", "a")]["id"] == 1 and got[("w", "b")]["id"] == 0  # a tie: the larger


def test_search_keeps_to_a_community():
    app, p = bakeries()
    s = app.search
    labels = list(s.community.options)
    assert labels[0] == "(all)" and len(labels) > 2  # a small palace: listed at once
    bakery = room_community(app.communities.get())[("Kitchen", "bread")]["id"]
    other = room_community(app.communities.get())[("Garden", "roses")]["id"]
    s.community.value = other
    s.query.value = "sourdough"
    assert s.shown == [] and "choose (all) wings and communities" in s.summary.object
    s.community.value = bakery
    s.submit()
    assert s.shown and {h["wing"] for h in s.shown} <= {"Kitchen", "Notebook"}


def test_a_big_palace_finds_communities_only_when_the_map_asks(monkeypatch):
    monkeypatch.setattr(communities, "EAGER_DRAWERS", 3)
    app, p = bakeries()
    calls = []
    real = app.ctx.call
    app.ctx.call = lambda name, args=None: (calls.append(name), real(name, args or {}))[1]
    app.ctx.changed()
    assert "communities" not in calls and list(app.search.community.options) == ["(all)"]
    app.map.colour_by.value = "community"
    assert calls.count("communities") == 1
    assert len(app.search.community.options) > 2  # the search filter hears of them
    p.add_drawer("Garden", "roses", "Roses want sun.")
    app.ctx.changed()  # the map wants them: found again, once
    assert calls.count("communities") == 2


def test_a_failing_communities_call_shows_its_sentence_under_the_map():
    app, _ = bakeries()
    real = app.ctx.call

    def broken(name, args=None):
        if name == "communities":
            from palazzo.errors import ValidationError
            raise ValidationError("the palace is too small to group")
        return real(name, args or {})

    app.ctx.call = broken
    app.ctx.changed()  # what was found before is stale; the search filter goes quiet
    assert list(app.search.community.options) == ["(all)"]
    app.map.colour_by.value = "community"
    assert "the palace is too small to group" in app.map.groups.object
    assert set(app.map.rooms.data["group"]) == {OTHER}


# -- agents -------------------------------------------------------------------------------------

def test_crew_takes_the_chosen_archetypes_in_turn_and_tally_sums_by_agent():
    assert crew(5, ["explorer", "generalist"]) == ["explorer", "generalist", "explorer",
                                                   "generalist", "explorer"]
    assert crew(3, []) == []
    totals = {}
    one = {"name": "g-0", "archetype": "generalist", "moves": 10, "trail_moves": 4,
           "tunnels_proposed": 1, "coverage": {"rooms": 3, "drawers": 5}}
    tally(totals, [one])
    tally(totals, [{**one, "coverage": {"rooms": 2, "drawers": 9}, "diary_entries": 2}])
    t = totals["g-0"]
    assert (t["moves"], t["trail_moves"], t["tunnels"], t["diary"]) == (20, 8, 2, 2)
    assert (t["rooms"], t["drawers"]) == (3, 9)  # the most in one chunk
    assert place("room:Home/garden") == "Home / garden" and place("entity:x") == "entity:x"


def test_a_swarm_of_archetypes_proposes_a_tunnel_that_is_approved():
    app, p = bakeries()
    a = app.agents
    a.archetypes.value = ["generalist", "specialist"]
    a.agents.value, a.cycles.value = 4, 120
    run(a._start())
    assert "Done: 120 of 120 cycles" in a.note.object and "proposed" in a.note.object
    assert 'data-testid="swarm-agents"' in a.results.object
    assert "generalist-0" in a.results.object and "specialist-1" in a.results.object
    pending = p.tunnel_proposals.listed("pending")
    assert pending and a.proposal.value == pending[0].id  # the best first
    assert not a.approve.disabled and not a.reject.disabled
    first = pending[0]
    done = a.decide("approve_tunnel")
    assert done[0]["id"] == first.id and "Tunnel added" in a.tunnel_note.object
    assert any({t["src"], t["dst"]} == {first.src, first.dst}
               for t in app.ctx.call("find_tunnels")["tunnels"])
    assert first.id not in a.proposal.options.values()  # no longer pending
    # the specialist's diary is shown, and the wings and rooms the agents marked
    assert a.diary_agent.value == "specialist-1"
    assert "walked" in a.diary.object and "specialist-1" in a.diary.object
    assert 'data-testid="node-pheromones"' in a.nodes.object and "room" in a.nodes.object


def test_a_run_whose_last_chunk_is_one_cycle_still_writes_each_specialist_one_entry(
        monkeypatch):
    # a slow machine makes the last chunk small: the entry must not depend on it
    from palazzo.hosts.ui import agents as agents_tab
    monkeypatch.setattr(agents_tab, "next_chunk",
                        lambda size, seconds, remaining: max(1, remaining - 1))
    app, p = bakeries()
    a = app.agents
    run(a.run(2, 60, 0, archetypes=["specialist"]))  # chunks of 1, 58 and 1 cycles
    assert "Done: 60 of 60 cycles" in a.note.object
    assert "2 diary entries written" in a.note.object, a.note.object
    counts = {x["name"]: x["diary_entries"] for x in app.ctx.call("list_agents")["agents"]}
    assert counts == {"specialist-0": 1, "specialist-1": 1}
    assert "walked" in a.diary.object


def test_a_rejected_proposal_is_gone_and_a_stale_one_says_why():
    app, p = bakeries()
    a = app.agents
    run(a.run(3, 120, 0, archetypes=["generalist"]))
    pid = a.proposal.value
    assert pid
    assert a.decide("reject_tunnel")[0]["status"] == "rejected"
    assert "Rejected, and not proposed again" in a.tunnel_note.object
    assert p.tunnel_proposals.items[pid].status == "rejected"
    assert a.approve.disabled or a.proposal.value != pid
    a.proposal.options = {"stale": pid}  # a proposal decided elsewhere meanwhile
    a.proposal.value = pid
    assert a.decide("approve_tunnel") is None
    note = a.tunnel_note.object
    assert "pz-error" in note and "is already rejected" in note  # the operation's sentence


def test_without_proposals_the_buttons_wait_and_diaries_are_text(demo_app):
    app, p = demo_app
    a = app.agents
    assert a.proposal.options == {} and a.approve.disabled and a.reject.disabled
    assert "0 pending" in a.proposals.object
    p.diaries.write("Guide", f"found {XSS}", topic="tour")
    app.ctx.changed()
    assert a.diary_agent.value == "Guide"
    assert "<script" not in a.diary.object and "&lt;script&gt;" in a.diary.object


def test_a_bad_threshold_is_said_next_to_its_field(demo_app):
    app, _ = demo_app
    a = app.agents
    a.threshold.value = 1.5
    assert "at most 1" in a.form.fields["tunnel_threshold"].error.object
    assert a.run_button.disabled
    a.threshold.value = 0.8
    assert not a.run_button.disabled


# -- provenance ------------------------------------------------------------------------------

def test_a_budgeted_slice_in_each_form(demo_app):
    app, _ = demo_app
    v = app.provenance
    v.budget.value = 60
    for form, mark in (("messages", "<table"), ("text", "<pre"), ("triples", "predicate")):
        v.form.value = form
        b = v.make_slice()
        assert b["budget"]["max_tokens"] == 60 and "of 60 tokens" in v.slice.object
        assert f"Context as {form}" in v.slice.object and mark in v.slice.object
        assert v.check()["valid"] is True  # the budget is signed with the slice
    v.budget.value = 0
    assert "at least 1" in v.slice_form.fields["budget"].error.object
    assert v.make.disabled and v.run_atlas.disabled


def test_the_atlas_lists_influential_turns(demo_app):
    app, _ = demo_app
    v = app.provenance
    run(v._atlas_clicked())
    html = v.atlas.object
    assert "4 anchor turns sliced (of 4)" in html and "Jaccard" in html
    assert 'data-testid="atlas-turns"' in html and "central" in html
    assert "assistant: Yes. Put each plant" in html  # turns by their text, not their id
    assert not v.run_atlas.disabled and not v.atlas_busy
    v.scope.value, v.limit.value = "palace", 2
    out = v.atlas_run()
    assert out["anchors"] == 2 and out["chosen_from"] == 4
    v.limit.value = 0
    assert v.run_atlas.disabled and "at least 1" in v.atlas_form.fields["limit"].error.object


def test_the_atlas_waits_for_a_conversation_and_shows_the_operation_error():
    app = build_app(Bridge(Palace(clock=lambda: 1.0))).palazzo_app
    v = app.provenance
    assert v.run_atlas.disabled and v.atlas_run() is None
    assert "Pick a conversation" in v.atlas_form.fields["limit"].error.object
    v.scope.value = "palace"
    assert not v.run_atlas.disabled
    assert v.atlas_run() is None
    assert "no conversation turns to slice" in v.atlas.object  # the operation's sentence


def test_the_search_filter_lists_communities_once_the_deferred_packages_are_in(monkeypatch):
    """In the browser the first refresh comes before NetworkX has loaded: the filter offers
    only (all) then, and the communities once the worker says the packages are in."""
    import sys

    from palazzo.hosts import worker

    with monkeypatch.context() as m:
        m.setitem(sys.modules, "networkx", None)  # `import networkx` fails: not loaded yet
        app, p = bakeries()
        assert list(app.search.community.options) == ["(all)"]
    worker.packages_loaded(app.ctx.bridge)
    assert len(app.search.community.options) > 2

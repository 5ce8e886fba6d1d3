"""The palace map under CPython: its layout (deterministic, nothing overlaps, rooms inside
their wing), its labels (the ones shown never overlap), halls and tunnels bundled per pair of
wings, the heat legend, and a navigation path drawn through every node it visits.

The browser side (the drawn canvas, console warnings) is tests/browser/test_ui_map.py.
"""

import itertools
import math

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from bokeh.document import Document  # noqa: E402

from palazzo import Palace, bind  # noqa: E402
from palazzo.core.model import EdgeKind, room_id  # noqa: E402
from palazzo.hosts import demo  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app, maplayout  # noqa: E402
from palazzo.hosts.ui.palacemap import bundles  # noqa: E402


def demo_app():
    p = Palace(clock=lambda: 1764633600.0)
    demo.build(bind(p))
    return build_app(Bridge(p)).palazzo_app, p


def many_rooms(wings=12, rooms=500):
    """{(wing, room): drawers} for ``rooms`` rooms spread unevenly over ``wings`` wings."""
    return {(f"wing {i % wings:02d}" if i % 5 else "wing big", f"room {i:03d}"): (i * 37) % 91
            for i in range(rooms)}


SHAPES = [many_rooms(), many_rooms(wings=1, rooms=474), many_rooms(wings=40, rooms=120),
          {("only", "one"): 3}, {("a", "x"): 1, ("b", "y"): 200}]


def test_layout_is_deterministic_whatever_the_order_of_the_rooms():
    rooms = many_rooms()
    shuffled = dict(reversed(list(rooms.items())))
    a, b = maplayout.layout(rooms), maplayout.layout(shuffled)
    assert a.rooms == b.rooms and a.wings == b.wings and a.doors == b.doors


@pytest.mark.parametrize("rooms", SHAPES, ids=["500x13", "474x1", "120x40", "1x1", "2x2"])
def test_rooms_never_overlap_and_stay_inside_their_wing(rooms):
    lay = maplayout.layout(rooms)
    assert set(lay.rooms) == set(rooms)
    xyr = np.array([lay.rooms[k] for k in sorted(rooms)])
    d = np.hypot(xyr[:, None, 0] - xyr[None, :, 0], xyr[:, None, 1] - xyr[None, :, 1])
    reach = xyr[:, None, 2] + xyr[None, :, 2]
    np.fill_diagonal(d, np.inf)
    assert (d >= reach).all()  # no two dots overlap
    assert (xyr[:, 2] <= maplayout.ROOM_MAX).all()
    for (w, _), (x, y, r) in lay.rooms.items():
        cx, cy, rad = lay.wings[w]
        assert math.hypot(x - cx, y - cy) + r <= rad  # inside its wing's disc
    for (a, (ax, ay, ar)), (b, (bx, by, br)) in itertools.combinations(lay.wings.items(), 2):
        assert math.hypot(ax - bx, ay - by) >= ar + br, (a, b)  # wings apart
    for x, y, rad in lay.wings.values():
        assert math.hypot(x, y) > rad  # the palace node is outside every wing
        b = lay.bounds
        assert b.x0 <= x - rad and x + rad <= b.x1 and b.y0 <= y - rad and y + rad <= b.y1


@pytest.mark.parametrize("rooms", SHAPES, ids=["500x13", "474x1", "120x40", "1x1", "2x2"])
def test_labels_shown_never_overlap(rooms):
    lay = maplayout.layout(rooms)
    keys = sorted(rooms)
    labels = maplayout.place_labels(lay, keys)
    for a, b in itertools.combinations(labels.boxes, 2):
        assert not a.meets(b), (a, b)
    shown = [t for t in labels.room_text if t]
    assert len(labels.boxes) == len(shown) + sum(1 for t in labels.wing_text.values() if t)
    named = sum(1 for t in labels.wing_text.values() if t)
    # Every wing named, but where 33 wings crowd a phone-sized map (a few then on hover).
    assert named == len(lay.wings) or (len(lay.wings) > 30 and named >= 0.75 * len(lay.wings))
    # A shown room label covers no other room's dot.
    scale = lay.scale()
    for i, k in enumerate(keys):
        if not labels.room_text[i]:
            continue
        align, base, _, _ = labels.room_align[i]
        box = maplayout.text_box(*labels.room_xy[i], labels.room_text[i],
                                 maplayout.ROOM_FONT_PX, scale, align, base)
        for other, (x, y, r) in lay.rooms.items():
            if other != k:
                assert not box.meets(maplayout.Box(x - r, y - r, x + r, y + r))
        node = maplayout.NODE_PX / 2 / scale  # nor the palace's or a wing door's marker
        for x, y in ((0.0, 0.0), *lay.doors.values()):
            assert not box.meets(maplayout.Box(x - node, y - node, x + node, y + node))


def test_labels_thin_out_as_rooms_crowd_in_and_the_demo_shows_them_all():
    app, _ = demo_app()
    data = app.map.rooms.data
    assert all(data["text"]) and len(data["text"]) == 10  # few rooms: every room named
    lay = maplayout.layout(many_rooms(wings=1, rooms=474))
    crowded = maplayout.place_labels(lay, sorted(lay.rooms))
    assert 0 < sum(1 for t in crowded.room_text if t) < 474 / 4  # the rest on hover


def test_halls_and_tunnels_are_one_line_per_pair_of_wings():
    p = Palace(clock=lambda: 1.0)
    for w, r in [("A", "a1"), ("A", "a2"), ("A", "a3"), ("B", "b1"), ("B", "b2"), ("C", "c")]:
        p.add_drawer(w, r, f"{w} {r} text")
    p.edges.add(EdgeKind.TUNNEL, room_id("A", "a1"), room_id("B", "b1"), {})
    p.edges.add(EdgeKind.TUNNEL, room_id("A", "a2"), room_id("B", "b2"), {})
    p.edges.add(EdgeKind.HALL, room_id("A", "a3"), room_id("C", "c"), {})
    app = build_app(Bridge(p)).palazzo_app
    links = app.map.links.data
    assert sorted(links["wings"]) == ["A ↔ B", "A ↔ C"]  # A's own halls are not drawn
    by = dict(zip(links["wings"], zip(links["halls"], links["tunnels"], strict=True),
                  strict=True))
    assert by == {"A ↔ B": (0, 2), "A ↔ C": (1, 0)}
    ab, ac = links["wings"].index("A ↔ B"), links["wings"].index("A ↔ C")
    assert links["width"][ab] > links["width"][ac]
    graph = bind(p)("export_graph", {"format": "d3", "level": "rooms"})["graph"]
    inside = [x for x in graph["links"] if x["kind"] == "HALL"]
    assert len(inside) > 1  # the palace has halls inside wing A, which bundles() drops
    wing_of = {room_id(w, r): w for w, r in p.rooms}
    assert set(bundles(graph["links"], wing_of)) == {("A", "B"), ("A", "C")}


def test_heat_kind_recolours_with_a_legend_and_the_frame_is_never_empty():
    app, p = demo_app()
    bind(p)("navigate", {"start": "Home/garden", "goal": "Projects/palazzo", "deposit": True})
    app.ctx.changed()
    m = app.map
    for kind in ("exploration", "traversal", "recency"):
        m.kind.value = kind
        heat = np.asarray(m.rooms.data["heat"])
        assert m.mapper.high == (heat.max() if heat.max() > 0 else 1.0)
        assert f"<b>{kind}</b> heat" in m.legend.object and m.bar.title == f"{kind} heat"
    assert np.asarray(m.rooms.data["heat"]).max() > 0  # the deposit warmed the path's rooms
    empty = build_app(Bridge(Palace(clock=lambda: 0.0))).palazzo_app.map
    assert len(empty.frame.data["x"]) == 2 and empty.rooms.data["x"] == []
    # The frame holds every disc and label, so nothing is clipped at the plot's edge.
    fx, fy = m.frame.data["x"], m.frame.data["y"]
    for x, y in zip(m.wings.data["lx"], m.wings.data["ly"], strict=True):
        assert fx[0] < x < fx[1] and fy[0] < y < fy[1]


def test_switching_heat_kind_sends_only_the_heat_column():
    app, _ = demo_app()
    events = []
    doc = Document()
    doc.add_root(app.map.figure)
    doc.on_change(lambda e: events.append(e))
    app.map.kind.value = "recency"
    cols = [getattr(e, "cols", None) for e in events if getattr(e, "model", None) is
            app.map.rooms]
    assert cols == [["heat"]]


def test_the_path_is_drawn_through_every_node_it_visits():
    app, _ = demo_app()
    app.navigate.start.value = "Home / garden"
    app.navigate.goal.value = "Projects / palazzo"
    out = app.navigate.run()
    nodes = out["nodes"]
    assert nodes[0] == "room:Home/garden" and "palace" in nodes and "wing:Home" in nodes
    lay = app.map.lay
    expected = [maplayout.spot(n, lay, {}) for n in nodes]
    got = list(zip(app.map.path.data["x"], app.map.path.data["y"], strict=True))
    assert got == expected
    assert app.map.steps.data["node"] == nodes
    assert app.map.steps.data["step"] == [str(i) for i in range(len(nodes))]
    assert expected[nodes.index("palace")] == (0.0, 0.0)
    assert expected[nodes.index("wing:Home")] == lay.doors["Home"]
    assert len(app.map.arrows.data["x0"]) == len(nodes) - 1


def test_a_path_through_a_drawer_and_an_entity_has_a_point_for_each():
    app, p = demo_app()
    drawer = p.drawers.ids[int(p.drawers.live_rows()[0])]
    w, r = p.drawers.wing[p.row(drawer)], p.drawers.room[p.row(drawer)]
    nodes = [room_id(w, r), drawer, "entity:someone", f"wing:{w}"]
    app.map.show_path(nodes)
    xs, ys = app.map.path.data["x"], app.map.path.data["y"]
    assert len(xs) == 4
    rx, ry, rr = app.map.lay.rooms[(w, r)]
    assert math.hypot(xs[1] - rx, ys[1] - ry) < rr  # the drawer sits on its room's dot
    assert app.map.steps.data["fill"][2] == "#ffffff"  # the entity: hollow, no place of its own


def test_room_pickers_take_a_typed_name_and_heat_table_filters():
    app, _ = demo_app()
    nav = app.navigate
    assert "Home / garden" in nav.start.options and nav.start.value != nav.goal.value
    assert nav.node("Home / garden") == "room:Home/garden"
    nav.start.value, nav.goal.value = "Home", "Projects / roadmap"  # a wing name is a node too
    out = nav.run()
    assert out["found"] and out["nodes"][0] == "wing:Home"
    heat = app.heat
    heat.filter.value_input = "garden"
    assert "garden" in heat.table.object and "kitchen" not in heat.table.object
    assert "of 2 rooms shown" in heat.table.object  # Home/garden and the garden chat

"""Where the palace map draws things: pure geometry, no Panel or Bokeh (tested under CPython).

The palace node sits at the origin; wings are discs on a ring around it, each sized by the
square root of its room count; a wing's rooms sit on a sunflower (Vogel) spiral inside its
disc, in name order. Everything is deterministic and O(rooms + wings), with no overlap by
construction: spiral neighbours are at least :data:`MIN_GAP` apart and a room's dot is at most
:data:`ROOM_MAX` across half of that; each wing's disc stays inside its own wedge of the ring.

Labels are planned for the smallest map a screen shows (:data:`PLAN_PX` across its shorter
side): a label is drawn only when its box (estimated from the font size) meets no other label
and no other room's dot there. Labels are anchored in data units and keep their pixel size, so
zooming in only moves them apart: what does not overlap at the planned scale never does closer.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))
SPIRAL = 0.7  # Vogel's c: neighbours on r = c·sqrt(k + 1/2) are >= 1.546·c = 1.08 apart
MIN_GAP = 1.0  # the least distance between two room centres of a wing
ROOM_MIN, ROOM_MAX = 0.18, 0.45  # a room's radius (data units) for 1 drawer and the most
WING_PAD = 0.7  # between a wing's outermost room dot and its disc's edge
RING_GAP = 1.2  # between two wings' discs, and between the palace and the nearest disc
PLAN_PX = 360.0  # the map's shorter side on a 390 px wide phone: labels planned for it
LABEL_PAD_PX = 3.0  # between a dot and its label
NODE_PX = 12.0  # the palace and wing-door markers' size on screen (with their outline)
CHAR_EM = 0.62  # an estimated character's width in ems (Helvetica's widest lowercase is ~0.6)


@dataclass(slots=True)
class Box:
    """An axis-aligned rectangle in data units."""

    x0: float
    y0: float
    x1: float
    y1: float

    def meets(self, other: Box) -> bool:
        """Return whether the two boxes overlap (touching edges do not)."""
        return (self.x0 < other.x1 and other.x0 < self.x1
                and self.y0 < other.y1 and other.y0 < self.y1)


@dataclass(slots=True)
class Layout:
    """Positions of the palace (origin), each wing (disc centre, radius, and its door: the
    point of its disc nearest the palace, where the HAS_WING edge arrives) and each room
    (centre, dot radius); ``bounds`` holds every disc."""

    wings: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    doors: dict[str, tuple[float, float]] = field(default_factory=dict)
    rooms: dict[tuple[str, str], tuple[float, float, float]] = field(default_factory=dict)
    bounds: Box = field(default_factory=lambda: Box(-1.0, -1.0, 1.0, 1.0))

    def scale(self, px: float = PLAN_PX) -> float:
        """Return pixels per data unit when the whole layout fits ``px`` pixels (the reset
        view of a map whose shorter side is ``px``)."""
        b = self.bounds
        return px / max(b.x1 - b.x0, b.y1 - b.y0, 1e-9)


def spiral(n: int) -> list[tuple[float, float]]:
    """Return ``n`` points of Vogel's sunflower spiral around (0, 0), the first nearest the
    centre; any two are at least MIN_GAP apart. O(n)."""
    return [(SPIRAL * math.sqrt(k + 0.5) * math.cos(k * GOLDEN_ANGLE),
             SPIRAL * math.sqrt(k + 0.5) * math.sin(k * GOLDEN_ANGLE)) for k in range(n)]


def wing_radius(rooms: int) -> float:
    """Return the radius of a wing's disc holding ``rooms`` rooms (grows as sqrt(rooms))."""
    outer = SPIRAL * math.sqrt(max(rooms, 1) - 0.5)
    return outer + ROOM_MAX + WING_PAD


def room_radius(drawers: int, most: int) -> float:
    """Return a room dot's radius: ROOM_MIN for an empty room up to ROOM_MAX for the room
    with the ``most`` drawers, by the square root (the dot's area follows the count)."""
    if most <= 0:
        return ROOM_MIN
    return ROOM_MIN + (ROOM_MAX - ROOM_MIN) * math.sqrt(max(drawers, 0) / most)


def ring(radii: list[float]) -> tuple[float, list[float]]:
    """Return ``(ring radius, angle of each disc)``: discs of ``radii`` on one circle around
    the origin, each inside its own wedge (half-angle asin((r + gap/2) / R)), so no two meet
    and none covers the origin. R grows until the wedges fit in a turn; the spare angle is
    shared out evenly. O(len(radii)) a try, a few dozen tries at most."""
    if not radii:
        return 0.0, []
    big = max(radii) + RING_GAP
    ring_r = max(big, sum(2 * r + RING_GAP for r in radii) / (2 * math.pi))
    while True:
        half = [math.asin(min((r + RING_GAP / 2) / ring_r, 1.0)) for r in radii]
        if 2 * sum(half) <= 2 * math.pi or len(radii) == 1:
            break
        ring_r *= 1.05
    spare = (2 * math.pi - 2 * sum(half)) / len(radii)
    angles, at = [], math.pi / 2  # the first wing (by name) at the top
    for h in half:
        at += h
        angles.append(at)
        at += h + spare
    return ring_r, angles


def layout(rooms: dict[tuple[str, str], int]) -> Layout:
    """Return the map's layout of ``rooms`` ({(wing, room): drawer count}): wings on a ring
    in name order, each wing's rooms on a spiral in name order. O(rooms + wings)."""
    by_wing: dict[str, list[str]] = {}
    for w, r in sorted(rooms):
        by_wing.setdefault(w, []).append(r)
    names = sorted(by_wing)
    radii = [wing_radius(len(by_wing[w])) for w in names]
    ring_r, angles = ring(radii)
    most = max(rooms.values(), default=0)
    out = Layout()
    for w, rad, a in zip(names, radii, angles, strict=True):
        cx, cy = ring_r * math.cos(a), ring_r * math.sin(a)
        out.wings[w] = (cx, cy, rad)
        out.doors[w] = ((ring_r - rad) * math.cos(a), (ring_r - rad) * math.sin(a))
        for room, (dx, dy) in zip(by_wing[w], spiral(len(by_wing[w])), strict=True):
            out.rooms[(w, room)] = (cx + dx, cy + dy, room_radius(rooms[(w, room)], most))
    if out.wings:
        out.bounds = Box(min(min(x - r for x, _, r in out.wings.values()), 0.0),
                         min(min(y - r for _, y, r in out.wings.values()), 0.0),
                         max(max(x + r for x, _, r in out.wings.values()), 0.0),
                         max(max(y + r for _, y, r in out.wings.values()), 0.0))
    return out


# Where a room label may go, tried in this order: (side, text_align, text_baseline, x and y
# offsets in units of LABEL_PAD_PX). The anchor is the dot's edge on that side.
SIDES = (("right", "left", "middle", 1, 0), ("left", "right", "middle", -1, 0),
         ("above", "center", "bottom", 0, 1), ("below", "center", "top", 0, -1))


def text_box(x: float, y: float, text: str, font_px: float, scale: float, align: str,
             baseline: str) -> Box:
    """Return the data-unit box of ``text`` anchored at (x, y) in a ``font_px`` font with
    ``align`` (left/right/center) and ``baseline`` (middle/bottom/top), LABEL_PAD_PX away from
    the anchor, at ``scale`` px per unit. The width is estimated (CHAR_EM a character)."""
    w = (len(text) * CHAR_EM * font_px + 2) / scale
    h = (font_px * 1.25) / scale
    pad = LABEL_PAD_PX / scale
    x0 = {"left": x + pad, "right": x - pad - w}.get(align, x - w / 2)
    y0 = {"bottom": y + pad, "top": y - pad - h}.get(baseline, y - h / 2)
    return Box(x0, y0, x0 + w, y0 + h)


class Grid:
    """Boxes bucketed by cell, so a new label is tested only against its neighbours: placing
    n labels costs O(n) rather than O(n²)."""

    def __init__(self, cell: float) -> None:
        self.cell = cell
        self.cells: dict[tuple[int, int], list[Box]] = {}

    def _keys(self, b: Box) -> Iterable[tuple[int, int]]:
        c = self.cell
        for i in range(math.floor(b.x0 / c), math.floor(b.x1 / c) + 1):
            for j in range(math.floor(b.y0 / c), math.floor(b.y1 / c) + 1):
                yield i, j

    def free(self, b: Box, ignore: Box | None = None) -> bool:
        """Return whether ``b`` meets no stored box (other than ``ignore``)."""
        return not any(o is not ignore and o.meets(b)
                       for k in self._keys(b) for o in self.cells.get(k, ()))

    def add(self, b: Box) -> None:
        """Store ``b``."""
        for k in self._keys(b):
            self.cells.setdefault(k, []).append(b)


@dataclass(slots=True)
class Labels:
    """The labels to draw: wing label anchors and texts ("" when none fits); per room, in the
    order of the rooms given, its label text ("" when hidden), anchor, alignment and pixel
    offsets; and every shown label's box (data units at the planned scale)."""

    wing_xy: dict[str, tuple[float, float]] = field(default_factory=dict)
    wing_text: dict[str, str] = field(default_factory=dict)
    room_text: list[str] = field(default_factory=list)
    room_xy: list[tuple[float, float]] = field(default_factory=list)
    room_align: list[tuple[str, str, float, float]] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)


WING_FONT_PX, ROOM_FONT_PX = 13.0, 11.0  # "10pt" bold and "8pt"


def shorten(text: str, chars: int) -> str:
    """Return ``text`` cut to ``chars`` characters, an ellipsis last when cut."""
    return text if len(text) <= chars else text[: max(chars - 1, 1)] + "…"


def place_labels(lay: Layout, keys: list[tuple[str, str]], px: float = PLAN_PX) -> Labels:
    """Return the labels that fit at ``px`` across (see the module docstring). First every
    wing's, biggest wing first: above its disc, else below, right or left of it, else over
    its own rooms (only other labels block that spot), each try with the name cut shorter
    (24, then 12 characters) before the next; a wing whose name fits nowhere is named on
    hover. Then room labels, rooms with more drawers first, right of the dot (else left,
    above, below), each only where it meets no label and no other room's dot. O(rooms) with
    the grids."""
    scale = lay.scale(px)
    cell = max(80.0 / scale, 1e-6)
    placed, dots_grid = Grid(cell), Grid(cell)
    dots = {k: Box(x - r, y - r, x + r, y + r) for k, (x, y, r) in lay.rooms.items()}
    for b in dots.values():
        dots_grid.add(b)
    node = NODE_PX / 2 / scale  # the palace's and the wing doors' markers block labels too
    for x, y in ((0.0, 0.0), *lay.doors.values()):
        dots_grid.add(Box(x - node, y - node, x + node, y + node))
    out = Labels()
    gap = (WING_FONT_PX * 1.25 + 2 * LABEL_PAD_PX) / scale
    for w, (cx, cy, rad) in sorted(lay.wings.items(), key=lambda kv: (-kv[1][2], kv[0])):
        out.wing_text[w], out.wing_xy[w] = "", (cx, cy + rad)
        for chars in (len(w), 24, 12):
            text = shorten(w, chars)
            half = (len(text) * CHAR_EM * WING_FONT_PX / 2 + LABEL_PAD_PX) / scale
            spots = ((cx, cy + rad, True), (cx, cy - rad - gap, True),
                     (cx + rad + half, cy - gap / 2, True), (cx - rad - half, cy - gap / 2, True),
                     (cx, cy - gap / 2, False))
            for x, y, mind_dots in spots:
                b = text_box(x, y, text, WING_FONT_PX, scale, "center", "bottom")
                if placed.free(b) and (not mind_dots or dots_grid.free(b)):
                    out.wing_text[w], out.wing_xy[w] = text, (x, y)
                    placed.add(b)
                    out.boxes.append(b)
                    break
            if out.wing_text[w]:
                break
    order = sorted(range(len(keys)), key=lambda i: -lay.rooms[keys[i]][2])
    out.room_text = [""] * len(keys)
    out.room_xy = [(lay.rooms[k][0], lay.rooms[k][1]) for k in keys]
    out.room_align = [("left", "middle", LABEL_PAD_PX, 0.0)] * len(keys)
    for i in order:
        x, y, r = lay.rooms[keys[i]]
        text = shorten(keys[i][1], 24)
        for _side, align, base, dx, dy in SIDES:
            ax, ay = x + dx * r, y + dy * r
            b = text_box(ax, ay, text, ROOM_FONT_PX, scale, align, base)
            if placed.free(b) and dots_grid.free(b, ignore=dots[keys[i]]):
                out.room_text[i], out.room_xy[i] = text, (ax, ay)
                out.room_align[i] = (align, base, dx * LABEL_PAD_PX, dy * LABEL_PAD_PX)
                placed.add(b)
                out.boxes.append(b)
                break
    return out


def spot(key: str, lay: Layout, room_of: dict[str, tuple[str, str]]) -> tuple[float, float] | None:
    """Return where node ``key`` is drawn, or None when it has no place on the map (an entity,
    an agent, a node of a room not drawn). The palace is the origin, a wing its door, a room
    its dot; a closet or drawer (``room_of`` gives its room) sits on its room's dot, off its
    centre by a fixed angle from its id (so a path through a room and its drawer shows both)."""
    if key == "palace":
        return (0.0, 0.0)
    kind, _, rest = key.partition(":")
    if kind == "wing" and rest in lay.doors:
        return lay.doors[rest]
    if kind == "room":
        named = rooms_named(rest, lay)
        return (lay.rooms[named[0]][0], lay.rooms[named[0]][1]) if named else None
    where = room_of.get(key)
    if where is None or where not in lay.rooms:
        return None
    x, y, r = lay.rooms[where]
    a = (zlib.crc32(key.encode()) % 360) * math.pi / 180
    return (x + 0.6 * r * math.cos(a), y + 0.6 * r * math.sin(a))


def rooms_named(rest: str, lay: Layout) -> list[tuple[str, str]]:
    """Return the room keys a "<wing>/<room>" id may mean (names may hold "/": every split is
    tried, as the navigate operation does)."""
    parts = rest.split("/")
    keys = (("/".join(parts[:i]), "/".join(parts[i:])) for i in range(1, len(parts)))
    return [k for k in keys if k in lay.rooms]


def path_points(nodes: list[str], lay: Layout,
                room_of: dict[str, tuple[str, str]]) -> list[tuple[float, float, bool]]:
    """Return one point per node of a path, ``(x, y, on_map)``: the node's own spot, or for a
    node with none (an entity, an agent) the midpoint of its nearest placed neighbours, marked
    ``on_map=False`` so it is drawn hollow. Nodes with no placed node anywhere are dropped."""
    spots = [spot(n, lay, room_of) for n in nodes]
    placed = [i for i, s in enumerate(spots) if s is not None]
    if not placed:
        return []
    out: list[tuple[float, float, bool]] = []
    for i, s in enumerate(spots):
        if s is not None:
            out.append((s[0], s[1], True))
            continue
        before = [j for j in placed if j < i]
        after = [j for j in placed if j > i]
        a = spots[before[-1]] if before else spots[after[0]]
        b = spots[after[0]] if after else spots[before[-1]]
        assert a is not None and b is not None
        out.append(((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + 0.5, False))
    return out

"""The palace map at scale (issue 14): how long Python takes to build the map's data, how many
bytes it sends to the page, and, in Chromium, how long a heat-kind switch takes to reach the
canvas and how long BokehJS paints a frame while panning and zooming.

    .venv/bin/python tests/bench/map_scale.py               # CPython figures, both palaces
    .venv/bin/python tests/bench/map_scale.py --only-browser  # Chromium on the 20k palace

Palaces (CPython):
  wings   generated here: 500 rooms over 12 wings (sizes uneven), 20,000 drawers, 60 tunnels
          between wings, pheromones deposited along 40 navigated paths
  chats   the 20,000-message palace of ``tests/bench/browser_scale.py`` (one wing of 474
          rooms, 20,000 drawers), made once under ``.cache/`` by the command line
Reported for each: the map's first build (``PalaceMap`` over a bridge: the operations it
calls, the figure, the layout, the labels), its refresh after a drawer is added (what every
change costs the map), and a heat-kind switch, in ms (best
of ``--runs``); and the bytes of the figure as the page first receives it (its document
JSON) and of the patches a refresh and a kind switch send (Bokeh's patch JSON plus its binary
buffers, serialised as Panel's worker does).

With ``--browser`` (the site must be built; run it under the browser lock): the chats palace
is put into a fresh context's storage as ``browser_scale.py`` does, the page boots on it, and
the Map tab times a switch of heat kind from the select to the next painted frame, and
BokehJS's paint of the plot during 10 wheel zooms and a 20-step drag (ms per paint).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))


def wings_palace(rooms: int = 500, drawers: int = 20_000, wings: int = 12) -> object:
    """Return a generated palace: ``rooms`` rooms over ``wings`` wings of growing sizes,
    ``drawers`` drawers, tunnels between wings and pheromones from navigated paths. Cost:
    ~10 s at 20,000 drawers."""
    from palazzo import Palace, bind
    from palazzo.core.model import EdgeKind, room_id

    p = Palace(clock=lambda: 1764633600.0)
    place = []
    for i in range(rooms):  # wing w gets ~(2w + 1) shares: from 3 rooms to ~80
        w = min(int(wings * (i / rooms) ** 0.5), wings - 1)
        place.append((f"wing {w:02d}", f"room {i:03d}"))
    for i in range(drawers):
        w, r = place[(i * 7919) % rooms]
        p.add_drawer(w, r, f"note {i} about {r} in {w}: item {i * 31 % 997}")
    for i in range(60):
        a, b = place[(i * 37) % rooms], place[(i * 101 + 5) % rooms]
        if a[0] != b[0]:
            p.edges.add(EdgeKind.TUNNEL, room_id(*a), room_id(*b), {})
    call = bind(p)
    for i in range(40):
        a, b = place[(i * 13) % rooms], place[(i * 59 + 3) % rooms]
        call("navigate", {"start": room_id(*a), "goal": room_id(*b), "deposit": True})
    return p


def chats_palace() -> object:
    """Return the 20,000-message palace of browser_scale.py (made once, then read)."""
    import shutil
    import tempfile

    from bench.browser_scale import make_palace
    from palazzo import Palace
    from palazzo.persist.directory import PalaceDirectory

    folder, _ = make_palace(20_000, 0, 0, False)
    copy = Path(tempfile.mkdtemp()) / "palace"
    shutil.copytree(folder, copy)  # its own lock: the cached directory stays untouched
    with PalaceDirectory(copy, Palace) as d:
        palace = d.store.palace
    shutil.rmtree(copy.parent)
    return palace


def patch_bytes(doc, events: list) -> int:
    """Return the bytes of ``events`` as Panel's worker sends them: the patch JSON and its
    binary buffers."""
    from bokeh.core.serialization import Serializer
    from bokeh.protocol.messages.patch_doc import PatchJson

    if not events:
        return 0
    ser = Serializer(references=doc.models.synced_references)
    patch = PatchJson(events=ser.encode(events))
    # Buffers travel beside the JSON, which names them by id (panel.io.pyodide).
    text = json.dumps(patch, default=lambda b: {"id": b.id})
    return len(text) + sum(len(b.to_bytes()) for b in ser.buffers)


def measure(palace, runs: int) -> dict:
    """Return the CPython timings (ms, best of ``runs``) and bytes of the map on ``palace``."""
    from bokeh.core.json_encoder import serialize_json
    from bokeh.document import Document

    from palazzo.hosts.bridge import Bridge
    from palazzo.hosts.ui.common import Context
    from palazzo.hosts.ui.palacemap import PalaceMap

    build, refresh, switch = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        m = PalaceMap(Context(Bridge(palace)))
        build.append(time.perf_counter() - t0)
    doc = Document()
    doc.add_root(m.view.get_root(doc))
    first = len(serialize_json(doc.to_json()))  # as embedded: buffers inline, base64
    events: list = []
    doc.on_change(events.append)
    first_room = m.rooms.data["label"][0].split("/", 1)
    for i in range(runs):  # a drawer added, then the refresh every view gets
        m.ctx.call("add_drawer", {"wing": first_room[0], "room": first_room[1],
                                  "content": f"one more drawer, number {i}"})
        t0 = time.perf_counter()
        m.refresh()
        refresh.append(time.perf_counter() - t0)
    refresh_events = list(events)
    events.clear()
    kinds = ["traversal", "recency", "success", "exploitation", "exploration"]
    for i in range(runs):
        t0 = time.perf_counter()
        m.kind.value = kinds[i % len(kinds)]
        switch.append(time.perf_counter() - t0)
    one_switch = events[: max(1, len(events) // runs)]
    ms = lambda xs: round(min(xs) * 1000, 1)  # noqa: E731
    rooms = len(m.rooms.data["label"])
    return {"rooms": rooms, "wings": len(m.lay.wings),
            "drawers": int(sum(m.rooms.data["drawers"])),
            "room_labels_shown": sum(1 for t in m.rooms.data["text"] if t),
            "wing_bundles": len(m.links.data["wings"]),
            "build_ms": ms(build), "refresh_ms": ms(refresh), "kind_switch_ms": ms(switch),
            "first_document_bytes": first,
            "refresh_patch_bytes": patch_bytes(doc, refresh_events[: len(refresh_events)
                                                                   // runs]),
            "kind_switch_patch_bytes": patch_bytes(doc, one_switch)}


def browser(runs: int) -> dict:
    """Return Chromium's heat-switch times and paint times on the 20k palace (see above)."""
    from playwright.sync_api import sync_playwright

    from bench.browser_scale import (
        FILES_PATH,
        PALACE,
        SEED_JS,
        SEED_PATH,
        make_palace,
        palace_files,
        serve,
    )
    from browser.conftest import CHROMIUM_ARGS, SITE, chromium_path, new_guarded_context
    from browser.test_ui_map import NEXT_FRAME_JS, STATE_JS, TITLE, zoom_and_drag

    palace, _ = make_palace(20_000, 0, 0, False)
    server, url = serve(SITE, palace)
    out: dict = {"switch_ms": [], "paint_ms": []}
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            context, _guard = new_guarded_context(b)
            page = context.new_page()
            page.set_default_timeout(300_000)
            warnings: list[str] = []
            page.on("console", lambda m: warnings.append(m.text)
                    if m.type in ("warning", "error") else None)
            page.goto(url + SEED_PATH.lstrip("/"))
            page.evaluate(SEED_JS, [PALACE, list(palace_files(palace)), "opfs", FILES_PATH])
            page.goto(url + "?embedder=hash")
            page.evaluate("window.palazzo.rendered")
            page.locator(".bk-tab").filter(has_text=re.compile("^Map$")).click()
            page.wait_for_function(f"() => ({STATE_JS})({TITLE!r}).labels.length > 400")
            kinds = ["traversal", "recency", "exploitation", "exploration"]
            for i in range(runs * len(kinds)):
                kind = kinds[i % len(kinds)]
                t0 = page.evaluate("performance.now()")
                page.locator(".pz-map-kind select").select_option(kind)
                page.wait_for_function(
                    """(k) => { const f = (r) => { const e = r.querySelector(
                       '[data-testid="map-legend"]'); if (e) return e; for (const h of
                       r.querySelectorAll('*')) if (h.shadowRoot) { const x = f(h.shadowRoot);
                       if (x) return x; } return null; }; const e = f(document);
                       return e && e.textContent.includes(k + ' heat'); }""", arg=kind,
                    polling="raf")
                out["switch_ms"].append(page.evaluate(NEXT_FRAME_JS) - t0)
            out["paint_ms"] = zoom_and_drag(page)
            out["console_warnings"] = [w for w in warnings if "initial ranges" in w][:3]
            out["console_warning_count"] = len(warnings)
            context.close()
            b.close()
    finally:
        server.shutdown()
    stats = lambda xs: {"p50": round(statistics.median(xs), 1),  # noqa: E731
                        "max": round(max(xs), 1), "n": len(xs)} if xs else {}
    return {"heat_switch_to_paint_ms": stats(out["switch_ms"]),
            "paint_ms": stats(out["paint_ms"]),
            "console_warning_count": out["console_warning_count"]}


def main() -> None:
    """Print the figures as JSON (and write them to --out)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--browser", action="store_true")
    ap.add_argument("--only-browser", action="store_true",
                    help="only the Chromium part (hold the browser lock for it alone)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench-results" / "map-scale.json")
    args = ap.parse_args()
    results = json.loads(args.out.read_text()) if args.only_browser and args.out.exists() \
        else {}
    if not args.only_browser:
        results["wings"] = measure(wings_palace(), args.runs)
        print(json.dumps(results["wings"], indent=1), flush=True)
        results["chats"] = measure(chats_palace(), args.runs)
        print(json.dumps(results["chats"], indent=1), flush=True)
    if args.browser or args.only_browser:
        results["chromium_chats"] = browser(args.runs)
        print(json.dumps(results["chromium_chats"], indent=1), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""Import at real size: a generated ChatGPT export given to the built page.

    .venv/bin/python tests/bench/import_scale.py [--messages 20000] [--runs 1] [--drop]
    .venv/bin/python tests/bench/import_scale.py --embed-minutes 40 --reload-at 300 --out F

The export is :mod:`palazzo.bench.exportgen`'s (the scale benchmark's generator). The page runs
with ``?embedder=hash`` (the import alone) in Chromium with the network guarded to loopback, or
with ``--embed-minutes`` on its real embedder (MiniLM on ONNX Runtime), following the
background embedding after the import (when a person's own turns and everything have vectors,
what the status line says, what a reload keeps). The file is chosen in the import dialog
(``--drop``: dropped on the page as a real drop event, its bytes carried into the page as
base64), then the dialog's Import button is clicked, as a person would. Printed as JSON, per
run: seconds from the file given to "Found …" (the page reading the file, the worker writing
it to Pyodide's file system, parsing and checking the whole export), from Import to
"Imported …", how long a ``palace_status`` call and a search take right after, while the new
drawers are embedded in the background, and Chromium's memory (PSS of all its processes)
before, during and after.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

from bench.procmem import Sampler, tab_parts  # noqa: E402
from browser.conftest import CHROMIUM_ARGS, SITE, chromium_path, new_guarded_context  # noqa: E402
from browser.test_ui_import import DROP  # noqa: E402
from palazzo.bench.exportgen import write_export  # noqa: E402
from sitebuild.serve import serve_in_thread  # noqa: E402

STATE = "(s) => document.getElementById('import-dialog').dataset.state === s"


STATUS = "window.palazzo.call('palace_status', {})"
# The status line's search part, e.g. "semantic search: embedding 120 of 2,000 · 9.0 drawers/s,
# about 3 min left" (shadow DOM searched).
SHOWN = """() => {
  const find = (root) => {
    const el = root.querySelector('[data-testid="status-search"]');
    if (el) return el;
    for (const h of root.querySelectorAll('*')) if (h.shadowRoot) {
      const f = find(h.shadowRoot); if (f) return f; }
    return null;
  };
  const el = find(document);
  return el ? el.textContent : null;
}"""


RATE = re.compile(r"([\d.,]+) drawers/s")


def shown_against_measured(curve: list[dict], ahead: float = 120.0,
                           within: float = 0.3,
                           reload_at: float | None = None) -> dict[str, object]:
    """Return how often the rate the status line showed was within ``within`` (a fraction)
    of the rate the count then moved at over the next ``ahead`` seconds of ``curve`` (at
    least half of that measured), and the worst cases: what the issue's "the shown rate
    within 30 % of the measured one" asks. Samples with no rate shown are not counted.

    The count is of steps of work, as the status line's rate counts them: a drawer getting a
    vector, and a long turn getting the rest of its windows after its opening one (its
    ``to_complete`` going down: the peak of ``to_complete`` so far minus its value, since
    the rests come after every drawer has a vector).

    A sample whose next ``ahead`` seconds hold the benchmark's reload (``reload_at``) is not
    counted but reported (``across_reload``): that window's rate includes the new page's
    boot, which no rate shown before the reload could know of."""
    checked, close, worst, across = 0, 0, [], 0
    peak = 0
    for x in curve:
        peak = max(peak, x.get("to_complete") or 0)
        x["work"] = x["embedded"] + peak - (x.get("to_complete") or 0)
    for i, x in enumerate(curve):
        m = RATE.search(x.get("shown") or "")
        if not m:
            continue
        later = [y for y in curve[i + 1:] if y["at_s"] - x["at_s"] <= ahead]
        if not later or later[-1]["at_s"] - x["at_s"] < ahead / 2:
            continue
        if reload_at is not None and x["at_s"] <= reload_at < later[-1]["at_s"]:
            across += 1
            continue
        measured = (later[-1]["work"] - x["work"]) / (later[-1]["at_s"] - x["at_s"])
        if measured <= 0:
            continue
        shown = float(m.group(1).replace(",", ""))
        error = abs(shown - measured) / measured
        checked += 1
        close += error <= within
        worst.append({"at_s": x["at_s"], "shown": shown, "measured": round(measured, 1),
                      "error": round(error, 2)})
    worst.sort(key=lambda w: -w["error"])
    return {"samples": checked, "within": close, "fraction": within, "worst": worst[:5],
            "across_reload": across}


def embedding(page, url: str, minutes: float, reload_at: float | None,
              memory: Sampler | None = None) -> dict[str, object]:
    """Follow the background embedding after an import, from the moment the import is done:
    every 15 s the status (embedded, to embed, a person's own turns to embed), the rate the
    status line shows and where the page's embedding time went
    (``window.palazzo.embedTimes``); with ``reload_at`` (seconds) reload the page once then
    and count what the reload kept; with ``memory`` (a running sampler), the tab's last
    memory sample at each point. Return the curve and when the own turns had a vector
    (their opening window's, for long ones), when every drawer had one, and when everything
    was done (long turns' later windows too). Cost: up to ``minutes`` of the page's
    embedding."""
    t0 = time.perf_counter()
    curve: list[dict[str, object]] = []
    out: dict[str, object] = {"curve": curve}
    reloaded = reload_at is None
    while time.perf_counter() - t0 < minutes * 60:
        at = time.perf_counter() - t0
        if not reloaded and at >= reload_at:
            before = page.evaluate(STATUS)["embedded"]
            parts_before = tab_parts(page)
            page.reload()
            # not "deferred": the worker marks it done once the boot's embedding is done
            page.evaluate("window.palazzo.rendered")
            after = page.evaluate(STATUS)["embedded"]
            out["reload"] = {"at_s": round(at, 1), "embedded_before": before,
                             "embedded_after": after, "mb_by_process_before": parts_before,
                             "mb_by_process_after": tab_parts(page)}
            reloaded = True
            continue
        st = page.evaluate(STATUS)
        curve.append({"at_s": round(at, 1), "embedded": st["embedded"],
                      "to_embed": st["to_embed"], "to_embed_own": st["to_embed_own"],
                      "to_complete": st.get("to_complete", 0),
                      "unread": (st.get("unread") or {}).get("drawers"),
                      "shown": page.evaluate(SHOWN),
                      "mb": memory.last_mb if memory is not None else None,
                      "mb_by_process": tab_parts(page) if memory is not None else None,
                      # where the page's embedding time went since it opened (plan, model,
                      # store, wall seconds; counted again from 0 after the reload)
                      "times": page.evaluate("window.palazzo.embedTimes")})
        print(json.dumps(curve[-1], ensure_ascii=False), file=sys.stderr, flush=True)
        if "own_done_s" not in out and st["to_embed_own"] == 0:
            out["own_done_s"] = round(at, 1)
        if "vectors_done_s" not in out and st["to_embed"] == 0:
            out["vectors_done_s"] = round(at, 1)  # every drawer has a vector
        if st["to_embed"] == 0 and not st.get("to_complete"):
            out["all_done_s"] = round(at, 1)  # and every long turn all its windows
            break
        time.sleep(15)
    out["shown_rate"] = shown_against_measured(
        curve, reload_at=out["reload"]["at_s"] if "reload" in out else None)
    return out


def run_once(browser, url: str, export: Path, embed_minutes: float = 0.0,
             reload_at: float | None = None, drop: bool = False) -> dict[str, object]:
    """Give the ``export`` file to a fresh page (chosen in the import dialog, or with
    ``drop`` dropped on the page) and import it into a new palace;
    return the timings and the dialog's two messages. With ``embed_minutes``, the page uses
    its real embedder (MiniLM on ONNX Runtime) and the background embedding is followed for
    up to that long (:func:`embedding`)."""
    data = base64.b64encode(export.read_bytes()).decode() if drop else None
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    page.set_default_timeout(1_800_000)
    page.goto(url + ("" if embed_minutes else "?embedder=hash"))
    page.evaluate("window.palazzo.deferred")
    opened_mb = Sampler().sample()
    with Sampler() as memory:  # the tab's memory from the drop to "Imported"
        t0 = time.perf_counter()
        if drop:
            page.evaluate(DROP, ["conversations.json", data])
        else:  # the dialog's "Choose files…": the page reads the file from disk
            page.locator("#import-files-input").set_input_files(str(export))
        print("dropped", file=sys.stderr, flush=True)
        page.wait_for_function(STATE, arg="found", polling=200)
        found_s = time.perf_counter() - t0
        found = page.locator("#import-status").inner_text()
        t1 = time.perf_counter()
        page.locator("#import-go").click()
        page.wait_for_function(STATE, arg="done", polling=200)
        applied_s = time.perf_counter() - t1
    print(f"imported in {applied_s:.1f} s", file=sys.stderr, flush=True)
    done = page.locator("#import-status").inner_text()
    t2 = time.perf_counter()
    page.evaluate("window.palazzo.call('palace_status')")
    status_s = time.perf_counter() - t2
    t3 = time.perf_counter()
    page.evaluate("window.palazzo.call('search', {query: 'sourdough starter'})")
    search_s = time.perf_counter() - t3
    out: dict[str, object] = {
        "drop_to_found_s": round(found_s, 2), "import_to_imported_s": round(applied_s, 2),
        "status_call_after_s": round(status_s, 3), "search_after_s": round(search_s, 3),
        "found": found, "imported": done,
        # Chromium's PSS (all its processes, MB): the page open before the drop, the peak from
        # the drop to "Imported", and then
        "memory_mb": {"opened": opened_mb, "import_peak": memory.peak_mb,
                      "imported": memory.last_mb}}
    if embed_minutes:
        with Sampler(every=1.0) as during:
            out["embedding"] = embedding(page, url, embed_minutes, reload_at, during)
        out["embedding"]["from_drop_s"] = round(t2 - t0, 1)
        out["memory_mb"]["embedding_peak"] = during.peak_mb
    context.close()
    if guard.outside or guard.failed:
        raise SystemExit(f"not offline/clean: {guard.outside} {guard.failed}")
    return out


def main() -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--embed-minutes", type=float, default=0.0,
                        help="use the page's MiniLM and follow the background embedding this long")
    parser.add_argument("--reload-at", type=float, default=None,
                        help="seconds into the embedding: reload the page once, count what it kept")
    parser.add_argument("--drop", action="store_true",
                        help="drop the file on the page (through a base64 copy of it in the "
                             "page: its memory then counts three copies a person's drop has "
                             "not) instead of choosing it in the import dialog")
    parser.add_argument("--out", default=None, help="also write the JSON here")
    args = parser.parse_args()
    server, url = serve_in_thread(SITE)
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "conversations.json"
        write_export(export, args.messages, seed=0)
        size = export.stat().st_size
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium_path(),
                                             args=CHROMIUM_ARGS)
                runs = [run_once(browser, url, export, args.embed_minutes, args.reload_at,
                                 args.drop) for _ in range(args.runs)]
                browser.close()
        finally:
            server.shutdown()
    text = json.dumps({"messages": args.messages, "export_bytes": size, "runs": runs},
                      indent=1, ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

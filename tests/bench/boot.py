"""Boot-time benchmark: load the built page N times in Chromium and time each boot stage.

    npm run bench:boot -- --runs 5        (or: python3 py/tasks.py bench-boot --runs 5)

Each run uses a fresh browser context (empty HTTP cache, as a first visit) with the network
guarded to loopback. Reported per run, in seconds since navigation start:
  pyodide_ready     the Pyodide runtime is up in the worker
  packages_loaded   numpy, scipy, panel, palazzo and their dependencies are loaded
  engine_ready      the palazzo engine answers operations (window.palazzo.ready)
  panel_imported    Panel is imported in the worker
  document_rendered the Panel document is rendered in the page: the demo palace is interactive
  first_search      a query typed into the Search tab has its results on screen (BM25 until
                    MiniLM arrives; the search starts as soon as the document is rendered)
  embedder_ready    MiniLM and SciPy are loaded and the demo palace is embedded
Prints median and range of each and writes them as JSON (default bench-results/boot.json).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

from browser.conftest import CHROMIUM_ARGS, SITE, chromium_path, new_guarded_context  # noqa: E402
from sitebuild.serve import serve_in_thread  # noqa: E402

MARKS = {
    "pyodide_ready": "runtime:done",
    "packages_loaded": "packages:done",
    "engine_ready": "engine:done",
    "panel_imported": "panel-import:done",
    "document_rendered": "document:done",
    "first_search": "first-search",
    "embedder_ready": "deferred:done",
}
SEARCH = "when should I prune the roses?"


def one_boot(browser, url: str) -> dict[str, float]:
    """Return the stage times (seconds since navigation start) of one cold page load."""
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    page.set_default_timeout(300_000)
    page.goto(url)
    page.evaluate("window.palazzo.rendered")
    import re

    page.locator(".bk-tab").filter(has_text=re.compile("^Search$")).click()
    page.locator(".pz-search-query input").fill(SEARCH)
    page.locator(".pz-search-query input").press("Enter")
    page.locator("[data-testid=search-result]").first.wait_for()
    first_search = page.evaluate("performance.now()")
    page.evaluate("window.palazzo.deferred")
    timings = {**page.evaluate("window.palazzo.timings"), "first-search": first_search}
    context.close()
    if guard.outside or guard.failed:
        raise SystemExit(f"boot was not offline/clean: {guard.outside} {guard.failed}")
    return {name: round(timings[key] / 1000, 3) for name, key in MARKS.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "boot.json"))
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    server, url = serve_in_thread(SITE)
    runs = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        for i in range(args.runs):
            runs.append(one_boot(browser, url))
            print(
                f"run {i + 1}/{args.runs}: "
                + ", ".join(f"{k} {v:.2f}s" for k, v in runs[-1].items()),
                flush=True,
            )
        version = browser.version
        browser.close()
    server.shutdown()

    summary = {}
    for name in MARKS:
        values = [r[name] for r in runs]
        summary[name] = {
            "median": round(statistics.median(values), 2),
            "min": round(min(values), 2),
            "max": round(max(values), 2),
        }
    print(f"\n{'stage':<18} {'median':>8} {'range':>16}   ({args.runs} cold loads)")
    for name, s in summary.items():
        print(f"{name:<18} {s['median']:>7.2f}s {s['min']:>7.2f}-{s['max']:.2f}s")
    site_bytes = sum(p.stat().st_size for p in SITE.rglob("*") if p.is_file())
    result = {
        "benchmark": "boot",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "runs": runs,
        "summary_seconds": summary,
        "chromium": version,
        "machine": {"cpus": __import__("os").cpu_count(), "platform": platform.platform()},
        "site_bytes": site_bytes,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

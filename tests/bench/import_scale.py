"""Drop-to-import at real size: a generated ChatGPT export dropped on the built page.

    .venv/bin/python tests/bench/import_scale.py [--messages 20000] [--runs 1]

The export is :mod:`palazzo.bench.exportgen`'s (the scale benchmark's generator). The page
runs with ``?embedder=hash`` (MiniLM under Pyodide would embed for hours afterwards) in
Chromium with the network guarded to loopback; the file goes in as a real drop event, then
the dialog's Import button is clicked, as a person would. Printed as JSON, per run: seconds
from the drop to "Found …" (the page reading the file, the worker writing it to Pyodide's
file system, parsing and checking the whole export), from Import to "Imported …", and how
long a ``palace_status`` call and a search take right after, while the new drawers are
embedded in the background.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

from browser.conftest import CHROMIUM_ARGS, SITE, chromium_path, new_guarded_context  # noqa: E402
from browser.test_ui_import import DROP  # noqa: E402
from palazzo.bench.exportgen import write_export  # noqa: E402
from sitebuild.serve import serve_in_thread  # noqa: E402

STATE = "(s) => document.getElementById('import-dialog').dataset.state === s"


def run_once(browser, url: str, data: str) -> dict[str, float | str]:
    """Drop the export (base64 ``data``) on a fresh page and import it into a new palace;
    return the timings and the dialog's two messages."""
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    page.set_default_timeout(1_800_000)
    page.goto(url + "?embedder=hash")
    page.evaluate("window.palazzo.deferred")
    t0 = time.perf_counter()
    page.evaluate(DROP, ["conversations.json", data])
    page.wait_for_function(STATE, arg="found", polling=200)
    found_s = time.perf_counter() - t0
    found = page.locator("#import-status").inner_text()
    t1 = time.perf_counter()
    page.locator("#import-go").click()
    page.wait_for_function(STATE, arg="done", polling=200)
    applied_s = time.perf_counter() - t1
    done = page.locator("#import-status").inner_text()
    t2 = time.perf_counter()
    page.evaluate("window.palazzo.call('palace_status')")
    status_s = time.perf_counter() - t2
    t3 = time.perf_counter()
    page.evaluate("window.palazzo.call('search', {query: 'sourdough starter'})")
    search_s = time.perf_counter() - t3
    context.close()
    if guard.outside or guard.failed:
        raise SystemExit(f"not offline/clean: {guard.outside} {guard.failed}")
    return {"drop_to_found_s": round(found_s, 2), "import_to_imported_s": round(applied_s, 2),
            "status_call_after_s": round(status_s, 3), "search_after_s": round(search_s, 3),
            "found": found, "imported": done}


def main() -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "conversations.json"
        write_export(export, args.messages, seed=0)
        size = export.stat().st_size
        data = base64.b64encode(export.read_bytes()).decode()
    server, url = serve_in_thread(SITE)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            runs = [run_once(browser, url, data) for _ in range(args.runs)]
            browser.close()
    finally:
        server.shutdown()
    print(json.dumps({"messages": args.messages, "export_bytes": size, "runs": runs},
                     indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Screenshots of the main views for the README, made from the built site in Chromium.

    .venv/bin/python tests/bench/screenshots.py            (writes docs/screenshots/*.png)

Each view is opened on a first launch (the demo palace) after MiniLM has loaded, with the
network guarded to loopback, at 1280×800; then the import dialog after a folder of notes went
in, and the start tab at 390×844 (a phone).
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

from browser.conftest import CHROMIUM_ARGS, SITE, chromium_path, new_guarded_context  # noqa: E402
from sitebuild.serve import serve_in_thread  # noqa: E402

OUT = ROOT / "docs" / "screenshots"


def tab(page, name: str) -> None:
    page.locator(".bk-tab").filter(has_text=re.compile(f"^{re.escape(name)}$")).click()
    page.wait_for_timeout(400)


def shoot(page, name: str) -> None:
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
    print(f"wrote {OUT / name}.png")


def main() -> int:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    server, url = serve_in_thread(SITE)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        context, guard = new_guarded_context(browser, viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.goto(url)
        page.evaluate("window.palazzo.deferred")
        page.wait_for_timeout(500)
        tab(page, "Start")
        shoot(page, "start")
        tab(page, "Map")
        shoot(page, "map")
        tab(page, "Search")
        page.locator(".pz-search-query input").fill("when should I prune the roses?")
        page.locator(".pz-search-query input").press("Enter")
        page.locator(".pz-result-open button").first.wait_for()
        page.locator(".pz-result-open button").first.click()
        page.locator("[data-testid=drawer-text]").first.wait_for()
        shoot(page, "search")
        tab(page, "Knowledge")
        page.locator(".pz-kg-entity input").fill("Jonas")
        page.locator(".pz-kg-look button").click()
        page.locator("[data-testid=kg-facts]").first.wait_for()
        shoot(page, "knowledge")
        tab(page, "Navigate")
        for picker, room in ((".pz-nav-start", "Home / garden"),
                             (".pz-nav-goal", "Projects / palazzo")):
            page.locator(f"{picker} input").fill(room)
            page.locator(f"{picker} input").press("Enter")
        page.locator(".pz-nav-go button").click()
        page.locator("[data-testid=nav-steps]").first.wait_for()
        tab(page, "Map")
        shoot(page, "navigate-path")
        tab(page, "Provenance")
        page.locator(".pz-prov-slice button").click()
        page.locator("[data-testid=prov-token]").first.wait_for()
        page.locator(".pz-prov-verify button").click()
        page.locator("[data-testid=prov-verdict]").first.wait_for()
        shoot(page, "provenance")
        with tempfile.TemporaryDirectory() as tmp:
            notes = Path(tmp) / "garden notes"
            (notes / "roses").mkdir(parents=True)
            (notes / "roses" / "pruning.md").write_text("Prune climbing roses in late winter.\n")
            (notes / "tomatoes.md").write_text("Tomatoes need six hours of sun.\n")
            page.evaluate("window.palazzo.openImport()")
            page.locator("#import-folder-input").set_input_files(str(notes))
            page.wait_for_function("document.getElementById('import-dialog').dataset.state"
                                   " === 'found'")
            shoot(page, "import")
            page.locator("#import-close").click()
        page.set_viewport_size({"width": 390, "height": 844})
        tab(page, "Start")
        shoot(page, "phone")
        context.close()
        browser.close()
        if guard.outside or guard.failed:
            raise SystemExit(f"not offline/clean: {guard.outside} {guard.failed}")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

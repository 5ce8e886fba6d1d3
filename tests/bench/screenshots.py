"""Screenshots of the main views for the README, made from the built site in Chromium.

    .venv/bin/python tests/bench/screenshots.py            (writes docs/screenshots/*.png)

Each view is opened on a first launch (the demo palace) after MiniLM has loaded, with the
network guarded to loopback, at 1280×800.
"""

from __future__ import annotations

import re
import sys
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
        tab(page, "Map")
        shoot(page, "map")
        tab(page, "Search")
        page.locator(".pz-search-query input").fill("when should I prune the roses?")
        page.locator(".pz-search-query input").press("Enter")
        page.locator("[data-testid=search-result]").first.wait_for()
        shoot(page, "search")
        tab(page, "Knowledge")
        page.locator(".pz-kg-entity input").fill("Jonas")
        page.locator(".pz-kg-look button").click()
        page.locator("[data-testid=kg-facts]").first.wait_for()
        shoot(page, "knowledge")
        tab(page, "Navigate")
        page.locator(".pz-nav-start select").select_option(label="Home / garden")
        page.locator(".pz-nav-goal select").select_option(label="Projects / palazzo")
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
        context.close()
        browser.close()
        if guard.outside or guard.failed:
            raise SystemExit(f"not offline/clean: {guard.outside} {guard.failed}")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

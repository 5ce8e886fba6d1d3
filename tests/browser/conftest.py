"""Chromium, the built site on loopback, and the offline guard for every browser test.

Every context routes all requests: loopback ones go through, any other host is aborted and
recorded, and each test fails if one was attempted (workers' requests included). Local
responses of 400 and above fail the test too, so a missing asset cannot hide.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "dist"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """Return the Chromium to drive: $PALAZZO_CHROMIUM, else Debian's, installed if root."""
    wanted = os.environ.get("PALAZZO_CHROMIUM")
    if wanted:
        if not Path(wanted).exists():
            pytest.fail(f"PALAZZO_CHROMIUM={wanted} does not exist")
        return wanted
    path = "/usr/bin/chromium"
    if Path(path).exists():
        return path
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
        if Path(path).exists():
            return path
    pytest.fail(
        "Chromium is missing: install Debian's `chromium` package (apt-get install chromium) "
        "or set PALAZZO_CHROMIUM to a Chromium binary"
    )


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.hostname in LOCAL_HOSTS or f"[{parts.hostname}]" in LOCAL_HOSTS


@pytest.fixture(scope="session")
def site_url():
    from sitebuild.serve import serve_in_thread

    if not (SITE / "index.html").exists():
        pytest.fail("dist/ is not built: run the tests through `npm test`")
    server, url = serve_in_thread(SITE)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def playwright():
    """The one Playwright driver of the session (its sync API allows only one)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright):
    b = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    yield b
    b.close()


class Guard:
    """What a context tried to reach outside loopback, and local requests that failed."""

    def __init__(self) -> None:
        self.outside: list[str] = []
        self.failed: list[str] = []

    def route(self, route) -> None:
        url = route.request.url
        if is_local(url):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort("blockedbyclient")

    def response(self, response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")


def new_guarded_context(browser, **kwargs):
    """Return ``(context, guard)``: a context whose every request passes the offline guard."""
    guard = Guard()
    context = browser.new_context(**kwargs)
    context.route("**/*", guard.route)
    context.on("response", guard.response)
    return context, guard


@pytest.fixture
def guarded(browser):
    """A fresh guarded context; the test fails if anything left loopback or a file was missing."""
    context, guard = new_guarded_context(browser)
    yield context, guard
    context.close()
    assert guard.outside == [], f"non-local requests were attempted: {guard.outside}"
    assert guard.failed == [], f"local requests failed: {guard.failed}"

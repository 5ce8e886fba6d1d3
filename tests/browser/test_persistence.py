"""Persistence in Chromium: OPFS (and the IndexedDB fallback) keep every acknowledged drawer
across a reload and a browser relaunch; a second tab on the same palace is read-only."""

from __future__ import annotations

import pytest

from .conftest import CHROMIUM_ARGS, Guard, chromium_path, new_guarded_context

BOOT_TIMEOUT_MS = 180_000
ADD = """(async (texts) => {
  for (const t of texts) {
    await window.palazzo.call('add_drawer', {wing: 'w', room: 'r', content: t});
  }
  return (await window.palazzo.call('list_drawers', {wing: 'w'})).total;
})"""


def boot(page, url):
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(BOOT_TIMEOUT_MS)
    page.goto(url)
    page.evaluate("window.palazzo.ready")
    return errors


def contents(page):
    return sorted(page.evaluate("""(async () => {
        const r = await window.palazzo.call('export', {vectors: 'none'});
        return r.document.palace.drawers.filter((d) => d.wing === 'w').map((d) => d.content);
    })()"""))


@pytest.mark.parametrize("storage", ["opfs", "indexeddb"])
def test_drawers_survive_a_reload(browser, site_url, storage):
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    url = site_url + ("?storage=indexeddb" if storage == "indexeddb" else "")
    errors = boot(page, url)
    texts = [f"note {i}: the <b>{storage}</b> keeps me" for i in range(5)]
    assert page.evaluate(ADD, texts) == 5
    page.reload()
    page.evaluate("window.palazzo.ready")
    st = page.evaluate("window.palazzo.call('storage_status')")
    assert st["backend"] == storage and st["status"]["read_only"] is False
    assert st["status"]["problem"] is None
    assert contents(page) == sorted(texts)
    context.close()
    assert guard.outside == [] and guard.failed == [] and errors == []


def test_a_second_tab_is_read_only_and_the_first_keeps_writing(browser, site_url):
    context, guard = new_guarded_context(browser)
    first = context.new_page()
    boot(first, site_url)
    first.evaluate(ADD, ["from the first tab"])
    second = context.new_page()
    boot(second, site_url)
    st = second.evaluate("window.palazzo.call('storage_status')")
    assert st["status"]["read_only"] is True
    error = second.evaluate("""window.palazzo.call('add_drawer', {wing: 'w', room: 'r',
        content: 'from the second tab'}).then(() => null, (e) => e.code)""")
    assert error == "read_only"
    assert contents(second) == ["from the first tab"]
    first.evaluate(ADD, ["again from the first"])
    first.reload()
    first.evaluate("window.palazzo.ready")
    # The second tab never takes the lock unasked (it offers to take over), so the reloaded
    # first tab is the writer again, and nothing written is lost.
    assert first.evaluate("window.palazzo.call('storage_status')")["status"]["read_only"] is False
    assert contents(first) == ["again from the first", "from the first tab"]
    first.evaluate(ADD, ["after the reload"])
    context.close()
    assert guard.outside == [] and guard.failed == []


def test_drawers_survive_closing_and_relaunching_the_browser(playwright, site_url, tmp_path):
    profile = tmp_path / "profile"
    texts = ["kept across a relaunch", "and this one too"]
    for launch in range(2):
        guard = Guard()
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=chromium_path(), args=CHROMIUM_ARGS)
        context.route("**/*", guard.route)
        context.on("response", guard.response)
        page = context.new_page()
        boot(page, site_url)
        if launch == 0:
            page.evaluate(ADD, texts)
        else:
            assert contents(page) == sorted(texts)
        context.close()
        assert guard.outside == [] and guard.failed == []

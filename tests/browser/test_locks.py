"""Writer locks and honest messages in Chromium (issue 11): a tab holds a palace's Web Lock
while that palace is open in it and gives it back when it switches away or deletes it;
re-opening the open palace changes nothing; a second tab is read-only until the first has
gone and the person (or a call) opens the palace again; a deleted palace's name can be used
again; and the interface says "Started" only for what was written."""

from __future__ import annotations

import pytest

from .conftest import new_guarded_context
from .test_ui import open_page, tab, wait_text

pytestmark = pytest.mark.browser

CALL = "([name, args]) => window.palazzo.call(name, args)"
FAILS = """([name, args]) => window.palazzo.call(name, args).then(
    () => null, (e) => `${e.code}: ${e.message}`)"""


def call(page, name, args=None):
    return page.evaluate(CALL, [name, args or {}])


def fails(page, name, args=None):
    """Return "code: message" of the call's error, or None when it succeeded."""
    return page.evaluate(FAILS, [name, args or {}])


def add(page, text):
    return call(page, "add_drawer", {"wing": "w", "room": "r", "content": text})


def contents(page):
    doc = call(page, "export", {"vectors": "none"})["document"]
    return sorted(d["content"] for d in doc["palace"]["drawers"] if d["wing"] == "w")


def reload(page):
    page.reload()
    page.evaluate("window.palazzo.rendered")


def console_errors(page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


@pytest.fixture
def context(browser):
    context, guard = new_guarded_context(browser)
    yield context
    context.close()
    assert guard.outside == [], f"non-local requests were attempted: {guard.outside}"
    assert guard.failed == [], f"local requests failed: {guard.failed}"


def test_reopening_the_boot_palace_keeps_it_writable(context, site_url):
    page = open_page(context, site_url)
    console = console_errors(page)
    name = call(page, "list_palaces")["open"]
    tab(page, "Palaces & files")
    page.locator(".pz-palace-open button").click()  # the palace open since boot, again
    note = wait_text(page, "palace-note", "Opened")
    assert "read-only" not in note
    assert call(page, "open_palace", {"name": name})["status"]["read_only"] is False
    add(page, "written after opening the boot palace twice")
    # The background embedding of the demo's drawers writes too: it must not be refused.
    page.evaluate("window.palazzo.deferred")
    status = call(page, "palace_status")
    assert status["embedded"] == status["drawers"]
    assert not [m for m in console if "ReadOnly" in m or "read-only" in m]
    reload(page)
    assert call(page, "storage_status")["status"]["read_only"] is False
    assert contents(page) == ["written after opening the boot palace twice"]
    assert page.errors == []


def test_switching_a_to_b_and_back_keeps_writing_both(context, site_url):
    page = open_page(context, site_url)
    call(page, "new_palace", {"name": "Alpha"})
    call(page, "new_palace", {"name": "Beta"})
    reload(page)
    for palace, text in [("Alpha", "alpha one"), ("Beta", "beta one"), ("Alpha", "alpha two"),
                         ("Beta", "beta two")]:
        assert call(page, "open_palace", {"name": palace})["status"]["read_only"] is False
        add(page, text)
    reload(page)
    call(page, "open_palace", {"name": "Alpha"})
    assert contents(page) == ["alpha one", "alpha two"]
    call(page, "open_palace", {"name": "Beta"})
    assert contents(page) == ["beta one", "beta two"]
    assert page.errors == []


@pytest.mark.parametrize("storage", ["opfs", "indexeddb"])
def test_deleting_the_open_palace_and_creating_it_again_keeps_the_new_one(
        context, site_url, storage):
    url = site_url + ("?storage=indexeddb" if storage == "indexeddb" else "")
    page = open_page(context, url)
    call(page, "new_palace", {"name": "Reborn"})
    add(page, "first life")
    assert call(page, "delete_palace", {"name": "Reborn", "confirm": "Reborn"}) == {
        "deleted": "Reborn"}
    assert call(page, "new_palace", {"name": "Reborn"})["status"]["read_only"] is False
    add(page, "second life")
    reload(page)
    assert "Reborn" in call(page, "list_palaces")["palaces"]
    call(page, "open_palace", {"name": "Reborn"})
    assert contents(page) == ["second life"]
    assert page.errors == []


def test_the_interface_deletes_and_starts_a_palace_of_the_same_name(context, site_url):
    page = open_page(context, site_url)
    tab(page, "Palaces & files")
    for life in ("first life", "second life"):
        page.locator(".pz-palace-new-name input").fill("Phoenix")
        page.locator(".pz-palace-new button").click()
        wait_text(page, "palace-note", "Started Phoenix")
        assert call(page, "storage_status")["palace"] == "Phoenix"
        add(page, life)
        if life == "first life":
            page.locator(".pz-palace-confirm input").fill("Phoenix")
            page.locator(".pz-palace-delete button").click()
            wait_text(page, "palace-note", "Deleted Phoenix")
    reload(page)
    call(page, "open_palace", {"name": "Phoenix"})
    assert contents(page) == ["second life"]
    assert page.errors == []


def test_a_second_tab_takes_over_writing_when_the_first_closes(context, site_url):
    first = open_page(context, site_url)
    name = call(first, "list_palaces")["open"]
    add(first, "from the first tab")
    second = open_page(context, site_url)
    assert call(second, "storage_status")["status"]["read_only"] is True
    assert fails(second, "add_drawer", {"wing": "w", "room": "r", "content": "no"}).startswith(
        "read_only")
    second.evaluate("""() => { window.lockFree = new Promise((resolve) => addEventListener(
        'palazzo:lock-free', (event) => resolve(event.detail.palace), {once: true})); }""")
    first.close()
    assert second.evaluate("window.lockFree") == name  # scripts hear it too
    tab(second, "Palaces & files")
    wait_text(second, "palace-note", "take over writing")  # offered, not taken unasked
    assert call(second, "storage_status")["status"]["read_only"] is True
    second.locator(".pz-palace-open button").click()
    note = wait_text(second, "palace-note", f"Opened {name}")
    assert "read-only" not in note
    add(second, "from the second tab")
    reload(second)
    assert call(second, "storage_status")["status"]["read_only"] is False
    assert contents(second) == ["from the first tab", "from the second tab"]
    assert second.errors == []


def test_a_second_tab_takes_over_when_the_first_switches_away(context, site_url):
    first = open_page(context, site_url)
    name = call(first, "list_palaces")["open"]
    second = open_page(context, site_url)
    assert call(second, "storage_status")["status"]["read_only"] is True
    call(first, "new_palace", {"name": "Elsewhere"})  # the first tab lets go of `name`
    assert call(second, "open_palace", {"name": name})["status"]["read_only"] is False
    add(second, "written by the second tab")
    # Now the first tab is the reader, and says so.
    assert call(first, "open_palace", {"name": name})["status"]["read_only"] is True
    reload(second)
    assert contents(second) == ["written by the second tab"]
    assert first.errors == [] and second.errors == []


# Another agent of the page (a dedicated worker) opens every file of the palace for writing
# and keeps them: the palace worker's next write fails, as a real storage failure would.
HOLD_FILES = """(palace) => new Promise((resolve, reject) => {
  const source = `onmessage = async (event) => {
    const root = await navigator.storage.getDirectory();
    const dir = await (await root.getDirectoryHandle("palazzo")).getDirectoryHandle(event.data);
    self.handles = [];
    for await (const [name, handle] of dir.entries()) {
      if (handle.kind === "file") self.handles.push(await handle.createSyncAccessHandle());
    }
    postMessage(self.handles.length);
  };`;
  const holder = new Worker(URL.createObjectURL(new Blob([source])));
  window.fileHolder = holder;
  holder.onmessage = (event) => resolve(event.data);
  holder.onerror = (event) => reject(new Error(event.message));
  holder.postMessage(palace);
})"""


def test_a_write_storage_refused_is_reported_and_not_kept(context, site_url):
    page = open_page(context, site_url)
    name = call(page, "list_palaces")["open"]
    before = call(page, "palace_status")["drawers"]
    assert page.evaluate(HOLD_FILES, name) >= 1
    tab(page, "Add")
    page.locator(".pz-add-wing input").fill("w")
    page.locator(".pz-add-room input").fill("r")
    page.locator(".pz-add-text textarea").fill("refused by storage")
    page.locator(".pz-add-go button").click()
    note = wait_text(page, "add-note", "not saved")
    assert "Added" not in note
    # Memory was booted again from storage: the refused drawer is not there either.
    assert call(page, "palace_status")["drawers"] == before
    error = fails(page, "add_drawer", {"wing": "w", "room": "r", "content": "refused too"})
    assert error.startswith("storage_error: not saved")
    page.evaluate("window.fileHolder.terminate()")
    add(page, "written once the files were free")
    reload(page)
    assert call(page, "storage_status")["status"]["problem"] is None
    assert contents(page) == ["written once the files were free"]
    assert page.errors == []

"""Damage to a palace's files in the browser's storage is never silent (Chromium, OPFS and
IndexedDB, network blocked).

A palace of two generations is made once per storage on a persistent profile (drawers,
enough writes to pass the compaction threshold, more drawers in the newest journal); each
case copies the closed profile, writes damage into the browser's storage from a blank page
of the same origin (the worker not running), and loads the page again: the palace opens
read-only with everything that still verifies, the status line and the Palaces & files tab
say what is damaged, a write is refused with ``palace_damaged``, Check files lists every
file (the older generation's snapshot, which boot leaves in storage, included) with the
damaged ones first, and Repair… (after its question) makes it writable. A drawer added after
the repair survives a reload, the reload is clean, and the damaged file is kept in storage
as ``damaged-…``.

A journal cut short (below what the tip says was acknowledged) is named as damaged and the
palace is read-only, but repair today does not move it aside: the new generation replaces it
(its whole records are in it; the cut record's first bytes are not kept). That is the store's
choice (persist/palacestore.py), so the cut case does not look for a damaged-… file.
"""

from __future__ import annotations

import re
import shutil

import pytest

from .conftest import CHROMIUM_ARGS, Guard, chromium_path
from .test_ui import tab, text_of, wait_text

pytestmark = pytest.mark.browser

BOOT_TIMEOUT_MS = 180_000
PALACE = "Orchard"
BLANK = "__blank__.html"  # a page of the site's origin that starts no worker (test-only)
WORDS = ["amber", "birch", "cobalt", "dune", "ember", "fjord"]
CALL = "([name, args]) => window.palazzo.call(name, args)"
FAILS = """([name, args]) => window.palazzo.call(name, args).then(
    () => null, (e) => e.code)"""

# The palace's files as the page sees them in storage: {name: size} (workers/storage.js:
# OPFS palazzo/<palace>/<file>, IndexedDB database "palazzo", store "files", "<palace>/<file>").
FILES = """async ([storage, palace]) => {
  const out = {};
  if (storage === "opfs") {
    const root = await navigator.storage.getDirectory();
    const dir = await (await root.getDirectoryHandle("palazzo")).getDirectoryHandle(palace);
    for await (const [name, handle] of dir.entries()) {
      if (handle.kind === "file") out[name] = (await handle.getFile()).size;
    }
    return out;
  }
  const db = await new Promise((res, rej) => {
    const r = indexedDB.open("palazzo");
    r.onsuccess = () => res(r.result);
    r.onerror = () => rej(r.error);
  });
  const store = db.transaction("files", "readonly").objectStore("files");
  const range = IDBKeyRange.bound(`${palace}/`, `${palace}/\\uffff`);
  const [keys, values] = await Promise.all([
    new Promise((res) => { const r = store.getAllKeys(range); r.onsuccess = () => res(r.result); }),
    new Promise((res) => { const r = store.getAll(range); r.onsuccess = () => res(r.result); }),
  ]);
  keys.forEach((k, i) => { out[k.slice(palace.length + 1)] = values[i].byteLength; });
  db.close();
  return out;
}"""

# Damage one file in storage: flip the byte in its middle, or cut its last 10 bytes.
DAMAGE = """async ([storage, palace, file, how]) => {
  const change = (bytes) => {
    if (how === "flip") { const copy = bytes.slice(); copy[copy.length >> 1] ^= 0xff; return copy; }
    return bytes.slice(0, bytes.length - 10);
  };
  if (storage === "opfs") {
    const root = await navigator.storage.getDirectory();
    const dir = await (await root.getDirectoryHandle("palazzo")).getDirectoryHandle(palace);
    const handle = await dir.getFileHandle(file);
    const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
    const writable = await handle.createWritable();
    await writable.write(change(bytes));
    await writable.close();
    return (await handle.getFile()).size;
  }
  const db = await new Promise((res, rej) => {
    const r = indexedDB.open("palazzo");
    r.onsuccess = () => res(r.result);
    r.onerror = () => rej(r.error);
  });
  const key = `${palace}/${file}`;
  const read = db.transaction("files", "readonly").objectStore("files").get(key);
  const value = await new Promise((res) => { read.onsuccess = () => res(read.result); });
  const bytes = new Uint8Array(value);
  const next = change(bytes);
  const tx = db.transaction("files", "readwrite");
  tx.objectStore("files").put(next.buffer, key);
  await new Promise((res, rej) => { tx.oncomplete = res; tx.onerror = () => rej(tx.error); });
  db.close();
  return next.byteLength;
}"""


# Drawers of wing "fill" added one at a time until the journal holds as many records as make
# the store compact (persist/palacestore.py, COMPACT_RECORDS); resolves the generation then.
FILL = """async () => {
  const generation = async () => (await window.palazzo.call('storage_status')).status.generation;
  const first = await generation();
  for (let i = 0; i < 5000; i++) {
    await window.palazzo.call('add_drawer', {wing: 'fill', room: 'f', content: `filler ${i}`});
    const now = await generation();
    if (now !== first) return now;
  }
  return first;
}"""


def call(page, name, args=None):
    return page.evaluate(CALL, [name, args or {}])


def fails(page, name, args=None):
    """Return the code of the call's error, or None when it succeeded."""
    return page.evaluate(FAILS, [name, args or {}])


def contents(page):
    doc = call(page, "export", {"vectors": "none"})["document"]
    return sorted(d["content"] for d in doc["palace"]["drawers"] if d["wing"] == "w")


def text(i):
    return f"note {i}: the {WORDS[i]} story, kept in a drawer"


class Browser:
    """One persistent profile: app pages and blank pages of the site's origin, one at a time,
    every request through the offline guard."""

    def __init__(self, playwright, profile, site_url, storage):
        self.guard = Guard()
        self.context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=chromium_path(), args=CHROMIUM_ARGS)
        self.context.route("**/*", self.guard.route)
        self.context.on("response", self.guard.response)
        self.site, self.storage = site_url, storage
        self.errors: list[str] = []
        self.page = None
        self.names: tuple[str, str] = ("", "")

    def open(self):
        """Load the app (hash embedder: no model to fetch; it embeds as drawers are added)
        and return the page once it is rendered and the embedder is attached."""
        self.close_page()
        page = self.context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.set_default_timeout(BOOT_TIMEOUT_MS)
        query = "?embedder=hash" + ("&storage=indexeddb" if self.storage == "indexeddb" else "")
        page.goto(self.site + query)
        page.evaluate("window.palazzo.rendered")
        page.evaluate("window.palazzo.deferred")
        self.page = page
        return page

    def blank(self):
        """Return a page of the site's origin with no worker running (the app page closed)."""
        self.close_page()
        page = self.context.new_page()
        page.route(self.site + BLANK, lambda route: route.fulfill(
            status=200, content_type="text/html",
            body='<!doctype html><title>blank</title><link rel="icon" href="data:,">'))
        page.goto(self.site + BLANK)
        self.page = page
        return page

    def files(self):
        return self.page.evaluate(FILES, [self.storage, PALACE])

    def damage(self, file, how):
        page = self.blank()
        before = page.evaluate(FILES, [self.storage, PALACE])[file]
        after = page.evaluate(DAMAGE, [self.storage, PALACE, file, how])
        assert after == (before if how == "flip" else before - 10)
        self.close_page()

    def close_page(self):
        if self.page is not None:
            self.page.close()
            self.page = None

    def close(self):
        self.close_page()
        self.context.close()


def closed_cleanly(b):
    b.close()
    assert b.guard.outside == [], f"non-local requests were attempted: {b.guard.outside}"
    assert b.guard.failed == [], f"local requests failed: {b.guard.failed}"
    assert b.errors == []


@pytest.fixture(scope="module")
def two_generations(playwright, site_url, tmp_path_factory):
    """Per storage, a closed profile holding palace PALACE of two generations (made once:
    making it is 500 writes through the page, a third of a case's time); each case damages
    its own copy of it."""
    made = {}

    def profile_for(storage):
        if storage not in made:
            profile = tmp_path_factory.mktemp(f"two-generations-{storage}") / "profile"
            b = Browser(playwright, profile, site_url, storage)
            try:
                names = make_two_generations(b)
            finally:
                closed_cleanly(b)
            made[storage] = profile, names
        return made[storage]

    return profile_for


@pytest.fixture(params=["opfs", "indexeddb"])
def browser_on(request, playwright, site_url, tmp_path, two_generations):
    """A browser on a copy of the storage's two-generation profile; ``.names`` are the
    newest journal's and snapshot's names."""
    template, names = two_generations(request.param)
    profile = tmp_path / "profile"
    shutil.copytree(template, profile, symlinks=True,
                    ignore=shutil.ignore_patterns("Singleton*"))  # (the closed browser's locks)
    b = Browser(playwright, profile, site_url, request.param)
    b.names = names
    yield b
    closed_cleanly(b)


def make_two_generations(b):
    """Make palace PALACE: drawers 0-2, then as many more (in another wing) as it takes to
    pass the store's compaction threshold (generation 2 starts; the first stays as the
    previous one), then drawers 3-5 in the newest journal. Returns the newest journal's and
    snapshot's names."""
    page = b.open()
    assert call(page, "new_palace", {"name": PALACE})["palace"] == PALACE
    for i in range(3):
        call(page, "add_drawer", {"wing": "w", "room": "r", "content": text(i)})
    assert page.evaluate(FILL) == 2
    for i in range(3, 6):
        call(page, "add_drawer", {"wing": "w", "room": "r", "content": text(i)})
    st = call(page, "storage_status")["status"]
    assert st["generation"] == 2 and st["journal_records"] == 3 and not st["damaged"]
    files = b.files()
    assert {"snapshot-00000001.pz", "journal-00000001.log", "snapshot-00000002.pz",
            "journal-00000002.log", "journal.tip"} <= set(files)
    return "journal-00000002.log", "snapshot-00000002.pz"


def found(page, word):
    hits = call(page, "search", {"query": word, "limit": 3})["results"]
    return bool(hits) and word in hits[0]["content"]


def wait_without(page, testid, pattern):
    """Wait until the element's text no longer matches ``pattern``."""
    page.wait_for_function(
        """([id, pat]) => {
             const find = (root) => {
               const el = root.querySelector(`[data-testid="${id}"]`);
               if (el) return el;
               for (const host of root.querySelectorAll('*')) {
                 if (host.shadowRoot) { const f = find(host.shadowRoot); if (f) return f; }
               }
               return null;
             };
             const el = find(document);
             return el && !new RegExp(pat).test(el.textContent);
           }""", arg=[testid, pattern])


def shows_and_repairs(b, file, lost):
    """On the damaged page: the status line, the Palaces tab, Check files, then Repair….
    ``file`` is the damaged file, ``lost`` the drawers (by index) no file holds any more.
    Returns the repair's report (storage_status is checked too)."""
    page = b.page
    status = wait_text(page, "status-damaged", "Damaged: read-only")
    assert file in status and "open in another tab" not in status
    tab(page, "Palaces & files")
    assert file in wait_text(page, "damage-report", re.escape(file))
    page.locator(".pz-palace-check button").click()
    summary = wait_text(page, "check-summary", "damaged")
    assert PALACE in summary
    report = text_of(page, "check-files")
    rows = report.strip().split("\n")
    assert rows[1].startswith("damaged") and file in rows[1]  # (rows[0]: the header)
    # Every file was read for the check, the previous generation's snapshot too (boot
    # leaves it in storage unless it falls back on it).
    assert "snapshot-00000001.pz" in report and "previous generation" in report
    page.locator(".pz-palace-repair button").click()
    assert "never deleted" in wait_text(page, "repair-question", "never deleted")
    page.locator(".pz-palace-repair-yes button").click()
    note = wait_text(page, "repair-note", "Repaired")
    assert "can be written again" in note
    report = text_of(page, "repair-report")
    wait_without(page, "palace-status", "Damaged: read-only")
    st = call(page, "storage_status")["status"]
    assert st["damaged"] is False and st["read_only"] is False
    return report


@pytest.mark.parametrize("case", ["journal", "snapshot", "cut"])
def test_damage_in_storage_is_shown_and_repaired(browser_on, case):
    b = browser_on
    journal, snapshot = b.names  # (in the copied profile: damage() reads the file's size)
    if case == "journal":  # a byte flipped in the newest journal: drawer 4's record
        b.damage(journal, "flip")
        damaged, lost = journal, {4}
    elif case == "snapshot":  # a byte flipped in the newest snapshot: fall back on gen 1
        b.damage(snapshot, "flip")
        damaged, lost = snapshot, set()
    else:  # the newest journal cut below what was acknowledged: drawer 5's record
        b.damage(journal, "cut")
        damaged, lost = journal, {5}
    kept = sorted(text(i) for i in range(6) if i not in lost)

    page = b.open()
    st = call(page, "storage_status")
    assert st["palace"] == PALACE and st["backend"] == b.storage
    st = st["status"]
    assert st["damaged"] is True and st["read_only"] is True
    assert any(d["file"] == damaged for d in st["damage"]), st["damage"]
    assert st["problem"] and damaged in st["problem"]
    if case == "snapshot":
        assert st["fallback"] == 1
    if case == "journal":  # one record lost: drawer 4's
        assert len(st["missing"]) == 1 and st["missing"][0][0] == st["missing"][0][1]
        lost_record = st["missing"][0][0]
    # Read-only with everything that still verifies: searched and listed, never written.
    assert contents(page) == kept
    for i in range(6):
        assert found(page, WORDS[i]) == (i not in lost), WORDS[i]
    assert fails(page, "add_drawer", {"wing": "w", "room": "r", "content": "refused"}) == \
        "palace_damaged"
    assert contents(page) == kept

    report = shows_and_repairs(b, damaged, lost)
    moved = call(page, "storage_status")  # (still open and writable)
    assert moved["status"]["read_only"] is False
    if case != "cut":  # (a journal cut short is not moved aside: see the module's note)
        assert "Damaged files kept aside" in report and f"damaged-{damaged}" in report
    if case == "journal":
        assert f"Lost: record {lost_record} " in report
    assert contents(page) == kept

    # Written again: a drawer added after the repair is acknowledged...
    call(page, "add_drawer", {"wing": "w", "room": "r", "content": "added after the repair"})

    # ...and survives a reload, which is clean; the damaged file is kept in storage.
    page = b.open()
    st = call(page, "storage_status")["status"]
    assert st["damaged"] is False and st["read_only"] is False and st["problem"] is None
    assert st["damage"] == [] and st["fallback"] is None
    files = b.files()
    if case != "cut":
        assert f"damaged-{damaged}" in files, files
    assert contents(page) == sorted([*kept, "added after the repair"])
    assert "Damaged: read-only" not in text_of(page, "palace-status")

"""The interface for a damaged palace under CPython: the status line says so plainly, the
Palaces & files tab shows what is damaged (files, records lost, records set aside with their
text), Check files lists every file with the damaged ones first, and Repair… asks first,
then shows what was moved and set aside and leaves the palace writable. Text from files and
records is escaped everywhere. The same flows run in Chromium (tests/browser/test_damage.py).
"""

import asyncio
import concurrent.futures

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app  # noqa: E402
from palazzo.hosts.ui.files import (  # noqa: E402
    REPAIR_QUESTION,
    check_html,
    damage_html,
    repair_html,
)
from palazzo.hosts.ui.status import status_html  # noqa: E402
from palazzo.persist import journal  # noqa: E402
from palazzo.persist.journal import Record  # noqa: E402
from palazzo.persist.library import Library  # noqa: E402
from palazzo.persist.storage import MemoryRoot  # noqa: E402

XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def run(coro):
    """Run a coroutine on a loop of its own (in a thread: Playwright's loop may be running)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def library(root):
    return Library(root, lambda **kw: Palace(clock=lambda: 1764633600.0, **kw))


def damaged_palace():
    """Return (root, texts kept): palace P of three drawers, the middle record's bytes
    flipped, and a record that verifies but cannot apply (it edits a drawer that does not
    exist, with hostile text) appended after them."""
    root = MemoryRoot()
    lib = library(root)
    lib.new_palace("P")
    texts = ["apples in the orchard", "bananas on the table", "cherries by the wall"]
    for t in texts:
        lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": t})
    space = root.spaces["P"]
    name = next(n for n in space.names() if n.startswith("journal-"))
    data = space.files[name]
    space.files[name] = data
    data += journal.encode(Record(lib.store.seq + 1, "update_drawer",
                                  {"drawer_id": "nope", "content": XSS}, 1764633600.0))
    starts = journal.scan(bytes(data)).starts
    data[(starts[1] + starts[2]) // 2] ^= 0xFF  # inside the second record
    root.unlock("P")
    return root, [texts[0], texts[2]]


def app_on(root):
    lib = library(root)
    lib.open_palace("P")
    return build_app(Bridge(library=lib)).palazzo_app, lib


def test_the_status_line_says_damaged_plainly_and_escapes_the_problem():
    status = {"name": "P", "wings": 1, "rooms": 1, "drawers": 2, "entities": 0,
              "embedded": 0, "embedder": None}
    storage = {"backend": "opfs", "status": {
        "read_only": True, "damaged": True, "last_saved": None,
        "problem": f"journal-00000002.log: {XSS}; 2 journal record(s) replayed; read-only "
                   "until it is repaired (`palazzo repair --yes` recovers what verifies)"}}
    html = status_html(status, storage, True)
    head = html.partition("<details")[0]
    assert 'data-testid="status-damaged"' in head
    assert "Damaged: read-only — journal-00000002.log: " in head
    assert "2 journal record(s) replayed" in head and "Palaces &amp; files" in head
    storage["status"]["problem"] = "a.log: cut (and 1 more: see status.damage); read-only until"
    assert "(and 1 more: see Palaces &amp; files)" in status_html(status, storage, True)
    assert "open in another tab" not in head and "palazzo repair" not in head
    assert "<img" not in html and "<script" not in html and "&lt;img src=x" in html
    # Not damaged: the usual read-only note.
    storage["status"]["damaged"] = False
    assert "open in another tab" in status_html(status, storage, True)


def test_damage_check_and_repair_reports_escape_what_comes_from_files():
    st = {"damaged": True, "fallback": 3, "signing": False, "missing": [[5, 5], [7, 9]],
          "damage": [{"file": f"journal-{XSS}.log", "what": f"flipped {XSS}"}],
          "set_aside": [{"seq": 6, "op": "add_drawer", "why": XSS, "text": f"my {XSS}"}]}
    html = damage_html(st)
    assert "generation 3" in html and "5, 7-9" in html and "Signing is off" in html
    assert 'data-testid="damage-set-aside"' in html and "my &lt;img" in html
    check = {"palace": XSS, "check": {"ok": False, "damage": st["damage"], "files": [
        {"file": "snapshot-00000002.pz", "role": "current", "bytes": 2048, "ok": True,
         "found": "whole"},
        {"file": f"journal-{XSS}.log", "role": "current", "bytes": 10, "ok": False,
         "found": XSS}]}}
    table = check_html(check)
    assert table.index("journal-&lt;img") < table.index("snapshot-00000002.pz")  # damaged first
    assert "current generation" in table and "2,048" in table
    rep = {"palace": XSS, "repair": {"repaired": True, "moved": [{"file": XSS, "to":
           f"damaged-{XSS}"}], "set_aside": st["set_aside"], "rejected": "rejected-1.log",
           "missing": [[5, 5], [7, 9]], "damage": st["damage"], "keys_dropped": 1,
           "status": {"read_only": False}}}
    report = repair_html(rep)
    assert "can be written again" in report and "rejected-1.log" in report
    assert "Lost: records 5, 7-9 (no file held them" in report and "1 signing key that" in report
    for html in (damage_html(st), table, report):
        assert "<img" not in html and "<script" not in html
    assert damage_html({"damaged": False}) == "" and damage_html(None) == ""
    assert "Nothing to repair" in repair_html({"palace": "P", "repair": {"repaired": False}})


def test_a_damaged_palace_is_shown_checked_and_repaired_in_the_interface():
    root, kept = damaged_palace()
    app, lib = app_on(root)
    files = app.files
    assert lib.store.status.damaged and not lib.writable
    assert "Damaged: read-only — journal-00000001.log" in app.status.pane.object
    damage = files.damage.object
    assert 'data-testid="damage-files"' in damage and "journal-00000001.log" in damage
    assert "Records no file holds any more: 2." in damage
    assert "update_drawer" in damage and "&lt;img src=x" in damage and "<img" not in damage
    assert not files.repair.disabled and files.repair_yes.disabled

    run(files._check())
    report = files.check_report.object
    assert 'data-testid="check-files"' in report and "is damaged" in report
    first_row = report.split("<tbody>")[1].split("</tr>")[0]
    assert "damaged" in first_row and "journal-00000001.log" in first_row

    files.repair.clicks += 1  # asks first, in words that say nothing is deleted
    assert not files.repair_yes.disabled and not files.repair_no.disabled
    assert files.repair.disabled
    assert "never deleted" in REPAIR_QUESTION
    assert "never deleted" in files.repair_note.object
    files.repair_no.clicks += 1  # Cancel: nothing happened
    assert files.repair_yes.disabled and lib.store.status.damaged
    files.repair.clicks += 1
    run(files._repair())
    note = files.repair_note.object
    assert "Repaired P: it can be written again." in note
    assert "damaged-journal-00000001.log" in note and 'data-testid="repair-set-aside"' in note
    assert "&lt;img src=x" in note and "<img" not in note
    assert "Lost: record 2 (no file held it" in note
    assert "damaged-journal-00000001.log" in root.spaces["P"].names()
    assert any(n.startswith("rejected-") for n in root.spaces["P"].names())
    assert lib.writable and files.damage.object == "" and files.repair.disabled
    assert "Damaged" not in app.status.pane.object
    assert files.check_report.object == ""
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "after the repair"})

    # Opened again: clean, every drawer that verified and the one added after the repair.
    root.unlock("P")
    again, lib2 = app_on(root)
    assert not lib2.store.status.damaged and lib2.writable
    doc = lib2.store.call("export", {"vectors": "none"})["document"]
    assert sorted(d["content"] for d in doc["palace"]["drawers"]) == sorted(
        [*kept, "after the repair"])
    run(again.files._check())
    assert "Every file of P verifies" in again.files.check_report.object


def test_check_files_on_a_healthy_palace_and_repair_with_nothing_to_do():
    root = MemoryRoot()
    lib = library(root)
    lib.new_palace("P")
    app = build_app(Bridge(library=lib)).palazzo_app
    assert app.files.damage.object == "" and app.files.repair.disabled
    run(app.files._check())
    assert "Every file of P verifies" in app.files.check_report.object
    run(app.files._repair())  # (the button is disabled; the call says there is nothing)
    assert "Nothing to repair" in app.files.repair_note.object

"""Drop to import, end to end in Chromium: a folder of notes, a ChatGPT export, a bad file,
a stopped import, and the last palace reopening after a relaunch.

The page runs with ``?embedder=hash``: the import itself does not depend on the embedder, and
MiniLM in NumPy under Pyodide would embed the imported chat messages afterwards for minutes,
holding the worker (issue 15). The files go in as a person gives them: the folder through
the dialog's folder picker (a real ``webkitdirectory`` input), the export as a real drop
event on the page, read by the page and handed to the worker, which recognises and imports
them in batches.
"""

from __future__ import annotations

import base64
import time

import pytest

from palazzo.bench.exportgen import write_export

from .conftest import new_guarded_context
from .test_ui import open_page, tab

pytestmark = pytest.mark.browser

# A real drop of one file on the page: the test hands over the bytes, the page builds the
# File and the DataTransfer, as a drag from the file manager would.
DROP = """async ([name, b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], name, { type: "application/json" }));
  for (const type of ["dragenter", "dragover", "drop"]) {
    const init = { dataTransfer: dt, bubbles: true, cancelable: true };
    document.body.dispatchEvent(new DragEvent(type, init));
  }
}"""


def status(page, pattern):
    """Wait until the dialog's status line matches ``pattern``; return its text."""
    page.wait_for_function("(p) => new RegExp(p).test(document.getElementById('import-status')"
                           ".textContent)", arg=pattern)
    return page.locator("#import-status").inner_text()


@pytest.fixture(scope="module")
def context(browser):
    ctx, guard = new_guarded_context(browser)
    yield ctx
    ctx.close()
    assert guard.outside == [] and guard.failed == []


@pytest.fixture(scope="module")
def page(context, site_url):
    page = open_page(context, site_url + "?embedder=hash")
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
            if m.type in ("warning", "error") else None)
    page.console = console
    yield page
    assert page.errors == []


def test_a_folder_of_notes_lands_in_a_new_palace_named_after_it(page, tmp_path):
    notes = tmp_path / "garden notes"
    (notes / "roses").mkdir(parents=True)
    (notes / "roses" / "pruning.md").write_text("Prune climbing roses in late winter.\n")
    (notes / "roses" / "feeding.md").write_text("Feed roses with compost in spring.\n")
    (notes / "tomatoes.txt").write_text("Tomatoes need six hours of sun.\n")
    before = page.evaluate("window.palazzo.call('palace_status')")["name"]
    tab(page, "Palaces & files")
    page.locator(".pz-import-open").click()
    assert page.locator("#import-dialog").is_visible()
    t0 = time.perf_counter()
    page.locator("#import-folder-input").set_input_files(str(notes))
    found = status(page, "^Found")
    assert found.startswith("Found a folder of 3 files")
    assert page.locator("#import-name").input_value() == "garden notes"
    page.locator("#import-go").click()
    done = status(page, "^Imported")
    assert done == "Imported 3 new drawers. Nothing was skipped."
    print(f"folder of 3 notes: {time.perf_counter() - t0:.2f} s to imported")
    st = page.evaluate("window.palazzo.call('palace_status')")
    assert (st["name"], st["drawers"]) == ("garden notes", 3)
    listed = page.evaluate("window.palazzo.call('list_palaces')")
    assert before in listed["palaces"] and listed["open"] == "garden notes"
    page.locator("#import-close").click()
    assert not page.locator("#import-dialog").is_visible()
    hits = page.evaluate("window.palazzo.call('search', {query: 'roses winter'})")["results"]
    assert hits[0]["content"].startswith("Prune climbing roses")
    assert page.errors == []


def test_a_dropped_chatgpt_export_goes_into_the_open_palace(page, tmp_path):
    export = tmp_path / "conversations.json"
    stats = write_export(export, 300, seed=7)
    t0 = time.perf_counter()
    page.evaluate(DROP, ["conversations.json", base64.b64encode(export.read_bytes()).decode()])
    found = status(page, "^Found")
    assert found.startswith("Found a chat export (chatgpt)")
    page.locator('input[name="import-target"][value="open"]').check()
    assert "garden notes" in page.locator("#import-open-label").inner_text()
    page.locator("#import-go").click()
    done = status(page, "^Imported")
    print(f"ChatGPT export of {stats.messages} messages: {time.perf_counter() - t0:.2f} s")
    st = page.evaluate("window.palazzo.call('palace_status')")
    assert st["name"] == "garden notes" and st["drawers"] > 3
    convs = page.evaluate("window.palazzo.call('list_conversations')")["conversations"]
    assert f"Imported {len(convs)} conversations" in done
    page.locator("#import-close").click()
    assert page.errors == []


def test_a_claude_code_sessions_folder_goes_in_with_titled_rooms(page, tmp_path):
    import shutil
    from pathlib import Path

    fixture = (Path(__file__).parents[1] / "palazzo" / "data" / "importers"
               / "claude-code-2.1.332" / "projects")
    sessions = tmp_path / "projects"
    shutil.copytree(fixture, sessions)
    page.evaluate("window.palazzo.openImport()")
    page.locator("#import-folder-input").set_input_files(str(sessions))
    found = status(page, "^Found")
    assert found.startswith("Found 3 chat session files (claude-code): 2 conversations, "
                            "23 messages (14 text, 4 code output, 4 tool use, 1 reasoning)")
    page.locator('input[name="import-target"][value="open"]').check()
    page.locator("#import-go").click()
    done = status(page, "^Imported")
    assert done.startswith("Imported 2 conversations: 23 new messages.")
    rooms = page.evaluate("window.palazzo.call('list_rooms', {wing: 'conversations'})")["rooms"]
    titled = {r["name"]: r.get("source", "") for r in rooms}
    assert titled["hello-what-is-a-memory-palace"] == \
        "claude-code:7d3c2a10-5b8e-4f61-9c2d-0a1b2c3d4e5f"
    turns = page.evaluate("window.palazzo.call('list_turns', "
                          "{conversation: 'hello-what-is-a-memory-palace'})")
    kinds = {t.get("kind", "text") for t in turns["turns"]}
    assert {"text", "tool_use", "code_output", "reasoning"} <= kinds
    assert any(e["type"] == "branch" for e in turns["edges"])  # the subagent's sidechain
    page.locator("#import-close").click()
    assert page.errors == []


# What a palace holds, from palace_status: all but the vector counts, which the background
# embedding of the previous test's import may still be raising.
KEPT = """async () => {
  const st = await window.palazzo.call('palace_status');
  delete st.embedded; delete st.chunk_vectors;
  return st;
}"""


def test_a_bad_file_says_why_and_changes_nothing(page):
    before = page.evaluate(KEPT)
    page.evaluate(DROP, ["conversations.json", base64.b64encode(b'[{"mapping": 5}]').decode()])
    text = status(page, "^conversations.json conversation 0: ")
    assert page.locator("#import-status").get_attribute("class") == "import-error"
    assert "\n" not in text and len(text) < 300
    assert not page.locator("#import-go").is_visible()
    assert page.evaluate(KEPT) == before
    page.locator("#import-close").click()
    assert page.errors == []


def test_a_new_palace_name_is_checked_and_a_stopped_import_leaves_nothing(page, tmp_path):
    many = tmp_path / "many"
    many.mkdir()
    for i in range(600):
        (many / f"note-{i:03d}.md").write_text(f"Note {i}: the {i}th thing worth keeping.\n")
    page.evaluate("window.palazzo.openImport()")
    page.locator("#import-folder-input").set_input_files(str(many))
    status(page, "^Found a folder of 600 files")
    name = page.locator("#import-name")
    name.fill("garden notes")  # taken
    assert "exists already" in page.locator("#import-name-error").inner_text()
    assert page.locator("#import-go").is_disabled()
    name.fill(" bad")
    assert "starts with a letter or digit" in page.locator("#import-name-error").inner_text()
    name.fill("many notes")
    assert page.locator("#import-go").is_enabled()
    page.locator("#import-go").click()
    page.locator("#import-cancel").click()
    text = status(page, "Nothing was kept")
    assert text == "Import cancelled. Nothing was kept; garden notes is open again."
    listed = page.evaluate("window.palazzo.call('list_palaces')")
    assert "many notes" not in listed["palaces"] and listed["open"] == "garden notes"
    page.locator("#import-close").click()
    assert page.errors == []


def test_the_last_palace_reopens_after_a_relaunch_and_console_is_clean(page, context,
                                                                        site_url):
    assert page.console == []
    page.close()
    again = open_page(context, site_url + "?embedder=hash")
    assert again.evaluate("window.palazzo.call('palace_status')")["name"] == "garden notes"
    again.close()

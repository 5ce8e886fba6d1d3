"""A palace built by ``palazzo index`` and exported as JSON imports in the web app identically,
and a palace exported from the web app imports with ``palazzo import`` identically."""

from __future__ import annotations

import json

import pytest

from palazzo.hosts.cli import main

from .conftest import new_guarded_context
from .test_ui import open_page, tab

pytestmark = pytest.mark.browser
PARTS = ("wings", "rooms", "closets", "drawers", "kg", "conversations", "diaries")


def parts(doc):
    body = doc["palace"]
    return {k: body[k] for k in PARTS}


def test_cli_palace_into_the_browser_and_back(browser, site_url, tmp_path, capsys):
    src = tmp_path / "notes"
    (src / "garden").mkdir(parents=True)
    (src / "garden" / "roses.md").write_text("Prune the climbing roses in late winter.\n")
    (src / "kitchen.txt").write_text("Feed the sourdough starter twice a day.\n")
    cli = tmp_path / "cli-palace"
    common = ["--palace", str(cli), "--embedder", "hash"]
    assert main(["init", *common]) == 0
    assert main(["index", str(src), *common]) == 0
    exported = tmp_path / "from-cli.json"
    assert main(["export", "--out", str(exported), "--vectors", "none", *common]) == 0
    capsys.readouterr()

    context, guard = new_guarded_context(browser, accept_downloads=True)
    page = open_page(context, site_url)
    tab(page, "Palaces & files")
    page.locator(".pz-import-open").click()
    page.locator("#import-files-input").set_input_files(str(exported))
    page.wait_for_function("document.getElementById('import-dialog').dataset.state === 'found'")
    page.locator('input[name="import-target"][value="open"]').check()
    page.locator("#import-go").click()
    page.wait_for_function("document.getElementById('import-dialog').dataset.state === 'done'")
    page.locator("#import-close").click()
    in_browser = page.evaluate("window.palazzo.call('export', {vectors: 'none'})")["document"]
    assert parts(in_browser) == parts(json.loads(exported.read_text()))

    # And back: what the browser exports, the command line imports unchanged.
    with page.expect_download() as info:
        page.locator(".pz-export button").click()
    downloaded = tmp_path / "from-browser.json"
    info.value.save_as(downloaded)
    context.close()
    assert guard.outside == [] and guard.failed == []
    back = tmp_path / "back"
    assert main(["init", "--palace", str(back), "--embedder", "hash"]) == 0
    assert main(["import", str(downloaded), "--palace", str(back), "--embedder", "hash"]) == 0
    capsys.readouterr()
    assert main(["export", "--palace", str(back), "--embedder", "hash", "--vectors",
                 "none"]) == 0
    assert parts(json.loads(capsys.readouterr().out)) == parts(json.loads(
        downloaded.read_text()))

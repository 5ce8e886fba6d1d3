"""Text the language model does not read, in Chromium with the page's own MiniLM (ONNX
Runtime): a Korean query is ranked by its words and the search says so, and the status line
says how many drawers semantic search does not read (issue 31, point 2)."""

from __future__ import annotations

import pytest

from .conftest import new_guarded_context
from .test_ui import open_page, tab, wait_text
from .test_ui_search import search

pytestmark = pytest.mark.browser

KOREAN = ("금융소득 종합과세 기준은 연 2천만 원입니다. 이자와 배당을 합산해서 넘으면 "
          "다른 소득과 합쳐 누진세율로 과세됩니다.")
ENGLISH = "The GitHub upload failed because the token had expired; a new one fixed it."


def test_a_korean_query_is_ranked_by_its_words_and_the_status_says_what_is_not_read(
        browser, site_url):
    context, guard = new_guarded_context(browser, viewport={"width": 1280, "height": 900})
    page = open_page(context, site_url)
    page.evaluate("window.palazzo.deferred")  # the language model is attached
    status = page.evaluate("""async ([kr, en]) => {
        const call = window.palazzo.call;
        await call('add_drawer', {wing: 'money', room: 'tax', content: kr});
        await call('add_drawer', {wing: 'code', room: 'git', content: en});
        return await call('palace_status', {});
      }""", [KOREAN, ENGLISH])
    assert status["embedder"]["name"] == "minilm"
    assert status["unread"] == {"drawers": 1, "script": "latin"}

    page.set_default_timeout(60_000)
    tab(page, "Search")
    search(page, "금융소득 종합과세 기준", "Ranked by its words: semantic search reads "
           "English only", card="금융소득")
    search(page, "github token expired", r"drawers? match", card="GitHub upload")
    english = wait_text(page, "search-summary", "match")
    assert "Ranked by its words" not in english

    page.reload()
    page.evaluate("window.palazzo.deferred")
    text = wait_text(page, "status-unread", "English only")
    assert text == ("semantic search reads English only: 1 drawer in other scripts is found "
                    "by its words")
    context.close()
    assert guard.outside == [] and guard.failed == []
    assert page.errors == [] and page.dialogs == []

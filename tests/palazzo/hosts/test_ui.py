"""The Panel interface under CPython: each view's flow through the bridge, and escaping.

The same flows run in the real worker in Chromium (tests/browser/test_ui.py); here the views'
callbacks are driven directly, which pins their behaviour without a browser.
"""

import asyncio
import concurrent.futures
import re

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace, bind  # noqa: E402
from palazzo.hosts import demo  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app  # noqa: E402
from palazzo.hosts.ui.agents import next_chunk  # noqa: E402
from palazzo.persist.library import Library  # noqa: E402
from palazzo.persist.storage import MemoryRoot  # noqa: E402

XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def run(coro):
    """Run a coroutine to its end on a loop of its own (in a thread: when the browser tests ran
    first in this session, Playwright's loop is running in the main thread)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def app_for(palace=None):
    p = palace or Palace(clock=lambda: 1764633600.0)
    return build_app(Bridge(p)).palazzo_app, p


def demo_app():
    p = Palace(clock=lambda: 1764633600.0)
    demo.build(bind(p))
    return app_for(p)


def test_status_line_shows_counts_and_escapes_the_name():
    app, _ = app_for(Palace(name=XSS, clock=lambda: 0.0))
    text = app.status.pane.object
    assert "<img" not in text and "<script" not in text
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in text
    assert "0 drawers" in text


def test_drawer_text_is_escaped_in_search_detail_and_room_list():
    p = Palace(clock=lambda: 1.0)
    p.add_drawer("w", "r", f"hostile {XSS} text")
    app, _ = app_for(p)
    app.search.query.value = "hostile"
    app.search.open(app.search.shown[0]["drawer_id"])
    app.map.show_room("w", "r")
    card = app.search.cards.objects[0].objects[1].object
    for html in (card, app.search.meta.object, app.map.drawers.object):
        assert "<img" not in html and "<script" not in html
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html


def test_search_open_edit_and_delete_with_confirmation():
    app, p = demo_app()
    app.search.query.value = "sourdough starter"
    first = app.search.shown[0]["drawer_id"]
    app.search.cards.objects[0].objects[0].clicks += 1  # the card's button
    assert "Sourdough" in app.search.text.value
    app.search.text.value = "Sourdough starter: feed it daily."
    app.search._save()
    assert p.drawer(first).content == "Sourdough starter: feed it daily."
    edited = app.search.opened
    assert edited == p.drawer(first).id != first  # new text, new id; the old one finds it
    app.search.ask.clicks += 1  # "Delete…" only asks
    assert not app.search.yes.disabled and edited in p.drawers.row_of
    app.search.yes.clicks += 1
    assert edited not in p.drawers.row_of


def test_add_warns_about_a_duplicate_then_adds_on_the_second_click():
    app, p = app_for()
    app.add.wing.value, app.add.room.value = "garden", "roses"
    app.add.text.value = "Prune the roses in late winter."
    app.add.submit()
    assert p.counts()["drawers"] == 1
    app.add.wing.value = "elsewhere"
    app.add.text.value = "Prune the roses in late winter."
    app.add.submit()
    assert "already have in garden / roses" in app.add.note.object
    assert p.counts()["drawers"] == 1
    app.add.submit()
    assert p.counts()["drawers"] == 2
    assert "garden" in app.search.wing.options  # other views were refreshed


def test_knowledge_lookup_as_of_add_and_end_a_fact():
    app, p = demo_app()
    app.knowledge.entity.value = "Jonas"
    app.knowledge.as_of.value = "2020-06-01"
    app.knowledge.lookup()
    assert "berlin" in app.knowledge.facts.object and "lisbon" not in app.knowledge.facts.object
    app.knowledge.subject.value, app.knowledge.predicate.value = "Jonas", "plays"
    app.knowledge.object.value = "chess"
    app.knowledge._add()
    assert "Fact added" in app.knowledge.add_note.object
    tid = next(v for k, v in app.knowledge.end_pick.options.items() if k and "chess" in k)
    app.knowledge.end_pick.value = tid
    app.knowledge.ask()  # a confirm step first (tests/palazzo/hosts/test_ui_knowledge.py)
    assert p.kg.get(tid).valid_to is None
    app.knowledge.confirm_end()
    assert p.kg.get(tid).valid_to is not None
    app.knowledge.as_of.value = "not a date"
    assert "pz-error" in app.knowledge.find.fields["as_of"].error.object


def test_navigate_draws_the_path_and_lists_costs():
    app, _ = demo_app()
    app.navigate.start.value = "room:Home/garden"
    app.navigate.goal.value = "room:Projects/palazzo"
    out = app.navigate.run()
    assert out["found"] and "nav-steps" in app.navigate.out.object
    assert len(app.map.path.data["x"]) == len(out["nodes"])  # every node it visits is drawn


def test_swarm_runs_in_chunks_with_progress_and_can_be_cancelled():
    assert next_chunk(10, 0.5, 1000) == 5  # took twice the target: halve
    assert next_chunk(10, 0.001, 1000) == 40  # fast: grow, but at most four times
    assert next_chunk(10, 0.1, 3) == 3 and next_chunk(1, 10.0, 50) == 1
    app, p = demo_app()
    out = run(app.agents.run(2, 30, 3))
    assert out == {"cycles_run": 30, "cancelled": False}
    assert app.agents.progress.value == 30

    async def cancel_soon():
        task = asyncio.create_task(app.agents.run(2, 400, 3))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        app.agents._cancel()
        return await task

    stopped = run(cancel_soon())
    assert stopped["cancelled"] and stopped["cycles_run"] < 400
    assert app.agents.run_button.disabled is False


def test_provenance_slice_verifies_and_a_changed_token_fails():
    app, _ = demo_app()
    bundle = app.provenance.make_slice()
    assert bundle and bundle["token"] in app.provenance.slice.object
    assert app.provenance.check()["valid"] is True
    app.provenance.token.value = "0" * 64
    verdict = app.provenance.check()
    assert verdict["valid"] is False and "INVALID" in app.provenance.result.object


def test_export_is_named_after_the_palace_and_the_day():
    app, _p = demo_app()
    name = app.files.filename
    assert re.fullmatch(r".+-\d{4}-\d{2}-\d{2}\.json", name) and name.startswith("palace-")
    assert any('data-action="import"' in str(getattr(o, "object", ""))
               for o in app.files.view.objects)


def test_palaces_new_open_and_delete_with_confirmation():
    root = MemoryRoot()
    lib = Library(root, lambda **kw: Palace(clock=lambda: 0.0, **kw))
    lib.new_palace("First")
    app = build_app(Bridge(library=lib)).palazzo_app
    app.files.new_name.value = "Second"
    run(app.files._new())
    assert lib.name == "Second" and "Second" in app.files.palaces.options
    assert "Second" in app.status.pane.object
    app.files.palaces.value = "First"
    run(app.files._open())
    assert lib.name == "First"
    app.files.confirm.value = "wrong"
    run(app.files._delete())
    assert "is not its name" in app.files.palace_note.object
    assert root.palaces() == ["First", "Second"]
    app.files.confirm.value = "First"
    run(app.files._delete())
    assert root.palaces() == ["Second"] and lib.name == "Second"

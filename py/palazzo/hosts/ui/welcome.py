"""The first tab: what a memory palace is, what to try in the demo, and the three actions that
matter (import, search, add).

Search and Add are Panel buttons that switch tabs: in the page (web/a11y.js shows the tab a
``pz-go-<tab>`` class names) and in Python (the ``go`` callback the app gives).
Import is a plain ``<button data-action="import">`` in an HTML pane: the import dialog lives in
the page outside the Panel document, and web/importer.js opens it on a click of any element
carrying that attribute (it reads ``event.composedPath()``, which crosses the shadow roots).
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn

from palazzo.hosts.demo import DEMO_NAME
from palazzo.hosts.ui.common import Context, esc, html_pane

# A query checked to find a demo drawer by its words alone (tests/palazzo/hosts/
# test_ui_shell.py), so it works before the language model has loaded.
DEMO_QUERY = "pruning the roses"

WHAT = ("A memory palace keeps what you want to remember as <b>drawers</b> of verbatim text, "
        "filed in <b>rooms</b> inside <b>wings</b> (a wing per area of your life or work, a "
        "room per topic). Search finds a drawer by its meaning and by its exact words, and "
        "everything stays in this browser, offline.")

IMPORT_BUTTON = ('<button type="button" class="pz-import-button" data-action="import" '
                 'data-testid="welcome-import">Import your memories</button>'
                 '<span class="pz-action-help">notes, folders, chat exports, palace files'
                 '</span>')


def welcome_html(name: str, drawers: int) -> str:
    """Return the welcome's text for the open palace ``name`` holding ``drawers`` drawers
    (escaped): what a palace is, then a line for the demo, an empty palace, or yours."""
    if name == DEMO_NAME:
        line = (f"This is a demo palace: try searching for <q>{esc(DEMO_QUERY)}</q>, or look "
                "around, then import your own memories into a palace of your own.")
    elif drawers == 0:
        line = f"{esc(name)} is empty: import your memories, or add a first drawer."
    else:
        line = f"{esc(name)} is open: search it, or add to it."
    return (f'<h2 class="pz-welcome-title">Welcome to your memory palace</h2>'
            f'<p class="pz-welcome-what">{WHAT}</p>'
            f'<p class="pz-welcome-line" data-testid="welcome-line">{line}</p>')


class WelcomeView:
    """The welcome text, the demo's try-this button and the three actions."""

    def __init__(self, ctx: Context, go: Callable[[str], None],
                 try_query: Callable[[str], None]) -> None:
        """``go(tab)`` shows a tab by name; ``try_query(q)`` runs a search and shows it."""
        self.ctx = ctx
        self.text = html_pane("welcome", "")
        self.try_demo = pn.widgets.Button(name=f"Try it: search for “{DEMO_QUERY}”",
                                          css_classes=["pz-welcome-try", "pz-go-search"])
        self.search = pn.widgets.Button(name="Search", button_type="primary",
                                        css_classes=["pz-welcome-search", "pz-go-search"])
        self.add = pn.widgets.Button(name="Add a memory",
                                     css_classes=["pz-welcome-add", "pz-go-add"])
        self.importer = pn.pane.HTML(IMPORT_BUTTON, css_classes=["pz-welcome-import"])
        self.try_demo.on_click(lambda _e: try_query(DEMO_QUERY))
        self.search.on_click(lambda _e: go("Search"))
        self.add.on_click(lambda _e: go("Add"))
        self.view = pn.Column(
            self.text, self.try_demo,
            pn.pane.HTML('<h3 class="pz-welcome-do">What you can do</h3>',
                         sizing_mode="stretch_width"),
            pn.FlexBox(self.importer, self.search, self.add, css_classes=["pz-actions"],
                       flex_wrap="wrap", align_items="center", sizing_mode="stretch_width"),
            sizing_mode="stretch_width", css_classes=["pz-welcome-view"])
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the welcome line for the open palace (one operation call)."""
        status = self.ctx.call("palace_status")
        self.text.object = welcome_html(status["name"], status["drawers"])
        self.try_demo.visible = status["name"] == DEMO_NAME

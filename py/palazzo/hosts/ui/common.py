"""What every view of the interface shares: calling operations, escaping, small HTML pieces.

Views hold no palace logic: they call operations through :class:`Context` (the bridge), show
the results, and ask the context to refresh the other views after a change. Every piece of
user text (drawer content, wing and room names, entity names, errors) goes through
:func:`esc` before it reaches an HTML pane; Bokeh glyph text and widget options are text, not
markup, already.
"""

from __future__ import annotations

import asyncio
import html
import sys
from collections.abc import Callable, Iterable
from typing import Any

import panel as pn

from palazzo.errors import PalazzoError
from palazzo.hosts.bridge import Bridge

# Counts in sentences, for every view (re-exported: views import them from here).
from palazzo.hosts.words import plural as plural
from palazzo.hosts.words import verb as verb

Row = Iterable[Any]


def esc(value: Any) -> str:
    """Return ``value`` as HTML-escaped text (quotes included)."""
    return html.escape("" if value is None else str(value), quote=True)


def table(headers: list[str], rows: Iterable[Row], testid: str) -> str:
    """Return an HTML table whose every cell is escaped text."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    return (f'<table class="pz-table" data-testid="{esc(testid)}"><thead><tr>{head}</tr>'
            f"</thead><tbody>{body}</tbody></table>")


def message(text: str, kind: str = "info", testid: str = "message") -> str:
    """Return a one-line notice (kind: info, ok, error) with escaped text."""
    return f'<p class="pz-msg pz-{esc(kind)}" data-testid="{esc(testid)}">{esc(text)}</p>'


def set_options(widget: Any, options: list[Any] | dict[str, Any]) -> None:
    """Give a Select new options, keeping its value when still offered, else the first."""
    keep = widget.value
    widget.options = options
    values = list(options.values()) if isinstance(options, dict) else list(options)
    widget.value = keep if keep in values else (values[0] if values else None)


_pending: set[asyncio.Task[None]] = set()  # tasks of :func:`soon`, kept until they end
BUSY_S = 0.01  # a real timer: the busy state's patch reaches the page before the work starts


def soon(fn: Callable[[], Any]) -> None:
    """Run ``fn`` after the page had a moment to draw what was just changed (a busy line);
    at once outside the browser's worker (CPython tests, scripts: a loop another library
    keeps running there, Playwright's in a test session, would never run the task).
    Returns None."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None or sys.platform != "emscripten":
        fn()
        return

    async def later() -> None:
        await asyncio.sleep(BUSY_S)
        fn()

    task = loop.create_task(later())
    _pending.add(task)
    task.add_done_callback(_pending.discard)


async def load_first(ctx: Any, name: str) -> None:
    """Have the host load the packages operation ``name`` needs and has not got yet (the
    browser loads SciPy when the atlas first runs); nothing where they are all there.
    Returns None; a package that fails to load leaves the operation to say so."""
    hook = ctx.bridge.hooks.load_packages
    if hook is None:
        return
    missing = ctx.bridge.registry.get(name).missing_packages()
    if missing:
        await hook(missing)


def html_pane(testid: str, text: str = "") -> pn.pane.HTML:
    """Return an HTML pane that stretches; ``testid`` names it for tests."""
    return pn.pane.HTML(text, sizing_mode="stretch_width", css_classes=[f"pz-{testid}"])


class Context:
    """The bridge plus the refresh hooks of all views (one per document)."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self._listeners: list[Callable[[], None]] = []
        self._heat_listeners: list[Callable[[list[dict[str, Any]]], None]] = []
        self._switch_listeners: list[Callable[[], None]] = []
        self._open = self.which()  # the palace the views show
        # Views call the bridge itself (one layer: the bridge hands the looked-up operation
        # to the palace's store); errors propagate, views show them with :meth:`attempt`.
        self.call: Callable[..., dict[str, Any]] = bridge.call

    def attempt(self, pane: pn.pane.HTML, fn: Callable[[], Any], ok: str | None = None,
                testid: str = "message") -> Any:
        """Run ``fn``; show its PalazzoError (or ``ok``) in ``pane``; return its result or
        None. Bugs are shown too, as an internal error, rather than lost in the console."""
        try:
            result = fn()
        except PalazzoError as err:
            pane.object = message(str(err), "error", testid)
            return None
        except Exception as err:  # noqa: BLE001 - shown to the person, not swallowed
            pane.object = message(f"internal error: {type(err).__name__}: {err}", "error",
                                  testid)
            return None
        if ok is not None:
            self.confirm(pane, ok, testid)
        return result

    async def saved(self) -> None:
        """Return once every change made so far is durably written; raise StorageError when
        a write failed. Hosts whose storage is asynchronous (the browser worker) give the
        ``persist`` hook; elsewhere a call has written its change before it returned."""
        persist = self.bridge.hooks.persist
        if persist is not None:
            await persist()

    def confirm(self, pane: pn.pane.HTML, ok: str, testid: str = "message") -> None:
        """Show ``ok`` in ``pane`` once the changes made so far are durably written, and the
        write's error instead when it failed ("Saving…" until then); returns None. Without
        a ``persist`` hook the change is already written, so ``ok`` shows at once."""
        if self.bridge.hooks.persist is None:
            pane.object = message(ok, "ok", testid)
            return
        pane.object = message("Saving…", "info", testid)

        async def show() -> None:
            try:
                await self.saved()
            except PalazzoError as err:
                pane.object = message(str(err), "error", testid)
                return
            pane.object = message(ok, "ok", testid)

        asyncio.ensure_future(show())

    async def library_call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run a library operation (open, new or delete palace) and return its result once
        its changes are written. In the browser the worker runs it (it takes the palace's
        writer lock and reads its files first); elsewhere the bridge does. Errors propagate.
        """
        hook = self.bridge.hooks.library_call
        if hook is None:
            return self.call(name, args)
        return await hook(name, args)

    def on_refresh(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` whenever the palace changed (after :meth:`changed`)."""
        self._listeners.append(fn)

    def changed(self) -> None:
        """Tell every view the palace changed so it reloads what it shows; when another
        palace is open now (:meth:`which`), first tell the :meth:`on_switch` listeners, so
        nothing of the palace open before stays shown (an opened drawer, search results)."""
        now = self.which()
        if now != self._open:
            self._open = now
            for fn in self._switch_listeners:
                fn()
        for fn in self._listeners:
            fn()

    def on_switch(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` when another palace was opened (before the :meth:`on_refresh`
        listeners): it drops what its view showed of the palace open before."""
        self._switch_listeners.append(fn)

    def which(self) -> tuple[Any, int]:
        """Return what tells the open palace apart: its name and its store (or palace)
        object's id, so opening another palace, or starting or reloading one, is a switch."""
        lib = getattr(self.bridge, "library", None)
        if lib is None:
            return (None, id(self.bridge.palace))
        return (lib.name, id(lib.store))

    def on_heat(self, fn: Callable[[list[dict[str, Any]]], None]) -> None:
        """Call ``fn`` with the rooms of a new ``pheromone_heat`` answer after a use
        deposited pheromones (after :meth:`heated`)."""
        self._heat_listeners.append(fn)

    def heated(self) -> None:
        """Tell the views that show heat (the map, the Heat tab) that a search, an opened
        drawer, a copy or "Helpful" deposited pheromones (``pheromone_use``): one
        ``pheromone_heat`` call (about 0.1 s at 20,000 drawers under CPython), its rooms
        handed to each. Only those views: :meth:`changed` would reload every view and forget
        the communities (a big palace's search filter would lose them) after each search."""
        if self._heat_listeners:
            rooms = self.call("pheromone_heat")["rooms"]
            for fn in self._heat_listeners:
                fn(rooms)

    def wings(self) -> list[str]:
        """Return the wing names, sorted."""
        return sorted(w["name"] for w in self.call("list_wings")["wings"])

    def rooms(self) -> list[dict[str, Any]]:
        """Return every room record (wing, name, drawers), sorted by wing then name."""
        return sorted(self.call("list_rooms")["rooms"], key=lambda r: (r["wing"], r["name"]))


CSS = """
.pz-title { font-size: 1.5em; font-weight: 600; margin: 0 0 4px 0; }
.pz-table { border-collapse: collapse; font-size: 0.9em; }
.pz-table th, .pz-table td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left;
  vertical-align: top; }
.pz-msg { margin: 4px 0; }
.pz-error { color: #a40000; }
.pz-ok { color: #226622; }
.pz-snippet { white-space: pre-wrap; }
.pz-drawer-text { white-space: pre-wrap; border: 1px solid #ddd; padding: 8px; }
.pz-status-line { font-size: 0.9em; color: #333; }
.pz-warn { color: #8a5a00; font-weight: 600; }
.pz-swatch { display: inline-block; width: 0.9em; height: 0.9em; border: 1px solid #777;
  vertical-align: middle; }
.pz-diary-entry { border-left: 3px solid #ccd; padding-left: 8px; margin: 6px 0; }
.pz-status-detail { display: inline; margin-left: 0.6em; color: #555; }
.pz-status-detail summary { display: inline; cursor: pointer; text-decoration: underline; }
.pz-intro { margin: 4px 0 8px 0; color: #3d4452; max-width: 60em; }
.pz-welcome-title { font-size: 1.25em; margin: 8px 0 4px 0; }
.pz-welcome-what, .pz-welcome-line { max-width: 40em; line-height: 1.45; font-size: 1.1em; }
.pz-welcome-do { font-size: 1.05em; margin: 12px 0 0 0; }
.pz-import-button { font: inherit; font-weight: 600; padding: 6px 14px; border-radius: 4px;
  border: 1px solid #1a5fb4; background: #1a5fb4; color: #fff; cursor: pointer; }
.pz-import-button:hover { background: #164f96; }
.pz-action-help { margin-left: 8px; color: #555; font-size: 0.9em; }
/* Keyboard focus must be seen: a 3 px ring on every focusable control (Bokeh draws a 1 px
   light-grey dotted line on tabs and nothing on some widgets). */
:focus-visible { outline: 3px solid #1a5fb4 !important; outline-offset: 2px !important; }
/* Bokeh's tab strip does not wrap; on a phone it would be wider than the screen. */
.bk-header { flex-wrap: wrap !important; }
.bk-tab { padding: 6px 10px; }
/* Narrow screens: Panel gives a stretching layout the sum (Row) or the widest (Column) of its
   children's fixed widths as an inline min-width, so one Row of three 300 px widgets made the
   whole page 1234 px wide on a phone. Layouts stacked in a Column or a Tabs may shrink (a
   Column inside a Row keeps its own: it is a form field), Rows wrap, tables scroll in their
   own box, long tokens break. !important beats the inline min-width Panel sets. */
:host(.bk-panel-models-layout-Column) > .bk-panel-models-layout-Column,
:host(.bk-panel-models-layout-Column) > .bk-Row,
:host(.bk-panel-models-layout-Column) > .bk-panel-models-tabs-Tabs,
:host(.bk-panel-models-tabs-Tabs) > .bk-panel-models-layout-Column,
:host(.bk-panel-models-tabs-Tabs) > .bk-Row { min-width: 0 !important; }
:host(.bk-Row) { flex-wrap: wrap !important; }
.pz-table { display: block; max-width: 100%; overflow-x: auto; }
.pz-table tr.pz-marked td { background: #eef4fc; font-weight: 600; }
/* Long ids and tokens (a slice's id, a token) break rather than widen the page. */
.pz-msg, .pz-snippet, .pz-status-line, .pz-intro, code, p, li { overflow-wrap: anywhere; }
.bk-tab.bk-active { font-weight: 600; color: #1d2330 !important; }
"""


def intro(text: str, tab: str) -> pn.pane.HTML:
    """Return the pane of the one line a tab opens with: ``text`` escaped, in a paragraph
    named ``intro-<tab>`` for tests (``tab`` lower-cased, non-letters as dashes)."""
    slug = "".join(c if c.isalnum() else "-" for c in tab.lower()).strip("-")
    return pn.pane.HTML(f'<p class="pz-intro" data-testid="intro-{esc(slug)}">{esc(text)}</p>',
                        sizing_mode="stretch_width", css_classes=["pz-intro-pane"])

"""What every view of the interface shares: calling operations, escaping, small HTML pieces.

Views hold no palace logic: they call operations through :class:`Context` (the bridge), show
the results, and ask the context to refresh the other views after a change. Every piece of
user text (drawer content, wing and room names, entity names, errors) goes through
:func:`esc` before it reaches an HTML pane; Bokeh glyph text and widget options are text, not
markup, already.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from typing import Any

import panel as pn

from palazzo.errors import PalazzoError

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


def html_pane(testid: str, text: str = "") -> pn.pane.HTML:
    """Return an HTML pane that stretches; ``testid`` names it for tests."""
    return pn.pane.HTML(text, sizing_mode="stretch_width", css_classes=[f"pz-{testid}"])


class Context:
    """The bridge plus the refresh hooks of all views (one per document)."""

    def __init__(self, bridge: Any) -> None:
        self.bridge = bridge
        self._listeners: list[Callable[[], None]] = []

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an operation; errors propagate (views show them with :meth:`attempt`)."""
        return self.bridge.call(name, args or {})

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
            pane.object = message(ok, "ok", testid)
        return result

    def on_refresh(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` whenever the palace changed (after :meth:`changed`)."""
        self._listeners.append(fn)

    def changed(self) -> None:
        """Tell every view the palace changed so it reloads what it shows."""
        for fn in self._listeners:
            fn()

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
"""

"""The Panel interface: views over operations, no palace logic of its own.

This module is a host: it is the only place in :mod:`palazzo` that imports Panel, and it reads
the palace only through the bridge's operations.
"""

from __future__ import annotations

import html
from typing import Any

import panel as pn

from palazzo.bridge import Bridge

_CSS = """
.pz-title { font-size: 1.6em; font-weight: 600; margin: 0; }
.pz-status td { padding: 2px 10px 2px 0; }
"""


def _status_html(status: dict[str, Any]) -> str:
    rows = [
        ("Palace", status["name"]),
        ("Wings", status["wings"]),
        ("Rooms", status["rooms"]),
        ("Drawers", status["drawers"]),
        ("Engine", f"palazzo {status['engine']['version']} · Python {status['engine']['python']}"),
    ]
    body = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows
    )
    return f'<table class="pz-status" data-testid="palace-status">{body}</table>'


def build_app(bridge: Bridge) -> pn.viewable.Viewable:
    """Return the palazzo Panel layout for the bridge's open palace.

    Built once per document; cost is a single ``palace_status`` call.
    """
    pn.config.raw_css = [*pn.config.raw_css, _CSS]
    status = bridge.call("palace_status")
    wings = (
        "No wings yet. This palace is empty."
        if status["wings"] == 0
        else f"{status['wings']} wing(s)"
    )
    return pn.Column(
        pn.pane.HTML('<h1 class="pz-title">palazzo</h1>', sizing_mode="stretch_width"),
        pn.pane.HTML(_status_html(status), sizing_mode="stretch_width"),
        pn.pane.HTML(
            f'<h2>Wings</h2><p data-testid="wings-view">{html.escape(wings)}</p>',
            sizing_mode="stretch_width",
        ),
        sizing_mode="stretch_width",
        design=pn.theme.Native,
    )

"""The status line: palace name, counts, embedder, storage backend, last save, warnings."""

from __future__ import annotations

import time
from typing import Any

from palazzo.hosts.ui.common import Context, esc, html_pane


def status_html(status: dict[str, Any], storage: dict[str, Any] | None) -> str:
    """Return the status line for palace and storage status dicts (escaped)."""
    emb = status.get("embedder") or {}
    parts = [
        f'<b data-testid="status-name">{esc(status["name"])}</b>',
        f'<span data-testid="status-counts">{status["wings"]} wings · {status["rooms"]} rooms'
        f' · {status["drawers"]} drawers · {status["entities"]} entities</span>',
        f'<span data-testid="status-embedder">embedder: {esc(emb.get("name") or "none yet")}'
        f' ({status.get("embedded", 0)}/{status["drawers"]} embedded)</span>',
    ]
    if storage is not None:
        st = storage.get("status") or {}
        saved = st.get("last_saved")
        when = time.strftime("%H:%M:%S", time.localtime(saved)) if saved else "not yet"
        parts.append(f'<span data-testid="status-storage">storage: {esc(storage["backend"])}'
                     f' · last save {esc(when)}</span>')
        if st.get("read_only"):
            parts.append('<span class="pz-warn" data-testid="status-read-only">read-only: '
                         "this palace is open in another tab</span>")
        if st.get("problem"):
            parts.append(f'<span class="pz-warn" data-testid="status-problem">'
                         f'{esc(st["problem"])}</span>')
    return ('<div class="pz-status-line" data-testid="palace-status">'
            + " &nbsp;|&nbsp; ".join(parts) + "</div>")


class StatusLine:
    """One HTML pane, reloaded after every change."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.pane = html_pane("status")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the palace and storage status."""
        status = self.ctx.call("palace_status")
        storage = None
        if getattr(self.ctx.bridge, "library", None) is not None:
            storage = self.ctx.call("storage_status")
        self.pane.object = status_html(status, storage)

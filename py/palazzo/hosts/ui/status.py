"""The status line in plain words: which palace, how big, what search can do right now, where
it is kept, and warnings; the technical detail (embedder, backend, save time) sits in a
``<details>`` under it for whoever wants it."""

from __future__ import annotations

import time
from typing import Any

from palazzo.hosts.ui.common import Context, esc, html_pane, plural, verb

# How the status line names the storage backends (persist.storage's root kinds).
KEPT = {"opfs": "saved in this browser", "indexeddb": "saved in this browser",
        "directory": "saved on disk", "memory": "kept in memory only (not saved)"}


def search_words(status: dict[str, Any], model_coming: bool, rate: str | None = None) -> str:
    """Return what search can do now, in words: semantic search ready, embedding k of n
    (with ``rate``, e.g. "12.5 drawers/s, about 4 min left", when the host measures it),
    ready while the rest of long turns that have their opening window's vector is embedded,
    or keyword search only (and why). ``model_coming`` says the host attaches a language
    model later (the browser worker does, after the first render). Costs nothing."""
    emb = status.get("embedder") or {}
    drawers, embedded = status["drawers"], status.get("embedded", 0)
    if not emb.get("name"):
        why = "the language model is loading" if model_coming else "no language model"
        return f"keyword search only ({why})"
    kind = "similarity" if emb["name"] == "hash" else "semantic"
    # Drawers in a script the model does not read get no vector: they are not waited for.
    todo = status.get("to_embed", drawers - embedded)
    rest = status.get("to_complete", 0)
    if drawers == 0 or todo <= 0:
        if rest > 0:  # every drawer has a vector; long turns' later windows are coming
            line = (f"{kind} search ready · embedding the rest of "
                    f"{plural(rest, 'long turn')}")
            return f"{line} · {rate}" if rate else f"{line}…"
        return f"{kind} search ready"
    line = f"{kind} search: embedding {embedded:,} of {embedded + todo:,}"
    return f"{line} · {rate}" if rate else f"{line}…"


def unread_words(unread: dict[str, Any]) -> str:
    """Return the status line's part for drawers in a script the language model does not
    read (``palace_status``'s ``unread``, with some drawers): "semantic search reads English
    only: 1,234 drawers in other scripts are found by their words". Plain text."""
    n = unread["drawers"]
    return (f"semantic search reads English only: {plural(n, 'drawer')} in other scripts "
            f"{verb(n, 'is', 'are')} found by {verb(n, 'its', 'their')} words")


def damaged_words(st: dict[str, Any]) -> str:
    """Return the status line's warning for a palace whose files are damaged (storage status
    ``st`` with ``damaged`` true): "Damaged: read-only — <what is damaged and what was
    read>", then where to repair it. The store's problem ends by naming the command line's
    repair; the page names its own place for it instead. Plain text (escape it)."""
    problem = (st.get("problem") or "some of its files do not verify").split(
        "; read-only until")[0].replace("see status.damage", "see Palaces & files")
    return (f"Damaged: read-only — {problem}. Nothing is written until it is repaired "
            "(Palaces & files: Check files, Repair…)")


def status_html(status: dict[str, Any], storage: dict[str, Any] | None,
                model_coming: bool = False, rate: str | None = None) -> str:
    """Return the status line for palace and storage status dicts, all user text escaped:
    a plain sentence ("Demo palace · 23 drawers in 10 rooms of 6 wings · semantic search
    ready · saved in this browser"), warnings, and a closed <details> with the jargon."""
    emb = status.get("embedder") or {}
    size = (plural(status["drawers"], "drawer") + " in " + plural(status["rooms"], "room")
            + " of " + plural(status["wings"], "wing"))
    parts = [
        f'<b data-testid="status-name">{esc(status["name"])}</b>',
        f'<span data-testid="status-counts">{esc(size)}</span>',
        f'<span data-testid="status-search">'
        f'{esc(search_words(status, model_coming, rate))}</span>',
    ]
    unread = status.get("unread") or {}
    if unread.get("drawers"):
        parts.append(f'<span data-testid="status-unread">{esc(unread_words(unread))}</span>')
    detail = [f'{plural(status["entities"], "entity", "entities")} in the knowledge graph',
              f'embedder: {emb.get("name") or "none yet"}'
              + (f' on {emb["runtime"]}' if emb.get("runtime") else "")
              + f' ({status.get("embedded", 0):,}/{plural(status["drawers"], "drawer")} '
              'embedded)']
    warnings = []
    if storage is not None:
        st = storage.get("status") or {}
        saved = st.get("last_saved")
        when = time.strftime("%H:%M:%S", time.localtime(saved)) if saved else "not yet"
        kept = KEPT.get(storage["backend"], f'saved ({storage["backend"]})')
        parts.append(f'<span data-testid="status-storage">{esc(kept)}</span>')
        detail.append(f'storage: {storage["backend"]} · last save {when}')
        if st.get("damaged"):
            warnings.append(f'<span class="pz-warn" data-testid="status-damaged">'
                            f'{esc(damaged_words(st))}</span>')
        else:
            if st.get("read_only"):
                warnings.append('<span class="pz-warn" data-testid="status-read-only">'
                                "read-only: this palace is open in another tab</span>")
            if st.get("problem"):
                warnings.append(f'<span class="pz-warn" data-testid="status-problem">'
                                f'{esc(st["problem"])}</span>')
    details = (f'<details class="pz-status-detail"><summary>Details</summary>'
               f'<span data-testid="status-detail">{esc(" · ".join(detail))}</span></details>')
    return ('<div class="pz-status-line" data-testid="palace-status">'
            + " · ".join(parts + warnings) + details + "</div>")


class StatusLine:
    """One HTML pane, reloaded after every change."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.pane = html_pane("status")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the palace and storage status (two operation calls)."""
        status = self.ctx.call("palace_status")
        storage = None
        # A host with a library (the browser worker) attaches the language model after the
        # first render, so "no embedder" there means it is still loading.
        library = getattr(self.ctx.bridge, "library", None) is not None
        if library:
            storage = self.ctx.call("storage_status")
        indexing = self.ctx.bridge.hooks.indexing
        rate = indexing() if indexing is not None else None
        self.pane.object = status_html(status, storage, model_coming=library, rate=rate)

"""Communities as the views show them: loaded from the ``communities`` operation when a view
wants them, a colour each for the map, and their list.

Finding communities costs a k-NN over every drawer (about 11 s for 20,000 drawers under
CPython, 72 s in the browser's worker, almost all of it the k-NN's matrix products; the
engine caches the result until the drawers change), so nothing asks
for them at boot: the map loads them when its rooms are coloured by community, and the search
filter lists them once they were loaded, or at once in a palace of at most
:data:`EAGER_DRAWERS` drawers (where they take milliseconds). A change to the palace can
renumber them, so after one a bigger palace's search filter offers only (all) again until the
map asks for them anew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palazzo.hosts.ui.common import Context, esc, plural

# Small enough to find communities again on every change of the palace (each search-filter
# refresh): a 2,000-drawer palace took 0.4-0.7 s a time under CPython, several times that in
# the worker; 200 drawers take milliseconds.
EAGER_DRAWERS = 200
LISTED = 1_000  # communities asked for (the operation's most); the smallest ones go unlisted
# Distinct colours for the largest communities (Tableau 10 and two more, readable on white);
# the smaller ones share OTHER.
COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac", "#1f3b73", "#8cd17d")
OTHER = "#d9d9d9"
LEGEND = 12  # communities listed under the map, the largest first


def community_colour(community_id: int) -> str:
    """Return the colour of community ``community_id`` on the map (the largest get their own,
    the rest :data:`OTHER`)."""
    return COLOURS[community_id] if 0 <= community_id < len(COLOURS) else OTHER


def label(c: dict[str, Any]) -> str:
    """Return a community as one line of text (an option, a tooltip): id, name, size."""
    return f'{c["id"]}: {c["name"]} ({plural(c["size"], "drawer")})'


def room_community(found: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Return, for each (wing, room), the community holding most of its drawers (the lower id
    on a tie: the larger community), from the ``communities`` operation's answer.
    O(sum of rooms listed per community)."""
    best: dict[tuple[str, str], tuple[int, int, dict[str, Any]]] = {}
    for c in found["communities"]:
        for r in c["rooms"]:
            key = (r["wing"], r["room"])
            score = (r["drawers"], -c["id"])
            if key not in best or score > best[key][:2]:
                best[key] = (*score, c)
    return {k: v[2] for k, v in best.items()}


def legend_html(found: dict[str, Any]) -> str:
    """Return the list of the largest communities under the map: a swatch of its colour, its
    name (its most distinctive words), its size and wings; all text escaped."""
    rows = []
    for c in found["communities"][:LEGEND]:
        wings = ", ".join(f"{w} ({n})" for w, n in sorted(c["wings"].items(),
                                                          key=lambda x: (-x[1], x[0])))
        rows.append(
            f'<tr><td><span class="pz-swatch" style="background:{community_colour(c["id"])}">'
            f'</span> {c["id"]}</td><td>{esc(c["name"])}</td><td>{c["size"]}</td>'
            f'<td>{esc(wings)}</td></tr>')
    more = found["total"] - min(LEGEND, len(found["communities"]))
    tail = (f'<p class="pz-msg">…and {plural(more, "smaller community", "smaller communities")}'
            ' (grey on the map).</p>' if more > 0 else "")
    return ('<table class="pz-table" data-testid="community-list"><thead><tr><th>#</th>'
            '<th>about</th><th>drawers</th><th>wings</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>" + tail)


class Communities:
    """The palace's communities for every view of one document, loaded on demand."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.found: dict[str, Any] | None = None  # the last answer (None: not loaded)
        self.stale = True
        self._listeners: list[Callable[[], None]] = []
        # Registered first, so the views' own refreshes (registered after) see it stale.
        ctx.on_refresh(self._changed)

    def _changed(self) -> None:
        self.stale = True

    def on_load(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` after the communities were loaded anew."""
        self._listeners.append(fn)

    def get(self, want: bool = False) -> dict[str, Any] | None:
        """Return the ``communities`` answer: the kept one while nothing changed, else a new
        one when ``want`` is true or the palace is small; None otherwise (not known now, and
        not worth finding for this caller). Errors propagate (callers show them)."""
        if self.found is not None and not self.stale:
            return self.found
        if not (want or self._small()):
            return None
        self.found = self.ctx.call("communities", {"limit": LISTED})
        self.stale = False
        for fn in self._listeners:
            fn()
        return self.found

    def _small(self) -> bool:
        return sum(w["drawers"] for w in self.ctx.call("list_wings")["wings"]) <= EAGER_DRAWERS

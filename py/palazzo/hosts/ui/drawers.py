"""Search, open, edit, delete (with undo) and add drawers.

Search shows the hits worth showing (:func:`palazzo.hosts.ui.hits.worth_showing`) as cards:
a button named after the drawer's place opens it (by mouse or keyboard: it is a real button),
under it where the drawer came from (a file's path and part, or a conversation's title,
speaker and time: :func:`palazzo.hosts.ui.hits.source_line`), an escaped snippet with the
query's words marked and when the drawer was added, then "Read the conversation" (for a
conversation turn) and "Show on the map". The opened drawer fills a side pane (below the
results on a narrow screen): its place, source and time, its whole text, the same two actions
(the conversation shows there: the turns around the drawer's, in the order said, its own
marked, with Earlier and Later for more), an editor, "Delete…" then "Yes, delete" /
"Cancel", an Undo after a delete, and its neighbours (similar drawers and the others of its
room), each a button that opens it.
Heat from use: a search, an opened drawer, "Copy text" (the page copies; a worker has no
clipboard) and "Helpful" each deposit on the path to the drawer (one ``pheromone_use``, the
rule in :mod:`palazzo.ops.pheromone`), and only the map and the Heat tab reload their heat
(``Context.heated``). A palace open read-only here still searches and opens; Copy and Helpful
say why they left no heat.
Adding a drawer checks wing, room and text as they are typed, says what is wrong under the
field, keeps the Add button disabled until the form is valid, and warns about exact and near
duplicates (``check_duplicate``) before it writes; a second click adds anyway.
"""

from __future__ import annotations

import asyncio
import time
import unicodedata
from collections.abc import Callable
from typing import Any

import panel as pn

from palazzo.core.model import MAX_CONTENT, MAX_NAME, clean_name
from palazzo.errors import PalazzoError, ValidationError
from palazzo.hosts.ui.common import (
    Context,
    esc,
    html_pane,
    message,
    plural,
    set_options,
    soon,
    verb,
)
from palazzo.hosts.ui.communities import Communities, label
from palazzo.hosts.ui.hits import (
    MIN_COSINE,
    matched_words,
    moment,
    snippet_html,
    source_line,
    when,
    worth_showing,
)

ALL = "(all)"
ANY = -1  # the community filter's "(all)" (community ids are 0 and up)
LIMIT = 10
NEIGHBOURS = 4
LABEL = 60  # characters of a drawer's text on a neighbour's button
AROUND = 5  # turns shown before and after a drawer's turn when its conversation is read
MORE = 10  # turns Earlier / Later add
TURN_CHARS = 1000  # characters of another turn's text shown in the conversation (cut: "…")
EMPTY_QUERY = "Type what you are looking for, then press Enter."
LEARNED = 1.0  # the Search tab's weight of query trails (docs/benchmarks.md, learning)
HELPED = "This helped"  # a result card's button (pheromone_use helpful, with the query)
MARKED = "Marked helpful"  # ... once it was clicked
USE_HITS = 50  # hits a search deposits exploration on (pheromone_use takes at most 50)
# Copy the editor's text (the drawer's, unless edited) in the page, on the click: a worker has
# no clipboard. Without the Clipboard API (a page not served over https) a selected textarea
# and execCommand copy instead.
COPY_JS = """
const value = text.value || "";
const fallback = () => {
  const area = document.createElement("textarea");
  area.value = value;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  try { document.execCommand("copy"); } finally { area.remove(); }
};
if (navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(value).catch(fallback);
} else {
  fallback();
}
"""
# Styles of the panes this module fills (each HTML pane has a shadow root of its own).
CARD_CSS = """
.pz-card-body { margin: 0 0 4px 4px; }
.pz-snippet { white-space: pre-wrap; }
mark { background: #fff0a0; color: inherit; padding: 0 1px; }
.pz-when { color: #555; font-size: 0.85em; }
.pz-drawer-text { white-space: pre-wrap; border: 1px solid #ddd; padding: 8px; }
.pz-field-error { color: #a40000; margin: 0 0 6px 0; }
.pz-msg { margin: 4px 0; }
.pz-error { color: #a40000; }
.pz-ok { color: #226622; }
.pz-source { color: #24476b; font-size: 0.9em; margin: 0 0 2px 0; overflow-wrap: anywhere; }
.pz-conversation-title { font-weight: 600; margin: 8px 0 4px 0; overflow-wrap: anywhere; }
.pz-turns { list-style: none; margin: 0; padding: 0; }
.pz-turn { border-left: 3px solid #d5dbe3; padding: 2px 0 2px 8px; margin: 0 0 8px 0; }
.pz-turn-here { border-left: 5px solid #1a5fb4; background: #eef4fc; }
.pz-turn-head { color: #444; font-size: 0.85em; }
.pz-turn-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.pz-more { color: #555; font-size: 0.85em; font-style: italic; margin: 2px 0 6px 0; }
"""
# An empty slot's button (a card or a neighbour not in use: disabled, with no name) is not
# drawn, so neither eyes nor a screen reader meet a blank button; a CSS rule on the state
# the page already shows, so it comes back with the name (see the note below).
SLOT_CSS = ".bk-btn:disabled { display: none; }"
SIDE = {"flex": "1 1 340px", "min-width": "0"}  # two columns above ~700 px, one below
# Parts that come and go are disabled (an empty card: its button disabled, with no label),
# not hidden: in the worker-rendered page a part hidden with ``visible``, a class or an inline
# display style was not shown again (Chromium), while ``disabled`` and labels do update.


def _button(widget: Any) -> Any:
    return widget.objects[0] if isinstance(widget, pn.Column) else widget


def show(widget: Any, on: bool) -> None:
    """Make ``widget`` (a button, or a card whose first part is its button) usable or not."""
    _button(widget).disabled = not on


def shown(widget: Any) -> bool:
    """Return whether ``widget`` is usable (see :func:`show`)."""
    return not _button(widget).disabled


def hideable(widget: Any, on: bool = False) -> Any:
    """Return ``widget``, usable or not (see :func:`show`)."""
    show(widget, on)
    return widget


def _pane(testid: str, text: str = "") -> pn.pane.HTML:
    pane = html_pane(testid, text)
    pane.stylesheets = [CARD_CSS]
    return pane


def card_html(hit: dict[str, Any], query: str, created_at: float | None,
              now: float | None = None) -> str:
    """Return a result card's body: where the drawer came from (its ``source``), the
    snippet with the query's words marked, when the drawer was added and a plain hint of
    why it matched (no raw scores). All text escaped."""
    words = matched_words(hit["content"], query)
    why = (f'matches {", ".join(words)}' if words else "similar in meaning")
    added = when(created_at, now)
    meta = " · ".join(p for p in (f"added {added}" if added else "", why) if p)
    origin = source_line(hit.get("source"))
    return (f'<div class="pz-card-body" data-testid="search-result" '
            f'data-drawer="{esc(hit["drawer_id"])}">'
            + (f'<div class="pz-source" data-testid="search-source">{esc(origin)}</div>'
               if origin else "")
            + f'<div class="pz-snippet" data-testid="search-snippet">'
            f'{snippet_html(hit["content"], query)}</div>'
            f'<div class="pz-when">{esc(meta)}</div></div>')


def conversation_html(around: dict[str, Any]) -> str:
    """Return the turns of a ``conversation_around`` answer as HTML, in the order they were
    said: each with its speaker, time and place in the conversation, the asked-for turn
    marked (``aria-current``, "this drawer") and shown whole, the others cut at
    :data:`TURN_CHARS`; a line says when earlier or later turns are not shown. All text
    escaped. Cost: O(text shown)."""
    turns = around["turns"]
    title = around.get("title") or around["conversation"]
    head = (f"Conversation “{title}”: {len(turns)} of its {around['total']} "
            f"message{'' if around['total'] == 1 else 's'}, in the order they were said")
    items = []
    for t in turns:
        here = bool(t.get("here"))
        text = t.get("text")
        if text is None:
            body = "<em>(the text of this message was deleted)</em>"
        else:
            cut = not here and len(text) > TURN_CHARS
            body = esc(text[:TURN_CHARS] + "…" if cut else text)
            if t.get("cut"):
                body += " <em>(cut: the rest is in its drawer)</em>"
        versions = t.get("versions") or 1
        parts = [t.get("role") or "", moment(t.get("created_at")), f"message {t['turn']}",
                 f"one of {versions} versions" if versions > 1 else "",
                 "this drawer" if here else ""]
        items.append(
            f'<li class="pz-turn{" pz-turn-here" if here else ""}" '
            f'data-testid="conversation-turn" data-role="{esc(t.get("role"))}" '
            f'data-drawer="{esc(t.get("drawer_id") or "")}" '
            f'data-here="{"true" if here else "false"}"'
            + (' aria-current="true"' if here else "")
            + f'><div class="pz-turn-head">{esc(" · ".join(p for p in parts if p))}</div>'
            f'<div class="pz-turn-text">{body}</div></li>')
    before = ('<p class="pz-more" data-testid="conversation-earlier">Earlier messages are '
              'not shown (Earlier shows them).</p>' if around.get("earlier") else "")
    after = ('<p class="pz-more" data-testid="conversation-later">Later messages are not '
             'shown (Later shows them).</p>' if around.get("later") else "")
    return (f'<section class="pz-conversation" data-testid="conversation" '
            f'aria-label="{esc(head)}"><p class="pz-conversation-title" '
            f'data-testid="conversation-title">{esc(head)}.</p>{before}'
            f'<ol class="pz-turns">{"".join(items)}</ol>{after}</section>')


class SearchView:
    """Query, wing/room/community filters, result cards, and the opened drawer beside them."""

    def __init__(self, ctx: Context, communities: Communities | None = None,
                 on_map: Callable[[str, str, str], None] | None = None) -> None:
        self.ctx = ctx
        self.communities = communities or Communities(ctx)
        # "Show on the map": the app switches to the map with (wing, room, drawer id) marked.
        self.on_map = on_map
        self.query = pn.widgets.TextInput(name="Search", placeholder="What do you remember?",
                                          css_classes=["pz-search-query"],
                                          sizing_mode="stretch_width",
                                          styles={"flex": "1 1 220px"})
        self.wing = pn.widgets.Select(name="Wing", options=[ALL], width=150,
                                      css_classes=["pz-search-wing"])
        self.room = pn.widgets.Select(name="Room", options=[ALL], width=150,
                                      css_classes=["pz-search-room"])
        self.community = pn.widgets.Select(name="Community", options={ALL: ANY}, width=200,
                                           css_classes=["pz-search-community"])
        self.go = pn.widgets.Button(name="Search", button_type="primary", disabled=True,
                                    css_classes=["pz-search-go"], align="end")
        self.hint = _pane("search-hint", message(EMPTY_QUERY, "info", "search-hint"))
        self.summary = _pane("search-summary")
        # Cards and neighbour buttons are made once and filled or hidden: models made after
        # the page has rendered do not reach it from the worker (tested in Chromium).
        self.card_ids: list[str | None] = [None] * LIMIT
        self.card_query: str | None = None  # the search the cards answer
        self.card_hits: list[dict[str, Any] | None] = [None] * LIMIT
        self.cards = pn.Column(*(self._card(i) for i in range(LIMIT)),
                               sizing_mode="stretch_width", css_classes=["pz-cards"])
        self.meta = _pane("drawer-meta", message("Click a result to open it here.", "info",
                                                  "drawer-empty"))
        self.read_it = hideable(pn.widgets.Button(
            name="Read the conversation", css_classes=["pz-drawer-read"],
            description="Show the messages around this one, in the order they were said",
            stylesheets=[SLOT_CSS]))
        self.map_it = hideable(pn.widgets.Button(
            name="Show on the map", css_classes=["pz-drawer-map", "pz-go-map"],
            description="Open the map with this drawer's room selected",
            stylesheets=[SLOT_CSS]))
        # Heat from use: Copy and Helpful deposit on the path to the drawer (pheromone_use).
        self.copy = pn.widgets.Button(
            name="Copy text", css_classes=["pz-drawer-copy"], disabled=True,
            description="Copy the text in the editor below to the clipboard")
        self.helpful = pn.widgets.Button(
            name="Helpful", css_classes=["pz-drawer-helpful"], disabled=True,
            description="Count this drawer as helpful (heat on the map)")
        self.used = _pane("drawer-used")
        self._came_from: str | None = None  # the drawer the opened one was reached from
        self._found_by: str | None = None  # the search whose results it was opened from
        self.conversation = _pane("drawer-conversation")
        self.earlier = hideable(pn.widgets.Button(
            name="Earlier messages", css_classes=["pz-conversation-earlier"],
            stylesheets=[SLOT_CSS]))
        self.later = hideable(pn.widgets.Button(
            name="Later messages", css_classes=["pz-conversation-later"],
            stylesheets=[SLOT_CSS]))
        self._place: tuple[str, str] | None = None  # the opened drawer's wing and room
        self._around: tuple[int, int] = (AROUND, AROUND)  # turns shown before and after
        self.text = pn.widgets.TextAreaInput(name="Edit the text", height=160,
                                             sizing_mode="stretch_width",
                                             css_classes=["pz-drawer-edit"])
        self.save = pn.widgets.Button(name="Save changes", css_classes=["pz-drawer-save"])
        self.ask = pn.widgets.Button(name="Delete…", button_type="danger",
                                     css_classes=["pz-drawer-delete"])
        self.ask = hideable(self.ask, True)
        self.yes = hideable(pn.widgets.Button(name="Yes, delete", button_type="danger",
                                              css_classes=["pz-drawer-delete-yes"]))
        self.no = hideable(pn.widgets.Button(name="Cancel",
                                             css_classes=["pz-drawer-delete-no"]))
        self.note = _pane("drawer-note")
        self.undo = hideable(pn.widgets.Button(name="Undo", css_classes=["pz-drawer-undo"]))
        self.near_title = _pane("drawer-neighbours")
        self.near_ids: list[str | None] = [None] * (2 * NEIGHBOURS)
        self.near = pn.Column(*(self._neighbour(i) for i in range(2 * NEIGHBOURS)),
                              sizing_mode="stretch_width", css_classes=["pz-neighbours"])
        self.opened: str | None = None
        self.now: Callable[[], float] = time.time  # "added 5 minutes ago" counts from it
        self.shown: list[dict[str, Any]] = []  # the hits on the cards, best first
        self._q = ""
        self._deleted: dict[str, Any] | None = None  # the last deleted drawer, for Undo
        self.go.on_click(lambda _e: self.submit())
        self.query.param.watch(self._typed, "value_input")
        self.query.param.watch(self._entered, "value")
        self.wing.param.watch(lambda _e: self._rooms(), "value")
        self.save.on_click(lambda _e: self._save())
        self.ask.on_click(lambda _e: self._confirming(True))
        self.no.on_click(lambda _e: self._confirming(False))
        self.yes.on_click(lambda _e: self._delete())
        self.undo.on_click(lambda _e: self._undo())
        self.read_it.on_click(lambda _e: self.read(self.opened))
        self.map_it.on_click(lambda _e: self.locate(self.opened, self._place))
        # The page copies (a worker has no clipboard), in the click itself (browsers allow
        # a copy only there); the worker deposits.
        self.copy.js_on_click(args={"text": self.text}, code=COPY_JS)
        self.copy.on_click(lambda _e: self.mark("copy"))
        self.helpful.on_click(lambda _e: self.mark("helpful"))
        self.earlier.on_click(lambda _e: self._more(MORE, 0))
        self.later.on_click(lambda _e: self._more(0, MORE))
        self._editable(False)
        results = pn.Column(self.summary, self.cards, sizing_mode="stretch_width",
                            styles=SIDE, css_classes=["pz-search-list"])
        self.detail = pn.Column(
            self.meta, pn.FlexBox(self.read_it, self.map_it, self.copy, self.helpful,
                                  flex_wrap="wrap"), self.used,
            self.earlier, self.conversation, self.later, self.text,
            pn.FlexBox(self.save, self.ask, self.yes, self.no, flex_wrap="wrap"),
            pn.FlexBox(self.note, self.undo, flex_wrap="wrap", align_items="center"),
            self.near_title, self.near, sizing_mode="stretch_width", styles=SIDE,
            css_classes=["pz-drawer-pane"])
        self.view = pn.Column(
            pn.FlexBox(self.query, self.wing, self.room, self.community, self.go,
                       flex_wrap="wrap",
                       gap="0 8px", align_items="flex-end", sizing_mode="stretch_width"),
            self.hint,
            pn.FlexBox(results, self.detail, flex_wrap="wrap", gap="8px 16px",
                       align_items="flex-start", sizing_mode="stretch_width"),
            sizing_mode="stretch_width")
        ctx.on_refresh(self._filters)
        self.communities.on_load(self._community_options)
        self._filters()

    # -- the query ------------------------------------------------------------------------
    def _typed(self, event: Any) -> None:
        self._q = event.new or ""
        empty = not self._q.strip()
        self.go.disabled = empty
        self.hint.object = message(EMPTY_QUERY, "info", "search-hint") if empty else ""

    def _entered(self, event: Any) -> None:
        self._typed(event)
        self.submit()

    def submit(self) -> None:
        """Search for what was typed, as :meth:`run`; where the host computes vectors apart
        from the engine (the browser's embedding worker), first have the query's vector
        computed, so the search ranks by meaning as well as words. Returns None (the cards
        show the hits)."""
        prepare = self.ctx.bridge.hooks.prepare_texts
        q = self._q.strip()
        if prepare is None or not q:
            self.explored(self.run())
            return

        async def prepared() -> None:
            try:
                await prepare([q])
            except Exception as err:  # noqa: BLE001 - words alone still find things
                self.hint.object = message(f"searching by words only: {err}", "info",
                                           "search-hint")
            self.explored(self.run())

        asyncio.ensure_future(prepared())

    def _filters(self) -> None:
        set_options(self.wing, [ALL, *self.ctx.wings()])
        self._rooms()
        self._community_options()

    def packages_ready(self) -> None:
        """Offer the communities again once the deferred packages are in: in the browser the
        first refresh comes before NetworkX has loaded, so a small palace's filter would
        offer only (all) until its next change. Returns None. Cost: as the filter's refresh
        (finding the communities of a palace of at most ``EAGER_DRAWERS`` drawers)."""
        self._community_options()

    def _community_options(self) -> None:
        """Offer the communities as a filter once they are known (see
        :mod:`palazzo.hosts.ui.communities`: a big palace's are found when the map is
        coloured by them); until then, or when finding them failed, only (all)."""
        try:
            found = self.communities.get()
        except Exception:  # noqa: BLE001 - the filter is optional; the map shows the error
            found = None
        listed = found["communities"] if found else []
        set_options(self.community, {ALL: ANY, **{label(c): c["id"] for c in listed}})

    def _rooms(self) -> None:
        rooms = [r["name"] for r in self.ctx.rooms() if r["wing"] == self.wing.value]
        set_options(self.room, [ALL, *rooms])

    def run(self) -> list[dict[str, Any]] | None:
        """Search with the current query and filters and show the hits worth showing as
        cards; return those hits (None when the query is empty or the search failed).
        Cost: one ``search`` plus one ``get_drawer`` a card (for its time)."""
        q = self._q.strip()
        if not q:
            self.hint.object = message(EMPTY_QUERY, "error", "search-hint")
            return None
        # What helped before counts: a result marked for this search, or one near it, ranks
        # higher (query trails; nothing changes for a search nobody marked anything for).
        args: dict[str, Any] = {"query": q, "limit": LIMIT, "pheromone": LEARNED}
        if self.wing.value != ALL:
            args["wing"] = self.wing.value
            if self.room.value != ALL:
                args["room"] = self.room.value
        if self.community.value not in (None, ANY):
            args["community"] = self.community.value
        out = self.ctx.attempt(self.summary, lambda: self.ctx.call("search", args),
                               testid="search-error")
        if out is None:
            self._fill_cards([], q)
            return None
        self.shown = worth_showing(out["results"])
        self._fill_cards(self.shown, q)
        self.summary.object = self._summary(q, len(self.shown),
                                            "wing" in args or "community" in args,
                                            by_words=bool(out.get("by_words")))
        return self.shown

    @staticmethod
    def _summary(q: str, n: int, filtered: bool, by_words: bool = False) -> str:
        # A query in a script the language model does not read (Korean for English MiniLM)
        # is ranked by its words alone: say so, or the person wonders where meaning went.
        words = (" Ranked by its words: semantic search reads English only."
                 if by_words else "")
        if n:
            return message(f'{plural(n, "drawer")} {verb(n, "matches", "match")} “{q}”.{words}',
                           "info", "search-summary")
        tip = ("Try other words, or choose (all) wings and communities." if filtered
               else "Try other words, fewer words, or words the drawer itself uses.")
        return message(f"No drawer matches “{q}”. {tip}", "info", "search-empty")

    def _card(self, i: int) -> pn.Column:
        """Return the empty, hidden card slot ``i``: its place button, its body and its two
        actions (read the conversation, show on the map)."""
        button = pn.widgets.Button(name="", button_type="light", css_classes=["pz-result-open"],
                                   description="Open this drawer beside the results",
                                   stylesheets=[SLOT_CSS])
        button.on_click(lambda _e: self.open(self.card_ids[i], found_by=self.card_query))
        read = hideable(pn.widgets.Button(
            name="Read the conversation", css_classes=["pz-result-read"],
            description="Open this drawer with the messages around it",
            stylesheets=[SLOT_CSS]))
        read.on_click(lambda _e: self.read(self.card_ids[i], found_by=self.card_query))
        where = hideable(pn.widgets.Button(
            name="Show on the map", css_classes=["pz-result-map", "pz-go-map"],
            description="Open the map with this drawer's room selected",
            stylesheets=[SLOT_CSS]))
        where.on_click(lambda _e: self._card_on_map(i))
        helped = hideable(pn.widgets.Button(
            name=HELPED, css_classes=["pz-result-helped"],
            description="Say this result answered the search: searches like it rank it "
                        "higher when they ask for what helped", stylesheets=[SLOT_CSS]))
        helped.on_click(lambda _e: self._card_helped(i))
        return hideable(pn.Column(button, _pane("search-card"),
                                  pn.FlexBox(read, where, helped, flex_wrap="wrap"),
                                  sizing_mode="stretch_width", css_classes=["pz-card"]))

    def _card_helped(self, i: int) -> dict[str, Any] | None:
        """Mark card ``i``'s drawer helpful for the search the cards answer (a trail from
        that query, and heat on the path to the drawer: ``pheromone_use``); the card's
        button then says so, and a second click does nothing (a slot's disabled button is
        hidden: :func:`show`). Returns the answer (None when it failed, the summary says
        why, or was marked already)."""
        did = self.card_ids[i]
        button = self.cards.objects[i].objects[2].objects[2]
        if did is None or button.name == MARKED:
            return None
        out = self.ctx.attempt(self.summary, lambda: self.deposit(
            "helpful", [did], query=self.card_query), testid="search-error")
        if out is not None:
            button.name = MARKED
        return out

    def _card_on_map(self, i: int) -> None:
        hit = self.card_hits[i]
        if hit is not None:
            self.locate(hit["drawer_id"], (hit["wing"], hit["room"]))

    def _fill_cards(self, hits: list[dict[str, Any]], q: str) -> None:
        """Show ``hits`` on the first card slots and empty and hide the others. Cost: none
        beyond the hits (each carries its source and time); a hit without a source costs one
        ``get_drawer`` for its time."""
        self.card_query = q.strip() or None
        for i, card in enumerate(self.cards.objects):
            button, body, actions = card.objects
            read, where, helped = actions.objects
            hit = hits[i] if i < len(hits) else None
            helped.name = HELPED
            show(helped, hit is not None)
            self.card_ids[i] = None if hit is None else hit["drawer_id"]
            self.card_hits[i] = hit
            if hit is None:
                body.object = ""
                button.name = ""
                show(card, False)
                show(read, False)
                show(where, False)
                continue
            source = hit.get("source")
            created = None if source is None else source.get("created_at")
            if source is None:
                try:
                    created = self.ctx.call("get_drawer", {"drawer_id": hit["drawer_id"]})[
                        "drawer"]["created_at"]
                except Exception:  # noqa: BLE001 - a card without its time is still a card
                    created = None
            button.name = f'{hit["wing"]} / {hit["room"]}'
            body.object = card_html(hit, q, created, self.now())
            show(card, True)
            show(read, is_turn(source))
            show(where, self.on_map is not None)

    # -- the opened drawer ----------------------------------------------------------------
    def open(self, drawer_id: str | None, came_from: str | None = None,
             use: bool = True, found_by: str | None = None) -> dict[str, Any] | None:
        """Show the whole drawer ``drawer_id`` in the side pane, with its neighbours, for
        reading and editing; return the drawer dict (None when it could not be read).
        Opening is a use (``use``; not when the pane shows a drawer again after an edit or
        an undo): it deposits on the path to the drawer, on the link from drawer
        ``came_from`` when it was reached from there, and, opened from the results of the
        search ``found_by``, a trail from that search to it (:meth:`deposit`)."""
        if not drawer_id:
            return None
        out = self.ctx.attempt(self.note, lambda: self.ctx.call("get_drawer",
                                                                {"drawer_id": drawer_id}),
                               testid="drawer-note")
        if out is None:
            return None
        d = out["drawer"]
        self.opened = d["id"]
        self._place = (d["wing"], d["room"])
        added = when(d["created_at"], self.now())
        origin = source_line(out.get("source"))
        self.meta.object = (
            f'<h3 data-testid="drawer-title">{esc(d["wing"])} / {esc(d["room"])}</h3>'
            + (f'<div class="pz-source" data-testid="drawer-source">{esc(origin)}</div>'
               if origin else "")
            + f'<div class="pz-when" data-testid="drawer-when">'
            f'{esc("added " + added) if added else ""}</div>'
            f'<div class="pz-drawer-text" data-testid="drawer-text">{esc(d["content"])}</div>')
        self.text.value = d["content"]
        self.note.object = ""
        self.conversation.object = ""
        self._conversation(None)
        show(self.read_it, is_turn(out.get("source")))
        show(self.map_it, self.on_map is not None)
        self._confirming(False)
        self._editable(True)
        self._neighbours(d)
        self._came_from = came_from
        if use:  # (shown again after an edit: still the drawer that search found)
            self._found_by = found_by
        self.used.object = ""
        self.copy.disabled = False
        self.helpful.name, self.helpful.disabled = "Helpful", False
        if use:
            self.deposit("open", [d["id"]], came_from, quiet=True, query=self._found_by)
        return d

    # -- heat from use (the rule: palazzo.ops.pheromone, pheromone_use) -------------------
    def deposit(self, action: str, drawer_ids: list[str], came_from: str | None = None,
                quiet: bool = False, query: str | None = None) -> dict[str, Any] | None:
        """Deposit what ``action`` (search, open, copy, helpful) on ``drawer_ids`` says
        (one ``pheromone_use`` call, one journal record) and have the map and the Heat tab
        reload their heat soon after; return the answer. A PalazzoError (a palace open
        read-only here) propagates, or gives None when ``quiet``: a search or an open works
        without leaving heat. Cost: under a ms to a few ms, plus one ``pheromone_heat`` for
        the views (about 0.1 s at 20,000 drawers under CPython)."""
        args: dict[str, Any] = {"action": action, "drawer_ids": drawer_ids[:USE_HITS]}
        if came_from:
            args["from"] = came_from
        if query and action != "search":  # open, copy, helpful: a trail from that search
            args["query"] = query
        try:
            out = self.ctx.call("pheromone_use", args)
        except PalazzoError:
            if quiet:
                return None
            raise
        soon(lambda: self.ctx.attempt(self.used, self.ctx.heated, testid="drawer-used"))
        return out

    def explored(self, hits: list[dict[str, Any]] | None) -> None:
        """Deposit exploration on the ``hits`` a search showed (none: nothing). Returns
        None."""
        if hits:
            self.deposit("search", [h["drawer_id"] for h in hits], quiet=True)

    def mark(self, action: str) -> dict[str, Any] | None:
        """Count the opened drawer as copied (``copy``: the page has put its text on the
        clipboard) or as helpful (``helpful``), say so under it, and return the
        ``pheromone_use`` answer (None when no drawer is open or the deposit failed)."""
        if self.opened is None:
            return None
        try:
            out = self.deposit(action, [self.opened], self._came_from, query=self._found_by)
        except PalazzoError as err:
            said = ("Copied the text to the clipboard, but the copy left no heat: "
                    if action == "copy" else "Not marked as helpful: ")
            self.used.object = message(said + str(err), "error", "drawer-used")
            return None
        if action == "helpful":
            self.helpful.name, self.helpful.disabled = "Marked helpful", True
            done = ("Marked as helpful: this drawer and its room now count as more valuable "
                    "(exploitation heat on the map)"
                    + (", and searches like “" + self._found_by + "” will remember it."
                       if self._found_by else "."))
        else:
            done = ("Copied the text to the clipboard; the copy counts as a use of this "
                    "drawer (exploitation heat on the map).")
        self.ctx.confirm(self.used, done, "drawer-used")
        return out

    def read(self, drawer_id: str | None, before: int = AROUND,
             after: int = AROUND, found_by: str | None = None) -> dict[str, Any] | None:
        """Open drawer ``drawer_id`` (unless it is open; ``found_by`` as for :meth:`open`)
        and show the conversation around its turn under it: up to ``before`` turns before
        and ``after`` after, in the order said, its own marked; return the
        ``conversation_around`` answer (None when the drawer is no turn or could not be
        read: the pane says why). Cost: one ``conversation_around`` (plus :meth:`open`'s
        calls when it was not open)."""
        if not drawer_id:
            return None
        if drawer_id != self.opened and self.open(drawer_id, found_by=found_by) is None:
            return None
        self._around = (before, after)
        out = self.ctx.attempt(self.conversation, lambda: self.ctx.call(
            "conversation_around", {"drawer_id": self.opened, "before": before,
                                    "after": after}), testid="conversation-error")
        self._conversation(out)
        return out

    def _conversation(self, out: dict[str, Any] | None) -> None:
        """Show a ``conversation_around`` answer (None: leave the pane as it is, empty or
        showing why the call failed) and offer Earlier / Later when the conversation goes on
        past it."""
        if out is not None:
            self.conversation.object = conversation_html(out)
        show(self.earlier, bool(out and out["earlier"]))
        show(self.later, bool(out and out["later"]))

    def _more(self, before: int, after: int) -> None:
        """Show ``before`` more turns before and ``after`` more after the ones shown."""
        b, a = self._around
        self.read(self.opened, b + before, a + after)

    def locate(self, drawer_id: str | None, place: tuple[str, str] | None) -> None:
        """Show drawer ``drawer_id`` of ``place`` (wing, room) on the map (the app switches
        to it with the room selected and the drawer marked). Returns None."""
        if drawer_id and place is not None and self.on_map is not None:
            self.on_map(place[0], place[1], drawer_id)

    def neighbours(self, d: dict[str, Any]) -> list[dict[str, Any]]:
        """Return up to :data:`NEIGHBOURS` similar drawers (a search with the drawer's text,
        close in meaning, or the best word matches when there are no vectors) and up to as
        many others of its room (newest first), each ``{drawer_id, wing, room, content,
        why}``. Cost: one ``search`` and one ``list_drawers``."""
        seen = {d["id"]}
        found: list[dict[str, Any]] = []
        hits = self.ctx.call("search", {"query": d["content"][:1000],
                                        "limit": NEIGHBOURS + 1})["results"]
        for h in hits:
            cos = h["scores"].get("vector")
            close = cos >= MIN_COSINE if cos is not None else True
            if h["drawer_id"] not in seen and close and len(found) < NEIGHBOURS:
                seen.add(h["drawer_id"])
                found.append({**h, "why": "similar"})
        same = self.ctx.call("list_drawers", {"wing": d["wing"], "room": d["room"],
                                              "limit": NEIGHBOURS + len(seen)})["drawers"]
        for r in [r for r in same if r["id"] not in seen][:NEIGHBOURS]:
            found.append({"drawer_id": r["id"], "wing": r["wing"], "room": r["room"],
                          "content": r["snippet"], "why": "same room"})
        return found

    def _neighbours(self, d: dict[str, Any]) -> None:
        near = self.ctx.attempt(self.note, lambda: self.neighbours(d), testid="drawer-note")
        near = near or []
        self.near_title.object = (
            '<h4 data-testid="drawer-neighbours">Nearby drawers</h4>' if near else
            '<p data-testid="drawer-neighbours">No nearby drawers.</p>')
        self._fill_neighbours(near)

    def _neighbour(self, i: int) -> pn.widgets.Button:
        """Return the empty, hidden neighbour button ``i``."""
        b = hideable(pn.widgets.Button(name="", button_type="light", css_classes=["pz-neighbour"],
                                       sizing_mode="stretch_width", stylesheets=[SLOT_CSS]))
        b.on_click(lambda _e: self.open(self.near_ids[i], came_from=self.opened))
        return b

    def _fill_neighbours(self, near: list[dict[str, Any]]) -> None:
        for i, b in enumerate(self.near.objects):
            n = near[i] if i < len(near) else None
            self.near_ids[i] = None if n is None else n["drawer_id"]
            if n is None:
                b.name = ""
                show(b, False)
                continue
            text = " ".join(n["content"].split())
            text = text[:LABEL] + ("…" if len(text) > LABEL else "")
            b.name = f'{n["why"]}: {n["wing"]} / {n["room"]}: {text}'
            show(b, True)

    def _editable(self, on: bool) -> None:
        # The editor stays in place (hiding and showing it again is fragile in BokehJS);
        # it is disabled until a drawer is open.
        for w in (self.text, self.save, self.ask):
            w.disabled = not on

    def _confirming(self, on: bool) -> None:
        """Show "Yes, delete" and "Cancel" instead of "Delete…" (on) or back (off)."""
        show(self.ask, not on)
        show(self.yes, on)
        show(self.no, on)

    def _save(self) -> None:
        if self.opened is None:
            return
        done = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "update_drawer", {"drawer_id": self.opened, "content": self.text.value}),
            testid="drawer-note")
        if done is not None:
            self.ctx.changed()
            self.open(done["drawer"]["id"], use=False)  # new text, new id (old: an alias)
            self.ctx.confirm(self.note, "Saved.", "drawer-note")

    def _delete(self) -> None:
        """Delete the opened drawer (after "Yes, delete"), keeping what Undo puts back."""
        self._confirming(False)
        if self.opened is None:
            return
        did = self.opened
        kept = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "get_drawer", {"drawer_id": did})["drawer"], testid="drawer-note")
        if kept is None:
            return
        done = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "delete_drawer", {"drawer_id": did}), testid="drawer-note")
        if done is None:
            return
        self._deleted = kept
        self.opened = None
        self._place = None
        self.conversation.object = ""
        self._conversation(None)
        show(self.read_it, False)
        show(self.map_it, False)
        self.copy.disabled = self.helpful.disabled = True
        self.used.object = ""
        self.meta.object = message("Click a result to open it here.", "info", "drawer-empty")
        self.text.value = ""
        self.near_title.object = ""
        self._fill_neighbours([])
        self._editable(False)
        self.ctx.changed()
        if self._q.strip():
            self.run()
        show(self.undo, True)
        self.ctx.confirm(self.note, "Drawer deleted.", "drawer-note")

    def _undo(self) -> None:
        """Put the last deleted drawer back: same text, wing, room, closet, key (so the same
        id), source, importance and time added; its vector is computed again."""
        d = self._deleted
        if d is None:
            return
        args = {k: d[k] for k in ("wing", "room", "content", "source", "source_file",
                                  "importance", "key", "created_at")}
        if d.get("closet"):
            args["closet"] = d["closet"]
        done = self.ctx.attempt(self.note, lambda: self.ctx.call("add_drawer", args),
                                testid="drawer-note")
        if done is None:
            return
        self._deleted = None
        show(self.undo, False)
        self.ctx.changed()
        if self._q.strip():
            self.run()
        self.open(done["drawer_id"], use=False)
        self.ctx.confirm(self.note, "Drawer restored.", "drawer-note")


def is_turn(source: dict[str, Any] | None) -> bool:
    """Whether a drawer's ``source`` is a conversation turn (so it can be read in its
    conversation)."""
    return bool(source) and source.get("kind") == "conversation" and bool(source.get("turn_id"))


def name_problem(value: str, what: str) -> str | None:
    """Return a sentence saying why ``value`` cannot name a ``what`` (wing, room), or None
    when it can. The engine's rule decides (:func:`palazzo.core.model.clean_name`); this only
    words its refusal for the form. Cost: O(len(value))."""
    try:
        clean_name(value, what)
    except ValidationError as err:
        name = unicodedata.normalize("NFC", value.strip())
        if not name:
            return f"Give the {what} a name."
        if len(name) > MAX_NAME:
            return (f"A {what} name can be at most {MAX_NAME} characters; this one has "
                    f"{len(name)}.")
        if any(unicodedata.category(c) == "Cc" for c in name):
            return f"A {what} name cannot contain a tab, a line break or other control characters."
        return str(err)
    return None


def text_problem(text: str) -> str | None:
    """Return a sentence saying why ``text`` cannot be a drawer's text, or None."""
    if not text.strip():
        return "Write the text you want to keep."
    if len(text) > MAX_CONTENT:
        return (f"A drawer holds at most {MAX_CONTENT:,} characters; this text has "
                f"{len(text):,}. Split it into several drawers.")
    return None


class AddView:
    """Add a drawer to a chosen or new wing/room, checked as typed, with a duplicate warning
    first."""

    FIELDS = ("wing", "room", "text")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.wing = pn.widgets.TextInput(name="Wing", placeholder="a wing (new or existing)",
                                         css_classes=["pz-add-wing"])
        self.room = pn.widgets.TextInput(name="Room", placeholder="a room (new or existing)",
                                         css_classes=["pz-add-room"])
        self.wing_pick = pn.widgets.Select(name="…or choose a wing", options=[""],
                                           css_classes=["pz-add-wing-pick"])
        self.room_pick = pn.widgets.Select(name="…or choose a room", options=[""],
                                           css_classes=["pz-add-room-pick"])
        self.text = pn.widgets.TextAreaInput(name="Text (kept verbatim)", height=160,
                                             sizing_mode="stretch_width",
                                             css_classes=["pz-add-text"])
        self.errors = {f: _pane(f"add-{f}-error") for f in self.FIELDS}
        self.add = pn.widgets.Button(name="Add drawer", button_type="primary", disabled=True,
                                     css_classes=["pz-add-go"])
        self.note = _pane("add-note")
        self.values = {f: "" for f in self.FIELDS}  # the latest text of each field
        self.touched: set[str] = set()
        self._warned: tuple[str, str, str] | None = None
        for f in self.FIELDS:
            widget = getattr(self, f)
            widget.param.watch(lambda e, f=f: self._input(f, e.new), "value_input")
            widget.param.watch(lambda e, f=f: self._input(f, e.new), "value")
        self.wing_pick.param.watch(lambda e: self._take(self.wing, e.new), "value")
        self.room_pick.param.watch(lambda e: self._take(self.room, e.new), "value")
        self.add.on_click(lambda _e: self.submit())
        self.view = pn.Column(
            pn.FlexBox(pn.Column(self.wing, self.errors["wing"]), self.wing_pick,
                       flex_wrap="wrap"),
            pn.FlexBox(pn.Column(self.room, self.errors["room"]), self.room_pick,
                       flex_wrap="wrap"),
            self.text, self.errors["text"], self.add, self.note, sizing_mode="stretch_width")
        ctx.on_refresh(self._options)
        self._options()

    def _options(self) -> None:
        set_options(self.wing_pick, ["", *self.ctx.wings()])
        set_options(self.room_pick, ["", *sorted({r["name"] for r in self.ctx.rooms()})])

    @staticmethod
    def _take(field: Any, value: str) -> None:
        if value:
            field.value = value

    def problems(self) -> dict[str, str | None]:
        """Return each field's problem sentence (None when the field is fine)."""
        return {"wing": name_problem(self.values["wing"], "wing"),
                "room": name_problem(self.values["room"], "room"),
                "text": text_problem(self.values["text"])}

    def _input(self, field: str, value: str | None) -> None:
        self.values[field] = value or ""
        self.touched.add(field)
        self._check()

    def _check(self) -> bool:
        """Show the problem of every touched field under it; enable Add when there is none;
        return whether the form is valid."""
        problems = self.problems()
        for f, problem in problems.items():
            shown = problem if f in self.touched else None
            self.errors[f].object = ("" if shown is None else
                                     f'<p class="pz-field-error" data-testid="add-{f}-error">'
                                     f"{esc(shown)}</p>")
        ok = not any(problems.values())
        self.add.disabled = not ok
        return ok

    def submit(self) -> dict[str, Any] | None:
        """Add the drawer, or warn once about a duplicate (a second click adds anyway), or show
        what is wrong under the fields; return ``add_drawer``'s result when it ran."""
        self.touched.update(self.FIELDS)
        if not self._check():
            return None
        wing, room, text = (self.values["wing"].strip(), self.values["room"].strip(),
                            self.values["text"])
        key = (wing, room, text)
        if self._warned != key:
            dup = self.ctx.attempt(self.note, lambda: self.ctx.call(
                "check_duplicate", {"content": text}), testid="add-note")
            if dup is None:
                return None
            if dup["is_duplicate"]:
                first = dup.get("exact") or (dup.get("near") or [{}])[0].get("drawer_id")
                d = self.ctx.call("get_drawer", {"drawer_id": first})["drawer"]
                where = f'{d["wing"]} / {d["room"]}'
                self._warned = key
                self.note.object = message(
                    f"This looks like a drawer you already have in {where}. "
                    "Click Add drawer again to keep it anyway.", "error", "add-duplicate")
                return None
        out = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "add_drawer", {"wing": wing, "room": room, "content": text}), testid="add-note")
        self._warned = None
        if out is None:
            return None
        self.ctx.confirm(
            self.note,
            "Added." if out["created"] else "That exact drawer is already in this room.",
            "add-note")
        if out["created"]:
            self.text.value = self.text.value_input = ""
            self.values["text"] = ""
            self.touched.discard("text")  # an emptied form is not a mistake
            self._check()
        self.ctx.changed()
        return out

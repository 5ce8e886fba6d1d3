"""Provenance: pick a conversation turn and a policy, make a signed slice (optionally within a
token budget, with its context as messages, text or triples), see its turns and token, and
verify it (also after editing the token, to see a failure). The atlas slices every turn of the
conversation (or of the palace) at once and lists the turns that matter most across those
slices: in how many they appear, how central they are, and which groups of slices they join.
"""

from __future__ import annotations

import asyncio
from typing import Any

import panel as pn

from palazzo.errors import ValidationError
from palazzo.hosts.ui.common import (
    Context,
    esc,
    html_pane,
    load_first,
    message,
    set_options,
    table,
)
from palazzo.hosts.ui.forms import Field, Form, typed

FORMS = {"turns only": "", "messages": "messages", "text": "text", "triples": "triples"}
SCOPES = {"this conversation's turns": "conversation", "every turn of the palace": "palace"}
ATLAS_LIMIT = 200  # anchors the atlas slices by default (the operation's default too)
ATLAS_TOP = 10  # turns listed by each measure
SNIPPET = 80  # characters of a turn's text in a table
YIELD_S = 0.01  # a real timer, so the busy state reaches the page before the work starts


class ProvenanceView:
    """Conversation, anchor turn, policy, budget and form pickers; slice and verify; the atlas
    of the conversation's slices."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.conversation = pn.widgets.Select(name="Conversation",
                                              css_classes=["pz-prov-conversation"])
        self.turn = pn.widgets.Select(name="Anchor turn", css_classes=["pz-prov-turn"])
        self.policy = pn.widgets.Select(name="Policy", css_classes=["pz-prov-policy"])
        # No bounds on the box (BokehJS would clamp a typed 0 silently): the schema says.
        self.budget = pn.widgets.IntInput(name="Token budget", value=None,
                                          placeholder="no limit", width=150,
                                          css_classes=["pz-prov-budget"])
        self.form = pn.widgets.Select(name="Context as", options=FORMS, width=150,
                                      css_classes=["pz-prov-form"])
        self.make = pn.widgets.Button(name="Make slice", button_type="primary", disabled=True,
                                      css_classes=["pz-prov-slice"])
        self.token = pn.widgets.TextInput(name="Token", placeholder="make a slice first",
                                          css_classes=["pz-prov-token"])
        self.verify = pn.widgets.Button(name="Verify", disabled=True,
                                        css_classes=["pz-prov-verify"])
        self.slice_form = Form(ctx, "slice_context",
                               {"anchor": Field(self.turn, "prov-turn"),
                                "policy": Field(self.policy, "prov-policy"),
                                "budget": Field(self.budget, "prov-budget")},
                               self.make, self._slice_args)
        self.verify_form = Form(ctx, "verify_token",
                                {"bundle": Field(self.token, "prov-token")}, self.verify,
                                self._verify_args)
        self.slice = html_pane("prov-slice")
        self.result = html_pane("prov-result")
        self.bundle: dict[str, Any] | None = None
        self._text: dict[str, str] = {}  # turn id -> "depth. role: text" of the conversation
        # The atlas.
        self.scope = pn.widgets.Select(name="Anchors", options=SCOPES, width=230,
                                       css_classes=["pz-atlas-scope"])
        self.limit = pn.widgets.IntInput(name="At most (turns)", value=ATLAS_LIMIT, width=150,
                                         css_classes=["pz-atlas-limit"])
        self.run_atlas = pn.widgets.Button(name="Run the atlas", button_type="primary",
                                           disabled=True, css_classes=["pz-atlas-run"],
                                           align="end")
        # The budget is the slice form's field (its error shows there); the atlas uses it too.
        self.atlas_form = Form(ctx, "atlas", {"limit": Field(self.limit, "atlas-limit")},
                               self.run_atlas, self._atlas_args)
        self.budget.param.watch(lambda _e: self.atlas_form.check(), "value")
        self.atlas = html_pane("atlas-result")
        self.atlas_busy = False
        self.conversation.param.watch(lambda _e: self._turns(), "value")
        self.scope.param.watch(lambda _e: self.atlas_form.check(), "value")
        self.make.on_click(self._slice_clicked)
        self.verify.on_click(lambda _e: self.check())
        self.run_atlas.on_click(self._atlas_clicked)
        self.view = pn.Column(
            pn.Row(self.conversation, self.slice_form.fields["anchor"].view,
                   self.slice_form.fields["policy"].view),
            pn.Row(self.slice_form.fields["budget"].view, self.form), self.make,
            self.slice, pn.Row(self.verify_form.fields["bundle"].view, self.verify),
            self.result,
            pn.pane.HTML('<h3>Atlas: the turns that matter across many slices</h3>',
                         sizing_mode="stretch_width"),
            pn.Row(self.scope, self.atlas_form.fields["limit"].view, self.run_atlas),
            self.atlas, sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload conversations and policies."""
        names = [c["conversation"] for c in self.ctx.call("list_conversations")["conversations"]]
        set_options(self.conversation, names)
        set_options(self.policy, [p["name"] for p in self.ctx.call("list_policies")["policies"]])
        self._turns()

    def _turns(self) -> None:
        if not self.conversation.value:
            self._text = {}
            set_options(self.turn, {})
            self.slice_form.check()
            self.atlas_form.check()
            return
        turns = self.ctx.call("list_turns", {"conversation": self.conversation.value,
                                             "limit": 500, "with_content": True})["turns"]
        self._text = {t["id"]: f'{t["depth"]}. {t["role"]}: {t["content"][:SNIPPET]}'
                      for t in turns}
        set_options(self.turn, {f'{t["depth"]}. {t["role"]}: {t["content"][:60]}': t["id"]
                                for t in turns})
        self.slice_form.check()
        self.atlas_form.check()

    def _budget(self) -> dict[str, Any]:
        return {} if self.budget.value is None else {"budget": self.budget.value}

    def _slice_args(self) -> dict[str, Any]:
        if not self.turn.value:
            raise ValidationError("Pick a conversation turn: this palace has no "
                                  "conversations yet." if not self.conversation.options else
                                  "Pick a conversation turn.", field="anchor")
        args = {"anchor": self.turn.value, "policy": self.policy.value or "default",
                **self._budget()}
        if self.form.value:
            args["form"] = self.form.value
        return args

    def _verify_args(self) -> dict[str, Any]:
        if self.bundle is None:
            raise ValidationError("Make a slice first: its token appears here.",
                                  field="bundle")
        if not typed(self.token):
            raise ValidationError("The token is empty: paste the slice's token.",
                                  field="bundle")
        return {"bundle": {**self.bundle, "token": typed(self.token)}}

    async def _slice_clicked(self, _event: Any = None) -> None:
        """Say the slice is being made (it can take a minute on a long conversation: the
        button stays disabled meanwhile), give the page a moment to draw that, then make it."""
        if self.slice_form.busy or self.slice_form.check(show_all=True) is None:
            return
        self.slice_form.busy = self.make.disabled = True
        self.slice.object = message("Making the slice: reading the conversation around the "
                                    "turn and signing what is kept…", "info", "prov-busy")
        try:
            await asyncio.sleep(YIELD_S)
            if self.make_slice() is None and "prov-busy" in self.slice.object:
                self.slice.object = ""  # the error shows under its field
        finally:
            self.slice_form.busy = False
            self.slice_form.check()

    def make_slice(self) -> dict[str, Any] | None:
        """Slice around the chosen turn with the chosen policy (within the budget, with the
        context in the chosen form); show turns, context and token."""
        out = self.slice_form.run(lambda a: self.ctx.call("slice_context", a), self.slice,
                                  "prov-error")
        if out is None:
            return None
        b = self.bundle = out["bundle"]
        rows = [(t["distance"], t["role"], t["phase"], f'{t["priority"]:.3f}',
                 t.get("content", "")[:120]) for t in b["turns"]]
        prov = b["provenance"]
        used = b.get("budget")
        budget = (f' · {used["used"]} of {used["max_tokens"]} tokens'
                  if isinstance(used, dict) else "")
        self.slice.object = (
            f'<p data-testid="prov-slice-id">slice {esc(prov["slice_id"])}{esc(budget)}<br>'
            f'key {esc(b["key_id"])} · token <code data-testid="prov-token">'
            f'{esc(b["token"])}</code></p>'
            + table(["distance", "role", "phase", "priority", "text"], rows, "prov-turns")
            + context_html(out))
        self.token.value = b["token"]
        self.result.object = ""
        self.verify_form.check()
        return b

    def check(self) -> dict[str, Any] | None:
        """Verify the slice with the token in the box (edit it to see a failure)."""
        out = self.verify_form.run(lambda a: self.ctx.call("verify_token", a), self.result,
                                   "prov-verdict")
        if out is None:
            return None
        self.result.object = message(
            f'{"valid" if out["valid"] else "INVALID"}: {out["reason"]} – {out["detail"]}',
            "ok" if out["valid"] else "error", "prov-verdict")
        return out

    # -- the atlas ------------------------------------------------------------------------------

    def _atlas_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"policy": self.policy.value or "default", **self._budget()}
        if self.limit.value is not None:
            args["limit"] = self.limit.value
        if self.scope.value == "conversation":
            if not self.conversation.value:
                raise ValidationError("Pick a conversation: this palace has none yet.",
                                      field="limit")
            args["conversation"] = self.conversation.value
        return args

    async def _atlas_clicked(self, _event: Any = None) -> None:
        """Show the busy state, give the page a moment to draw it, then run the atlas."""
        if self.atlas_busy or self.atlas_form.check(show_all=True) is None:
            return
        self.atlas_busy = self.atlas_form.busy = True
        self.run_atlas.disabled = True
        self.atlas.object = message("Slicing every anchor turn and comparing the slices…",
                                    "info", "atlas-busy")
        try:
            await asyncio.sleep(YIELD_S)
            await load_first(self.ctx, "atlas")
            self.atlas_run()
        finally:
            self.atlas_busy = self.atlas_form.busy = False
            self.atlas_form.check()

    def atlas_run(self) -> dict[str, Any] | None:
        """Run the ``atlas`` operation on the chosen anchors; show the overlap of the slices
        and the influential turns (by betweenness, frequency and bridge score); return its
        summary, or None after showing the operation's error."""
        out = self.atlas_form.run(lambda a: self.ctx.call("atlas", {**a, "top": ATLAS_TOP}),
                                  self.atlas, "atlas-error")
        if out is None:
            return None
        self.atlas.object = atlas_html(out, self._text)
        return out


def context_html(out: dict[str, Any]) -> str:
    """Return a slice's context in the form asked for (messages, text or triples) as escaped
    HTML, or "" when no form was asked for."""
    form, context = out.get("form"), out.get("context")
    if not form:
        return ""
    tokens = out.get("tokens")
    head = (f'<h4 data-testid="prov-context-title">Context as {esc(form)}'
            + (f" ({tokens} tokens)" if tokens is not None else "") + "</h4>")
    if form == "text":
        return head + f'<pre class="pz-snippet" data-testid="prov-context">{esc(context)}</pre>'
    if form == "messages":
        return head + table(["role", "text"], [(m["role"], m["content"]) for m in context],
                            "prov-context")
    return head + table(["subject", "predicate", "object"],
                        [(t["subject"], t["predicate"], t["object"]) for t in context],
                        "prov-context")


def influential(out: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the atlas's listed turns once each (the most central first, then those in most
    slices, then the bridges), each with the lists it is in as ``why``. O(listed turns)."""
    seen: dict[str, dict[str, Any]] = {}
    for key, why in (("central", "central"), ("frequent", "in most slices"),
                     ("bridging", "bridge")):
        for r in out.get(key, []):
            row = seen.setdefault(r["turn"], {**r, "why": []})
            row["why"].append(why)
    return list(seen.values())


def atlas_html(out: dict[str, Any], text: dict[str, str]) -> str:
    """Return the atlas summary (anchors, slices, their overlap) and the influential turns as
    escaped HTML; ``text`` gives a turn's label by id (others show their id)."""
    ov = out["overlap"]
    summary = (f'{out["anchors"]} anchor turns sliced (of {out["chosen_from"]}); the slices '
               f'hold {out["turns"]} distinct turns ({out["slice_turns"]} in all). Overlap '
               f'between slices: mean {ov["mean"]:.2f}, max {ov["max"]:.2f} (Jaccard), '
               f'pairs of slices sharing a turn: {ov["overlapping_pairs"]}; {out["bridges"]} '
               f'bridge turn{"" if out["bridges"] == 1 else "s"}.')
    rows = [(text.get(r["turn"], r["turn"]), r["frequency"], f'{r["betweenness"]:.3f}',
             r["bridge"], ", ".join(r["why"])) for r in influential(out)]
    return (message(summary, "ok", "atlas-summary")
            + '<h4>Influential turns</h4>'
            + table(["turn", "in slices", "betweenness", "bridge score", "listed as"], rows,
                    "atlas-turns"))

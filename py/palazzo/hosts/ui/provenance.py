"""Provenance: pick a conversation turn and a policy, make a signed slice, see its turns and
token, and verify it (also after editing the token, to see a failure)."""

from __future__ import annotations

from typing import Any

import panel as pn

from palazzo.errors import ValidationError
from palazzo.hosts.ui.common import Context, esc, html_pane, message, set_options, table
from palazzo.hosts.ui.forms import Field, Form, typed


class ProvenanceView:
    """Conversation, anchor turn and policy pickers; slice and verify."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.conversation = pn.widgets.Select(name="Conversation",
                                              css_classes=["pz-prov-conversation"])
        self.turn = pn.widgets.Select(name="Anchor turn", css_classes=["pz-prov-turn"])
        self.policy = pn.widgets.Select(name="Policy", css_classes=["pz-prov-policy"])
        self.make = pn.widgets.Button(name="Make slice", button_type="primary", disabled=True,
                                      css_classes=["pz-prov-slice"])
        self.token = pn.widgets.TextInput(name="Token", placeholder="make a slice first",
                                          css_classes=["pz-prov-token"])
        self.verify = pn.widgets.Button(name="Verify", disabled=True,
                                        css_classes=["pz-prov-verify"])
        self.slice_form = Form(ctx, "slice_context",
                               {"anchor": Field(self.turn, "prov-turn"),
                                "policy": Field(self.policy, "prov-policy")},
                               self.make, self._slice_args)
        self.verify_form = Form(ctx, "verify_token",
                                {"bundle": Field(self.token, "prov-token")}, self.verify,
                                self._verify_args)
        self.slice = html_pane("prov-slice")
        self.result = html_pane("prov-result")
        self.bundle: dict[str, Any] | None = None
        self.conversation.param.watch(lambda _e: self._turns(), "value")
        self.make.on_click(lambda _e: self.make_slice())
        self.verify.on_click(lambda _e: self.check())
        self.view = pn.Column(pn.Row(self.conversation, self.slice_form.fields["anchor"].view,
                                     self.slice_form.fields["policy"].view), self.make,
                              self.slice, pn.Row(self.verify_form.fields["bundle"].view,
                                                 self.verify), self.result,
                              sizing_mode="stretch_width")
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
            set_options(self.turn, {})
            return
        turns = self.ctx.call("list_turns", {"conversation": self.conversation.value,
                                             "limit": 500, "with_content": True})["turns"]
        set_options(self.turn, {f'{t["depth"]}. {t["role"]}: {t["content"][:60]}': t["id"]
                                for t in turns})
        self.slice_form.check()

    def _slice_args(self) -> dict[str, Any]:
        if not self.turn.value:
            raise ValidationError("Pick a conversation turn: this palace has no "
                                  "conversations yet." if not self.conversation.options else
                                  "Pick a conversation turn.", field="anchor")
        return {"anchor": self.turn.value, "policy": self.policy.value or "default"}

    def _verify_args(self) -> dict[str, Any]:
        if self.bundle is None:
            raise ValidationError("Make a slice first: its token appears here.",
                                  field="bundle")
        if not typed(self.token):
            raise ValidationError("The token is empty: paste the slice's token.",
                                  field="bundle")
        return {"bundle": {**self.bundle, "token": typed(self.token)}}

    def make_slice(self) -> dict[str, Any] | None:
        """Slice around the chosen turn with the chosen policy; show turns and token."""
        out = self.slice_form.run(lambda a: self.ctx.call("slice_context", a), self.slice,
                                  "prov-error")
        if out is None:
            return None
        b = self.bundle = out["bundle"]
        rows = [(t["distance"], t["role"], t["phase"], f'{t["priority"]:.3f}',
                 t.get("content", "")[:120]) for t in b["turns"]]
        prov = b["provenance"]
        self.slice.object = (
            f'<p data-testid="prov-slice-id">slice {esc(prov["slice_id"])}<br>'
            f'key {esc(b["key_id"])} · token <code data-testid="prov-token">'
            f'{esc(b["token"])}</code></p>'
            + table(["distance", "role", "phase", "priority", "text"], rows, "prov-turns"))
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

"""Provenance: pick a conversation turn and a policy, make a signed slice, see its turns and
token, and verify it (also after editing the token, to see a failure)."""

from __future__ import annotations

from typing import Any

import panel as pn

from palazzo.hosts.ui.common import Context, esc, html_pane, message, set_options, table


class ProvenanceView:
    """Conversation, anchor turn and policy pickers; slice and verify."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.conversation = pn.widgets.Select(name="Conversation",
                                              css_classes=["pz-prov-conversation"])
        self.turn = pn.widgets.Select(name="Anchor turn", css_classes=["pz-prov-turn"])
        self.policy = pn.widgets.Select(name="Policy", css_classes=["pz-prov-policy"])
        self.make = pn.widgets.Button(name="Make slice", button_type="primary",
                                      css_classes=["pz-prov-slice"])
        self.token = pn.widgets.TextInput(name="Token", css_classes=["pz-prov-token"])
        self.verify = pn.widgets.Button(name="Verify", css_classes=["pz-prov-verify"])
        self.slice = html_pane("prov-slice")
        self.result = html_pane("prov-result")
        self.bundle: dict[str, Any] | None = None
        self.conversation.param.watch(lambda _e: self._turns(), "value")
        self.make.on_click(lambda _e: self.make_slice())
        self.verify.on_click(lambda _e: self.check())
        self.view = pn.Column(pn.Row(self.conversation, self.turn, self.policy), self.make,
                              self.slice, pn.Row(self.token, self.verify), self.result,
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

    def make_slice(self) -> dict[str, Any] | None:
        """Slice around the chosen turn with the chosen policy; show turns and token."""
        if not self.turn.value:
            self.slice.object = message("Pick a conversation turn first.", "error",
                                        "prov-error")
            return None
        out = self.ctx.attempt(self.slice, lambda: self.ctx.call(
            "slice_context", {"anchor": self.turn.value, "policy": self.policy.value or
                              "default"}), testid="prov-error")
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
        return b

    def check(self) -> dict[str, Any] | None:
        """Verify the slice with the token in the box (edit it to see a failure)."""
        if self.bundle is None:
            self.result.object = message("Make a slice first.", "error", "prov-verdict")
            return None
        bundle = {**self.bundle, "token": self.token.value.strip()}
        out = self.ctx.attempt(self.result, lambda: self.ctx.call("verify_token",
                                                                  {"bundle": bundle}),
                               testid="prov-verdict")
        if out is None:
            return None
        self.result.object = message(
            f'{"valid" if out["valid"] else "INVALID"}: {out["reason"]} – {out["detail"]}',
            "ok" if out["valid"] else "error", "prov-verdict")
        return out

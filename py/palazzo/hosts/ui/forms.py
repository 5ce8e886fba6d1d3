"""Forms whose errors are sentences next to their fields, and whose button waits for valid
input.

A :class:`Form` knows the operation its button calls. On every edit it builds the arguments
and checks them against the operation's schema (the registry's check: no palace is touched),
shows the engine's sentence under the field it names once that field has been edited, and
keeps the button disabled while the call would be refused. Errors the operation raises when
it runs (a date that is not a date, an entity that does not exist) go under their field too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import panel as pn

from palazzo.errors import PalazzoError, ValidationError
from palazzo.hosts.ui.common import Context, message


def follow(widget: Any) -> None:
    """Make a text box's ``value_input`` (what is typed, keystroke by keystroke) also follow
    its ``value`` when that is set from Python, so ``value_input`` is always what the box
    holds. (In the browser the two agree already; Panel does not copy one to the other.)"""
    widget.value_input = widget.value

    def copy(event: Any) -> None:
        if widget.value_input != event.new:
            widget.value_input = event.new

    widget.param.watch(copy, "value")


def typed(widget: Any) -> str:
    """Return what a text box holds (see :func:`follow`), trimmed."""
    return (widget.value_input or "").strip()


# The schema checker's sentences for a field left blank ("Confirm is empty: it needs at least
# 1 character.", "Entity is missing: it is required."): a person is told what to do instead.
BLANK = re.compile(r".+ is (empty: it needs at least 1 (character|item)|missing: it is "
                   r"required)\.")


def in_words(text: str, widget: Any) -> str:
    """Return ``text`` (an error about ``widget``'s value) as what to do: a blank field's
    schema sentence becomes "Fill in “<the field's label>”."; other sentences stay."""
    label = getattr(widget, "name", "") or ""
    return f"Fill in “{label}”." if label and BLANK.fullmatch(text) else text


class Field:
    """A widget and the pane under it that shows the widget's error as a sentence."""

    def __init__(self, widget: Any, testid: str) -> None:
        self.widget = widget
        self.testid = f"{testid}-error"
        self.error = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10),
                                  css_classes=["pz-field-error", f"pz-{self.testid}"])
        self.view = pn.Column(widget, self.error, margin=0)
        if "value_input" in widget.param:
            follow(widget)

    def show(self, text: str | None) -> None:
        """Show ``text`` as this field's error, or clear it (None)."""
        self.error.object = ("" if text is None else
                             message(in_words(text, self.widget), "error", self.testid))


class Form:
    """Fields named by the operation's argument names, the button that calls it, and how the
    arguments are built from the widgets (``args`` may raise ValidationError itself, e.g.
    for a choice not made yet)."""

    def __init__(self, ctx: Context, operation: str, fields: dict[str, Field], button: Any,
                 args: Callable[[], dict[str, Any]]) -> None:
        self.ctx, self.operation, self.fields, self.button = ctx, operation, fields, button
        self.build = args
        self.touched: set[str] = set()
        self.busy = False  # set while the button's action runs: it stays disabled
        for name, f in fields.items():
            live = "value_input" if "value_input" in f.widget.param else "value"
            f.widget.param.watch(lambda _e, name=name: self.edited(name), live)

    def edited(self, name: str) -> None:
        """Note that field ``name`` was edited, then :meth:`check` the form."""
        self.touched.add(name)
        self.check()

    def _field_of(self, err: PalazzoError) -> str | None:
        path = getattr(err, "field", None)
        if path is None:
            return None
        head = path.split(".")[0].split("[")[0]
        return head if head in self.fields else None

    def check(self, show_all: bool = False) -> dict[str, Any] | None:
        """Return the arguments when the operation would accept them, else None; show the
        error under its field (only once that field was edited, unless ``show_all``) and
        enable the button only for valid arguments. Cost: one schema check, no palace call.
        """
        for f in self.fields.values():
            f.show(None)
        try:
            args = self.build()
            self.ctx.bridge.registry.check(self.operation, args)
        except ValidationError as err:
            name = self._field_of(err)
            if name is not None and (show_all or name in self.touched):
                self.fields[name].show(str(err))
            self.button.disabled = True
            return None
        self.button.disabled = self.busy
        return args

    def place(self, err: PalazzoError) -> bool:
        """Show an error the operation raised under the field it names; return whether it
        named one of this form's fields (else the caller shows it elsewhere)."""
        name = self._field_of(err)
        if name is None:
            return False
        self.fields[name].show(str(err))
        return True

    def run(self, fn: Callable[[dict[str, Any]], Any], note: pn.pane.HTML,
            testid: str) -> Any:
        """Check the form (showing every error), then run ``fn(args)``; return its result,
        or None after showing why not: under the field an error names, else in ``note``."""
        args = self.check(show_all=True)
        if args is None:
            return None
        try:
            return fn(args)
        except PalazzoError as err:
            if not self.place(err):
                note.object = message(str(err), "error", testid)
            return None
        except Exception as err:  # noqa: BLE001 - shown to the person, not swallowed
            note.object = message(f"internal error: {type(err).__name__}: {err}", "error",
                                  testid)
            return None

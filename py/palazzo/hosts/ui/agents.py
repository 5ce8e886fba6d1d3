"""Agents: run a swarm with a progress bar and a cancel button, and see the agents.

The run goes through the ``run_swarm`` operation in chunks (so each chunk is journaled and the
interface gets control back between them): chunk i runs with seed + i and without stopping at
convergence, so a run of N cycles is always N cycles unless cancelled. Chunks are sized to take
about CHUNK_S seconds each (the first is one cycle, each next one scaled by how long the last
took), so Cancel and the page's own calls wait at most that long. The chunk sizes therefore
depend on the machine's speed; the journal records the chunks actually run, so a reload
replays exactly what happened.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import panel as pn

from palazzo.errors import ValidationError
from palazzo.hosts.ui.common import Context, html_pane, message, table
from palazzo.hosts.ui.forms import Field, Form

CHUNK_S = 0.25
# Between steps the interface sleeps on a real timer: a zero-length sleep is rescheduled
# before the worker's queued messages (clicks, the page's calls) get their turn.
YIELD_S = 0.01


def next_chunk(last_size: int, last_seconds: float, remaining: int,
               target: float = CHUNK_S) -> int:
    """Return the next chunk's size: the last one scaled to take ``target`` seconds, at most
    four times bigger, at least 1, never more than ``remaining``."""
    if last_seconds <= 0:
        grown = last_size * 4
    else:
        grown = min(last_size * 4, int(last_size * target / last_seconds))
    return max(1, min(remaining, grown))


class AgentsView:
    """Swarm form, progress, cancel, last-run summary and the agent list."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # No start/end bounds on the inputs: BokehJS would clamp a typed 0 without a word.
        # run_swarm's schema holds the bounds, and the form says which one is broken.
        self.agents = pn.widgets.IntInput(name="Agents", value=5,
                                          css_classes=["pz-swarm-agents"])
        self.cycles = pn.widgets.IntInput(name="Cycles", value=100,
                                          css_classes=["pz-swarm-cycles"])
        self.seed = pn.widgets.IntInput(name="Seed", value=0, css_classes=["pz-swarm-seed"])
        self.run_button = pn.widgets.Button(name="Run swarm", button_type="primary",
                                            css_classes=["pz-swarm-run"])
        self.form = Form(ctx, "run_swarm", {"agents": Field(self.agents, "swarm-agents"),
                                            "cycles": Field(self.cycles, "swarm-cycles"),
                                            "seed": Field(self.seed, "swarm-seed")},
                         self.run_button, self._args)
        self.cancel = pn.widgets.Button(name="Cancel", disabled=True,
                                        css_classes=["pz-swarm-cancel"])
        self.progress = pn.widgets.Progress(name="Progress", value=0, max=100,
                                            sizing_mode="stretch_width",
                                            css_classes=["pz-swarm-progress"])
        self.note = html_pane("swarm-note")
        self.list = html_pane("agents-list")
        self._cancelled = False
        self.running = False
        self.run_button.on_click(self._start)
        self.cancel.on_click(lambda _e: self._cancel())
        self.view = pn.Column(pn.Row(*(f.view for f in self.form.fields.values())),
                              pn.Row(self.run_button, self.cancel), self.progress, self.note,
                              self.list, sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the agent list."""
        agents = self.ctx.call("list_agents")["agents"]
        rows = [(a["name"], a["archetype"], f'{a["temperature"]:.2f}', a["diary_entries"])
                for a in agents]
        self.list.object = "<h3>Agents of this palace</h3>" + (
            table(["name", "archetype", "temperature", "diary entries"], rows, "agents-list")
            if rows else message("No agents are kept in this palace: a run uses as many "
                                 "transient agents as you ask for, one archetype after "
                                 "another.", "info", "agents-list"))

    def _cancel(self) -> None:
        self._cancelled = True

    def _args(self) -> dict[str, Any]:
        return {"agents": self.agents.value, "cycles": self.cycles.value,
                "seed": self.seed.value, "stop_on_converge": False}

    async def _start(self, _event: Any = None) -> None:
        """Run the swarm the form describes, or show why not next to the field at fault."""
        args = self.form.check(show_all=True)
        if args is not None:
            await self.run(args["agents"], args["cycles"], args["seed"])

    async def run(self, agents: int, cycles: int, seed: int) -> dict[str, Any]:
        """Run ``cycles`` swarm cycles in chunks; return {"cycles_run", "cancelled"}."""
        if self.running:
            return {"cycles_run": 0, "cancelled": False}
        try:  # the same check as the form's: a call from Python gets no silent default either
            self.ctx.bridge.registry.check("run_swarm", {"agents": agents, "cycles": cycles,
                                                         "seed": seed})
        except ValidationError as err:
            if not self.form.place(err):
                self.note.object = message(str(err), "error", "swarm-note")
            return {"cycles_run": 0, "cancelled": False}
        self.running, self._cancelled = True, False
        self.form.busy = True
        self.run_button.disabled, self.cancel.disabled = True, False
        self.progress.max, self.progress.value = cycles, 0
        self.note.object = message(f"Running {cycles} cycles…", "info", "swarm-note")
        done, last, size, i = 0, None, 1, 0
        try:
            while done < cycles:
                await asyncio.sleep(YIELD_S)  # a real timer: the worker takes clicks and calls
                if self._cancelled:
                    break
                t0 = time.perf_counter()
                last = self.ctx.attempt(self.note, lambda size=size, i=i: self.ctx.call(
                    "run_swarm", {"agents": agents, "cycles": size, "seed": seed + i,
                                  "stop_on_converge": False}), testid="swarm-note")
                if last is None:
                    break
                done += last["cycles_run"]
                self.progress.value = done
                size = next_chunk(size, time.perf_counter() - t0, cycles - done)
                i += 1
            if last is not None:
                state = "Cancelled" if self._cancelled else "Done"
                self.ctx.confirm(
                    self.note, f"{state}: {done} of {cycles} cycles; {last['visited']} nodes "
                    f"visited; pheromone mass {last['pheromone_mass']:.2f}.", "swarm-note")
        finally:
            self.running = self.form.busy = False
            self.cancel.disabled = True
            self.form.check()  # Run is enabled again when the form is valid
            self.ctx.changed()
        return {"cycles_run": done, "cancelled": self._cancelled}

"""Agents: run a swarm with a progress bar and a cancel button, and see the agents.

The run goes through the ``run_swarm`` operation in chunks (so each chunk is journaled and the
interface gets control back between them): chunk i runs with seed + i and without stopping at
convergence, so a run of N cycles is always N cycles unless cancelled. Between chunks the
callback awaits, which lets the worker handle clicks (Cancel) and send patches (progress).
"""

from __future__ import annotations

import asyncio
from typing import Any

import panel as pn

from palazzo.hosts.ui.common import Context, html_pane, message, table

MAX_CHUNKS = 20


def chunks(cycles: int, most: int = MAX_CHUNKS) -> list[int]:
    """Return chunk sizes that sum to ``cycles``, at most ``most`` of them, near-equal."""
    n = max(1, min(most, cycles))
    base, extra = divmod(cycles, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


class AgentsView:
    """Swarm form, progress, cancel, last-run summary and the agent list."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.agents = pn.widgets.IntInput(name="Agents", value=5, start=1, end=100,
                                          css_classes=["pz-swarm-agents"])
        self.cycles = pn.widgets.IntInput(name="Cycles", value=100, start=1, end=10_000,
                                          css_classes=["pz-swarm-cycles"])
        self.seed = pn.widgets.IntInput(name="Seed", value=0, start=0,
                                        css_classes=["pz-swarm-seed"])
        self.run_button = pn.widgets.Button(name="Run swarm", button_type="primary",
                                            css_classes=["pz-swarm-run"])
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
        self.view = pn.Column(pn.Row(self.agents, self.cycles, self.seed),
                              pn.Row(self.run_button, self.cancel), self.progress, self.note,
                              self.list, sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the agent list."""
        agents = self.ctx.call("list_agents")["agents"]
        rows = [(a["name"], a["archetype"], f'{a["temperature"]:.2f}', a["diary_entries"])
                for a in agents]
        self.list.object = "<h3>Agents</h3>" + table(["name", "archetype", "temperature",
                                                      "diary entries"], rows, "agents-list")

    def _cancel(self) -> None:
        self._cancelled = True

    async def _start(self, _event: Any = None) -> None:
        await self.run(int(self.agents.value), int(self.cycles.value), int(self.seed.value))

    async def run(self, agents: int, cycles: int, seed: int) -> dict[str, Any]:
        """Run ``cycles`` swarm cycles in chunks; return {"cycles_run", "cancelled"}."""
        if self.running:
            return {"cycles_run": 0, "cancelled": False}
        self.running, self._cancelled = True, False
        self.run_button.disabled, self.cancel.disabled = True, False
        self.progress.max, self.progress.value = cycles, 0
        self.note.object = message(f"Running {cycles} cycles…", "info", "swarm-note")
        done, last = 0, None
        try:
            for i, size in enumerate(chunks(cycles)):
                await asyncio.sleep(0)  # let the worker take clicks and send progress
                if self._cancelled:
                    break
                last = self.ctx.attempt(self.note, lambda size=size, i=i: self.ctx.call(
                    "run_swarm", {"agents": agents, "cycles": size, "seed": seed + i,
                                  "stop_on_converge": False}), testid="swarm-note")
                if last is None:
                    break
                done += last["cycles_run"]
                self.progress.value = done
            if last is not None:
                state = "Cancelled" if self._cancelled else "Done"
                self.note.object = message(
                    f"{state}: {done} of {cycles} cycles; {last['visited']} nodes visited; "
                    f"pheromone mass {last['pheromone_mass']:.2f}.", "ok", "swarm-note")
        finally:
            self.running = False
            self.run_button.disabled, self.cancel.disabled = False, True
            self.ctx.changed()
        return {"cycles_run": done, "cancelled": self._cancelled}

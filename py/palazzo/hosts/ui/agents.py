"""Agents: run a swarm of chosen archetypes with a progress bar and a cancel button, see what
each agent did, approve or reject the tunnels the generalists proposed, read the specialists'
diaries, and see which wings and rooms the swarm marked (their node pheromones).

The run goes through the ``run_swarm`` operation in chunks (so each chunk is journaled and the
interface gets control back between them): chunk i runs with seed + i and without stopping at
convergence, so a run of N cycles is always N cycles unless cancelled. Chunks are sized to take
about CHUNK_S seconds each (the first is one cycle, each next one scaled by how long the last
took), so Cancel and the page's own calls wait at most that long. The chunk sizes therefore
depend on the machine's speed; the journal records the chunks actually run, so a reload
replays exactly what happened.

What each agent did is summed over the chunks by agent name (a chunk's agents are named after
their archetype and place in the list, so the same in every chunk): moves, moves along trails,
tunnels proposed and diary entries add up; the rooms and drawers an agent reached are counted
per chunk by the engine, so the view shows the most it reached in one chunk (a sum would count
a room reached twice). Chunks write no diary: each returns its specialists' notes, and when
the run ends the latest note of each specialist (of the last chunk in which it looked into a
drawer) is written once through ``write_swarm_notes``; a cancelled run writes none. So a
specialist's entry never depends on how small the machine's speed made the last chunk.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import panel as pn

from palazzo.errors import ValidationError
from palazzo.hosts.ui.common import Context, esc, html_pane, message, plural, set_options, table
from palazzo.hosts.ui.forms import Field, Form
from palazzo.memory.diary import DIARY_ROOM, diary_wing

ARCHETYPES = ("explorer", "exploiter", "balanced", "specialist", "generalist")
ANY_WING = "(chosen by the swarm)"
SHOWN_PROPOSALS = 50  # pending proposals listed (the best first); the others wait their turn
SHOWN_NODES = 15  # wings and rooms listed by node pheromone
DIARY_ENTRIES = 5  # the latest entries of the chosen agent's diary
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


def crew(count: int, archetypes: list[str]) -> list[str]:
    """Return ``count`` archetype names taking ``archetypes`` in turn (explorer, generalist,
    explorer, ... for two chosen), so Agents stays the number of agents. O(count)."""
    return [archetypes[i % len(archetypes)] for i in range(count)] if archetypes else []


def diary_wings(count: int, archetypes: list[str]) -> list[str]:
    """Return the wings the specialists of a run of ``count`` agents (``archetypes`` in turn,
    else one of each archetype in turn) keep their diaries in: the swarm names agent i
    "<archetype>-<i>", and a specialist writes to ``diary_wing`` of its name. O(count)."""
    kinds = crew(count, list(archetypes or ARCHETYPES))
    return [diary_wing(f"{k}-{i}") for i, k in enumerate(kinds) if k == "specialist"]


def adds_words(wings: list[str], existing: set[str]) -> str:
    """Return what a run will add to the palace, said before it runs: the new diary wings
    (at most three named), or that it adds no wing."""
    new = [w for w in wings if w not in existing]
    if not new:
        return ("This run adds no wing: it leaves trails (pheromones) and may propose "
                "tunnels" + (", and its specialists write in the diary wings they have "
                             "already." if wings else "."))
    named = ", ".join(new[:3]) + (f" and {len(new) - 3:,} more" if len(new) > 3 else "")
    return (f"This run will add {plural(len(new), 'wing')} to the palace: {named} (room "
            f"“{DIARY_ROOM}”), where its specialists write their diaries; besides, it leaves "
            "trails (pheromones) and may propose tunnels.")


def added_words(wings: list[str]) -> str:
    """Return what a run added to the palace, said after it ran (a leading space: it
    follows the run's summary), "No wing was added." included."""
    if not wings:
        return " No wing was added."
    return (f" Added {plural(len(wings), 'wing')} to the palace: {', '.join(wings)} (the "
            "specialists' diaries).")


def tally(totals: dict[str, dict[str, Any]], agents: list[dict[str, Any]]) -> None:
    """Add one chunk's per-agent results (``run_swarm``'s ``agents``) to ``totals``, by agent
    name: moves, trail moves, tunnels proposed and diary entries summed, rooms and drawers
    reached as the most in one chunk. O(agents)."""
    for a in agents:
        t = totals.setdefault(a["name"], {"name": a["name"], "archetype": a["archetype"],
                                          "wing": a.get("wing"), "moves": 0, "trail_moves": 0,
                                          "rooms": 0, "drawers": 0, "tunnels": 0,
                                          "diary": 0})
        t["moves"] += a["moves"]
        t["trail_moves"] += a["trail_moves"]
        t["tunnels"] += a["tunnels_proposed"]
        t["diary"] += a.get("diary_entries", 0)
        t["rooms"] = max(t["rooms"], a["coverage"]["rooms"])
        t["drawers"] = max(t["drawers"], a["coverage"]["drawers"])
        t["wing"] = t["wing"] or a.get("wing")


def agents_table(totals: dict[str, dict[str, Any]]) -> str:
    """Return the per-agent results as an escaped table (trail use as a percentage)."""
    rows = [(t["name"], t["archetype"] + (f' ({t["wing"]})' if t["wing"] else ""),
             t["rooms"], t["drawers"],
             f'{100 * t["trail_moves"] / t["moves"]:.0f} %' if t["moves"] else "–",
             t["tunnels"], t["diary"]) for t in totals.values()]
    return table(["agent", "archetype", "rooms reached", "drawers reached", "moves on trails",
                  "tunnels proposed", "diary entries"], rows, "swarm-agents")


# What the node pheromone columns mean, in words (their engine names in brackets).
NODE_COLUMNS = ("Proved useful: how valuable the place's drawers were when agents used them. "
                "Searched already: how much agents looked there. Balance: the first minus "
                "the second; above 0, worth coming back to; below 0, searched more than it "
                "gave.")


def place(node: str) -> str:
    """Return a room, wing or closet node id as a person reads it ("Home / garden")."""
    kind, _, rest = node.partition(":")
    if kind in ("room", "closet", "wing"):
        return rest.replace("/", " / ")
    return node


def proposal_label(p: dict[str, Any]) -> str:
    """Return a proposal as one line of text (a Select option, not markup)."""
    return (f'{place(p["src"])} ↔ {place(p["dst"])} (similarity {p["cosine"]:.2f}, '
            f'by {p["agent"]})')


class AgentsView:
    """Swarm form, progress, cancel, the last run per agent, tunnel proposals to approve or
    reject, diaries, node pheromones and the agent list."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # No start/end bounds on the inputs: BokehJS would clamp a typed 0 without a word.
        # run_swarm's schema holds the bounds, and the form says which one is broken.
        self.agents = pn.widgets.IntInput(name="Agents", value=5,
                                          css_classes=["pz-swarm-agents"])
        self.cycles = pn.widgets.IntInput(name="Cycles", value=100,
                                          css_classes=["pz-swarm-cycles"])
        self.seed = pn.widgets.IntInput(name="Seed", value=0, css_classes=["pz-swarm-seed"])
        self.threshold = pn.widgets.FloatInput(name="Tunnel similarity", value=0.8, step=0.05,
                                               width=150, css_classes=["pz-swarm-threshold"])
        self.archetypes = pn.widgets.CheckButtonGroup(
            name="Archetypes (none chosen: one of each in turn)", options=list(ARCHETYPES),
            value=[], button_type="default", css_classes=["pz-swarm-archetypes"])
        self.wing = pn.widgets.Select(name="Specialists' wing", options=[ANY_WING], width=200,
                                      css_classes=["pz-swarm-wing"])
        self.run_button = pn.widgets.Button(name="Run swarm", button_type="primary",
                                            css_classes=["pz-swarm-run"])
        self.form = Form(ctx, "run_swarm", {
            "agents": Field(self.agents, "swarm-agents"),
            "cycles": Field(self.cycles, "swarm-cycles"),
            "seed": Field(self.seed, "swarm-seed"),
            "tunnel_threshold": Field(self.threshold, "swarm-threshold")},
            self.run_button, self._args)
        self.cancel = pn.widgets.Button(name="Cancel", disabled=True,
                                        css_classes=["pz-swarm-cancel"])
        self.progress = pn.widgets.Progress(name="Progress", value=0, max=100,
                                            sizing_mode="stretch_width",
                                            css_classes=["pz-swarm-progress"])
        self.note = html_pane("swarm-note")
        self.adds = html_pane("swarm-adds")  # what a run will add, said before it runs
        self.results = html_pane("swarm-results")
        # Proposals: a pick and two buttons (widgets made after the page rendered do not
        # reach it from the worker, so there is no button a row).
        self.proposals = html_pane("tunnel-proposals")
        self.proposal = pn.widgets.Select(name="Proposal", options={}, width=320,
                                          css_classes=["pz-tunnel-pick"])
        self.approve = pn.widgets.Button(name="Approve tunnel", button_type="success",
                                         disabled=True, css_classes=["pz-tunnel-approve"],
                                         align="end")
        self.reject = pn.widgets.Button(name="Reject tunnel", disabled=True,
                                        css_classes=["pz-tunnel-reject"], align="end")
        self.tunnel_note = html_pane("tunnel-note")
        self.diary_agent = pn.widgets.Select(name="Diary of", options=[], width=220,
                                             css_classes=["pz-diary-agent"])
        self.diary = html_pane("diary-entries")
        self.nodes = html_pane("node-pheromones")
        self.list = html_pane("agents-list")
        self._cancelled = False
        self.running = False
        self.last: dict[str, Any] | None = None  # the last run: per-agent totals and gains
        self.run_button.on_click(self._start)
        self.cancel.on_click(lambda _e: self._cancel())
        self.approve.on_click(lambda _e: self.decide("approve_tunnel"))
        self.reject.on_click(lambda _e: self.decide("reject_tunnel"))
        self.proposal.param.watch(lambda _e: self._pickable(), "value")
        self.diary_agent.param.watch(lambda _e: self.show_diary(), "value")
        for w in (self.agents, self.archetypes):
            w.param.watch(lambda _e: self.show_adds(), "value")
        self.view = pn.Column(
            pn.Row(*(f.view for f in self.form.fields.values()), self.wing),
            self.archetypes, pn.Row(self.run_button, self.cancel), self.adds, self.progress,
            self.note, self.results,
            pn.pane.HTML('<h3>Tunnels proposed</h3>', sizing_mode="stretch_width"),
            self.proposals, pn.Row(self.proposal, self.approve, self.reject),
            self.tunnel_note,
            pn.pane.HTML("<h3>Diaries</h3>", sizing_mode="stretch_width"),
            self.diary_agent, self.diary, self.nodes, self.list,
            sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the wings, proposals, diaries, node pheromones and the agent list."""
        set_options(self.wing, [ANY_WING, *self.ctx.wings()])
        listing = self.ctx.call("list_agents")
        agents = listing["agents"]
        rows = [(a["name"], a["archetype"], a["focus"], f'{a["temperature"]:.2f}',
                 a["diary_entries"]) for a in agents]
        self.list.object = "<h3>Agents of this palace</h3>" + (
            table(["name", "archetype", "focus", "temperature", "diary entries"], rows,
                  "agents-list")
            if rows else message("No agents are kept in this palace: a run uses as many "
                                 "transient agents as you ask for, one archetype after "
                                 "another.", "info", "agents-list"))
        writers = [a["name"] for a in sorted(agents, key=lambda a: (-a["diary_entries"],
                                                                     a["name"]))
                   if a["diary_entries"]]
        set_options(self.diary_agent, writers)
        self.show_adds()
        self.show_diary()
        self.show_proposals()
        self.show_nodes()

    # -- the run ------------------------------------------------------------------------------

    def _cancel(self) -> None:
        self._cancelled = True

    def show_adds(self) -> str:
        """Say, before a run, what it will add to the palace (the specialists' diary wings);
        return the sentence. Cost: one ``list_wings``."""
        count = self.agents.value if isinstance(self.agents.value, int) else 0
        said = adds_words(diary_wings(max(count, 0), list(self.archetypes.value)),
                          set(self.ctx.wings()))
        self.adds.object = message(said, "info", "swarm-adds")
        return said

    def _args(self) -> dict[str, Any]:
        return {"agents": self.agents.value, "cycles": self.cycles.value,
                "seed": self.seed.value, "tunnel_threshold": self.threshold.value,
                "stop_on_converge": False}

    def _extra(self) -> dict[str, Any]:
        """Return the run's arguments beyond the form's fields: the archetypes and the wing."""
        out: dict[str, Any] = {"archetypes": list(self.archetypes.value)}
        if self.wing.value and self.wing.value != ANY_WING:
            out["wing"] = self.wing.value
        return out

    async def _start(self, _event: Any = None) -> None:
        """Run the swarm the form describes, or show why not next to the field at fault."""
        args = self.form.check(show_all=True)
        if args is not None:
            await self.run(args["agents"], args["cycles"], args["seed"],
                           tunnel_threshold=args["tunnel_threshold"], **self._extra())

    async def run(self, agents: int, cycles: int, seed: int, archetypes: list[str] | None = None,
                  **extra: Any) -> dict[str, Any]:
        """Run ``cycles`` swarm cycles in chunks with ``agents`` agents (of ``archetypes`` in
        turn, else one of each archetype in turn); ``extra`` holds more ``run_swarm``
        arguments (wing, tunnel_threshold). Return {"cycles_run", "cancelled"}."""
        if self.running:
            return {"cycles_run": 0, "cancelled": False}
        try:  # the same check as the form's: a call from Python gets no silent default either
            self.ctx.bridge.registry.check("run_swarm", {"agents": agents, "cycles": cycles,
                                                         "seed": seed, **extra})
        except ValidationError as err:
            if not self.form.place(err):
                self.note.object = message(str(err), "error", "swarm-note")
            return {"cycles_run": 0, "cancelled": False}
        who: dict[str, Any] = ({"archetypes": crew(agents, archetypes)} if archetypes
                               else {"agents": agents})
        self.running, self._cancelled = True, False
        self.form.busy = True
        self.run_button.disabled, self.cancel.disabled = True, False
        self.progress.max, self.progress.value = cycles, 0
        wings_before = set(self.ctx.wings())
        self.note.object = message(f"Running {plural(cycles, 'cycle')}…", "info", "swarm-note")
        done, last, size, i = 0, None, 1, 0
        totals: dict[str, dict[str, Any]] = {}
        proposed = diary = 0
        notes: dict[str, dict[str, Any]] = {}  # each specialist's latest note, by name
        try:
            while done < cycles:
                await asyncio.sleep(YIELD_S)  # a real timer: the worker takes clicks and calls
                if self._cancelled:
                    break
                t0 = time.perf_counter()
                # No chunk writes a diary: the run writes one entry a specialist at its end
                last = self.ctx.attempt(self.note, lambda size=size, i=i:
                                        self.ctx.call("run_swarm", {
                                            **who, **extra, "cycles": size, "seed": seed + i,
                                            "stop_on_converge": False, "diary": False}),
                                        testid="swarm-note")
                if last is None:
                    break
                done += last["cycles_run"]
                tally(totals, last["agents"])
                proposed += last["gained"]["tunnels_proposed"]
                notes.update((n["agent"], n) for n in last.get("notes", []))
                self.progress.value = done
                size = next_chunk(size, time.perf_counter() - t0, cycles - done)
                i += 1
            if last is not None and notes and not self._cancelled:
                written = self.ctx.attempt(self.note, lambda: self.ctx.call(
                    "write_swarm_notes", {"notes": list(notes.values())}),
                    testid="swarm-note")
                for name, count in (written or {}).get("diary_entries", {}).items():
                    diary += count
                    if name in totals:
                        totals[name]["diary"] += count
            if last is not None:
                state = "Cancelled" if self._cancelled else "Done"
                self.ctx.confirm(
                    self.note, f"{state}: {done:,} of {plural(cycles, 'cycle')}; "
                    f"{plural(last['visited'], 'node')} visited; pheromone mass "
                    f"{last['pheromone_mass']:.2f}; {plural(proposed, 'tunnel')} proposed; "
                    f"{plural(diary, 'diary entry', 'diary entries')} written."
                    + added_words(sorted(set(self.ctx.wings()) - wings_before)),
                    "swarm-note")
            if totals:
                self.last = {"agents": totals, "tunnels_proposed": proposed,
                             "diary_entries": diary}
                self.results.object = "<h3>What each agent did</h3>" + agents_table(totals)
        finally:
            self.running = self.form.busy = False
            self.cancel.disabled = True
            self.form.check()  # Run is enabled again when the form is valid
            self.ctx.changed()
        wrote = [t["name"] for t in totals.values() if t["diary"]]
        if wrote and wrote[0] in self.diary_agent.options:
            self.diary_agent.value = wrote[0]  # what this run's first specialist wrote
        return {"cycles_run": done, "cancelled": self._cancelled}

    # -- tunnel proposals ---------------------------------------------------------------------

    def show_proposals(self) -> list[dict[str, Any]]:
        """List the pending proposals (best first) and offer them to approve or reject;
        return them. Cost: one ``list_tunnel_proposals``."""
        out = self.ctx.call("list_tunnel_proposals", {"limit": SHOWN_PROPOSALS})
        pending, counts = out["proposals"], out["counts"]
        rows = [(place(p["src"]), place(p["dst"]), f'{p["cosine"]:.3f}', p["agent"])
                for p in pending]
        said = (f'{counts["pending"]} pending, {counts["approved"]} approved, '
                f'{counts["rejected"]} rejected.')
        self.proposals.object = (
            message("Generalist agents propose a tunnel between rooms of different wings "
                    "whose drawers are about the same thing; nothing is added until you "
                    f"approve it. {said}", "info", "tunnel-count")
            + (table(["room", "room", "similarity", "proposed by"], rows, "tunnel-list")
               if rows else ""))
        set_options(self.proposal, {proposal_label(p): p["id"] for p in pending})
        self._pickable()
        return pending

    def _pickable(self) -> None:
        off = not self.proposal.value
        self.approve.disabled = self.reject.disabled = off

    def decide(self, operation: str) -> list[Any] | None:
        """Approve (``approve_tunnel``) or reject (``reject_tunnel``) the chosen proposal;
        return what the operation did, or None when nothing was chosen or it failed."""
        pid = self.proposal.value
        if not pid:
            return None
        out = self.ctx.attempt(self.tunnel_note,
                               lambda: self.ctx.call(operation, {"ids": [pid]}),
                               testid="tunnel-note")
        if out is None:
            return None
        done = out.get("approved", out.get("rejected", []))
        pairs = "; ".join(f'{place(p["src"])} ↔ {place(p["dst"])}' for p in done)
        said = (f"Tunnel added: {pairs}." if operation == "approve_tunnel" else
                f"Rejected, and not proposed again: {pairs}.")
        self.ctx.changed()  # the map draws the new tunnel; the list loses the proposal
        self.ctx.confirm(self.tunnel_note, said, "tunnel-note")
        return done

    # -- diaries and node pheromones ----------------------------------------------------------

    def show_diary(self) -> list[dict[str, Any]]:
        """Show the latest entries of the chosen agent's diary (text escaped, kept as
        written); return them. Cost: one ``diary_read``."""
        agent = self.diary_agent.value
        if not agent:
            self.diary.object = message("No diary entries yet: specialist agents write "
                                        "what they found in their wing when a swarm runs.",
                                        "info", "diary-entries")
            return []
        entries = self.ctx.attempt(self.diary, lambda: self.ctx.call(
            "diary_read", {"agent": agent, "limit": DIARY_ENTRIES})["entries"],
            testid="diary-entries")
        if entries is None:
            return []
        self.diary.object = '<div data-testid="diary-entries">' + "".join(
            f'<div class="pz-diary-entry"><p class="pz-when">{esc(e["written"][:16])} · '
            f'{esc(e["topic"])}</p><div class="pz-snippet">{esc(e["content"])}</div></div>'
            for e in entries) + "</div>"
        return entries

    def show_nodes(self) -> None:
        """List the wings and rooms the agents marked most (node pheromones: exploitation,
        exploration and Q_edge = their difference). Cost: two ``node_pheromones``."""
        rows = []
        for kind in ("wing", "room"):
            found = self.ctx.call("node_pheromones", {"kind": kind, "limit": SHOWN_NODES,
                                                      "order": "exploration"})["nodes"]
            rows += [(kind, place(n["node"]), f'{n["exploitation"]:.3f}',
                      f'{n["exploration"]:.3f}', f'{n["q_edge"]:+.3f}') for n in found]
        self.nodes.object = "<h3>Wings and rooms the agents marked</h3>" + (
            message(NODE_COLUMNS, "info", "node-pheromones-help")
            + table(["kind", "place", "proved useful (exploitation)",
                     "searched already (exploration)", "balance (Q_edge)"], rows,
                    "node-pheromones") if rows else
            message("No wing or room carries a pheromone yet: run the swarm.", "info",
                    "node-pheromones"))

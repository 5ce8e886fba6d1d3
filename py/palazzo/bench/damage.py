"""The damage corpus: seeded damage to a palace's files, and whether palazzo said so.

A reference palace (:func:`reference`) is written the way a user's grows: 20 drawers added
one by one, a compaction, 20 more, a compaction (so generation 2 stays as the previous one),
12 more in the journal: 52 drawers, every one acknowledged. A signing key is made before
the first compaction, so ``keys.json`` is there too. Each case (:func:`generate`, the same
on every machine for one ``(seed, index)``) damages a copy of its files one way:

- ``flip``: one byte of a file flipped (snapshot, journal, either generation, tip, keys);
- ``scramble``: up to 16 bytes of a 64-byte window overwritten;
- ``truncate``: a file cut at a random length;
- ``zero``: a 4 KiB page (of a file's own pages) zeroed, or the file's tail when it is
  shorter;
- ``delete``: a file removed;
- ``duplicate`` / ``swap`` / ``remove``: journal records repeated, exchanged or cut out;
- ``stray``: a file that is not the palace's put beside it (garbage named like a snapshot
  or journal of a later generation, or any other name).

:func:`run_case` then opens the copy as its writer would and classifies what happened:
``whole`` (nothing was lost and nothing needed saying), ``told`` (the palace opened
read-only and said what is damaged), ``silent`` (an acknowledged drawer is missing or
changed, or one that never was appears, and nothing said so) or ``traceback`` (anything but
a :class:`~palazzo.errors.PalazzoError` escaped boot, ``check`` or ``repair``). A told case is
repaired; afterwards the palace must open clean, take a write, and have lost no more drawers
than the damage touched (:attr:`Case.budget`: the drawers whose own journal records lie in
the damaged bytes; none for damage anywhere else, the previous generation covering a
snapshot). ``check`` must notice every damage to a file of the palace that holds data
(deletions of files a palace may lack, and stray files, excepted).

``palazzo bench damage --count 600 --out bench-results/damage.json`` writes the counts;
``tests/palazzo/bench/test_damage.py`` runs the corpus in CI.
"""

from __future__ import annotations

import json
import random
import time
import traceback
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import PalazzoError
from palazzo.palace import Palace
from palazzo.persist import journal
from palazzo.persist.palacestore import KEYS, TIP, PalaceStore, journal_name, snapshot_name
from palazzo.persist.storage import MemorySpace

KINDS = ("flip", "scramble", "truncate", "zero", "delete", "duplicate", "swap", "remove",
         "stray")
OUTCOMES = ("whole", "told", "silent", "traceback")
PAGE = 4096
WORDS = ["violin", "lesson", "garden", "roses", "lentils", "journal", "snapshot", "harbour",
         "ferry", "lighthouse", "tomato", "basil", "winter", "pruning", "chess", "opening",
         "sonata", "kettle", "museum", "ticket"]


def _clock() -> Any:
    t = [1_700_000_000.0]

    def clock() -> float:
        t[0] += 1.0
        return t[0]

    return clock


def make(**kw: Any) -> Palace:
    """Return an empty palace as the corpus writes and reads it (hash vectors, fixed clock)."""
    return Palace(embedder=HashEmbedder(dim=32), clock=lambda: 0.0, **kw)


@dataclass(slots=True)
class Reference:
    """The reference palace's files, the drawer texts it acknowledged, and where each
    journal record lies (file → [(start, end, text or None)])."""

    files: dict[str, bytes]
    texts: list[str]
    records: dict[str, list[tuple[int, int, str | None]]]
    current: int


def _text(i: int) -> str:
    rng = random.Random(i)
    return f"Note {i}: " + " ".join(rng.choice(WORDS) for _ in range(12)) + "."


def reference() -> Reference:
    """Return the reference palace (see the module docstring). Cost: about 50 operations and
    two compactions of a small palace."""
    space = MemorySpace()
    store = PalaceStore(space, make, clock=_clock())
    texts: list[str] = []

    def add(i: int) -> None:
        texts.append(_text(i))
        store.call("add_drawer", {"wing": ["home", "work"][i % 2], "room": f"room {i % 5}",
                                  "content": texts[-1]})

    store.call("rotate_key")
    for i in range(20):
        add(i)
    store.compact()
    for i in range(20, 40):
        add(i)
    store.compact()
    for i in range(40, 52):
        add(i)
    files = {n: space.read(n) or b"" for n in space.names()}
    records = {}
    for name, data in files.items():
        if name.startswith("journal-"):
            found = journal.scan(data)
            records[name] = [(a, b, r.args.get("content")) for r, a, b in
                             zip(found.records, found.starts, found.ends, strict=True)]
    return Reference(files, texts, records, store.status.generation)


@dataclass(slots=True)
class Case:
    """One damage: its kind, the file it hit, what it did in words, the damaged files, and
    how many acknowledged drawers it may cost at most (their own records were hit)."""

    index: int
    kind: str
    target: str
    what: str
    files: dict[str, bytes]
    budget: int
    noticed: bool  # whether ``check`` must notice it


def _hit(ref: Reference, name: str, lo: int, hi: int) -> int:
    """Return how many drawers' records of journal ``name`` overlap bytes ``lo:hi``."""
    return sum(1 for a, b, text in ref.records.get(name, []) if text and a < hi and lo < b)


def generate(ref: Reference, seed: int, index: int) -> Case:
    """Return damage case ``index`` of corpus ``seed`` on a copy of ``ref``'s files."""
    rng = random.Random(seed * 1_000_003 + index)
    files = dict(ref.files)
    kind = KINDS[index % len(KINDS)]
    journals = sorted(n for n in files if n.startswith("journal-") and n != TIP)
    data_files = [n for n in files if n.startswith(("snapshot-", "journal-"))] + [TIP, KEYS]
    cur_journal = journal_name(ref.current)
    if kind in ("duplicate", "swap", "remove"):
        name = rng.choice(journals)
        spans = ref.records[name]
        data = files[name]
        i = rng.randrange(len(spans) - (1 if kind == "swap" else 0))
        a, b, text = spans[i]
        if kind == "duplicate":
            files[name] = data[:b] + data[a:b] + data[b:]
            return Case(index, kind, name, f"record {i + 1} repeated", files, 0, True)
        if kind == "swap":
            c, d, _ = spans[i + 1]
            files[name] = data[:a] + data[c:d] + data[a:b] + data[d:]
            return Case(index, kind, name, f"records {i + 1} and {i + 2} swapped", files, 0,
                        True)
        files[name] = data[:a] + data[b:]
        lost = 1 if text and name == cur_journal else 0
        return Case(index, kind, name, f"record {i + 1} removed", files, lost, True)
    if kind == "stray":
        name = rng.choice([snapshot_name(ref.current + 1), journal_name(ref.current + 7),
                           "snapshot-00000002.pz.bak", "notes.txt", "journal-x.log",
                           "rejected-junk.log"])
        junk = bytes(rng.randrange(256) for _ in range(rng.choice([0, 7, 100, 5000])))
        files[name] = junk if rng.random() < 0.8 else b"PZ" + junk
        return Case(index, kind, name, f"a stray file {name} ({len(files[name])} bytes)",
                    files, 0, False)
    name = rng.choice(data_files)
    data = files[name]
    budget = 0
    if kind == "delete":
        del files[name]
        if name == cur_journal:
            budget = _hit(ref, name, 0, len(data))
        # A palace may lack the previous generation, the tip (older palaces) or its keys:
        # their loss is found by what refers to them, not by check alone.
        return Case(index, kind, name, "deleted", files, budget, name in (
            cur_journal, snapshot_name(ref.current)))
    if kind == "truncate":
        cut = rng.randrange(len(data))
        files[name] = data[:cut]
        what, lo, hi = f"cut to {cut} of {len(data)} bytes", cut, len(data)
    elif kind == "zero":
        start = rng.randrange(max(1, len(data) // PAGE + (len(data) % PAGE > 0))) * PAGE
        end = min(len(data), start + PAGE)
        files[name] = data[:start] + bytes(end - start) + data[end:]
        what, lo, hi = f"bytes {start}-{end} zeroed", start, end
        if files[name] == data:  # the page was zeros already: nothing to find
            return Case(index, kind, name, what + " (already zero)", files, 0, False)
    else:
        at = rng.randrange(len(data))
        count = 1 if kind == "flip" else rng.randint(2, 16)
        bad = bytearray(data)
        for k in range(count):
            j = min(len(data) - 1, at + (rng.randrange(64) if k else 0))
            bad[j] ^= rng.randrange(1, 256)
        files[name] = bytes(bad)
        what = f"{count} byte(s) changed from byte {at}"
        lo, hi = at, min(len(data), at + 64)
    if name == cur_journal:
        budget = _hit(ref, name, lo, hi)
    return Case(index, kind, name, what, files, budget, files[name] != data)


@dataclass(slots=True)
class Result:
    """What :func:`run_case` saw for one case."""

    index: int
    kind: str
    target: str
    what: str
    outcome: str
    lost: int = 0  # acknowledged drawers missing after the repair
    budget: int = 0
    over_budget: bool = False
    noticed: bool = True  # check found it (when it must)
    problem: str | None = None
    error: str | None = None
    seconds: float = 0.0


def _texts(store: PalaceStore) -> set[str]:
    s = store.palace.drawers
    return {s.content[int(r)] for r in s.live_rows()}


def _space(files: dict[str, bytes]) -> MemorySpace:
    space = MemorySpace()
    for name, data in files.items():
        space.write(name, data)
    return space


def run_case(ref: Reference, case: Case) -> Result:
    """Open, check and (when told) repair one damaged copy; return what happened. Never
    raises: an unexpected exception is the outcome ``traceback``."""
    out = Result(case.index, case.kind, case.target, case.what, "whole", budget=case.budget)
    t0 = time.perf_counter()
    acked = set(ref.texts)
    try:
        space = _space(case.files)
        store = PalaceStore(space, make, clock=_clock())
        got = _texts(store)
        out.problem = store.status.problem
        told = store.status.damaged and store.status.read_only
        if told:
            out.outcome = "told"
        elif got != acked:
            out.outcome = "silent"
        if case.noticed:
            report = PalaceStore(_space(case.files), make, clock=_clock(),
                                 read_only=True).check()
            out.noticed = not report["ok"] or any(not f["ok"] for f in report["files"])
        if told:
            if got - acked:
                out.outcome = "silent"  # a drawer nobody wrote: something was invented
            store.repair()
            again = PalaceStore(space, make, clock=_clock())
            if again.status.damaged or again.status.read_only or _texts(again) != _texts(
                    store):
                raise AssertionError(f"after repair: {again.status.problem}")
            again.call("add_drawer", {"wing": "after", "room": "repair",
                                      "content": "written after the repair"})
            got = _texts(again) - {"written after the repair"}
        out.lost = len(acked - got)
        out.over_budget = out.lost > case.budget
    except PalazzoError as err:
        out.outcome, out.error = "traceback", f"{type(err).__name__}: {err}"
    except Exception as err:  # what the corpus is here to find
        out.outcome = "traceback"
        out.error = "".join(traceback.format_exception_only(type(err), err)).strip()
    out.seconds = time.perf_counter() - t0
    return out


@dataclass(slots=True)
class Summary:
    """The corpus's counts: outcomes by kind, and the cases that failed a promise."""

    count: int
    seed: int
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    lost: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able summary."""
        return asdict(self)


def run(count: int, seed: int = 0) -> Summary:
    """Run ``count`` cases of corpus ``seed``; return the counts. A failure is a silent loss,
    a traceback, a repair that lost more than the damage touched, or a damage check missed.
    Cost: about 0.1 s a case (a boot, a check, a repair of a 52-drawer palace)."""
    ref = reference()
    out = Summary(count, seed)
    t0 = time.perf_counter()
    by_kind: dict[str, Counter] = {}
    for i in range(count):
        result = run_case(ref, generate(ref, seed, i))
        by_kind.setdefault(result.kind, Counter())[result.outcome] += 1
        out.lost[result.kind] = out.lost.get(result.kind, 0) + result.lost
        if result.outcome in ("silent", "traceback") or result.over_budget or \
                not result.noticed:
            out.failures.append(asdict(result))
    out.outcomes = {k: dict(v) for k, v in sorted(by_kind.items())}
    out.seconds = round(time.perf_counter() - t0, 2)
    return out


def cost(messages: int = 20_000, seed: int = 1) -> dict[str, Any]:
    """Return what keeping damage findable costs on a real-sized palace: a generated ChatGPT
    export of ``messages`` messages imported through the CLI's path (hash vectors) into a
    directory, then the seconds of a compaction (writing the snapshot with its page checksums,
    reading it back and verifying it), of a boot, of a ``check`` of every file, of a boot that
    rebuilds the palace around one damaged page of chunk vectors when no previous generation
    helps, and the bytes on disk of the current and the previous generation.
    Cost: the import (about 30 s at 20,000 messages) plus a few snapshot writes and reads."""
    import tempfile
    from pathlib import Path

    from palazzo.bench.exportgen import write_export
    from palazzo.formats import snapshot
    from palazzo.importers import BATCH, apply
    from palazzo.importers.chats import plan_chats
    from palazzo.persist.directory import PalaceDirectory
    from palazzo.persist.storage import DirectorySpace

    def embedder_palace(**kw: Any) -> Palace:
        return Palace(embedder=HashEmbedder(), **kw)

    out: dict[str, Any] = {"messages": messages}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        export = root / "conversations.json"
        write_export(export, messages, seed=seed)
        path = root / "palace"
        t0 = time.perf_counter()
        with PalaceDirectory(path, embedder_palace) as d:
            apply(plan_chats(export, palace=d.store), d.call, batch=BATCH)
            out["import_s"] = round(time.perf_counter() - t0, 2)
            out["drawers"] = d.call("palace_status")["drawers"]
            t0 = time.perf_counter()
            d.compact()
            out["compact_s"] = round(time.perf_counter() - t0, 2)
            store = d.store
            name = snapshot_name(store.status.generation)
            t0 = time.perf_counter()
            store._verify(name)
            out["verify_s"] = round(time.perf_counter() - t0, 2)
            t0 = time.perf_counter()
            d.call("add_drawer", {"wing": "w", "room": "r", "content": "one more note"})
            out["add_s"] = round(time.perf_counter() - t0, 4)
        files = {p.name: p.stat().st_size for p in path.iterdir() if p.is_file()}
        gen = max(int(n[9:17]) for n in files if n.startswith("snapshot-"))
        out["bytes"] = {"current": files[snapshot_name(gen)] + files[journal_name(gen)],
                        "previous": files.get(snapshot_name(gen - 1), 0) +
                        files.get(journal_name(gen - 1), 0)}
        space = DirectorySpace(path)
        t0 = time.perf_counter()
        PalaceStore(space, embedder_palace, read_only=True)
        out["boot_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        report = PalaceStore(space, embedder_palace, read_only=True).check()
        out["check_s"] = round(time.perf_counter() - t0, 2)
        out["check_ok"] = report["ok"]
        # One damaged page of chunk vectors, the previous generation gone: rebuilt around it.
        (path / snapshot_name(gen - 1)).unlink(missing_ok=True)
        (path / journal_name(gen - 1)).unlink(missing_ok=True)
        data = bytearray((path / snapshot_name(gen)).read_bytes())
        opened = snapshot.open_snapshot(bytearray(data))
        start = snapshot.PREFIX.size + snapshot.PREFIX.unpack_from(data)[1]
        arrays = json.loads(data[snapshot.PREFIX.size:start])["arrays"]
        offset, nbytes = arrays["c.vectors"][2:4]
        data[start + offset + nbytes // 2] ^= 0x5A
        (path / snapshot_name(gen)).write_bytes(bytes(data))
        del opened
        t0 = time.perf_counter()
        damaged = PalaceStore(space, embedder_palace, read_only=True)
        out["salvage_boot_s"] = round(time.perf_counter() - t0, 2)
        out["salvaged"] = {k: v for k, v in (damaged.status.salvaged or {}).items()
                           if k != "drawers_lost"}
        out["salvage_drawers"] = damaged.palace.counts()["drawers"]
    return out

"""The ``palazzo`` command line (CPython host). Errors are one line and a non-zero exit.

Each command imports what it uses when it runs, so a command loads only its own parts (the MCP
server, the importers, the site server and the benchmarks stay unloaded otherwise); none of
these imports hides a circle (``tests/palazzo/test_layers.py`` counts them too).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palazzo.errors import PalazzoError

# An import that journaled more than this ends with a snapshot (the next open is then fast).
IMPORT_COMPACT_BYTES = 1 << 20


class ProgressBar:
    """A one-line progress bar on stderr for long runs (silent when stderr is not a TTY
    unless ``force``); with ``rate``, the rate over the last steps and the time left
    (:class:`palazzo.hosts.embedding.IndexingRate`, a window, so it never jumps by orders of
    magnitude when one step is slow)."""

    def __init__(self, label: str, force: bool = False, rate: str | None = None) -> None:
        from palazzo.hosts.embedding import IndexingRate

        self.label = label
        self.live = force or sys.stderr.isatty()
        self.unit = rate
        self.rate = IndexingRate() if rate else None
        self.last: tuple[float, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        import time

        if self.rate is not None:
            now = time.perf_counter()
            if self.last is not None:
                self.rate.record(done - self.last[1], now - self.last[0], total - done, now)
            self.last = (now, done)
        if not self.live:
            return
        width = 30
        filled = int(width * done / max(total, 1))
        words = self.rate.words() if self.rate is not None else None
        tail = f", {words.replace('drawers', self.unit)}" if words else ""
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                         f"{done}/{total}{tail}\033[K")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def make_embedder(name: str):
    """Return the embedder called ``name`` (see :mod:`palazzo.hosts.model`: MiniLM's weights
    are fetched on first use); for ``auto`` and ``minilm`` say on stderr which embedder and
    runtime it is, and why."""
    from palazzo.hosts import model

    choice = model.choose(name)
    if name in ("auto", "minilm"):
        sys.stderr.write(f"palazzo: embedder {choice.describe()}\n")
    return choice.embedder


# -- commands on a palace directory ----------------------------------------------------------

def _open(args, create: bool = True, served: bool = False):
    """Return the palace directory of ``--palace`` opened with ``--embedder`` (its writes
    take the lock each, beside any other process that writes it), for a ``with`` block that
    gives a held lock back when the command ends. ``served`` (commands that only call
    operations): when a ``palazzo serve`` runs for the palace (or ``$PALAZZO_URL`` names
    one), the server instead (:class:`palazzo.hosts.server.client.RemotePalace`), so the
    palace is not loaded a second time."""
    path = Path(args.palace).expanduser()
    if served:
        from palazzo.hosts.server.client import RemotePalace, find_server

        url = find_server(path)
        if url is not None:
            return RemotePalace(url, path)
    if not create:
        _require_palace(path)
    from palazzo.palace import Palace  # (here: a served command never loads the engine)
    from palazzo.persist.directory import PalaceDirectory

    embedder = make_embedder(args.embedder)
    d = PalaceDirectory(path, lambda **kw: Palace(embedder=embedder, **kw))
    if d.status.damaged:
        args.damaged = d.status.problem  # said after a command that succeeds (main)
    return d


def _require_palace(path: Path) -> None:
    """Raise PalazzoError (one line) unless ``path`` holds a palace (a snapshot)."""
    if not (path.is_dir() and any(p.name.startswith("snapshot-") for p in path.iterdir())):
        raise PalazzoError(f"no palace in {path}: run `palazzo init` first (or pass --palace)")


def _print(result) -> None:
    print(json.dumps(result, indent=1, ensure_ascii=False))


def _init(args) -> int:
    path = Path(args.palace).expanduser()
    if path.is_dir() and any(p.name.startswith(("snapshot-", "journal-"))
                             for p in path.iterdir()):
        raise PalazzoError(f"{path} already holds a palace")
    with _open(args) as d:
        print(f"palace created in {d.path}")
    return 0


def _repair(args) -> int:
    """``palazzo repair``: when the palace's files are damaged, recover everything that still
    verifies (with --yes: records that no longer apply are set aside in a rejected-… file,
    damaged files are moved aside as damaged-…, never deleted); then the ``repair`` operation
    checks drawers, edges, aliases and facts and, with --yes, rebuilds what is derived.
    Without --yes it only reports."""
    with _open(args, create=False) as d:
        status = d.status
        if status.damaged and not args.yes:
            _print({"damaged": True, "problem": status.problem, "damage": status.damage,
                    "set_aside": status.set_aside, "missing": status.missing})
            raise PalazzoError("the palace is damaged (above). Run `palazzo repair --yes` to "
                               "keep everything that still verifies, move the damaged files "
                               "aside (damaged-…) and set aside the records that no longer "
                               "apply (rejected-…), then write it again")
        files = {"repaired": False, "problem": status.problem}
        if status.damaged:
            files = d.repair()
        report = d.call("repair", {"dry_run": not args.yes})
        _print({**files, "palace": report})
        if report["problems"] and not args.yes:
            print("palazzo: `palazzo repair --yes` fixes what can be fixed", file=sys.stderr)
    return 0


def _check(args) -> int:
    """``palazzo check``: read every file of the palace and verify it (every checksum, every
    journal record, the tip and the signing keys); print what was found; exit 1 when the
    palace is damaged. Changes nothing and takes no lock, so it runs beside a writer. The
    palace is opened without an embedder (nothing is embedded, no weights are needed)."""
    from palazzo.palace import Palace
    from palazzo.persist.palacestore import PalaceStore
    from palazzo.persist.storage import DirectorySpace

    path = Path(args.palace).expanduser()
    if not path.is_dir() or not any(p.is_file() for p in path.iterdir()):
        raise PalazzoError(f"no palace in {path}")
    store = PalaceStore(DirectorySpace(path), lambda **kw: Palace(embedder=None, **kw),
                        read_only=True)
    report = store.check()
    _print(report)
    if report["ok"]:
        print(f"palazzo: the palace is whole ({len(report['files'])} files checked)",
              file=sys.stderr)
        return 0
    problem = store.status.problem or next(
        f"{f['file']}: {f['found']}" for f in report["files"] if not f["ok"])
    print(f"palazzo: damaged: {problem}. `palazzo repair --yes` recovers what verifies",
          file=sys.stderr)
    return 1


def _dedup(args) -> int:
    """``palazzo dedup``: the near-duplicate groups; with --yes each group is merged into its
    keeper, all groups in one batch (one journal record)."""
    call = {"threshold": args.threshold, "text_threshold": args.text_threshold,
            "wing": args.wing, "room": args.room, "limit": 10_000}
    with _open(args, create=False) as d:
        found = d.call("dedup", {k: v for k, v in call.items() if v is not None})
        if not args.yes:
            _print(found)
            if found["count"]:
                print(f"palazzo: {found['drawers_to_merge']} drawers would merge into "
                      f"{found['count']} keepers; `palazzo dedup --yes` merges them",
                      file=sys.stderr)
            return 0
        calls = [{"name": "merge_drawers", "args": {
            "keeper": g["keeper"]["drawer_id"],
            "drawers": [m["drawer_id"] for m in g["merge"]]}} for g in found["groups"]]
        if calls:
            d.call("batch", {"calls": calls})
        _print({"merged": found["drawers_to_merge"], "groups": found["count"],
                "truncated": found["truncated"]})
    return 0


def _status(args) -> int:
    from palazzo.hosts.hooks import failures

    with _open(args, create=False, served=True) as d:
        out = {"palace": d.call("palace_status"), "storage": {"path": str(d.path),
                                                              **d.status.to_dict()}}
    failed = failures(Path(args.palace).expanduser())
    if failed:
        out["hooks_failed"] = {"count": len(failed), "last": failed[-1]}
    _print(out)
    return 0


def _search(args) -> int:
    query = {"query": args.query, "limit": args.limit, "mode": args.mode}
    query.update({k: getattr(args, k) for k in ("wing", "room") if getattr(args, k)})
    with _open(args, create=False, served=True) as d:
        hits = d.call("search", query)["results"]
    if args.json:
        _print(hits)
        return 0
    if not hits:
        print("no drawer matches")
    for i, h in enumerate(hits, 1):
        text = " ".join(h["content"].split())
        print(f"{i:2}. [{h['wing']} / {h['room']}] {h['score']:.4f}  "
              f"{text[:160]}{'…' if len(text) > 160 else ''}")
    return 0


def _add(args) -> int:
    if (args.text is None) == (args.file is None):
        raise PalazzoError("give the drawer's text, or --file FILE (one of them)")
    text = args.text if args.text is not None else Path(args.file).read_text(encoding="utf-8")
    with _open(args, create=False, served=True) as d:
        out = d.call("add_drawer", {"wing": args.wing, "room": args.room, "content": text,
                                    **({"source_file": args.file} if args.file else {})})
    print(f"{out['drawer_id']} {'added' if out['created'] else 'was already there'}")
    return 0


def _export(args) -> int:
    with _open(args, create=False) as d:
        out = d.call("export", {"format": args.format, "vectors": args.vectors})
    text = out["text"] if "text" in out else json.dumps(out["document"], ensure_ascii=False)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
    return 0


def _import(args) -> int:
    text = Path(args.file).read_text(encoding="utf-8")
    with _open(args) as d:
        out = d.call("import", {"text": text, "reindex": False})
        print(f"imported {out['imported']['drawers']} drawers in {out['imported']['wings']} "
              "wings")
        _embed(d, args)
    return 0


def _embed(d, args, stream=None) -> None:
    """Embed drawers that lack a vector, in steps, with a progress bar; say what was done on
    ``stream`` (stdout unless given: an importer's stdout is its JSON result)."""
    stream = sys.stdout if stream is None else stream
    from palazzo.hosts.embedding import embedding_steps

    bar = ProgressBar("embedding", getattr(args, "progress", False), rate="drawers")
    last = None
    steps = embedding_steps(d.call, 64)
    bar(0, 1)  # the clock of the first step starts now
    for last in steps:
        bar(last[0], last[1])
    if last is not None:
        print(f"embedded {last[0]} drawers with {last[2]}", file=stream)
        _print_no_vector(steps.no_vector, stream)


def _print_no_vector(report: dict, stream=None) -> None:
    """Name the drawers that got no vector (the first ones, and how many in all)."""
    count = report.get("count", 0)
    if count:
        ids = report["drawer_ids"]
        more = f", and {count - len(ids)} more" if count > len(ids) else ""
        print(f"{count} drawers got no vector ({report['reason']}): {', '.join(ids)}{more}",
              file=sys.stdout if stream is None else stream)


def _reindex(args) -> int:
    with _open(args, create=False) as d:
        if args.force:
            out = d.call("reindex", {"force": True})
            print(f"embedded {out['embedded']} drawers with {out['embedder']}")
            _print_no_vector(out["no_vector"])
        else:
            _embed(d, args)
    return 0


def _bulk_replace(args) -> int:
    call = {"find": args.find, "replace": args.replace, "dry_run": args.dry_run}
    call.update({k: getattr(args, k) for k in ("wing", "room") if getattr(args, k)})
    with _open(args, create=False) as d:
        _print(d.call("bulk_replace", call))
    return 0


def _run_plan(args, box: list, d) -> int:
    """Apply the importer's plan in ``box`` (a one-item list, emptied here so the plan's
    memory goes once it is applied) to the open palace directory ``d`` in batches (one
    journal record and durable write each) with a progress bar, print what it did, embed the
    new drawers and end a long import with a snapshot; return the exit code (0). Through a
    running palace server (``d`` a :class:`RemotePalace`) the same batches are its calls."""
    from palazzo.hosts.importing import found_text
    from palazzo.importers import BATCH, apply

    plan = box.pop()
    if args.json:
        print(json.dumps(plan.summary, ensure_ascii=False), file=sys.stderr)
    else:
        print(found_text(plan.summary), file=sys.stderr)
    if args.summary:
        Path(args.summary).write_text(json.dumps(plan.summary, ensure_ascii=False, indent=1),
                                      encoding="utf-8")
    if getattr(d, "store", None) is None:  # a palace server: it embeds, links and compacts
        _print(apply(plan, d.call, progress=ProgressBar("importing", args.progress),
                     batch=BATCH))  # (each batch as it lands), so nothing is left after
        return 0
    # Words first: the drawers land searchable by their words in batches, then the vectors
    # come in durable steps with a progress line (a crash loses at most the step running).
    with d.store.words_first():
        out = apply(plan, d.call, progress=ProgressBar("importing", args.progress),
                    batch=BATCH)
    del plan
    _print(out)
    _embed(d, args, sys.stderr)
    if d.status.journal_bytes >= IMPORT_COMPACT_BYTES:
        d.compact()  # the next command reads one snapshot instead of replaying the import
    return 0


def _index(args) -> int:
    from palazzo.importers.folder import plan_index

    with _open(args) as d:
        plan = [plan_index(Path(args.path), wing=args.wing, include=args.include or None,
                           exclude=args.exclude or None, sync=args.sync, palace=d.store)]
        return _run_plan(args, plan, d)


def _import_chats(args) -> int:
    from palazzo.importers.chats import plan_chats

    with _open(args, served=True) as d:  # (a served palace's rooms come through it)
        plan = [plan_chats(Path(args.file), name=args.name, palace=getattr(d, "store", d))]
        return _run_plan(args, plan, d)


def _import_mempalace(args) -> int:
    from palazzo.importers.mempalace import plan_mempalace

    plan = [plan_mempalace(Path(args.path), Path(args.kg) if args.kg else None)]
    with _open(args, served=True) as d:
        return _run_plan(args, plan, d)


def _import_graphpalace(args) -> int:
    from palazzo.importers.graphpalace import plan_graphpalace

    plan = [plan_graphpalace(Path(args.file))]
    with _open(args, served=True) as d:
        return _run_plan(args, plan, d)


def _mcp(args) -> int:
    from palazzo.hosts.mcp import server as mcp

    return mcp.main(Path(args.palace), make_embedder(args.embedder))


def _serve(args) -> int:
    """``palazzo serve``: the palace over HTTP (:mod:`palazzo.hosts.server`), and the built
    web app from the same origin when there is one."""
    from palazzo.hosts.server.app import check_host, serve
    from palazzo.hosts.server.client import url_of

    check_host(args.host, Path(args.palace).expanduser(), args.tokens)
    site = Path(args.site) if args.site else Path(__file__).resolve().parents[3] / "dist"
    with _open(args) as d:
        shown = site if (site / "index.html").is_file() else None
        print(f"palazzo: serving {d.path} at {url_of(args.host, args.port)}/ "
              f"(API /api/ops/<name>, feed /api/events"
              + (f", web app from {site}" if shown else ", no web app: no built site")
              + "; Ctrl-C stops)", file=sys.stderr)
        return serve(d, args.host, args.port, shown, args.tokens, tuple(args.allow_host or ()),
                     args.one_copy)


def _token(args) -> int:
    """``palazzo token``: create (the secret printed once, on stdout), list, revoke."""
    from palazzo.hosts.server.tokens import Tokens

    path = Path(args.palace).expanduser()
    _require_palace(path)
    tokens = Tokens(path)
    if args.action == "create":
        secret, token = tokens.create(args.scope, args.wing, args.name, args.expires)
        print(secret)
        print(f"palazzo: token {token.id} ({token.scope}"
              + (f", wings {', '.join(token.wings)}" if token.wings else "")
              + "): shown once, only its hash is kept", file=sys.stderr)
    elif args.action == "list":
        _print([t.public() for t in tokens.all()])
    else:
        if not args.id:
            raise PalazzoError("give the id of the token to revoke (`palazzo token list`)")
        print(f"revoked {tokens.revoke(args.id).id}")
    return 0


def _json_args(text: str | None) -> dict:
    """Return the operation arguments given as a JSON object on the command line (``@FILE``
    reads them from a file, ``-`` from stdin); a one-line error for anything else."""
    from palazzo.core import jsontext

    if text is None:
        return {}
    if text == "-":
        text = sys.stdin.read()
    elif text.startswith("@"):
        text = Path(text[1:]).expanduser().read_text(encoding="utf-8")
    # Nesting is measured before parsing (5,000 levels would be a RecursionError), and an
    # integer of more than 4,300 digits is a ValueError of the parser: both one-line errors.
    value = jsontext.loads(text, "--args")
    if not isinstance(value, dict):
        raise PalazzoError("--args must be a JSON object, e.g. '{\"query\": \"roses\"}'")
    return value


def _call(args) -> int:
    """``palazzo call``: any registered operation, arguments as JSON, result printed as JSON;
    ``--list`` prints every operation's name and summary instead. Arguments the operation's
    schema refuses (see :meth:`palazzo.ops.registry.Registry.check`) are a one-line error
    before the palace is opened."""
    from palazzo.core.schema import quote
    from palazzo.ops import REGISTRY

    if args.list or args.operation is None:
        for op in REGISTRY.describe():
            print(f"{op['name']:20} {'(writes) ' if op['mutates'] else ''}{op['summary']}")
        return 0
    if args.operation not in REGISTRY.names():
        raise PalazzoError(f"no operation {quote(args.operation)}: `palazzo call --list` "
                           "lists them")
    call_args = _json_args(args.args)
    REGISTRY.check(args.operation, call_args)  # refused before the palace is even opened
    with _open(args, create=False, served=True) as d:
        _print(d.call(args.operation, call_args))
    return 0


def _run_op(name: str, build: Callable[[argparse.Namespace], dict]
            ) -> Callable[[argparse.Namespace], int]:
    """Return a command that calls the operation ``name`` with the arguments ``build(args)``
    makes from the parsed command line (None values dropped) and prints its result as JSON:
    the first-class commands are thin names over the registry, as the MCP tools are."""
    def run(args) -> int:
        call_args = {k: v for k, v in build(args).items() if v is not None}
        with _open(args, create=False, served=True) as d:
            _print(d.call(name, call_args))
        return 0
    return run


def _tunnels(args) -> int:
    """``palazzo tunnels``: the TUNNELs generalist agents proposed (``--status``, default
    pending); ``--approve ID`` / ``--reject ID`` (each repeatable) act on proposals first."""
    with _open(args, create=False) as d:
        out: dict = {}
        if args.approve:
            out["approved"] = d.call("approve_tunnel", {"ids": args.approve})["approved"]
        if args.reject:
            out["rejected"] = d.call("reject_tunnel", {"ids": args.reject})["rejected"]
        listing = {"status": args.status, "limit": args.limit}
        out.update(d.call("list_tunnel_proposals",
                          {k: v for k, v in listing.items() if v is not None}))
        _print(out)
    return 0


def _wake_up(args) -> int:
    """``palazzo wake-up``: the wake-up context as text (``--json``: the whole result)."""
    with _open(args, create=False, served=True) as d:
        out = d.call("wake_up", {"budget": args.budget})
    if args.json:
        _print(out)
    else:
        sys.stdout.write(out["text"] or "the palace is empty\n")
        print(f"({out['tokens']} of {out['budget']} tokens, estimated)", file=sys.stderr)
    return 0


def _hook(args) -> int:
    """``palazzo hook EVENT``: what an assistant's hook runs (:mod:`palazzo.hosts.hooks`);
    exit status 0 whatever happens (a failure is one line on stderr, and kept)."""
    from palazzo.hosts import hooks

    def open_palace():  # (through a running palace server when there is one)
        d = _open(args, create=False, served=True)
        if hasattr(d, "lock_wait"):
            d.lock_wait = min(d.lock_wait, hooks.HOOK_LOCK_WAIT)
        return d

    return hooks.run_soft(args.event, Path(args.palace).expanduser(), open_palace, sys.stdin,
                          sys.stdout, sys.stderr, args.budget, args.recall, args.redact)


def _hooks(args) -> int:
    """``palazzo hooks install|uninstall ASSISTANT``: palazzo's hook entries merged into (or
    taken out of) the assistant's settings file (:mod:`palazzo.hosts.assistants`)."""
    from palazzo.hosts import assistants

    project = None if args.project is None else Path(args.project).expanduser()
    changes = assistants.plan(args.assistant, Path(args.palace).expanduser(),
                              install=args.action == "install", project=project,
                              mcp=args.mcp, recall=args.recall, redact=args.redact)
    if args.dry_run:
        sys.stdout.write(assistants.diff(changes) or "nothing to change\n")
        return 0
    written = assistants.apply(changes)
    for c in changes:
        state = "written" if c.path in written else "already as asked"
        print(f"{c.path}: {state}")
    if args.assistant == "codex" and args.action == "install":
        print("codex runs these hooks once you trust them: start codex and review them with "
              "/hooks", file=sys.stderr)
    return 0


def _communities(args) -> int:
    """``palazzo communities``: one line a community (id, size, name, wings), or with
    ``--json`` the operation's whole result."""
    call = {"k": args.k, "min_cosine": args.min_cosine, "entity_weight": args.entity_weight,
            "resolution": args.resolution, "seed": args.seed, "limit": args.limit,
            "min_size": args.min_size, "community": args.community,
            "drawers": args.drawers or None}
    with _open(args, create=False) as d:
        out = d.call("communities", {k: v for k, v in call.items() if v is not None})
    if args.json:
        _print(out)
        return 0
    if not out["communities"]:
        print("no communities (the palace has no drawers)" if not out["total"]
              else "no community of that size")
    for c in out["communities"]:
        wings = ", ".join(f"{w} {n}" for w, n in list(c["wings"].items())[:3])
        print(f"{c['id']:4}  {c['size']:6}  {c['name']}  [{wings}]")
        for did in c.get("drawer_ids", []):
            print(f"              {did}")
    print(f"({out['count']} of {out['total']} communities over {out['drawers']} drawers, "
          f"similarity from {out['similarity']}, modularity {out['modularity']:.3f})",
          file=sys.stderr)
    return 0


def _kg_parsers(commands: argparse._SubParsersAction, common: argparse.ArgumentParser
                ) -> None:
    """Add ``palazzo kg add|query|timeline|stats|entities|contradictions`` to ``commands``,
    each subcommand with the ``common`` options (--palace, --embedder)."""
    kg = commands.add_parser("kg", help="the knowledge graph: add, query, timeline, stats, "
                             "entities, contradictions")
    sub = kg.add_subparsers(dest="kg_command", required=True)

    def add(name: str, op: str, build, help: str) -> argparse.ArgumentParser:  # noqa: A002
        c = sub.add_parser(name, parents=[common], help=help)
        c.set_defaults(fn=_run_op(op, build))
        return c

    c = add("add", "kg_add", lambda a: {
        "subject": a.subject, "predicate": a.predicate, "object": a.object,
        "valid_from": a.valid_from, "valid_to": a.valid_to, "confidence": a.confidence,
        "source_drawer": a.source_drawer}, "add a fact SUBJECT PREDICATE OBJECT")
    c.add_argument("subject")
    c.add_argument("predicate")
    c.add_argument("object")
    c.add_argument("--from", dest="valid_from", help="YYYY-MM-DD the fact holds from")
    c.add_argument("--to", dest="valid_to", help="YYYY-MM-DD the fact ended")
    c.add_argument("--confidence", type=float)
    c.add_argument("--source-drawer")
    c = add("query", "kg_query", lambda a: {
        "entity": a.entity, "as_of": a.as_of, "direction": a.direction,
        "predicate": a.predicate, "limit": a.limit}, "facts about an entity")
    c.add_argument("entity")
    c.add_argument("--as-of", help="YYYY-MM-DD: what held then")
    c.add_argument("--direction", choices=["out", "in", "both"])
    c.add_argument("--predicate")
    c.add_argument("--limit", type=int)
    c = add("timeline", "kg_timeline", lambda a: {
        "entity": a.entity, "predicate": a.predicate, "limit": a.limit},
        "facts in time order (of one entity, or all)")
    c.add_argument("entity", nargs="?")
    c.add_argument("--predicate")
    c.add_argument("--limit", type=int)
    add("stats", "kg_stats", lambda a: {}, "entity, fact and predicate counts")
    c = add("entities", "kg_entities", lambda a: {"query": a.query, "limit": a.limit},
            "entities whose name matches")
    c.add_argument("query", nargs="?")
    c.add_argument("--limit", type=int)
    add("contradictions", "kg_contradictions", lambda a: {},
        "current facts that contradict each other")


def _bench(args) -> int:
    """Run a ``palazzo bench`` subcommand (:mod:`palazzo.bench.cli`) with this command line's
    embedders and progress bars; return its exit code."""
    from palazzo.bench import cli as bench

    return bench.run(args, make_embedder, ProgressBar)


def _parsers(embedders: tuple[str, ...] | None
             ) -> tuple[argparse.ArgumentParser, Any, argparse.ArgumentParser,
                        Callable[..., argparse.ArgumentParser]]:
    """Return the top parser, its subcommands, the parser of the options every command
    takes, and a function adding a command with them (``cmd(name, fn, help)``);
    ``embedders``: the names ``--embedder`` accepts (None: any, checked when used)."""
    from palazzo.persist.home import default_palace

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--palace", default=str(default_palace()),
                        help="palace directory (default: $PALAZZO_PALACE, else "
                             "%(default)s)")
    common.add_argument("--embedder", default="auto", choices=embedders,
                        help="auto: minilm (its weights fetched on first use; on ONNX "
                             "Runtime with the fast extra), else hash, said on stderr")
    common.add_argument("--progress", action="store_true",
                        help="show progress bars even when stderr is not a terminal")
    p = argparse.ArgumentParser(prog="palazzo", description="A memory palace for AI agents.")
    sub = p.add_subparsers(dest="command", required=True)

    def cmd(name: str, fn, help: str) -> argparse.ArgumentParser:  # noqa: A002
        c = sub.add_parser(name, parents=[common], help=help)
        c.set_defaults(fn=fn)
        return c

    return p, sub, common, cmd


def _hook_command(cmd) -> None:
    c = cmd("hook", _hook, "what an assistant's hook runs (Claude Code: Stop, SubagentStop, "
            "PreCompact and SessionEnd save the session; SessionStart prints the wake-up "
            "context); the event's JSON on stdin; exit 0 whatever happens")
    c.add_argument("event", help="the hook event, as Claude Code names it (Stop, "
                   "SessionStart, …) or in lower case with dashes (stop, session-start, …)")
    c.add_argument("--budget", type=int, default=1500,
                   help="SessionStart: tokens of wake-up context (default 1500)")
    c.add_argument("--recall", type=int, default=0, metavar="TOKENS",
                   help="UserPromptSubmit: add the drawers that best answer the prompt, "
                   "within TOKENS (default 0: nothing)")
    c.add_argument("--redact", action="store_true",
                   help="take secrets (API keys, tokens, private keys, PASSWORD=… values) "
                   "out of the messages before they are saved")


def hook_parser() -> argparse.ArgumentParser:
    """Return the parser of ``palazzo hook`` alone: an assistant waits for every hook, and
    the whole command tree imports the embedders and the benchmarks (0.1 s) to build."""
    p, _, _, cmd = _parsers(None)
    _hook_command(cmd)
    return p


def parser() -> argparse.ArgumentParser:
    from palazzo.embed.registry import NAMES as EMBEDDERS

    p, sub, common, cmd = _parsers(EMBEDDERS)
    cmd("init", _init, "create a palace directory")
    cmd("status", _status, "counts, embedder and storage of the palace")
    cmd("check", _check, "verify every file of the palace (checksums, journal, tip, keys); "
        "exit 1 when it is damaged; changes nothing")
    c = cmd("repair", _repair, "recover a damaged palace (damaged files kept aside); check "
            "drawers, edges, aliases and facts; rebuild what is derived")
    c.add_argument("--yes", action="store_true", help="do it (without: say what it would do)")
    c = cmd("dedup", _dedup, "near-duplicate drawers (a dry run; --yes merges them)")
    c.add_argument("--threshold", type=float, help="cosine (default 0.9)")
    c.add_argument("--text-threshold", type=float, help="word-pair overlap (default 0.7)")
    c.add_argument("--wing")
    c.add_argument("--room")
    c.add_argument("--yes", action="store_true", help="merge (without: only say what)")
    c = cmd("search", _search, "hybrid search")
    c.add_argument("query")
    c.add_argument("--wing")
    c.add_argument("--room")
    c.add_argument("--limit", type=int, default=10)
    c.add_argument("--mode", default="hybrid", choices=["hybrid", "vector", "bm25", "blend"])
    c.add_argument("--json", action="store_true", help="print the results as JSON")
    c = cmd("add", _add, "add one drawer (verbatim text)")
    c.add_argument("text", nargs="?")
    c.add_argument("--file", help="take the text from a file")
    c.add_argument("--wing", required=True)
    c.add_argument("--room", required=True)
    c = cmd("export", _export, "the palace as palace JSON (or JSONL, or AAAK lines)")
    c.add_argument("--out")
    c.add_argument("--format", default="json", choices=["json", "jsonl", "aaak"],
                   help="aaak: a compact line a drawer, for a model to read (a view)")
    c.add_argument("--vectors", default="float32", choices=["float32", "float16", "none"])
    c = cmd("import", _import, "replace the palace by a palace JSON file (checked first)")
    c.add_argument("file")
    def importer(name: str, fn, help: str) -> argparse.ArgumentParser:  # noqa: A002
        c = cmd(name, fn, help)
        c.add_argument("--json", action="store_true", help="print what was found as JSON "
                       "(every skipped item) instead of a summary in words")
        c.add_argument("--summary", metavar="FILE", help="also write that JSON to FILE")
        return c

    c = importer("index", _index, "text files under a folder as drawers")
    c.add_argument("path")
    c.add_argument("--wing")
    c.add_argument("--include", action="append", help="glob; repeat for more")
    c.add_argument("--exclude", action="append", help="glob; repeat for more")
    c.add_argument("--sync", action="store_true", help="remove drawers of deleted files")
    c = importer("import-chats", _import_chats, "chat exports as conversations and drawers")
    c.add_argument("file")
    c.add_argument("--name", help="conversation name for a plain message list")
    c = importer("import-mempalace", _import_mempalace, "a MemPalace palace (Python or Rust)")
    c.add_argument("path")
    c.add_argument("--kg", help="knowledge_graph.sqlite3 to read (default: looked for inside "
                   "the palace, beside it, then in ~/.mempalace; the summary says where)")
    c = importer("import-graphpalace", _import_graphpalace, "a GraphPalace JSON export")
    c.add_argument("file")
    c = cmd("reindex", _reindex, "embed drawers that lack a vector (all with --force)")
    c.add_argument("--force", action="store_true")
    c = cmd("bulk-replace", _bulk_replace, "find and replace text across drawers")
    c.add_argument("find")
    c.add_argument("replace")
    c.add_argument("--wing")
    c.add_argument("--room")
    c.add_argument("--dry-run", action="store_true")
    c = cmd("call", _call, "run any operation: palazzo call NAME --args JSON (--list: all)")
    c.add_argument("operation", nargs="?")
    c.add_argument("--args", help="the arguments as a JSON object; @FILE reads a file, - stdin")
    c.add_argument("--list", action="store_true", help="list the operations")
    _kg_parsers(sub, common)
    c = cmd("communities", _communities, "groups of drawers about one thing (Louvain over "
            "similarity and shared entities), named by their words")
    c.add_argument("--resolution", type=float, help="higher: more, smaller communities "
                   "(default 1)")
    c.add_argument("--k", type=int, help="nearest drawers linked to each (default 10)")
    c.add_argument("--min-cosine", type=float, help="weakest similarity linked (default 0.3)")
    c.add_argument("--entity-weight", type=float, help="weight of shared-entity links "
                   "(default 0.3; 0: similarity only)")
    c.add_argument("--seed", type=int)
    c.add_argument("--limit", type=int, help="communities listed (default 50)")
    c.add_argument("--min-size", type=int, help="list only communities this big")
    c.add_argument("--community", type=int, help="list only this community")
    c.add_argument("--drawers", action="store_true", help="also list their drawer ids")
    c.add_argument("--json", action="store_true", help="the whole result as JSON")
    _hook_command(cmd)
    c = cmd("hooks", _hooks, "install (or uninstall) palazzo's hooks into an assistant's "
            "settings (claude-code), beside what is there; --dry-run shows the change")
    c.add_argument("action", choices=["install", "uninstall"])
    c.add_argument("assistant", help="claude-code or codex (gemini is not built yet)")
    where = c.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="the user's settings (~/.claude/settings.json; the default)")
    where.add_argument("--project", metavar="DIR", nargs="?", const=".",
                       help="a project's settings (DIR/.claude/settings.json; DIR: here)")
    c.add_argument("--mcp", action="store_true", help="also register palazzo's MCP server "
                   "(~/.claude.json, or the project's .mcp.json)")
    c.add_argument("--recall", type=int, default=0, metavar="TOKENS",
                   help="also a UserPromptSubmit hook adding the drawers that best answer "
                   "each prompt, within TOKENS (e.g. 300)")
    c.add_argument("--redact", action="store_true", help="the saving hooks take secrets out "
                   "of the messages before they are saved")
    c.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    c = cmd("wake-up", _wake_up, "what to know at the start of a session, within a budget")
    c.add_argument("--budget", type=int, default=800, help="tokens (characters / 4)")
    c.add_argument("--json", action="store_true", help="every line with its source, as JSON")
    c = cmd("navigate", _run_op("navigate", lambda a: {
        "start": a.start, "goal": a.goal, "goal_query": a.toward,
        "deposit": a.deposit or None, "context": a.context}),
        "cheapest path between two nodes, or toward a topic (Semantic A*)")
    c.add_argument("start", help="node id, 'wing/room' or a wing name ('palace': the top)")
    c.add_argument("goal", nargs="?", help="node id, 'wing/room' or a wing name")
    c.add_argument("--toward", metavar="TEXT", help="instead of a goal: walk to the room or "
                   "closet nearest TEXT in meaning")
    c.add_argument("--context")
    c.add_argument("--deposit", action="store_true", help="reinforce the path's edges")
    c = cmd("slice", _run_op("slice_context", lambda a: {
        "anchor": a.anchor, "policy": a.policy, "with_content": a.with_content or None,
        "budget": a.budget, "form": a.form}),
        "a signed provenance slice around a conversation turn")
    c.add_argument("anchor", help="the anchor turn's id")
    c.add_argument("--policy")
    c.add_argument("--with-content", action="store_true")
    c.add_argument("--budget", type=int, help="tokens (characters / 4, + 4 a turn): keep the "
                   "best turns that fit; signed with the slice")
    c.add_argument("--form", choices=["messages", "text", "triples"],
                   help="also give the context in this form")
    c = cmd("atlas", _run_op("atlas", lambda a: {
        "anchors": a.anchor or None, "conversation": a.conversation, "limit": a.limit,
        "policy": a.policy, "budget": a.budget, "top": a.top,
        "output": "bundle" if a.bundle else None}),
        "many slices at once: their overlap and the most influential turns")
    c.add_argument("--anchor", action="append", help="an anchor turn id; repeat for more "
                   "(default: turns of --conversation or of the palace, sampled to --limit)")
    c.add_argument("--conversation")
    c.add_argument("--limit", type=int, help="anchors at most (default 200)")
    c.add_argument("--policy")
    c.add_argument("--budget", type=int, help="tokens a slice")
    c.add_argument("--top", type=int, help="influential turns listed (default 10)")
    c.add_argument("--bundle", action="store_true", help="the whole atlas bundle (overlap "
                   "matrix, every turn's influence) instead of the summary")
    c = cmd("swarm", _run_op("run_swarm", lambda a: {
        "cycles": a.cycles, "agents": a.agents, "seed": a.seed, "goal": a.goal,
        "archetypes": a.archetype, "wing": a.wing, "diary": False if a.no_diary else None,
        "add_tunnels": a.add_tunnels or None, "tunnel_threshold": a.tunnel_threshold}),
        "run the agent swarm over the palace")
    c.add_argument("--cycles", type=int)
    c.add_argument("--agents", type=int)
    c.add_argument("--seed", type=int)
    c.add_argument("--goal")
    c.add_argument("--archetype", action="append",
                   choices=["explorer", "exploiter", "balanced", "specialist", "generalist"],
                   help="repeat for more")
    c.add_argument("--wing", help="the wing of specialists without a focus")
    c.add_argument("--no-diary", action="store_true",
                   help="specialists do not write their notes to their diaries")
    c.add_argument("--add-tunnels", action="store_true",
                   help="add the generalists' TUNNELs at once instead of proposing them")
    c.add_argument("--tunnel-threshold", type=float, metavar="COSINE",
                   help="room centroid cosine a proposed TUNNEL needs (default 0.8)")
    c = cmd("tunnels", _tunnels, "TUNNELs the generalist agents proposed: list, approve, "
            "reject")
    c.add_argument("--status", choices=["pending", "approved", "rejected", "all"])
    c.add_argument("--limit", type=int)
    c.add_argument("--approve", action="append", metavar="ID", help="repeat for more")
    c.add_argument("--reject", action="append", metavar="ID", help="repeat for more")
    cmd("mcp", _mcp, "serve the palace to MCP clients over stdio")
    c = cmd("serve", _serve, "serve the palace over HTTP (every operation, the change feed, "
            "health, metrics) and the built web app, on the loopback address")
    c.add_argument("--host", default="127.0.0.1", help="127.0.0.1 (default) or ::1; any "
                   "other address asks every caller for a token")
    c.add_argument("--port", type=int, default=8765)
    c.add_argument("--site", help="the built web app (default: dist/ of this checkout)")
    c.add_argument("--tokens", action="store_true", help="ask for a token on loopback too")
    c.add_argument("--allow-host", action="append", metavar="NAME",
                   help="a name the Host header may give (this machine's name on a private "
                   "network); repeat for more")
    c.add_argument("--one-copy", action="store_true",
                   help="hold the palace in memory once (half the memory; reads then wait "
                   "for writes): by default reads are answered from a second copy")
    c = cmd("token", _token, "tokens for palazzo serve: create (printed once; only its "
            "hash is kept), list, revoke")
    c.add_argument("action", choices=["create", "list", "revoke"])
    c.add_argument("id", nargs="?", help="revoke: the token's id")
    c.add_argument("--scope", choices=["read", "write", "admin"], default="read")
    c.add_argument("--wing", action="append", metavar="WING",
                   help="the token sees and writes only this wing; repeat for more")
    c.add_argument("--expires", type=float, metavar="DAYS", help="days until it expires")
    c.add_argument("--name", default="", help="a name to tell it by")
    from palazzo.bench import cli as bench

    bench.add_parsers(sub).set_defaults(fn=_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = (hook_parser() if argv[:1] == ["hook"] else parser()).parse_args(argv)
    try:
        code = args.fn(args)
        if getattr(args, "damaged", None) and args.command != "repair":
            # A read of a damaged palace answers from what still verifies: say so once.
            print(f"palazzo: warning: this palace is damaged and read-only: {args.damaged}",
                  file=sys.stderr)
        return code
    except PalazzoError as err:
        print(f"palazzo: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `palazzo … | head`: the reader has what it wanted
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the exit flush goes here
        return 0
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as err:
        print(f"palazzo: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

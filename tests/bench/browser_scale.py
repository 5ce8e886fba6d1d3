"""Browser at scale (issue 13): boot the built page on a 20,000-message palace in Chromium and
time search in the worker.

    python3 py/tasks.py bench-browser-scale --runs 3 --searches 30

The palace is the one ``palazzo bench scale`` measures under CPython: a generated ChatGPT
export (:mod:`palazzo.bench.exportgen`, ``--messages``, ``--seed``) imported by the command line
(``palazzo import-chats --embedder hash``) into a palace directory, kept under ``.cache/`` and
made again when the snapshot code changes (or with ``--fresh``); ``--palace DIR`` uses another
palace directory instead. A person's palace lives in the browser's storage, so each run puts the
directory's files (the columnar snapshot and the journal) into a fresh context's storage, as the
worker keeps them (OPFS ``palazzo/<palace>/<file>``, or IndexedDB with ``--storage
indexeddb``), from a blank page of the same origin; then it loads the page, which opens that
palace as a returning user's tab does. Nothing is imported in the browser.

Reported per run, in seconds since the page's navigation start:
  pyodide_ready, packages_loaded   the runtime and numpy/panel/palazzo in the worker
  palace_read       the palace's files are read from storage
  engine_ready      the palace is open: snapshot read, journal replayed, operations answered
  panel_imported, document_rendered   Panel imported; the Panel document is on the page
  interactive       the status line shows the palace's drawer count and a query typed into
                    the Search tab has its results on screen (before any embedder: BM25)
  embedder_ready    the deferred packages and the embedder are in (``?embedder=hash``: the
                    palace's own hash vectors are kept; see docs/browser.md)
Memory (``memory_mb``, :mod:`bench.procmem`): the summed PSS of every Chromium process, the
largest sample from navigation to interactive (``boot_peak``) and over the whole run
(``peak``), and the figure 2 s after the searches (``open``: the tab with the palace
open); with ``--export``, the palace file saved from the page as the Files tab's Download
button saves it (seconds, bytes, ``peak_mb`` while it was written and saved).
Each run also boots the page once with empty storage (a first launch on the demo palace, as
``tests/bench/boot.py`` does; ``--no-baseline`` skips it), so what the big palace adds can be
told from what the machine's load does to every boot.
Then, once the embedder is in, ``--searches`` searches a mode (bm25, vector, hybrid) through
``window.palazzo.call("search")``, the worker RPC the page and the interface use, timed in the
page from the call to its reply, after one warm-up query a mode; and ``--ui-searches`` queries
typed into the Search tab, timed from Enter to the new results on screen. The queries are
:func:`palazzo.bench.exportgen.queries` of the export (words of its messages), the same ones
``palazzo bench scale`` uses. Each run uses a fresh Chromium profile in a folder on disk
(empty storage and HTTP cache; ``--profile memory``: a context of one launched browser,
whose storage lives in memory and counts in its figures) with the network guarded to
loopback. Writes JSON (default bench-results/browser-scale.json).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

from bench.procmem import Sampler  # noqa: E402
from browser.conftest import (  # noqa: E402
    CHROMIUM_ARGS,
    SITE,
    Guard,
    chromium_path,
    new_guarded_context,
)
from palazzo.hosts.serve import SiteHandler, SiteServer  # noqa: E402

PALACE = "Heavy user"  # the palace's name in the browser's storage
SEED_PATH = "/__bench/seed.html"
FILES_PATH = "/__bench/palace/"
MODES = ("bm25", "vector", "hybrid")
# Stage name → the page's mark (window.palazzo.timings), in the order they happen.
MARKS = {
    "pyodide_ready": "runtime:done",
    "packages_loaded": "packages:done",
    "palace_read": "palace-read:done",
    "engine_ready": "engine:done",
    "panel_imported": "panel-import:done",
    "document_rendered": "document:done",
    "interactive": "interactive",
    "embedder_ready": "deferred:done",
}
# Whatever the snapshot's bytes depend on: a cached palace made before they changed is made
# again, so the browser never measures a palace the current code would not write.
FORMAT_SOURCES = ("formats", "core", "persist", "retrieval")


# -- the palace ---------------------------------------------------------------------------

def _format_key() -> str:
    digest = hashlib.sha256()
    pkg = ROOT / "py" / "palazzo"
    for sub in FORMAT_SOURCES:
        for path in sorted((pkg / sub).rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def make_palace(messages: int, seed: int, queries: int, fresh: bool) -> tuple[Path, list[str]]:
    """Return ``(palace directory, queries)`` for a generated export of ``messages``: made
    with the command line under ``.cache/`` unless a palace made by the same snapshot code is
    there already. Cost when made: the export (seconds) and ``palazzo import-chats`` (about a
    minute at 20,000 messages)."""
    from palazzo.bench import exportgen

    base = ROOT / ".cache" / "bench-browser-scale" / f"{messages}-{seed}"
    marker, palace = base / "made.json", base / "palace"
    key = _format_key()
    if not fresh and marker.exists():
        made = json.loads(marker.read_text())
        if made.get("format_key") == key and len(made["queries"]) >= queries:
            return palace, made["queries"][:queries]
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    print(f"making a palace of {messages} messages in {base} (one time)", flush=True)
    conversations, _stats = exportgen.make_export(messages, seed)
    export = base / "conversations.json"
    export.write_text(json.dumps(conversations, ensure_ascii=False), encoding="utf-8")
    asked = exportgen.queries(conversations, max(queries, 200), seed)
    del conversations
    t0 = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "py"))
    done = subprocess.run([sys.executable, "-m", "palazzo", "import-chats", str(export),
                           "--palace", str(palace), "--embedder", "hash"], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"palazzo import-chats failed: {done.stderr[-2000:]}")
    export.unlink()
    marker.write_text(json.dumps({"format_key": key, "messages": messages, "seed": seed,
                                  "import_s": round(time.perf_counter() - t0, 1),
                                  "queries": asked}, ensure_ascii=False, indent=1))
    return palace, asked


def palace_files(palace: Path) -> dict[str, int]:
    """Return the palace's own files (snapshot, journal; not the CLI's lock) and their bytes."""
    return {p.name: p.stat().st_size for p in sorted(palace.iterdir())
            if p.is_file() and not p.name.startswith(".")}


# -- the server: the site, plus the palace's files and a blank page on the same origin -----

def serve(site: Path, palace: Path):
    """Start the site's server with the palace's files under ``/__bench/palace/`` and a blank
    page at ``/__bench/seed.html``; return ``(server, base_url)``."""
    import functools
    import threading

    class Handler(SiteHandler):
        def translate_path(self, path: str) -> str:
            clean = path.split("?", 1)[0]
            if clean.startswith(FILES_PATH):
                name = clean[len(FILES_PATH):]
                if "/" not in name and (palace / name).is_file():
                    return str(palace / name)
            return super().translate_path(path)

        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] == SEED_PATH:
                body = b"<!doctype html><title>seed</title>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

    server = SiteServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    server.verbose = False  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}/"


# -- in the page ----------------------------------------------------------------------------

# Write the palace's files where the worker's storage.js reads them.
SEED_JS = """async ([palace, names, storage, prefix]) => {
  const files = [];
  for (const name of names) {
    const res = await fetch(prefix + encodeURIComponent(name));
    if (!res.ok) throw new Error(`${name}: HTTP ${res.status}`);
    files.push([name, await res.arrayBuffer()]);
  }
  if (storage === "opfs") {
    const root = await (await navigator.storage.getDirectory())
      .getDirectoryHandle("palazzo", { create: true });
    const dir = await root.getDirectoryHandle(palace, { create: true });
    for (const [name, data] of files) {
      const out = await (await dir.getFileHandle(name, { create: true })).createWritable();
      await out.write(data);
      await out.close();
    }
  } else {
    const db = await new Promise((resolve, reject) => {
      const req = indexedDB.open("palazzo", 1);
      req.onupgradeneeded = () => req.result.createObjectStore("files");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    for (const [name, data] of files) {
      await new Promise((resolve, reject) => {
        const tx = db.transaction("files", "readwrite", { durability: "strict" });
        tx.objectStore("files").put(data, `${palace}/${name}`);
        tx.oncomplete = resolve;
        tx.onerror = () => reject(tx.error);
      });
    }
    db.close();
  }
  return files.reduce((n, [, data]) => n + data.byteLength, 0);
}"""

# The results pane's text (Panel renders into shadow roots).
RESULTS_JS = """() => {
  const find = (root) => {
    const el = root.querySelector('[data-testid="search-summary"], '
      + '[data-testid="search-results"], [data-testid="search-empty"]');
    if (el) return el;
    for (const host of root.querySelectorAll('*')) {
      if (host.shadowRoot) { const f = find(host.shadowRoot); if (f) return f; }
    }
    return null;
  };
  const el = find(document);
  return el ? el.textContent : null;
}"""

# N searches of one mode through the worker RPC, timed in the page; returns ms and hits.
RPC_JS = """async ([queries, mode, limit, budget]) => {
  const start = performance.now();
  try {
    await window.palazzo.call("search", { query: queries[0], mode, limit });
  } catch (err) {
    return { error: String(err.message || err) };
  }
  const ms = [], hits = [];
  for (const query of queries) {
    if (performance.now() - start > budget) break;
    const t0 = performance.now();
    const out = await window.palazzo.call("search", { query, mode, limit });
    ms.push(performance.now() - t0);
    hits.push(out.results.length);
  }
  return { ms, hits };
}"""


# --analytics: issue 19's whole-palace operations, each once, timed in the page from the call
# to its reply (the worker loads NetworkX with the deferred packages, awaited before this).
ANALYTICS = [("communities", "communities", {"limit": 5}),
             ("atlas_200_anchors", "atlas", {"limit": 200}),
             ("swarm_200_cycles", "run_swarm", {"agents": 5, "cycles": 200, "diary": False,
                                                "stop_on_converge": False})]
ANALYTICS_JS = """async (steps) => {
  const out = {};
  for (const [name, op, args] of steps) {
    const t0 = performance.now();
    try {
      const r = await window.palazzo.call(op, args);
      out[name] = { ms: Math.round(performance.now() - t0),
                    found: r.total ?? r.anchors ?? (r.agents ? r.agents.length : null),
                    ...(r.seconds ? { seconds: r.seconds } : {}) };
    } catch (err) {
      out[name] = { error: String(err.message || err) };
    }
  }
  return out;
}"""


def percentiles(ms: list[float]) -> dict[str, float]:
    """Return p50, p95, mean and max of ``ms`` (milliseconds), rounded to 0.1 ms."""
    import numpy as np

    a = np.asarray(ms, dtype=float)
    return {"p50_ms": round(float(np.percentile(a, 50)), 1),
            "p95_ms": round(float(np.percentile(a, 95)), 1),
            "mean_ms": round(float(a.mean()), 1), "max_ms": round(float(a.max()), 1),
            "n": len(ms)}


def ui_search(page, query: str, timeout_ms: int) -> float:
    """Type ``query`` into the Search tab and press Enter; return the milliseconds until the
    results on screen change (the previous query's results must differ)."""
    before = page.evaluate(RESULTS_JS)
    box = page.locator(".pz-search-query input")
    box.fill(query)
    t0 = page.evaluate("performance.now()")
    box.press("Enter")
    page.wait_for_function(f"(before) => {{ const t = ({RESULTS_JS})(); "
                           "return t !== null && t !== before; }", arg=before,
                           timeout=timeout_ms, polling=10)
    return page.evaluate("performance.now()") - t0


def disk_context(pw, profile: Path):
    """Return ``(context, guard)``: Chromium on a new profile in folder ``profile``, as a
    person's browser keeps one on disk, every request through the offline guard.

    Why not a context of a launched browser: such a context keeps its storage in memory, so
    the palace files seeded into OPFS (240 MB at 20k drawers, both generations) and the HTTP
    cache counted in the browser's and network service's memory, about 280 MB a person's
    tab never holds (measured: 1,594 against 1,307 MB with the same palace open)."""
    guard = Guard()
    context = pw.chromium.launch_persistent_context(
        str(profile), executable_path=chromium_path(), args=CHROMIUM_ARGS,
        accept_downloads=True)
    context.route("**/*", guard.route)
    context.on("response", guard.response)
    return context, guard


def one_run(new_context, url: str, palace: Path, queries: list[str], args) -> dict:
    """Seed a fresh context's storage with ``palace``, boot the page on it, and return the
    stage times (s), the drawer count shown, and the search timings (ms). ``new_context()``
    returns ``(context, guard)``."""
    context, guard = new_context()
    page = context.new_page()
    page.set_default_timeout(args.timeout * 1000)
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda exc: console.append(f"pageerror: {exc}"))
    page.goto(url + SEED_PATH.lstrip("/"))
    names = list(palace_files(palace))
    seeded = page.evaluate(SEED_JS, [PALACE, names, args.storage, FILES_PATH])

    query = {"storage": args.storage} if args.storage != "opfs" else {}
    if args.embedder == "hash":
        query["embedder"] = "hash"
    target = url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")
    memory = Sampler()
    memory.__enter__()
    page.goto(target)
    page.evaluate("window.palazzo.rendered")
    # Interactive: the palace's count on the status line, and a typed query answered.
    status = page.locator("[data-testid=palace-status]").first
    status.wait_for()
    page.wait_for_function(f"""() => {{ const f = (root) => {{
        const el = root.querySelector('[data-testid="palace-status"]');
        if (el) return el; for (const h of root.querySelectorAll('*')) {{
          if (h.shadowRoot) {{ const x = f(h.shadowRoot); if (x) return x; }} }} return null; }};
        const el = f(document); return el && /\\b{args.expect_drawers}\\s+drawers/
          .test(el.textContent.replace(/,/g, '')); }}""", polling=10)
    page.locator(".bk-tab").filter(has_text=re.compile("^Search$")).click()
    box = page.locator(".pz-search-query input")
    box.fill(queries[0])
    typed = page.evaluate("performance.now()")
    box.press("Enter")
    page.locator("[data-testid=search-result]").first.wait_for()
    interactive = page.evaluate("performance.now()")
    status_text = status.inner_text()
    if args.embedder == "hash":
        page.evaluate("window.palazzo.deferred")
    else:
        # MiniLM replaces the palace's hash vectors: wait until they are dropped (the worker
        # then embeds every drawer again, in steps, while the searches below run).
        page.evaluate("""async () => {
            for (;;) {
              const s = await window.palazzo.call('palace_status');
              if (s.embedded < s.drawers) return;
              await new Promise((r) => setTimeout(r, 250));
            } }""")
    boot_peak = memory.peak_mb
    timings = {**page.evaluate("window.palazzo.timings"), "interactive": interactive}
    stages = {name: round(timings[key] / 1000, 3) for name, key in MARKS.items()
              if key in timings}

    palace_status = page.evaluate("window.palazzo.call('palace_status')")
    search = {"first_ui_ms": round(interactive - typed, 1)}
    t0 = time.perf_counter()
    for mode in MODES:
        out = page.evaluate(RPC_JS, [queries[1:args.searches + 1], mode, 10,
                                     args.budget * 1000])
        if "error" in out:
            search[mode] = {"error": out["error"]}
            continue
        search[mode] = {**percentiles(out["ms"]),
                        "queries_with_hits": sum(1 for h in out["hits"] if h)}
    ui_ms = []
    for q in queries[args.searches + 1:args.searches + 1 + args.ui_searches]:
        try:
            ui_ms.append(ui_search(page, q, 60_000))
        except Exception as err:  # a query whose results look like the last one's
            console.append(f"ui search {q!r} skipped: {type(err).__name__}")
    if ui_ms:
        search["ui_hybrid"] = percentiles(ui_ms)
    if args.analytics:
        page.evaluate("window.palazzo.deferred")
        search["analytics"] = page.evaluate(ANALYTICS_JS, [list(a) for a in ANALYTICS])
    if args.embedder != "hash":
        # How far MiniLM got while the searches waited their turn between its steps.
        after = page.evaluate("window.palazzo.call('palace_status')")
        search["embedding_meanwhile"] = {"embedded": after["embedded"],
                                         "seconds": round(time.perf_counter() - t0, 1)}
    time.sleep(2)  # what the tab keeps once the searches are answered
    open_mb = memory.sample()
    from bench.procmem import tab_parts

    # By process, and the palace worker's wasm heap inside the renderer's figure.
    open_parts = tab_parts(page)
    exported = None
    if args.export:
        # The palace file as the Files tab's Download button saves it (streamed to a Blob).
        memory.peak_mb = open_mb
        t_export = time.perf_counter()
        with page.expect_download(timeout=args.timeout * 1000) as info:
            saved = page.evaluate("window.palazzo.exportFile()")
        info.value.cancel()
        exported = {"seconds": round(time.perf_counter() - t_export, 2),
                    "bytes": saved["bytes"], "peak_mb": memory.sample() and memory.peak_mb}
    memory.__exit__()
    context.close()
    if guard.outside or guard.failed:
        raise SystemExit(f"run was not offline/clean: {guard.outside} {guard.failed}")
    return {"stages_s": stages, "seeded_bytes": seeded, "status_line": status_text,
            "memory_mb": {"boot_peak": boot_peak, "open": open_mb, "peak": memory.peak_mb,
                          # spare room the worker freed in its in-memory files after boot
                          "open_by_process": open_parts},
            "export": exported,
            "palace_status": {k: palace_status.get(k) for k in
                              ("drawers", "embedded", "edges", "rooms", "wings")},
            "search": search, "console": console[:20]}


def summarise(runs: list[dict]) -> dict:
    """Return median/min/max of every stage and of every search figure over ``runs``."""
    out: dict = {"stages_s": {}, "search_ms": {}}
    for name in MARKS:
        values = [r["stages_s"][name] for r in runs if name in r["stages_s"]]
        if values:
            out["stages_s"][name] = {"median": round(statistics.median(values), 2),
                                     "min": round(min(values), 2),
                                     "max": round(max(values), 2)}
    for name in ("boot_peak", "open", "peak"):
        values = [r["memory_mb"][name] for r in runs if r["memory_mb"].get(name) is not None]
        if values:
            out.setdefault("memory_mb", {})[name] = {"median": round(statistics.median(values)),
                                                     "max": round(max(values))}
    base = [r["baseline_s"] for r in runs if "baseline_s" in r]
    if base:
        out["baseline_s"] = {name: round(statistics.median(b[name] for b in base), 2)
                             for name in base[0]}
    for mode in (*MODES, "ui_hybrid"):
        got = [r["search"][mode] for r in runs if "p50_ms" in r["search"].get(mode, {})]
        if got:
            out["search_ms"][mode] = {k: round(statistics.median(g[k] for g in got), 1)
                                      for k in ("p50_ms", "p95_ms", "mean_ms", "max_ms")}
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--palace", help="a palace directory to use instead of generating one")
    parser.add_argument("--fresh", action="store_true", help="make the palace again")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--searches", type=int, default=30, help="RPC searches a mode")
    parser.add_argument("--ui-searches", type=int, default=10, help="searches typed in the UI")
    parser.add_argument("--storage", choices=("opfs", "indexeddb"), default="opfs")
    parser.add_argument("--embedder", choices=("hash", "minilm"), default="hash",
                        help="hash keeps the palace's vectors; minilm (the page's default) "
                        "drops them and embeds every drawer again in the worker")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the first-launch boot (demo palace) each run makes too")
    parser.add_argument("--budget", type=float, default=120,
                        help="seconds of RPC searches a mode at most (fewer queries then)")
    parser.add_argument("--analytics", action="store_true", help="also time communities, "
                        "an atlas of 200 anchors and a 200-cycle swarm once a run")
    parser.add_argument("--export", action="store_true", help="also save the palace file "
                        "from the page (time, bytes, memory peak while it is written)")
    parser.add_argument("--profile", choices=("disk", "memory"), default="disk",
                        help="disk: a new Chromium profile in a folder each run, as a "
                        "person's browser (default); memory: a context of one launched "
                        "browser, whose storage is held in memory (the figures before "
                        "2026-12-06)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a step may take")
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "browser-scale.json"))
    args = parser.parse_args(argv)

    wanted = args.searches + 1 + args.ui_searches
    if args.palace:
        palace = Path(args.palace)
        from palazzo.bench import exportgen

        conversations, _ = exportgen.make_export(args.messages, args.seed)
        queries = exportgen.queries(conversations, wanted, args.seed)
        del conversations
    else:
        palace, queries = make_palace(args.messages, args.seed, wanted, args.fresh)
    files = palace_files(palace)
    from palazzo.embed import registry
    from palazzo.palace import Palace
    from palazzo.persist.directory import PalaceDirectory

    hashed = registry.make("hash")
    with PalaceDirectory(palace, lambda **kw: Palace(embedder=hashed, **kw)) as d:
        args.expect_drawers = d.call("palace_status")["drawers"]
    print(f"palace {palace}: {args.expect_drawers} drawers, files {files}", flush=True)

    from playwright.sync_api import sync_playwright

    server, url = serve(SITE, palace)
    runs = []
    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="palazzo-bench-") as tmp:
        # One Chromium at a time: the memory sampler sums every Chromium below this process.
        browser = None
        for i in range(args.runs):
            load = os.getloadavg()[0]
            if args.profile == "disk":
                def new_context(i=i):
                    return disk_context(pw, Path(tmp) / f"profile-{i}")
            else:
                browser = browser or pw.chromium.launch(executable_path=chromium_path(),
                                                        args=CHROMIUM_ARGS)

                def new_context(browser=browser):
                    return new_guarded_context(browser, accept_downloads=True)
            run = one_run(new_context, url, palace, queries, args)
            run["load_average_before"] = round(load, 2)
            run["profile"] = args.profile
            if not args.no_baseline:
                from bench.boot import one_boot

                browser = browser or pw.chromium.launch(executable_path=chromium_path(),
                                                        args=CHROMIUM_ARGS)
                run["baseline_s"] = one_boot(browser, url)
                print(f"  baseline (empty storage, demo palace): {run['baseline_s']}",
                      flush=True)
                if args.profile == "disk":
                    browser.close()
                    browser = None
            runs.append(run)
            print(f"run {i + 1}/{args.runs}: "
                  + ", ".join(f"{k} {v:.2f}s" for k, v in run["stages_s"].items()), flush=True)
            print(f"  search {run['search']}", flush=True)
            for line in run["console"]:
                print(f"  console {line}", flush=True)
        if browser is None:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        version = browser.version
        browser.close()
    server.shutdown()

    summary = summarise(runs)
    print(f"\n{'stage':<18} {'median':>8} {'range':>16}   ({args.runs} cold loads)")
    for name, s in summary["stages_s"].items():
        print(f"{name:<18} {s['median']:>7.2f}s {s['min']:>7.2f}-{s['max']:.2f}s")
    for mode, s in summary["search_ms"].items():
        print(f"search {mode:<11} p50 {s['p50_ms']:>7.1f} ms  p95 {s['p95_ms']:>7.1f} ms")
    result = {
        "benchmark": "browser-scale",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": "python3 py/tasks.py bench-browser-scale " + " ".join(argv),
        "messages": args.messages, "seed": args.seed, "palace": str(palace),
        "palace_files": files, "drawers": args.expect_drawers,
        "storage": args.storage, "embedder": args.embedder,
        "targets": {"interactive_s": 12, "search_p50_ms": 100},
        "summary": summary, "runs": runs, "chromium": version,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_end": os.getloadavg()},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

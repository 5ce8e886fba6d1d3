"""Embedding speed in the browser: the real page end to end, and ONNX Runtime Web raw.

    flock /tmp/palazzo-browser.lock .venv/bin/python tests/bench/embed_browser.py \\
        --out bench-results/embed-browser.json

One headless Chromium run (the network guarded to loopback), the site served by
``palazzo.hosts.serve`` (which sends COOP/COEP, so pages are cross-origin isolated):

- **end to end**, the built page (dist/) once per embedder: ``?embedder=numpy`` (MiniLM in
  NumPy inside Pyodide), the default ONNX Runtime path (one thread), ``?threads=2``, and
  ``?embedder=hash`` (no model: what importing and background indexing cost without one).
  Reported: seconds from navigation to the embedder being ready (the page's ``embedder:done``
  stage mark) and to the demo palace being embedded (``deferred:done``); a folder of N text
  files of ~100 word pieces each (cut from the development file's sessions) imported through
  the real dialog into a new palace, timed from the Import click until ``palace_status``
  counts every drawer embedded (drawers/s); a search's round trip with a query never seen
  (its vector computed) and the same query again (its vector known), whose difference is the
  query's embedding, and how many fresh searches did rank by a vector; the renderer's peak
  resident memory (from /proc: the page and its workers live in one renderer process).
- **raw**, a harness page written to a temporary folder beside links to dist's ONNX Runtime
  files and model (nothing is added to web/ or workers/): a module worker creates an
  InferenceSession of the shipped fp32 model (float16-stored) and of an int8 one
  (:func:`palazzo.bench.embedder.quantise_int8`), with 1 and 2 threads (one page each:
  ONNX Runtime fixes its thread count when its wasm starts), and times paragraphs/s at batch 1
  and 8 on ~100 and ~256 word-piece paragraphs, and a question's latency at batch 1 (with
  ``--fp32-stored`` also the graph with float32-stored weights, which has no Cast nodes). The
  first paragraph's vector is compared with CPython's onnxruntime on the same ids.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

from browser.conftest import CHROMIUM_ARGS, SITE, chromium_path, new_guarded_context  # noqa: E402
from palazzo.bench.embedder import quantise_int8, token_paragraphs  # noqa: E402
from palazzo.bench.longmemeval import load, session_text  # noqa: E402
from palazzo.embed.wordpiece import WordPiece  # noqa: E402
from palazzo.hosts.serve import serve_in_thread  # noqa: E402

DATA = ROOT.parent / "shared" / "bench" / "longmemeval_s_reduced_dev50.json"
MODELS = SITE / "vendor" / "models" / "minilm"
PAGES = {  # name: the page's query string
    "numpy": "?embedder=numpy",
    "onnx-1t": "",
    "onnx-2t": "?threads=2",
    "hash": "?embedder=hash",
}
STATE = "(s) => document.getElementById('import-dialog').dataset.state === s"
SEARCHES = """async (qs) => {
  const out = [];
  for (const q of qs) {
    let t = performance.now();
    const first = await window.palazzo.call('search', {query: q});
    const fresh = performance.now() - t;
    t = performance.now();
    await window.palazzo.call('search', {query: q});
    // whether the fresh search ranked by meaning (its query vector arrived in time)
    const used = first.results.some((h) => h.scores.vector_rank !== null);
    out.push([fresh, performance.now() - t, used]);
  }
  return out;
}"""
MEMORY = """async () => {
  if (!self.crossOriginIsolated || !performance.measureUserAgentSpecificMemory) return null;
  const timeout = new Promise((res) => setTimeout(() => res(null), 30000));
  const m = await Promise.race([performance.measureUserAgentSpecificMemory(), timeout]);
  return m ? m.bytes : null;
}"""

HARNESS_HTML = """<!doctype html><meta charset="utf-8"><title>ORT harness</title>
<script type="module">
const threads = Number(new URLSearchParams(location.search).get("threads") || 1);
window.harness = new Promise((resolve, reject) => {
  const worker = new Worker("./harness.worker.js", { type: "module" });
  worker.onmessage = (e) => e.data.error ? reject(new Error(e.data.error)) : resolve(e.data);
  worker.onerror = (e) => reject(new Error(e.message || "worker failed"));
  fetch("./job.json").then((r) => r.json()).then((job) => worker.postMessage({ ...job, threads }));
});
</script>
"""
HARNESS_WORKER = """import * as ort from "./vendor/ort/ort.wasm.min.mjs";

function tensors(rows) {
  const n = rows.length, t = Math.max(...rows.map((r) => r.length));
  const ids = new BigInt64Array(n * t), mask = new BigInt64Array(n * t);
  rows.forEach((r, i) => r.forEach((id, j) => {
    ids[i * t + j] = BigInt(id);
    mask[i * t + j] = 1n;
  }));
  return { input_ids: new ort.Tensor("int64", ids, [n, t]),
           attention_mask: new ort.Tensor("int64", mask, [n, t]) };
}

async function run(session, rows) {
  const out = await session.run(tensors(rows));
  return Array.from(out.sentence_embedding.data);
}

self.onmessage = async (event) => {
  const job = event.data;
  try {
    ort.env.wasm.wasmPaths = new URL("./vendor/ort/", import.meta.url).href;
    ort.env.wasm.numThreads = job.threads;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = "error";
    const result = { isolated: self.crossOriginIsolated, models: {} };
    for (const model of job.models) {
      const t0 = performance.now();
      const bytes = new Uint8Array(await (await fetch(model.url)).arrayBuffer());
      const t1 = performance.now();
      const session = await ort.InferenceSession.create(bytes, {
        executionProviders: ["wasm"], graphOptimizationLevel: "all" });
      const t2 = performance.now();
      const firstSession = result.threads === undefined;
      result.threads = ort.env.wasm.numThreads;
      // The first session of a page also starts ONNX Runtime's wasm (compiles 14 MB).
      const rec = { bytes: bytes.byteLength, fetch_s: (t1 - t0) / 1000,
                    session_s: (t2 - t1) / 1000, first_session_of_page: firstSession,
                    speed: [] };
      await run(session, [[101, 102]]);
      rec.first_run_s = (performance.now() - t2) / 1000;
      const queryMs = async () => {
        const lat = [];
        for (let i = 0; i < job.repeats; i++) {
          const s = performance.now();
          await run(session, [job.queries[i % job.queries.length]]);
          lat.push(performance.now() - s);
        }
        lat.sort((a, b) => a - b);
        return [lat[Math.floor(lat.length / 2)], lat[Math.floor(0.95 * (lat.length - 1))]];
      };
      [rec.query_ms_median, rec.query_ms_p95] = await queryMs();
      for (const shape of job.shapes) {
        const p = shape.paragraphs;
        for (const batch of job.batches) {
          await run(session, p.slice(0, batch));  // warm up at this shape
          const s = performance.now();
          let first = null;
          for (let i = 0; i < p.length; i += batch) {
            const v = await run(session, p.slice(i, i + batch));
            if (first === null) first = v.slice(0, 384);
          }
          const seconds = (performance.now() - s) / 1000;
          rec.speed.push({ tokens: shape.tokens, batch, paragraphs: p.length, seconds,
                           paragraphs_per_s: p.length / seconds });
          if (!rec.first_vector) rec.first_vector = first;
        }
      }
      // The same questions again after the paragraph runs (steady state).
      [rec.query_ms_median_after, rec.query_ms_p95_after] = await queryMs();
      await session.release();
      result.models[model.name] = rec;
    }
    self.postMessage(result);
  } catch (err) {
    self.postMessage({ error: String(err && err.stack ? err.stack : err) });
  }
};
"""


class RendererMemory:
    """Samples, twice a second, the resident memory of this process's Chromium renderer
    processes (read from /proc); :meth:`peak` is the largest one since :meth:`reset`."""

    def __init__(self) -> None:
        self._peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def reset(self) -> None:
        self._peak = 0

    def peak(self) -> int:
        return self._peak

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.5):
            with contextlib.suppress(OSError):
                self._peak = max(self._peak, _renderer_rss(me))


def _renderer_rss(root: int) -> int:
    """Return the largest VmRSS (bytes) of a renderer process descending from ``root``."""
    parent, info = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid = int(entry)
        parent[pid] = int(fields.get("PPid", "0"))
        rss = fields.get("VmRSS", "0 kB").split()[0]
        info[pid] = (b"--type=renderer" in cmd, int(rss) * 1024)
    best = 0
    for pid, (renderer, rss) in info.items():
        if not renderer:
            continue
        p = pid
        while p and p != root:
            p = parent.get(p, 0)
        if p == root:
            best = max(best, rss)
    return best


def end_to_end(browser, url: str, query: str, folder: Path, drawers: int,
               questions: list[str], memory: RendererMemory) -> dict:
    """Boot the page with ``query``, import ``folder`` and wait until every drawer has a
    vector; return the timings (see the module's docstring)."""
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(1_800_000)
    memory.reset()
    page.goto(url + query)
    page.evaluate("window.palazzo.deferred")
    timings = page.evaluate("window.palazzo.timings")
    isolated = page.evaluate("self.crossOriginIsolated")
    status = page.evaluate("window.palazzo.call('palace_status')")
    page.evaluate("window.palazzo.openImport()")
    t0 = time.perf_counter()
    page.locator("#import-folder-input").set_input_files(str(folder))
    page.wait_for_function(STATE, arg="found", polling=100)
    found_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    page.locator("#import-go").click()
    page.wait_for_function(STATE, arg="done", polling=100)
    imported_s = time.perf_counter() - t1
    polls = 0
    while True:
        st = page.evaluate("window.palazzo.call('palace_status')")
        polls += 1
        if st["drawers"] >= drawers and st["embedded"] >= st["drawers"]:
            break
        time.sleep(0.25)
    indexed_s = time.perf_counter() - t1
    page.locator("#import-close").click()
    searches = page.evaluate(SEARCHES, questions)
    fresh = [a for a, _, _ in searches]
    again = [b for _, b, _ in searches]
    diff = [a - b for a, b, _ in searches]
    js_memory = page.evaluate(MEMORY)
    peak = memory.peak()
    context.close()
    if guard.outside or guard.failed:
        raise SystemExit(f"not offline/clean: {guard.outside} {guard.failed}")
    return {
        "query": query,
        "crossOriginIsolated": isolated,
        "runtime": (status.get("embedder") or {}).get("runtime"),
        "embedder_ready_s": round(timings.get("embedder:done", float("nan")) / 1000, 2),
        "deferred_done_s": round(timings.get("deferred:done", float("nan")) / 1000, 2),
        "document_rendered_s": round(timings.get("document:done", float("nan")) / 1000, 2),
        "drawers": st["drawers"],
        "embedded": st["embedded"],
        "drop_to_found_s": round(found_s, 2),
        "import_to_imported_s": round(imported_s, 2),
        "import_to_all_embedded_s": round(indexed_s, 2),
        "drawers_per_s": round(st["drawers"] / indexed_s, 2),
        "status_polls": polls,
        "search_fresh_ms_median": round(statistics.median(fresh), 1),
        "search_again_ms_median": round(statistics.median(again), 1),
        "query_embedding_ms_median": round(statistics.median(diff), 1),
        "searches": len(searches),
        "fresh_searches_ranked_by_vector": sum(1 for *_, used in searches if used),
        "renderer_peak_rss_mb": round(peak / 2**20) if peak else None,
        "measureUserAgentSpecificMemory_mb": round(js_memory / 2**20) if js_memory else None,
        "page_errors": errors,
    }


def harness(browser, tmp: Path, threads: int) -> dict:
    """Run the raw harness page with ``threads``; return its result."""
    server, url = serve_in_thread(tmp)
    try:
        context, guard = new_guarded_context(browser)
        page = context.new_page()
        page.set_default_timeout(1_800_000)
        page.goto(f"{url}harness.html?threads={threads}")
        result = page.evaluate("window.harness")
        context.close()
        if guard.outside or guard.failed:
            raise SystemExit(f"not offline/clean: {guard.outside} {guard.failed}")
        return result
    finally:
        server.shutdown()


def write_harness(tmp: Path, int8: bytes, sets: dict[int, list[list[int]]],
                  queries: list[list[int]], batches: list[int],
                  fp32_stored: bytes | None = None) -> None:
    (tmp / "vendor").mkdir()
    (tmp / "vendor" / "ort").symlink_to(SITE / "vendor" / "ort")
    (tmp / "fp32.onnx").symlink_to(MODELS / "minilm.onnx")
    (tmp / "int8.onnx").write_bytes(int8)
    (tmp / "harness.html").write_text(HARNESS_HTML)
    (tmp / "harness.worker.js").write_text(HARNESS_WORKER)
    models = [{"name": "fp32", "url": "./fp32.onnx"}, {"name": "int8", "url": "./int8.onnx"}]
    if fp32_stored is not None:
        (tmp / "fp32-stored.onnx").write_bytes(fp32_stored)
        models.append({"name": "fp32-stored", "url": "./fp32-stored.onnx"})
    job = {"models": models,
           "shapes": [{"tokens": n, "paragraphs": p} for n, p in sets.items()],
           "batches": batches, "queries": queries, "repeats": 30}
    (tmp / "job.json").write_text(json.dumps(job))


def cpython_vectors(model: bytes, ids: list[int]):
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    x = np.array([ids], np.int64)
    return session.run(["sentence_embedding"], {"input_ids": x,
                                                "attention_mask": np.ones_like(x)})[0][0]


def main(argv: list[str]) -> int:
    import numpy as np
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "bench-results" / "embed-browser.json"))
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--drawers", type=int, default=200, help="files imported end to end")
    parser.add_argument("--pages", default=",".join(PAGES), help="end-to-end pages to run")
    parser.add_argument("--paragraphs", type=int, default=24, help="raw: paragraphs a shape")
    parser.add_argument("--threads", default="1,2", help="raw: thread counts")
    parser.add_argument("--batches", default="1,8", help="raw: batch sizes")
    parser.add_argument("--searches", type=int, default=20)
    parser.add_argument("--skip-raw", action="store_true")
    parser.add_argument("--fp32-stored", action="store_true", help="raw: also the graph with "
                        "float32-stored weights (90 MB, no Cast nodes)")
    args = parser.parse_args(argv)

    data = load(Path(args.data))
    texts = list(dict.fromkeys(t for q in data for t in map(session_text, q["haystack_sessions"])
                               if t.strip()))
    tok = WordPiece.from_vocab_text((MODELS / "vocab.txt").read_text(encoding="utf-8"))
    questions = [q["question"] for q in data]
    paragraphs = token_paragraphs(texts, tok, 100, args.drawers)
    if len(paragraphs) < args.drawers:
        raise SystemExit(f"only {len(paragraphs)} paragraphs of 100 word pieces in {args.data}")
    sets = {n: [tok.encode(p).ids for p in token_paragraphs(texts[::-1], tok, n, args.paragraphs)]
            for n in (100, 256)}
    query_ids = [tok.encode(q).ids for q in questions[-10:]]
    result: dict = {
        "benchmark": "embed-browser",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average": [round(x, 2) for x in os.getloadavg()]},
        "drawers": args.drawers,
        "drawer_ids_mean": round(statistics.mean(len(tok.encode(p).ids) for p in paragraphs), 1),
        "raw_paragraph_ids_mean": {str(n): round(statistics.mean(map(len, s)), 1)
                                   for n, s in sets.items()},
        "end_to_end": {},
        "raw": {},
    }
    memory = RendererMemory()
    with tempfile.TemporaryDirectory() as tmpname, sync_playwright() as pw:
        tmp = Path(tmpname)
        folder = tmp / "notes" / "bench notes"
        folder.mkdir(parents=True)
        for i, p in enumerate(paragraphs):
            (folder / f"p{i:04d}.txt").write_text(p + "\n", encoding="utf-8")
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        result["chromium"] = browser.version
        if not args.skip_raw:
            int8, info = quantise_int8((MODELS / "minilm.npz").read_bytes())
            result["int8_model_bytes"] = len(int8)
            raw_dir = tmp / "raw"
            raw_dir.mkdir()
            stored = None
            if args.fp32_stored:
                from palazzo.embed.graph import build

                stored = build((MODELS / "minilm.npz").read_bytes(), "float32")
            write_harness(raw_dir, int8, sets, query_ids,
                          [int(b) for b in args.batches.split(",")], stored)
            for th in (int(t) for t in args.threads.split(",")):
                print(f"raw ONNX Runtime, {th} thread(s)", flush=True)
                res = harness(browser, raw_dir, th)
                for name, rec in res["models"].items():
                    model = {"fp32": (MODELS / "minilm.onnx").read_bytes(), "int8": int8,
                             "fp32-stored": stored}[name]
                    ref = cpython_vectors(model, sets[100][0])
                    got = np.array(rec.pop("first_vector"), np.float32)
                    rec["max_abs_vs_cpython"] = float(np.abs(ref - got).max())
                    print(f"  {name}: session {rec['session_s']:.2f} s, query "
                          f"{rec['query_ms_median']:.1f} ms, " + ", ".join(
                              f"{r['tokens']} tok b{r['batch']} {r['paragraphs_per_s']:.2f}/s"
                              for r in rec["speed"]), flush=True)
                result["raw"][f"{th}t"] = res
        for name in filter(None, args.pages.split(",")):
            print(f"end to end: {name} ({PAGES[name] or 'default'})", flush=True)
            url_server, url = serve_in_thread(SITE)
            try:
                rec = end_to_end(browser, url, PAGES[name], folder, args.drawers,
                                 questions[: args.searches], memory)
            finally:
                url_server.shutdown()
            result["end_to_end"][name] = rec
            print("  " + json.dumps(rec), flush=True)
        browser.close()
    memory.stop()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

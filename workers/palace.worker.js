// The palace worker: boots Pyodide from the site's own files, loads the pinned packages,
// starts the palazzo engine, renders the Panel document for the page and answers RPC calls.
// Embedding runs in a worker of its own (embed.worker.js, started through embedder.js).
// Messages out: stage, error, render, patch, idle, reply, lock-free, import-found, import-progress,
// import-done, import-error. Messages in: call, rendered, patch, import-files, import-start,
// import-cancel.
"use strict";

const SITE = new URL("../", self.location.href);
const VENDOR = new URL("vendor/pyodide/", SITE);
importScripts(new URL("pyodide.js", VENDOR).href);
importScripts(new URL("storage.js", self.location.href).href);
importScripts(new URL("embedder.js", self.location.href).href);

// Wall-clock milliseconds, comparable with the page's performance.timeOrigin.
const now = () => performance.timeOrigin + performance.now();

function stage(name, state, detail) {
  self.postMessage({ type: "stage", stage: name, state, detail: detail || "", at: now() });
}

const quiet = { messageCallback: () => {}, errorCallback: (m) => console.error(m) };

// Load packages, then let go of file bytes nothing reads again; resolves to the bytes freed.
// - Shared libraries: Pyodide instantiates every library of a package as it loads it and
//   keeps the file in its in-memory file system, but an import's dlopen finds a library by
//   its path among those loaded (Emscripten's LDSO) before it would open the file.
// - Python sources beside their bytecode: the build compiles every wheel but palazzo's to
//   unchecked-hash .pyc files (sitebuild/pyc.py), which the import system runs without
//   reading the source; only tracebacks and `inspect` read it (nothing the page runs asks
//   inspect for source), so a traceback of those packages shows no source lines.
// Emptying a file frees its bytes and keeps it, so the import system still finds the module
// (docs/browser.md "Memory at 20k drawers" says what this saves).
const SITE_PACKAGES = "/lib/python3.12/site-packages";
const PYC_TAG = ".cpython-312.pyc";
const sourcesSeen = new Set();  // folders already walked (a later load walks the new ones)

function emptyFile(path) {
  const size = pyodide.FS.stat(path).size;
  if (size) pyodide.FS.truncate(path, 0);
  return size;
}

function releaseSources(dir) {
  let freed = 0;
  let names;
  try { names = pyodide.FS.readdir(dir); } catch (err) { return 0; }
  const compiled = names.includes("__pycache__")
    ? new Set(pyodide.FS.readdir(`${dir}/__pycache__`)) : new Set();
  for (const name of names) {
    if (name === "." || name === ".." || name === "__pycache__") continue;
    const path = `${dir}/${name}`;
    const mode = pyodide.FS.stat(path).mode;
    if (pyodide.FS.isDir(mode)) {
      if (!sourcesSeen.has(path)) freed += releaseSources(path);
    } else if (name.endsWith(".py") && compiled.has(name.slice(0, -3) + PYC_TAG)) {
      freed += emptyFile(path);
    }
  }
  sourcesSeen.add(dir);
  return freed;
}

async function loadPackages(names) {
  await pyodide.loadPackage(names, quiet);
  const loaded = pyodide._module && pyodide._module.LDSO && pyodide._module.LDSO.loadedLibsByName;
  let freed = 0;
  for (const path of Object.keys(loaded || {})) {
    if (!path.startsWith("/")) continue;  // the same library under its bare name
    try { freed += emptyFile(path); } catch (err) { /* not a file of the file system */ }
  }
  for (const name of pyodide.FS.readdir(SITE_PACKAGES)) {
    const path = `${SITE_PACKAGES}/${name}`;
    if (name !== "." && name !== ".." && !sourcesSeen.has(path)
        && pyodide.FS.isDir(pyodide.FS.stat(path).mode)) freed += releaseSources(path);
  }
  return freed;
}
// Packages loaded when first needed (build.json's on_demand_packages: SciPy for the atlas
// and the NumPy model), one load at a time; resolves once `names` are all loaded.
const onDemand = new Map();
function loadOnDemand(names) {
  return Promise.all(names.map((name) => {
    if (!onDemand.has(name)) onDemand.set(name, loadPackages([name]));
    return onDemand.get(name);
  }));
}

let pyodide = null;
let bridge = null;
let host = null;
let storage = null;
const pending = [];
// Resolves once the deferred packages (sqlite3 among them, for dropped databases) are loaded.
let markPackages;
const packagesReady = new Promise((res) => { markPackages = res; });
// Calls, patches and storage writes run one after another, in arrival order.
let queue = Promise.resolve();
const serial = (task) => { queue = queue.then(task, task); return queue; };

// A write the interface started that failed; the next palazzoFlush reports it.
let flushError = null;
// Calls that open, create or delete a palace: the worker asks for its writer lock first.
const LOCKING = new Set(["open_palace", "new_palace", "delete_palace"]);

// Write the engine's storage changes, then give back the locks of palaces it closed (after
// their last changes); resolves when the changes are durable.
async function flush() {
  await settle();
  const changes = host.drain(bridge);
  // A file written whole (host.Outgoing) stays in Pyodide's memory: a proxy of it, not a
  // copy of a snapshot in this heap (see outgoing).
  const list = changes.toJs({ create_pyproxies: false, default_converter: (proxy) => outgoing(proxy.copy()) });
  changes.destroy();
  try {
    for (const change of list) {
      if (change[0] === "release") PalaceStorage.release(change[1]);
      else await storage.apply(change);
    }
  } catch (err) {
    // Nothing more will be written for the palaces left: their locks go back all the same.
    for (const change of list) if (change[0] === "release") PalaceStorage.release(change[1]);
    try { await recover(); } catch (again) { console.error(`reloading after a failed write: ${again}`); }
    throw err;
  } finally {
    for (const change of list) if (change[3] && change[3].destroy) change[3].destroy();
  }
  watchLock();
}

// The bytes of a file the engine wrote whole, where they lie in Pyodide's memory: `read(work)`
// calls work with a Uint8Array view of them (valid only during the call: Pyodide's memory
// may move when Python runs again, and nothing in work may run Python), `destroy()` lets
// Python free them. A 20k palace's snapshot is 130-190 MB: the tab no longer holds a second
// copy of it in this heap while it is written.
function outgoing(proxy) {
  return {
    read(work) {
      const data = proxy.data;
      const view = data.getBuffer("u8");
      try { return work(view.data); } finally { view.release(); data.destroy(); }
    },
    destroy() { proxy.destroy(); },
  };
}

// Files boot wanted but the worker had not read (an older generation's snapshot, for a
// fallback when the newest is damaged): read them and let the engine boot again.
async function settle() {
  for (let round = 0; round < 3; round++) {
    const proxy = host.wanted(bridge);
    const want = proxy.toJs();
    proxy.destroy();
    if (!want.length) return;
    const palace = want[0][0];
    const names = want.filter(([p]) => p === palace).map(([, f]) => f);
    host.supply(bridge, palace, await storage.readAll(palace, names), true, names);
  }
}

// After a failed write the open palace is booted again from what storage kept, so memory
// never holds a change the caller was told was not saved, and later writes follow on disk.
async function recover() {
  const palace = host.open_name(bridge);
  if (palace === undefined || palace === null) return;
  host.reload_palace(bridge, palace, await storage.readAll(palace));
}

// What a library call needs before the engine runs it: the writer lock of the palace it
// names, and for open_palace that palace's files (unless it is open here for writing).
async function prepare(name, args) {
  if (name === "check_palace") {
    // A check reads every file, the ones boot left in storage too.
    const palace = host.open_name(bridge);
    let unread = [];
    if (palace) { const proxy = host.unread(bridge, palace); unread = proxy.toJs(); proxy.destroy(); }
    if (unread.length) host.supply(bridge, palace, await storage.readAll(palace, unread), false, unread);
    return;
  }
  const palace = args.name;
  if (!LOCKING.has(name) || typeof palace !== "string") return;
  host.grant(bridge, palace, await PalaceStorage.acquire(palace));
  if (name === "open_palace" && host.needs_files(bridge, palace)) {
    host.load_palace(bridge, palace, await storage.readAll(palace));
  }
}

const failure = (id, message) => ({ id, ok: false, error: { code: "storage_error", type: "StorageError", message } });

// Run one call and write its changes; the reply (ok only once the changes are durable).
async function run(id, name, args) {
  let reply;
  try {
    await prepare(name, args);
    // The request and reply cross as JSON strings so no Python proxy ever leaves the worker.
    reply = JSON.parse(bridge.handle_json(JSON.stringify({ id, name, args })));
  } catch (err) {
    reply = failure(id, `could not read the palace's files: ${err}`);
  }
  try {
    await flush();
  } catch (err) {
    reply = failure(id, `not saved: ${err}`);
  }
  await remember(name, reply);
  return reply;
}

// Remember the palace a call opened or created, so the next launch reopens it. A failure
// to remember is harmless (the next launch opens the first palace) and is not reported.
async function remember(name, reply) {
  if (!reply.ok || (name !== "open_palace" && name !== "new_palace")) return;
  try { await storage.setLast(reply.result.palace); } catch { /* another tab is writing it */ }
}

// Answer one page call. Under ONNX Runtime the drawers a call adds are embedded by the
// embedding worker after the call; the reply waits for them when they are few (an add), so
// a search right after finds the new drawer by meaning as it would with NumPy, and not for
// an import's thousands, which embed in the background.
async function answer(msg) {
  // Packages the operation imports that load on first use (SciPy for the atlas).
  try {
    const need = bridge ? pyList(host.packages_for(bridge, msg.name)) : [];
    if (need.length) await loadOnDemand(need);
  } catch (err) { console.error(`loading packages for ${msg.name}: ${err}`); }
  const reply = await serial(async () => {
    const out = await run(msg.id, msg.name, msg.args ?? {});
    if (out.ok) {
      try { host.refresh_after(bridge, msg.name); } catch (err) { console.error(`refresh: ${err}`); }
    }
    return out;
  });
  if (reply.ok) await embedFew();
  self.postMessage({ type: "reply", reply });
}

// With ONNX Runtime: when a few drawers (up to 64) lack a vector, embed them now; resolves
// when they have one (or at once: more drawers embed in the background). Long turns waiting
// for the rest of their windows are not waited for (they come after every drawer without a
// vector, in the background). Never rejects. Must not be awaited inside a `serial` task
// (the embedding steps queue there).
async function embedFew() {
  if (!onnx || !onnx.info) return;
  const missing = host.unembedded(bridge, false);
  if (missing > 0 && missing <= 64) {
    const loop = embedMissing();
    loop.catch((err) => console.warn(`embedding: ${err}`));
    while (embedding && host.unembedded(bridge, false) > 0) {
      await new Promise((res) => stepEnded.push(res));
    }
  }
}
// Resolved after each background embedding step, and when the loop ends.
let stepEnded = [];
function endStep() { const waiting = stepEnded; stepEnded = []; waiting.forEach((res) => res()); }

// While the open palace is read-only, look once a second whether its writer has gone; then
// tell the interface and the page, which offer to take over (open_palace again).
let watching = null;
function watchLock() {
  const palace = host.read_only_palace(bridge);
  if (palace === undefined || palace === null || palace === watching) return;
  watching = palace;
  const look = async () => {
    if (host.read_only_palace(bridge) !== palace) { watching = null; return; }
    if (await PalaceStorage.isFree(palace)) {
      watching = null;
      serial(() => host.lock_free(bridge, palace));
      self.postMessage({ type: "lock-free", palace });
      return;
    }
    setTimeout(look, 1000);
  };
  setTimeout(look, 1000);
}

// -- embedding ---------------------------------------------------------------------------
// ?embedder=onnx (the default): MiniLM in the embedding worker (ONNX Runtime); =numpy: MiniLM
// in NumPy here (also what the page falls back to when ONNX Runtime cannot load); =hash:
// no model. The embedding worker uses a thread per core, up to 4, where the page is
// cross-origin isolated (else ONNX Runtime has one): measured in the page at 12.5 drawers/s
// with 2 threads against 9.0 with 1 on 2 cores (docs/benchmarks.md); ?threads=N sets it.
const PARAMS = new URLSearchParams(self.location.search);
const EMBEDDER = PARAMS.get("embedder") || "onnx";
const CORES = self.crossOriginIsolated ? Math.min(4, Math.max(1, navigator.hardwareConcurrency || 1)) : 1;
let onnx = EMBEDDER === "onnx" ? new OnnxEmbedding(Number(PARAMS.get("threads")) || CORES) : null;
// What the status line's details say computes the vectors, once known.
let runtime = null;

const pyList = (proxy) => { const out = proxy.toJs({ create_pyproxies: false }); proxy.destroy(); return out; };

// Embed the batches of token ids a plan (embed_plan, query_plan) returned in the embedding
// worker and hand each batch's vectors to the engine; resolves when all are given.
async function embedPlanned(plan) {
  if (!plan.length) return;
  const [number, batches] = plan;
  const results = [];
  for (const [bytes, n, t] of batches) {
    const ids = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    results.push(await onnx.embed(ids, n, t));
  }
  spent.model += results.reduce((sum, r) => sum + r.seconds, 0);
  results.forEach((r, k) => host.embed_supply(bridge, number, k, r.vectors));
}

// Where the background embedding's time went, in seconds since the page opened: planning
// (choosing the drawers, tokenising them), the model (the embedding worker's own time),
// storing (the engine's step and the write), and the whole loop. The page keeps the latest
// (window.palazzo.embedTimes) for benchmarks.
const spent = { steps: 0, plan: 0, model: 0, store: 0, wall: 0 };

// Have the vectors of `texts` (a search's query) computed before the call that needs them.
async function prepareTexts(texts) {
  if (!onnx || !onnx.info || !texts.length) return;
  await embedPlanned(pyList(host.query_plan(bridge, JSON.stringify(texts))));
}

// The texts a page call embeds, computed first so it ranks by meaning (search, swarm goal).
function callTexts(msg) {
  const args = msg.args || {};
  if (msg.name === "search" && typeof args.query === "string") return [args.query];
  if (msg.name === "run_swarm" && typeof args.goal === "string") return [args.goal];
  return [];
}

// Drawers without a vector (a new palace, an import, or embedding a reload interrupted) are
// embedded a step at a time; calls and clicks are answered between steps. One loop at a
// time: a loop already running picks up drawers added meanwhile.
let embedding = null;
// Set when drawers may have been added while a loop runs: the loop looks once more before
// it ends, so a drawer added during its last step is not left without a vector.
let lookAgain = false;
let stepping = false;
function embedMissing() {
  if (embedding) { lookAgain = true; return embedding; }
  embedding = (async () => {
    // Drawers a step: sized so a step takes about a second (long drawers embed as many
    // chunks, and with MiniLM under Pyodide one may take several seconds), 1 to 64.
    let limit = 16;
    let left = Infinity;
    lookAgain = false;
    try {
      for (;;) {
        // A macrotask between steps: the page's calls and clicks are answered here.
        await new Promise((res) => setTimeout(res, 0));
        const t0 = performance.now();
        if (onnx && onnx.info) {
          // The embedding worker computes while this worker answers the page. Not while it
          // stores a step: planning the next step's vectors then (the model computing while
          // the step is stored) slowed the model by 40 % a drawer on 2 cores, its two threads
          // sharing them with this worker (9.8 drawers/s against 13 at 20k, docs/browser.md).
          const plan = await serial(async () => {
            const p0 = performance.now();
            try { return pyList(host.embed_plan(bridge, limit)); } finally { spent.plan += (performance.now() - p0) / 1000; }
          });
          await embedPlanned(plan);
        }
        const step = await serial(async () => {
          const s0 = performance.now();
          stepping = true;  // the step's own change is not a reason to look again
          let out;
          try { out = host.embed_step(bridge, limit, (performance.now() - t0) / 1000); } finally { stepping = false; }
          const result = out.toJs({ dict_converter: Object.fromEntries });
          out.destroy();
          await flush();
          spent.store += (performance.now() - s0) / 1000;
          return result;
        });
        const seconds = (performance.now() - t0) / 1000;
        spent.steps += 1;
        spent.wall += seconds;
        self.postMessage({ type: "embed-times", ...spent });
        endStep();
        // Done, or a step that neither embedded nor got past a drawer: stop (unless
        // drawers may have come meanwhile).
        if (!step.remaining || (!step.embedded && step.remaining >= left)) {
          if (!lookAgain) break;
          lookAgain = false;
          left = Infinity;
          continue;
        }
        left = step.remaining;
        // Towards a second a step, by at most half or double a step: one slow step (the
        // model's start-up, the page busy) must not leave steps of one drawer, whose fixed
        // cost then sets the pace (a 20k palace's first minute went at 0.3 drawers/s).
        const aim = Math.round(limit / Math.max(seconds, 0.001));
        const next = Math.min(limit * 2, Math.max(Math.ceil(limit / 2), aim));
        limit = Math.max(1, Math.min(64, next));
      }
    } finally {
      embedding = null;
      endStep();
    }
  })();
  return embedding;
}

// Give the engine the embedder: the embedding worker's when ONNX Runtime is ready, else
// MiniLM in NumPy here (the npz is fetched only then), else nothing.
async function attachEmbedder() {
  if (EMBEDDER === "hash") {
    // ?embedder=hash: no model, and a palace the command line made with the hash embedder
    // keeps its vectors (benchmarks; see docs/browser.md).
    await serial(async () => { host.attach_hash_embedder(bridge).destroy(); await flush(); });
    return;
  }
  if (onnx) {
    try {
      const info = await onnx.ready;
      const models = new URL("vendor/models/minilm/", SITE);
      const card = await (await fetch(new URL("minilm.json", models))).text();
      const vocab = await (await fetch(new URL("vocab.txt", models))).text();
      runtime = `ONNX Runtime, wasm, ${info.threads} thread${info.threads === 1 ? "" : "s"}`;
      await serial(async () => { host.attach_remote_embedder(bridge, vocab, card, runtime).destroy(); await flush(); });
      stage("embedder", "done", `${runtime}; ready in ${info.seconds.toFixed(2)} s`);
      return;
    } catch (err) {
      console.warn(`ONNX Runtime cannot run here (${err}); embedding with NumPy instead`);
      onnx.stop();
      onnx = null;
    }
  }
  await packagesReady;
  await loadOnDemand(["scipy"]);  // BLAS for the NumPy model's matrix products
  const weights = await fetch(new URL("vendor/models/minilm/minilm.npz", SITE));
  if (!weights.ok) throw new Error(`MiniLM weights: HTTP ${weights.status}`);
  const bytes = new Uint8Array(await weights.arrayBuffer());
  await serial(async () => { host.attach_embedder(bridge, bytes).destroy(); await flush(); });
  stage("embedder", "done", "NumPy in Pyodide");
}

// -- imports: the page sends the dropped files, the person confirms, batches run here --------
const IMPORT_ROOT = "/import";
let importing = null;  // { cancel } while an import runs
let dropped = 0;

const pyReply = (text) => JSON.parse(text);
const post = (type, body) => self.postMessage({ type, ...body });

// Keep the parts of a dropped file's relative path that name something ("a/../b" → "a/b").
function safePath(path) {
  return String(path).split(/[\\/]+/).filter((p) => p && p !== "." && p !== "..").join("/");
}

// Write the dropped files into a fresh folder of Pyodide's file system and say what they are.
async function importFiles(files) {
  host.import_clear(IMPORT_ROOT);
  dropped += 1;
  const root = `${IMPORT_ROOT}/${dropped}`;
  pyodide.FS.mkdirTree(root);
  for (const file of files) {
    const rel = safePath(file.path);
    if (!rel) continue;
    const path = `${root}/${rel}`;
    pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    pyodide.FS.writeFile(path, new Uint8Array(file.data));
  }
  const out = pyReply(host.import_prepare(bridge, root));
  if (out.ok) post("import-found", { found: out.result });
  else post("import-error", { message: out.error.message, changed: false });
}

// Apply the prepared import into a new palace (`target` "new", called `name`) or the open
// one, a batch at a time with progress; a cancelled or failed import into a new palace
// deletes it and reopens the palace that was open before, so nothing is left half-made.
async function startImport(target, name) {
  const job = { cancel: false };
  importing = job;
  const previous = host.open_name(bridge);
  let made = null;
  let failed = null;
  try {
    if (target === "new") {
      const reply = await serial(() => run(null, "new_palace", { name }));
      if (!reply.ok) { post("import-error", { message: reply.error.message, changed: false }); return; }
      made = name;
      host.refresh_after(bridge, "new_palace");
    }
    const begun = pyReply(await serial(async () => host.import_begin(bridge, target !== "new")));
    if (!begun.ok) throw new Error(begun.error.message);
    for (;;) {
      // A macrotask between steps: the page's messages (Stop, clicks) are handled here.
      await new Promise((res) => setTimeout(res, 0));
      if (job.cancel) break;
      const step = await serial(async () => {
        const out = pyReply(host.import_step(bridge));
        await flush();
        return out;
      });
      if (!step.ok) throw new Error(step.error.message);
      post("import-progress", { done: step.result.done, total: step.result.total });
      if (step.result.finished) break;
    }
  } catch (err) {
    failed = String(err && err.message ? err.message : err);
  } finally {
    importing = null;
  }
  if (made && (job.cancel || failed)) {
    // Nothing of a cancelled or failed import into a new palace is kept.
    await serial(() => run(null, "delete_palace", { name: made, confirm: made }));
    if (previous) await serial(() => run(null, "open_palace", { name: previous }));
    host.refresh_after(bridge, "open_palace");
    const why = failed ? `The import failed: ${failed}` : "Import cancelled.";
    post(failed ? "import-error" : "import-done", {
      message: `${why} Nothing was kept${previous ? `; ${previous} is open again` : ""}.`,
      changed: false,
      summary: null,
    });
    return;
  }
  const summary = pyReply(await serial(async () => host.import_summary(bridge, job.cancel)));
  const palace = host.open_name(bridge);
  if (failed) {
    post("import-error", { message: `The import stopped: ${failed}`, changed: true, palace });
  } else {
    post("import-done", { summary: summary.ok ? summary.result : null, palace, changed: true,
      message: summary.ok ? summary.result.text : summary.error.message });
  }
  embedMissing();
}

// -- export: the palace file in pieces (host.export_begin), each handed to the page ---------
let exporting = false;

async function exportFile() {
  if (exporting || !bridge) return;
  exporting = true;
  let error = null;
  try {
    await serial(async () => {
      const begun = pyReply(host.export_begin(bridge));
      if (!begun.ok) throw new Error(begun.error.message);
      post("export-begin", { name: begun.result.name });
      for (;;) {
        const piece = host.export_next(bridge);
        if (piece === undefined || piece === null) break;
        const data = piece.toJs();  // a Uint8Array of its own, handed over (not copied)
        piece.destroy();
        self.postMessage({ type: "export-piece", data }, [data.buffer]);
      }
    });
  } catch (err) {
    error = String(err && err.message ? err.message : err);
  } finally {
    exporting = false;
  }
  post("export-end", { error });
  await serial(async () => { host.export_end(bridge, error); await flush(); });
}

function sendPatch(patch, buffers) {
  self.postMessage({ type: "patch", patch, buffers });
}

async function boot() {
  let current = "runtime";
  try {
    stage("runtime", "start");
    const build = await (await fetch(new URL("build.json", SITE))).json();
    pyodide = await loadPyodide({
      indexURL: VENDOR.href,
      lockFileURL: new URL("pyodide-lock.json", VENDOR).href,
      env: { OPENBLAS_NUM_THREADS: "1" },
    });
    stage("runtime", "done");

    current = "packages";
    stage("packages", "start", build.packages.join(", "));
    const freed = await loadPackages(build.packages);
    stage("packages", "done", `${(freed / 1e6).toFixed(1)} MB of loaded libraries and compiled sources let go`);

    current = "engine";
    stage("engine", "start");
    host = pyodide.pyimport("palazzo.hosts.worker");
    storage = await PalaceStorage.open(new URLSearchParams(self.location.search).get("storage"));
    const names = await storage.list();
    // The palace used last, else the first one storage lists.
    const last = await storage.getLast().catch(() => null);
    const name = names.length ? (names.includes(last) ? last : names[0]) : host.FIRST_PALACE;
    const writable = await PalaceStorage.acquire(name);
    // Reading the palace's files is timed apart from booting it (benchmarks; boot.js skips
    // stages the page does not list).
    stage("palace-read", "start");
    let files = names.length ? await storage.readAll(name) : null;
    stage("palace-read", "done");
    bridge = host.start_engine(storage.kind, names, writable, names.length ? name : null, files);
    files = null;  // the engine has its own copy; boot goes on for a while (interface, deferred)
    await flush();
    // Changes the interface makes are written as they happen; it waits for palazzoFlush
    // before it says "Saved", and runs library calls (which need locks and files) through
    // palazzoLibraryCall, in turn with the page's calls.
    self.palazzoScheduleFlush = () => {
      serial(flush).catch((err) => { flushError = err; console.error(`not saved: ${err}`); });
      // A change may have added drawers the embedding worker must embed.
      if (onnx && onnx.info && !stepping && host.unembedded(bridge)) {
        embedMissing().catch((err) => console.warn(`embedding: ${err}`));
      }
    };
    self.palazzoFlush = async () => {
      await serial(async () => {
        await flush();
        if (flushError) { const err = flushError; flushError = null; throw err; }
      });
      // As for a page call: a change that added or rewrote a few drawers says "Saved" once
      // they have their vectors, so the search that follows finds them by meaning.
      await embedFew();
    };
    self.palazzoPrepareTexts = (textsJson) => prepareTexts(JSON.parse(textsJson));
    self.palazzoLoadPackages = (namesJson) => loadOnDemand(JSON.parse(namesJson));
    self.palazzoLibraryCall = (name, argsJson) =>
      serial(() => run(null, name, JSON.parse(argsJson))).then((reply) => JSON.stringify(reply));
    host.install_hooks(bridge);
    stage("engine", "done", `${storage.kind}${writable ? "" : ", read-only"}`);
    while (pending.length) answer(pending.shift());

    current = "interface";
    stage("interface", "start");
    stage("panel-import", "start");
    host.import_panel(new URL("vendor/panel/", SITE).href);
    stage("panel-import", "done");
    const result = await host.render_document(bridge);
    const [docs_json, render_items, root_ids] = result.toJs();
    result.destroy();
    self.postMessage({ type: "render", docs_json, render_items, root_ids });
    stage("interface", "done");

    // Off the boot path: packages the interface does not need (see build.json), and the
    // embedder (ONNX Runtime needs none of them; the NumPy fallback loads SciPy).
    current = "deferred";
    stage("deferred", "start", build.deferred_packages.join(", "));
    const attached = attachEmbedder();
    const released = await loadPackages(build.deferred_packages);
    markPackages();
    // Views that needed them (the search filter's communities) show them now.
    await serial(async () => {
      try { host.packages_loaded(bridge); } catch (err) { console.error(`after packages: ${err}`); }
    });
    await attached;
    await embedMissing();
    stage("deferred", "done", `${(released / 1e6).toFixed(1)} MB of loaded libraries and compiled sources let go`);
  } catch (err) {
    markPackages();  // imports go on; one that needs a missing package says so
    const text = String(err && err.message ? err.message : err);
    const lines = text.trim().split("\n");
    self.postMessage({ type: "error", stage: current, message: lines[lines.length - 1], detail: text });
  }
}

self.onmessage = (event) => {
  const msg = event.data;
  switch (msg.type) {
    case "call":
      if (!bridge) pending.push(msg);
      else if (onnx && onnx.info && callTexts(msg).length) {
        // The query's vector first (outside the queue: other calls go on meanwhile).
        prepareTexts(callTexts(msg)).catch((err) => console.warn(`query vector: ${err}`))
          .then(() => answer(msg));
      } else answer(msg);
      break;
    case "rendered":
      host.link_document(sendPatch);
      break;
    case "import-files":
      if (!bridge || importing) {
        post("import-error", { message: bridge ? "An import is running: wait for it or cancel it first." : "The palace is still starting.", changed: false });
        break;
      }
      packagesReady.then(() => serial(() => importFiles(msg.files)))
        .catch((err) => post("import-error", { message: String(err), changed: false }));
      break;
    case "import-start":
      if (!bridge || importing) break;
      startImport(msg.target, msg.name);
      break;
    case "export-file":
      exportFile();
      break;
    case "import-cancel":
      if (importing) importing.cancel = true;
      break;
    case "patch":
      serial(async () => {
        try {
          host.apply_patch(msg.patch);
          await flush();
        } catch (err) {
          flushError = err;
          console.error(`not saved: ${err}`);
        } finally {
          self.postMessage({ type: "idle" });
        }
      });
      break;
  }
};

boot();

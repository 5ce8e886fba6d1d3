// The palace worker: boots Pyodide from the site's own files, loads the pinned packages,
// starts the palazzo engine, renders the Panel document for the page and answers RPC calls.
// Messages out: stage, error, render, patch, idle, reply, lock-free. Messages in: call, rendered, patch.
"use strict";

const SITE = new URL("../", self.location.href);
const VENDOR = new URL("vendor/pyodide/", SITE);
importScripts(new URL("pyodide.js", VENDOR).href);
importScripts(new URL("storage.js", self.location.href).href);

// Wall-clock milliseconds, comparable with the page's performance.timeOrigin.
const now = () => performance.timeOrigin + performance.now();

function stage(name, state, detail) {
  self.postMessage({ type: "stage", stage: name, state, detail: detail || "", at: now() });
}

const quiet = { messageCallback: () => {}, errorCallback: (m) => console.error(m) };
let pyodide = null;
let bridge = null;
let host = null;
let storage = null;
const pending = [];
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
  const changes = host.drain(bridge);
  const list = changes.toJs({ create_pyproxies: false });
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
  }
  watchLock();
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
  return reply;
}

async function answer(msg) {
  const reply = await run(msg.id, msg.name, msg.args ?? {});
  if (reply.ok) {
    try { host.refresh_after(bridge, msg.name); } catch (err) { console.error(`refresh: ${err}`); }
  }
  self.postMessage({ type: "reply", reply });
}

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
    await pyodide.loadPackage(build.packages, quiet);
    stage("packages", "done");

    current = "engine";
    stage("engine", "start");
    host = pyodide.pyimport("palazzo.hosts.worker");
    storage = await PalaceStorage.open(new URLSearchParams(self.location.search).get("storage"));
    const names = await storage.list();
    const name = names.length ? names[0] : host.FIRST_PALACE;
    const writable = await PalaceStorage.acquire(name);
    // Reading the palace's files is timed apart from booting it (benchmarks; boot.js skips
    // stages the page does not list).
    stage("palace-read", "start");
    const files = names.length ? await storage.readAll(name) : null;
    stage("palace-read", "done");
    bridge = host.start_engine(storage.kind, names, writable, names.length ? name : null, files);
    await flush();
    // Changes the interface makes are written as they happen; it waits for palazzoFlush
    // before it says "Saved", and runs library calls (which need locks and files) through
    // palazzoLibraryCall, in turn with the page's calls.
    self.palazzoScheduleFlush = () => {
      serial(flush).catch((err) => { flushError = err; console.error(`not saved: ${err}`); });
    };
    self.palazzoFlush = () => serial(async () => {
      await flush();
      if (flushError) { const err = flushError; flushError = null; throw err; }
    });
    self.palazzoLibraryCall = (name, argsJson) =>
      serial(() => run(null, name, JSON.parse(argsJson))).then((reply) => JSON.stringify(reply));
    host.install_hooks(bridge);
    stage("engine", "done", `${storage.kind}${writable ? "" : ", read-only"}`);
    while (pending.length) { const msg = pending.shift(); serial(() => answer(msg)); }

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

    // Off the boot path: packages the interface does not need to appear (see build.json).
    current = "deferred";
    stage("deferred", "start", build.deferred_packages.join(", "));
    await pyodide.loadPackage(build.deferred_packages, quiet);
    if (new URLSearchParams(self.location.search).get("embedder") === "hash") {
      // ?embedder=hash: no model, and a palace the command line made with the hash embedder
      // keeps its vectors (benchmarks; see docs/browser.md).
      await serial(async () => { host.attach_hash_embedder(bridge).destroy(); await flush(); });
    } else {
      const weights = await fetch(new URL("vendor/models/minilm/minilm.npz", SITE));
      if (!weights.ok) throw new Error(`MiniLM weights: HTTP ${weights.status}`);
      const bytes = new Uint8Array(await weights.arrayBuffer());
      await serial(async () => { host.attach_embedder(bridge, bytes).destroy(); await flush(); });
    }
    // Drawers without a vector (a new palace, or embedding a reload interrupted) are embedded
    // a step at a time; calls and clicks are answered between steps.
    for (;;) {
      const step = await serial(async () => {
        const out = host.embed_step(bridge);
        const result = out.toJs({ dict_converter: Object.fromEntries });
        out.destroy();
        await flush();
        return result;
      });
      if (!step.remaining || !step.embedded) break;
    }
    stage("deferred", "done");
  } catch (err) {
    const text = String(err && err.message ? err.message : err);
    const lines = text.trim().split("\n");
    self.postMessage({ type: "error", stage: current, message: lines[lines.length - 1], detail: text });
  }
}

self.onmessage = (event) => {
  const msg = event.data;
  switch (msg.type) {
    case "call":
      if (bridge) serial(() => answer(msg));
      else pending.push(msg);
      break;
    case "rendered":
      host.link_document(sendPatch);
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

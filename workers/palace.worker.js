// The palace worker: boots Pyodide from the site's own files, loads the pinned packages,
// starts the palazzo engine, renders the Panel document for the page and answers RPC calls.
// Messages out: stage, error, render, patch, idle, reply. Messages in: call, rendered, patch.
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

// Write the engine's storage changes; resolves when they are durable.
async function flush() {
  const changes = host.drain(bridge);
  const list = changes.toJs({ create_pyproxies: false });
  changes.destroy();
  for (const change of list) await storage.apply(change);
}

async function answer(msg) {
  // The reply crosses as a JSON string so no Python proxy ever leaves the worker.
  const args = msg.args ?? {};
  let reply;
  try {
    if (msg.name === "open_palace" && typeof args.name === "string") {
      const writable = await PalaceStorage.lock(args.name);
      host.load_palace(bridge, args.name, await storage.readAll(args.name), writable);
    }
    const request = JSON.stringify({ id: msg.id, name: msg.name, args });
    reply = JSON.parse(bridge.handle_json(request));
    if (reply.ok) host.refresh_after(bridge, msg.name);
    // A change is acknowledged only once it is written.
    await flush();
  } catch (err) {
    reply = { id: msg.id, ok: false, error: { code: "storage_error", type: "Error", message: `not saved: ${err}` } };
  }
  self.postMessage({ type: "reply", reply });
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
    const writable = await PalaceStorage.lock(name);
    const files = names.length ? await storage.readAll(name) : null;
    bridge = host.start_engine(storage.kind, names, writable, names.length ? name : null, files);
    await flush();
    // Changes the interface makes are written as they happen; opening another palace from
    // the interface reads its files first.
    self.palazzoScheduleFlush = () => { serial(flush); };
    self.palazzoLoadPalace = async (palace) => {
      const ok = await PalaceStorage.lock(palace);
      host.load_palace(bridge, palace, await storage.readAll(palace), ok);
    };
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
    const weights = await fetch(new URL("vendor/models/minilm/minilm.npz", SITE));
    if (!weights.ok) throw new Error(`MiniLM weights: HTTP ${weights.status}`);
    const bytes = new Uint8Array(await weights.arrayBuffer());
    await serial(async () => { host.attach_embedder(bridge, bytes).destroy(); await flush(); });
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
        } finally {
          self.postMessage({ type: "idle" });
        }
      });
      break;
  }
};

boot();

// The palace worker: boots Pyodide from the site's own files, loads the pinned packages,
// starts the palazzo engine, renders the Panel document for the page and answers RPC calls.
// Messages out: stage, error, render, patch, idle, reply. Messages in: call, rendered, patch.
"use strict";

const SITE = new URL("../", self.location.href);
const VENDOR = new URL("vendor/pyodide/", SITE);
importScripts(new URL("pyodide.js", VENDOR).href);

// Wall-clock milliseconds, comparable with the page's performance.timeOrigin.
const now = () => performance.timeOrigin + performance.now();

function stage(name, state, detail) {
  self.postMessage({ type: "stage", stage: name, state, detail: detail || "", at: now() });
}

const quiet = { messageCallback: () => {}, errorCallback: (m) => console.error(m) };
let pyodide = null;
let bridge = null;
let host = null;
const pending = [];

function answer(msg) {
  // The reply crosses as a JSON string so no Python proxy ever leaves the worker.
  const request = JSON.stringify({ id: msg.id, name: msg.name, args: msg.args ?? {} });
  let reply;
  try {
    reply = JSON.parse(bridge.handle_json(request));
  } catch (err) {
    reply = { id: msg.id, ok: false, error: { code: "worker_error", type: "Error", message: String(err) } };
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
    bridge = host.start_engine();
    stage("engine", "done");
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

    // Off the boot path: packages the interface does not need to appear (see build.json).
    current = "deferred";
    stage("deferred", "start", build.deferred_packages.join(", "));
    await pyodide.loadPackage(build.deferred_packages, quiet);
    const weights = await fetch(new URL("vendor/models/minilm/minilm.npz", SITE));
    if (!weights.ok) throw new Error(`MiniLM weights: HTTP ${weights.status}`);
    host.attach_embedder(bridge, new Uint8Array(await weights.arrayBuffer()));
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
      if (bridge) answer(msg);
      else pending.push(msg);
      break;
    case "rendered":
      host.link_document(sendPatch);
      break;
    case "patch":
      try {
        host.apply_patch(msg.patch);
      } finally {
        self.postMessage({ type: "idle" });
      }
      break;
  }
};

boot();

// Runs the engine's pytest suite inside Pyodide, in a worker like the app's engine.
// In: one message {pyodide, lockFile, packages, wheels, tests, runner, root, args, files}:
// URLs, plus files {path in Pyodide's file system: URL} the tests read. All URLs
// on loopback. Out: one message {ok, result, times} or {ok: false, error}.
"use strict";

const quiet = { messageCallback: () => {}, errorCallback: (m) => console.error(m) };
const now = () => performance.now();

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${response.status} ${url}`);
  return response;
}

async function boot(cfg, times) {
  const indexURL = new URL("./", cfg.pyodide).href;
  importScripts(cfg.pyodide);
  let t = now();
  const pyodide = await loadPyodide({
    indexURL,
    lockFileURL: cfg.lockFile,
    env: { OPENBLAS_NUM_THREADS: "1" },
  });
  times.boot = now() - t;
  t = now();
  // Site packages by name (sha256-checked against the site's lock), test wheels by URL.
  await pyodide.loadPackage(cfg.packages, quiet);
  await pyodide.loadPackage(cfg.wheels, quiet);
  times.packages = now() - t;
  return pyodide;
}

async function runTests(pyodide, cfg, times) {
  const archive = await (await fetchOk(cfg.tests)).arrayBuffer();
  pyodide.unpackArchive(archive, "zip", { extractDir: cfg.root });
  for (const [path, url] of Object.entries(cfg.files || {})) {
    const data = new Uint8Array(await (await fetchOk(url)).arrayBuffer());
    pyodide.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    pyodide.FS.writeFile(path, data);
  }
  const source = await (await fetchOk(cfg.runner)).text();
  const namespace = pyodide.globals.get("dict")();
  try {
    pyodide.runPython(source, { globals: namespace });
    const t = now();
    const result = namespace.get("run")(JSON.stringify({ root: cfg.root, args: cfg.args }));
    times.pytest = now() - t;
    return JSON.parse(result);
  } finally {
    namespace.destroy();
  }
}

self.onmessage = async (event) => {
  const cfg = event.data;
  const times = {};
  try {
    const pyodide = await boot(cfg, times);
    const result = await runTests(pyodide, cfg, times);
    self.postMessage({ ok: true, result, times });
  } catch (err) {
    self.postMessage({ ok: false, error: String((err && err.stack) || err), times });
  }
};

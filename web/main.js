// Page entry: start the palace worker, show boot progress, expose window.palazzo.
import { enhance, enhanceSoon, goToTab } from "./a11y.js";
import { hideBoot, showError, showStage, stageDetails, stageTimes } from "./boot.js";
import { makeDocumentLink } from "./document.js";
import { makeExporter } from "./exporter.js";
import { makeImporter } from "./importer.js";
import { acceptLaunchedFiles, startOffline } from "./offline.js";
import { makeClient } from "./rpc.js";

const origin = performance.timeOrigin;
// The page's query (say ?storage=indexeddb) reaches the worker, which picks its storage.
const worker = new Worker(new URL(`workers/palace.worker.js${location.search}`, document.baseURI));
const client = makeClient(worker);
const doc = makeDocumentLink(worker);

let markReady, failReady, markRendered, failRendered, markDeferred, failDeferred;
const ready = new Promise((res, rej) => { markReady = res; failReady = rej; });
const rendered = new Promise((res, rej) => { markRendered = res; failRendered = rej; });
// Packages loaded after the first render (scipy, pandas): see build.json.
const deferred = new Promise((res, rej) => { markDeferred = res; failDeferred = rej; });
deferred.catch(() => {});

window.palazzo = {
  ready,
  rendered,
  deferred,
  call: (name, args) => client.call(name, args),
  // Milliseconds since navigation start at which each boot stage started and ended.
  timings: stageTimes,
  // What the worker said of each boot stage (e.g. "packages:done": the memory it let go).
  stages: stageDetails,
  // Milliseconds the last import took: reading and recognising it, then applying it.
  importTimings: {},
  // Where the background embedding's time went so far (seconds): {steps, plan, model, store,
  // wall}; null before its first step.
  embedTimes: null,
};
const importer = makeImporter(worker);
window.palazzo.openImport = importer.open;
// The palace file, streamed from the worker and saved (the Files tab's Download button).
const exporter = makeExporter(worker);
window.palazzo.exportFile = exporter.start;
// A palace file or an export opened with the installed app goes to the import dialog.
acceptLaunchedFiles(ready, importer.openFiles);
// The offline copy (sw.js) is made off the boot path: after the first render and the deferred
// packages, or 30 s after the render when those take longer (a big palace embedding).
const settled = (promise) => promise.then(() => {}, () => {});
const afterBoot = rendered.then(() => Promise.race([
  settled(deferred), new Promise((res) => setTimeout(res, 30_000))]));
// Resolves to what the service worker keeps (version, files, bytes, seconds), or null.
window.palazzo.offline = startOffline(afterBoot);
window.palazzo.offline.catch((err) => console.warn(`offline copy: ${err.message || err}`));

worker.onmessage = async (event) => {
  const msg = event.data;
  switch (msg.type) {
    case "stage":
      showStage(msg, origin);
      if (msg.stage === "engine" && msg.state === "done") markReady(true);
      if (msg.stage === "deferred" && msg.state === "done") markDeferred(true);
      break;
    case "reply":
      client.settle(msg.reply);
      break;
    case "render":
      try {
        await doc.render(msg, document.getElementById("app"));
        enhance(); // ARIA tabs, names, focus rings (web/a11y.js)
        document.addEventListener("click", goToTab);
        stageTimes["document:done"] = performance.now();
        hideBoot();
        markRendered(true);
      } catch (err) {
        showError({ stage: "interface", message: String(err) });
        failRendered(err);
      }
      break;
    case "patch":
      doc.applyPatch(msg);
      enhanceSoon();
      break;
    case "export-begin":
    case "export-piece":
    case "export-end":
      exporter.onMessage(msg);
      break;
    case "import-found":
    case "import-progress":
    case "import-done":
    case "import-error":
      importer.onMessage(msg);
      break;
    case "idle":
      doc.idle();
      break;
    case "embed-times":
      window.palazzo.embedTimes = { steps: msg.steps, plan: msg.plan, model: msg.model,
        store: msg.store, wall: msg.wall };
      break;
    case "lock-free":
      // The tab that wrote the read-only palace has gone: the interface offers to take over;
      // a script can listen for this event and call open_palace again.
      window.dispatchEvent(new CustomEvent("palazzo:lock-free", { detail: { palace: msg.palace } }));
      break;
    case "error": {
      if (msg.stage === "deferred") {
        // The palace works without them; operations that need them will say so.
        console.error(`deferred packages failed: ${msg.detail}`);
        failDeferred(new Error(msg.message));
        break;
      }
      showError(msg);
      console.error(msg.detail);
      const error = { code: "boot_failed", type: "BootError", message: `${msg.stage}: ${msg.message}` };
      client.failAll(error);
      failReady(new Error(error.message));
      failRendered(new Error(error.message));
      failDeferred(new Error(error.message));
      break;
    }
  }
};

worker.onerror = (event) => {
  showError({ stage: "runtime", message: event.message || "the worker failed to start" });
  failReady(new Error(event.message));
  failRendered(new Error(event.message));
};

// Install and offline: the service worker (sw.js) that keeps the site in the browser, the
// "new version" notice, and files opened with the installed app (the File Handling API).

const LOCAL = new Set(["localhost", "127.0.0.1", "[::1]"]);

// A service worker runs only on https or a loopback http server (never from file://).
// Browsers driven by automation (navigator.webdriver: the test suite, the benchmarks) do not
// register it: they measure a first visit, and would otherwise each download the whole
// site again in the background. tests/browser/test_install.py drives it as a person's
// browser would.
export function offlineSupported() {
  if (!("serviceWorker" in navigator) || navigator.webdriver) return false;
  const { protocol, hostname } = location;
  return protocol === "https:" || (protocol === "http:" && LOCAL.has(hostname));
}

// What the active service worker keeps: {version, files, bytes, seconds, downloaded, copied,
// kept}, once its cache is complete.
function askStatus(worker) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data);
    worker.postMessage({ type: "status" }, [channel.port2]);
  });
}

// The active worker once it is activated; rejects if the first install fails.
function activated(registration) {
  return new Promise((resolve, reject) => {
    const installing = registration.installing;
    if (installing && !registration.active) {
      installing.addEventListener("statechange", () => {
        if (installing.state === "redundant") reject(new Error("the offline copy could not be made"));
      });
    }
    navigator.serviceWorker.ready.then((ready) => {
      const worker = ready.active;
      if (worker.state === "activated") { resolve(worker); return; }
      worker.addEventListener("statechange", () => { if (worker.state === "activated") resolve(worker); });
    });
  });
}

// A new version waits while this page uses the old one: say so, and offer to switch now
// (else it takes over when every palazzo tab is closed).
function offerUpdate(registration) {
  const bar = document.getElementById("update-ready");
  const button = document.getElementById("update-reload");
  if (!bar || !button) return;
  let asked = false;
  const show = () => {
    if (registration.waiting && navigator.serviceWorker.controller) bar.hidden = false;
  };
  button.addEventListener("click", () => {
    if (!registration.waiting) return;
    asked = true;
    registration.waiting.postMessage({ type: "skip-waiting" });
  });
  navigator.serviceWorker.addEventListener("controllerchange", () => { if (asked) location.reload(); });
  registration.addEventListener("updatefound", () => {
    const next = registration.installing;
    if (next) next.addEventListener("statechange", show);
  });
  show();
}

// Register the service worker once `after` settles (the page has rendered and the deferred
// packages are in, so it never competes with the boot); resolves to the active worker's
// status, or null where it is not used.
export function startOffline(after) {
  if (!offlineSupported()) return Promise.resolve(null);
  return after.then(async () => {
    const registration = await navigator.serviceWorker.register(
      new URL("sw.js", document.baseURI), { updateViaCache: "none" });
    offerUpdate(registration);
    // A page the worker serves asks once more for a new sw.js (a rebuilt site).
    if (navigator.serviceWorker.controller) registration.update().catch(() => {});
    return askStatus(await activated(registration));
  });
}

// Files opened with the installed app ("Open with palazzo", or dropped on its icon) go to
// the import dialog, as a drop does, once the engine answers.
export function acceptLaunchedFiles(ready, openFiles) {
  if (!("launchQueue" in window)) return;
  window.launchQueue.setConsumer(async (params) => {
    if (!params.files || !params.files.length) return;
    const files = await Promise.all(params.files.map((handle) => handle.getFile()));
    await ready;
    openFiles(files);
  });
}

// Export: the palace file saved from the pieces the worker streams (workers/palace.worker.js,
// exportFile). A click on the Files tab's "Download palace JSON" (class pz-export) starts it;
// the pieces are kept as a Blob (the browser may keep a big one on disk) and saved through a
// link with `download`, so the tab never holds the file's whole text as a string.

export function makeExporter(worker) {
  let job = null;  // {name, parts, bytes, resolve, reject} while an export runs

  // Resolves to {name, bytes} once the file is saved (or the export's error).
  function start() {
    if (job) return job.promise;
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    job = { name: "palace.json", parts: [], bytes: 0, resolve, reject, promise };
    worker.postMessage({ type: "export-file" });
    return promise;
  }

  function save(name, parts) {
    const blob = new Blob(parts, { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // The download has its own reference by now; the URL is let go a while after.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    return blob.size;
  }

  function onMessage(msg) {
    if (!job) return;
    if (msg.type === "export-begin") {
      job.name = msg.name;
    } else if (msg.type === "export-piece") {
      job.parts.push(msg.data);
      job.bytes += msg.data.byteLength;
    } else if (msg.type === "export-end") {
      const done = job;
      job = null;
      if (msg.error) { done.reject(new Error(msg.error)); return; }
      const bytes = save(done.name, done.parts);
      done.parts.length = 0;
      done.resolve({ name: done.name, bytes });
    }
  }

  document.addEventListener("click", (event) => {
    const path = event.composedPath();
    if (path.some((el) => el instanceof Element && el.classList.contains("pz-export"))) {
      start().catch((err) => console.warn(`export: ${err.message || err}`));
    }
  });

  return { start, onMessage };
}

// Drop to import: files or folders dropped anywhere on the page (or chosen with the dialog's
// buttons) go to the palace worker, which recognises them and says what it found; the person
// chooses where they land (a new palace, or the open one) and watches the batches go in, and
// may cancel. The dialog is plain page markup (index.html), outside the Panel document.
// Any element with data-action="import" (in the page or inside the Panel document) opens it.

const PALACE_NAME = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/;

// Every file under a dropped folder, as { path, file } (readEntries returns a batch at a time).
async function walk(entry, out) {
  if (entry.isFile) {
    const file = await new Promise((res, rej) => entry.file(res, rej));
    out.push({ path: entry.fullPath.replace(/^\//, ""), file });
    return;
  }
  const reader = entry.createReader();
  for (;;) {
    const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
    if (!batch.length) break;
    for (const child of batch) await walk(child, out);
  }
}

// The files of a drop: when it holds a folder, every file under it (walked through the
// entries the browser gives), else the plain files.
async function droppedFiles(dataTransfer) {
  const out = [];
  const entries = [...dataTransfer.items].map((item) => (item.kind === "file" && item.webkitGetAsEntry) ? item.webkitGetAsEntry() : null);
  if (entries.some((entry) => entry && entry.isDirectory)) {
    for (const entry of entries) if (entry) await walk(entry, out);
    return out;
  }
  for (const file of dataTransfer.files) out.push({ path: file.webkitRelativePath || file.name, file });
  return out;
}

function plural(n, one, many) { return `${n.toLocaleString("en")} ${n === 1 ? one : (many || `${one}s`)}`; }

// What was found, in words: "a chat export (chatgpt): 12 conversations, 300 messages".
function foundText(found) {
  const c = found.counts || {};
  const bits = [];
  if (c.conversations !== undefined) bits.push(plural(c.conversations, "conversation"));
  if (c.messages !== undefined) {
    // "300 messages (280 text, 12 voice, 8 code)" when more than plain text was found.
    const kinds = Object.entries(found.by_kind || {});
    const detail = kinds.length > 1
      ? ` (${kinds.map(([k, n]) => `${n.toLocaleString("en")} ${k.replace("_", " ")}`).join(", ")})` : "";
    bits.push(plural(c.messages, "message") + detail);
  }
  if (c.files !== undefined && found.kind !== "folder") bits.push(plural(c.files, "file"));
  if (c.drawers !== undefined) bits.push(plural(c.drawers, "drawer"));
  if (c.drawers_added !== undefined && c.files === undefined) bits.push(plural(c.drawers_added, "drawer"));
  if (c.wings !== undefined) bits.push(plural(c.wings, "wing"));
  const fmt = found.format && found.format !== found.kind ? ` (${found.format})` : "";
  let text = `Found ${found.label}${fmt}${bits.length ? `: ${bits.join(", ")}` : ""}.`;
  if (found.skipped) {
    const reasons = Object.entries(found.skipped_by_reason || {}).sort((a, b) => b[1] - a[1])
      .map(([why, n]) => `${n} ${why}`).join("; ");
    text += ` ${plural(found.skipped, "item")} will be skipped: ${reasons}.`;
  }
  return text;
}

export function makeImporter(worker) {
  const $ = (id) => document.getElementById(id);
  const dialog = $("import-dialog");
  const status = $("import-status");
  const target = $("import-target");
  const nameInput = $("import-name");
  const nameError = $("import-name-error");
  const openLabel = $("import-open-label");
  const progress = $("import-progress");
  const go = $("import-go");
  const cancel = $("import-cancel");
  const close = $("import-close");
  const pickers = $("import-pick");
  let state = "idle";  // idle → reading → found → running → done
  let found = null;
  const started = {};

  function set(next) {
    state = next;
    dialog.dataset.state = next;
    pickers.hidden = next === "running" || next === "reading";
    target.hidden = next !== "found";
    go.hidden = next !== "found";
    progress.hidden = next !== "running";
    cancel.hidden = next !== "running";
    close.textContent = next === "done" ? "Close" : "Cancel";
    close.hidden = next === "running";
    validate();
  }

  function say(text, kind = "info") {
    status.textContent = text;
    status.className = `import-${kind}`;
  }

  function open() {
    if (!dialog.open) dialog.showModal();
    if (state === "done") { say(""); set("idle"); }
  }

  function chosen() { return dialog.querySelector('input[name="import-target"]:checked').value; }

  // The new palace's name: checked as it is typed, the Import button disabled until it is valid.
  function validate() {
    if (state !== "found") { go.disabled = true; return; }
    let problem = "";
    if (chosen() === "new") {
      const name = nameInput.value;
      if (!name.trim()) problem = "Give the new palace a name.";
      else if (!PALACE_NAME.test(name) || /[ .]$/.test(name)) problem = "A palace name has up to 64 letters, digits, spaces, '_', '.' or '-', and starts with a letter or digit.";
      else if ((found.palaces || []).includes(name)) problem = `A palace named ${name} exists already: choose another name, or add to the open palace.`;
    }
    nameError.textContent = problem;
    nameInput.setAttribute("aria-invalid", problem ? "true" : "false");
    go.disabled = Boolean(problem);
  }

  async function send(items) {
    if (!items.length) { say("Nothing to import: the drop held no files.", "error"); return; }
    open();
    set("reading");
    say(`Reading ${plural(items.length, "file")}…`);
    started.read = performance.now();
    const files = [];
    for (const { path, file } of items) {
      try {
        files.push({ path, data: await file.arrayBuffer() });
      } catch (err) {
        say(`Could not read ${path}: ${err.message || err}. Nothing was imported.`, "error");
        set("idle");
        return;
      }
    }
    worker.postMessage({ type: "import-files", files }, files.map((f) => f.data));
  }

  function onMessage(msg) {
    switch (msg.type) {
      case "import-found": {
        found = msg.found;
        window.palazzo.importTimings.found = performance.now() - started.read;
        say(foundText(found));
        nameInput.value = found.name;
        const isPalaceFile = found.kind === "palace";
        openLabel.textContent = found.open
          ? (isPalaceFile ? `Replace everything in the open palace, ${found.open}, with this file` : `Add to the open palace, ${found.open}`)
          : "Add to the open palace";
        dialog.querySelector('input[name="import-target"][value="new"]').checked = true;
        set("found");
        nameInput.focus();
        break;
      }
      case "import-progress":
        progress.max = msg.total || 1;
        progress.value = msg.done;
        say(`Importing: ${msg.done.toLocaleString("en")} of ${plural(msg.total, "item")}…`);
        break;
      case "import-done":
        window.palazzo.importTimings.applied = performance.now() - started.apply;
        say(msg.message, "ok");
        set("done");
        close.focus();
        window.dispatchEvent(new CustomEvent("palazzo:imported", { detail: msg }));
        break;
      case "import-error":
        say(msg.message, "error");
        set(state === "running" ? "done" : (found && state === "found" ? "found" : "idle"));
        window.dispatchEvent(new CustomEvent("palazzo:import-failed", { detail: msg }));
        break;
    }
  }

  go.addEventListener("click", () => {
    if (go.disabled) return;
    started.apply = performance.now();
    set("running");
    say("Importing…");
    worker.postMessage({ type: "import-start", target: chosen(), name: nameInput.value });
  });
  cancel.addEventListener("click", () => {
    worker.postMessage({ type: "import-cancel" });
    say("Cancelling after the current batch…");
  });
  close.addEventListener("click", () => { dialog.close(); if (state !== "running") { set("idle"); say(""); } });
  dialog.addEventListener("cancel", (event) => { if (state === "running") event.preventDefault(); });
  nameInput.addEventListener("input", validate);
  for (const radio of dialog.querySelectorAll('input[name="import-target"]')) radio.addEventListener("change", validate);

  $("import-files-input").addEventListener("change", (event) => {
    const items = [...event.target.files].map((file) => ({ path: file.name, file }));
    event.target.value = "";
    send(items);
  });
  $("import-folder-input").addEventListener("change", (event) => {
    const items = [...event.target.files].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
    event.target.value = "";
    send(items);
  });
  $("import-pick-files").addEventListener("click", () => $("import-files-input").click());
  $("import-pick-folder").addEventListener("click", () => $("import-folder-input").click());

  // Drop anywhere: the page shows where to drop while something is dragged over it.
  let depth = 0;
  const hasFiles = (event) => [...(event.dataTransfer?.types || [])].includes("Files");
  document.addEventListener("dragenter", (event) => { if (!hasFiles(event)) return; depth += 1; document.body.classList.add("dropping"); });
  document.addEventListener("dragleave", () => { depth = Math.max(0, depth - 1); if (!depth) document.body.classList.remove("dropping"); });
  document.addEventListener("dragover", (event) => { if (hasFiles(event)) event.preventDefault(); });
  document.addEventListener("drop", async (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    depth = 0;
    document.body.classList.remove("dropping");
    if (state === "running" || state === "reading") { open(); return; }
    send(await droppedFiles(event.dataTransfer));
  });
  document.addEventListener("click", (event) => {
    if (event.composedPath().some((el) => el instanceof Element && el.getAttribute("data-action") === "import")) open();
  });

  // Files handed over whole (opened with the installed app): as a drop of those files.
  function openFiles(files) {
    if (state === "running" || state === "reading") { open(); return; }
    send(files.map((file) => ({ path: file.name, file })));
  }

  set("idle");
  return { onMessage, open, openFiles };
}

// Palace files in the browser for the palace worker: OPFS (synchronous access handles) where
// the browser has it, IndexedDB where it does not, memory as a last resort (nothing kept).
// The engine keeps a mirror of the open palace's files and hands over its changes after each
// call; apply writes each in order and resolves once it is durable, and only then does the
// worker answer the call. A file written whole is read back and compared before the changes
// after it (a compaction's deletes) are made; in OPFS it is written under a temporary name
// and moved into place, so a crash never leaves half of keys.json.
"use strict";

const PalaceStorage = (() => {
  const ROOT = "palazzo";
  const LAST = ".last-opened";
  const SNAPSHOT = /^snapshot-(\d{8})\.pz$/;
  const JOURNAL = /^journal-(\d{8})\.log$/;

  // Files boot reads: all but the generations older than the newest snapshot's (its snapshot
  // and journal, read only when boot falls back on them: the journal alone was 49 MB of a
  // 20k palace's tab) and damaged files set aside. Those are listed with null, read on demand.
  function deferred(names) {
    const snaps = names.filter((n) => SNAPSHOT.test(n)).sort();
    const newest = snaps[snaps.length - 1];
    const gen = newest ? Number(SNAPSHOT.exec(newest)[1]) : 0;
    const older = (n) => {
      const m = SNAPSHOT.exec(n) || JOURNAL.exec(n);
      return m !== null && Number(m[1]) < gen;
    };
    return new Set(names.filter((n) => older(n) || n.startsWith("damaged-")));
  }

  function same(a, b) {
    if (a.byteLength !== b.byteLength) return false;
    for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  function readBack(file, got, want) {
    if (!same(got, want)) throw new Error(`${file} did not read back as it was written`);
  }

  // Call work with the bytes of `data`: a Uint8Array, or the worker's view of a file still
  // in Pyodide's memory (an object with read(work); see outgoing in palace.worker.js).
  function withBytes(data, work) {
    return data instanceof Uint8Array ? work(data) : data.read(work);
  }

  // A copy of `data`'s bytes of its own (what IndexedDB stores: a structured clone of a
  // view into Pyodide's memory would copy all of that memory).
  function copyOf(data) {
    return withBytes(data, (bytes) => bytes.slice());
  }

  // How much of a file written whole is read back at a time: the check holds one piece, not
  // a second copy of a 190 MB snapshot.
  const PIECE = 8 << 20;

  // Read `bytes.byteLength` bytes back through the access handle, a piece at a time, and
  // throw unless they are `bytes`.
  function readBackPieces(file, access, bytes) {
    if (access.getSize() !== bytes.byteLength) throw new Error(`${file} did not read back as it was written`);
    const piece = new Uint8Array(Math.min(PIECE, bytes.byteLength));
    for (let at = 0; at < bytes.byteLength; at += PIECE) {
      const n = Math.min(PIECE, bytes.byteLength - at);
      const got = n === piece.byteLength ? piece : piece.subarray(0, n);
      if (access.read(got, { at }) !== n) throw new Error(`${file} did not read back as it was written`);
      readBack(file, got, bytes.subarray(at, at + n));
    }
  }

  class OpfsStore {
    constructor(dir) { this.dir = dir; this.kind = "opfs"; }

    async list() {
      const names = [];
      for await (const [name, handle] of this.dir.entries()) {
        if (handle.kind === "directory") names.push(name);
      }
      return names.sort();
    }

    async readAll(palace, only) {
      const files = {};
      let dir;
      try { dir = await this.dir.getDirectoryHandle(palace); } catch { return files; }
      const handles = new Map();
      for await (const [name, handle] of dir.entries()) {
        if (handle.kind === "file" && !name.startsWith(".")) handles.set(name, handle);
      }
      const later = only ? new Set() : deferred([...handles.keys()]);
      for (const [name, handle] of handles) {
        if (only && !only.includes(name)) continue;
        files[name] = later.has(name) ? null : new Uint8Array(await (await handle.getFile()).arrayBuffer());
      }
      return files;
    }

    // The palace opened last (a file beside the palaces' folders; list() skips files).
    async getLast() {
      try {
        const file = await (await this.dir.getFileHandle(LAST)).getFile();
        return await file.text();
      } catch { return null; }
    }

    async setLast(palace) {
      const handle = await this.dir.getFileHandle(LAST, { create: true });
      const access = await handle.createSyncAccessHandle();
      try {
        const bytes = new TextEncoder().encode(palace);
        access.truncate(0);
        access.write(bytes, { at: 0 });
        access.flush();
      } finally {
        access.close();
      }
    }

    async apply([op, palace, file, data]) {
      if (op === "remove") {
        try { await this.dir.removeEntry(palace, { recursive: true }); } catch (err) { if (err.name !== "NotFoundError") throw err; }
        return;
      }
      const dir = await this.dir.getDirectoryHandle(palace, { create: true });
      if (op === "delete") {
        try { await dir.removeEntry(file); } catch (err) { if (err.name !== "NotFoundError") throw err; }
        return;
      }
      if (op === "rename") {
        let handle;
        try { handle = await dir.getFileHandle(file); } catch (err) { if (err.name === "NotFoundError") return; throw err; }
        await handle.move(data);
        return;
      }
      if (op === "write") {
        // A new file under a temporary name, read back and compared, then moved into place.
        const temp = `.${file}.tmp`;
        const handle = await dir.getFileHandle(temp, { create: true });
        await this.access(handle, (access) => withBytes(data, (bytes) => {
          access.truncate(0);
          if (access.write(bytes, { at: 0 }) !== bytes.byteLength) throw new Error(`${file} was not written whole`);
          access.flush();
          readBackPieces(file, access, bytes);
        }));
        await handle.move(file);
        return;
      }
      const handle = await dir.getFileHandle(file, { create: true });
      await this.access(handle, (access) => {
        if (op === "append") {
          access.write(data, { at: access.getSize() });
        } else if (op === "mark") {
          // A small file of one size, rewritten in place (the journal's tip).
          access.write(data, { at: 0 });
          access.truncate(data.byteLength);
        } else if (op === "truncate") {
          access.truncate(data);
        } else {
          throw new Error(`unknown storage operation ${op}`);
        }
        access.flush();
      });
    }

    async access(handle, work) {
      const access = await handle.createSyncAccessHandle();
      try { work(access); } finally { access.close(); }
    }
  }

  function request(req) {
    return new Promise((resolve, reject) => {
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  }

  class IdbStore {
    constructor(db) { this.db = db; this.kind = "indexeddb"; }

    static async open() {
      const req = indexedDB.open(ROOT, 2);
      req.onupgradeneeded = () => {
        const names = req.result.objectStoreNames;
        if (!names.contains("files")) req.result.createObjectStore("files");
        if (!names.contains("prefs")) req.result.createObjectStore("prefs");
      };
      return new IdbStore(await request(req));
    }

    // The palace opened last (its own object store: list() reads only palace files).
    async getLast() {
      const value = await request(this.db.transaction("prefs", "readonly").objectStore("prefs").get(LAST));
      return typeof value === "string" ? value : null;
    }

    async setLast(palace) {
      await request(this.db.transaction("prefs", "readwrite").objectStore("prefs").put(palace, LAST));
    }

    tx(mode) { return this.db.transaction("files", mode).objectStore("files"); }

    async list() {
      const keys = await request(this.tx("readonly").getAllKeys());
      return [...new Set(keys.map((k) => k.split("/")[0]))].sort();
    }

    async readAll(palace, only) {
      const files = {};
      const range = IDBKeyRange.bound(`${palace}/`, `${palace}/\uffff`);
      const keys = await request(this.tx("readonly").getAllKeys(range));
      const names = keys.map((k) => k.slice(palace.length + 1));
      const later = only ? new Set() : deferred(names);
      const store = this.tx("readonly");
      await Promise.all(names.map(async (name, i) => {
        if (only && !only.includes(name)) return;
        files[name] = later.has(name) ? null : new Uint8Array(await request(store.get(keys[i])));
      }));
      return files;
    }

    async apply([op, palace, file, data]) {
      const key = `${palace}/${file}`;
      if (op === "remove") {
        await request(this.tx("readwrite").delete(IDBKeyRange.bound(`${palace}/`, `${palace}/\uffff`)));
      } else if (op === "delete") {
        await request(this.tx("readwrite").delete(key));
      } else if (op === "rename") {
        const tx = this.db.transaction("files", "readwrite", { durability: "strict" });
        const store = tx.objectStore("files");
        const value = await request(store.get(key));
        if (value === undefined) return;
        store.put(value, `${palace}/${data}`);
        store.delete(key);
        await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = () => reject(tx.error); tx.onabort = () => reject(tx.error); });
      } else {
        const old = op === "write" || op === "mark" ? null : await request(this.tx("readonly").get(key));
        let next;
        if (op === "write" || op === "mark") next = copyOf(data);
        else if (op === "append") {
          next = new Uint8Array((old ? old.byteLength : 0) + data.byteLength);
          if (old) next.set(new Uint8Array(old));
          next.set(data, old ? old.byteLength : 0);
        } else if (op === "truncate") next = old ? new Uint8Array(old).slice(0, data) : new Uint8Array(0);
        else throw new Error(`unknown storage operation ${op}`);
        // One transaction a change: it is durable when the transaction completes.
        const store = this.db.transaction("files", "readwrite", { durability: "strict" }).objectStore("files");
        await request(store.put(next.buffer.slice(next.byteOffset, next.byteOffset + next.byteLength), key));
        if (op === "write") readBack(file, new Uint8Array(await request(this.tx("readonly").get(key))), next);
      }
    }
  }

  class MemoryStore {
    constructor() { this.kind = "memory"; }
    async list() { return []; }
    async readAll() { return {}; }
    async getLast() { return null; }
    async setLast() {}
    async apply() {}
  }

  async function openOpfs() {
    if (!self.navigator || !navigator.storage || !navigator.storage.getDirectory) return null;
    try {
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle(ROOT, { create: true });
      // Probe the synchronous access handle: some browsers have OPFS without it.
      const probe = await dir.getFileHandle(".probe", { create: true });
      if (typeof probe.createSyncAccessHandle !== "function") return null;
      (await probe.createSyncAccessHandle()).close();
      await dir.removeEntry(".probe");
      return new OpfsStore(dir);
    } catch (err) {
      console.warn(`OPFS unavailable: ${err}`);
      return null;
    }
  }

  async function open(prefer) {
    if (prefer !== "indexeddb") {
      const opfs = await openOpfs();
      if (opfs) return opfs;
    }
    if (self.indexedDB) {
      try { return await IdbStore.open(); } catch (err) { console.warn(`IndexedDB unavailable: ${err}`); }
    }
    return new MemoryStore();
  }

  // Writer locks this worker holds, one per palace (palace → the function that releases it).
  // A tab holds a palace's lock while that palace is open for writing in it; the worker gives
  // it back when the engine closes the palace (switching away, deleting it).
  const held = new Map();
  const lockName = (palace) => `palazzo:${palace}`;

  // Resolves true when this tab holds the lock of `palace` (now or already), false when
  // another tab holds it. Never waits for another tab: taking over is an explicit call.
  function acquire(palace) {
    if (held.has(palace)) return Promise.resolve(true);
    if (!self.navigator || !navigator.locks) {
      held.set(palace, () => {});
      return Promise.resolve(true);
    }
    return new Promise((resolve, reject) => {
      navigator.locks.request(lockName(palace), { ifAvailable: true }, (lock) => {
        if (!lock) { resolve(false); return undefined; }
        return new Promise((release) => { held.set(palace, release); resolve(true); });
      }).catch(reject);
    });
  }

  function release(palace) {
    const done = held.get(palace);
    if (!done) return;
    held.delete(palace);
    done();
  }

  // Resolves whether nobody (no tab, this one included) holds the lock of `palace`.
  async function isFree(palace) {
    if (!self.navigator || !navigator.locks) return true;
    const state = await navigator.locks.query();
    return !state.held.some((lock) => lock.name === lockName(palace));
  }

  return { open, acquire, release, isFree };
})();

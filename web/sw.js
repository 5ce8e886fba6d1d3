// The service worker: keeps the built site in the browser, so the page opens (and installs as
// an app) with no server running. Registered by web/offline.js once the page has rendered.
//
// - install: every file of the build's precache list is put in one cache named after the
//   build's version, each checked against its sha256 first (a file of another build is
//   refused, and the install fails and is tried again on a later visit). A file an older
//   version's cache holds with the same sha256 is copied from there instead of downloaded.
// - activate (once every file is in): the other versions' caches are deleted.
// - fetch: the site's own files come from the cache (a navigation to the folder is
//   index.html; the query string is ignored); files on the lazy list (the NumPy fallback's
//   weights, packages the page never loads) are cached on first use, checked likewise.
//   Anything else, and every request to another origin, is left to the browser: never
//   answered or cached here (the site makes none).
// Responses keep the headers they were served with (application/wasm, COOP/COEP).
"use strict";

// The build replaces the next line with the list (py/sitebuild/offline.py):
// {version, precache: [[path, sha256, bytes], …], lazy: [[path, sha256, bytes], …]}
const SITE = /* PRECACHE */ null;

const PREFIX = "palazzo-";
const CACHE = PREFIX + SITE.version;
const BASE = new URL("./", self.location.href);
// The cache's own record (version, files, bytes, seconds): a key no file has.
const RECORD = new URL("__palazzo-precache__", BASE).href;
const SHA = "X-Palazzo-Sha256";
const PRECACHED = new Map(SITE.precache.map(([path, sha]) => [path, sha]));
const LAZY = new Map(SITE.lazy.map(([path, sha]) => [path, sha]));
const DOWNLOADS = 3;  // at a time: bounds the memory the checks hold

const hex = (digest) => [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (buffer) => hex(await crypto.subtle.digest("SHA-256", buffer));

// What a response becomes in the cache: the same body, status and headers, plus its sha256.
function stored(response, body, sha) {
  const headers = new Headers(response.headers);
  headers.set(SHA, sha);
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

// Download one file of the site and check it; a mismatch (the HTTP cache held an older copy,
// or the server has another build by now) is fetched once more past the HTTP cache.
async function download(path, sha) {
  let why = "";
  for (const cache of ["no-cache", "reload"]) {
    const response = await fetch(new URL(path, BASE), { cache, credentials: "same-origin" });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    const body = await response.arrayBuffer();
    const got = await sha256(body);
    if (got === sha) return stored(response, body, sha);
    why = `${path}: sha256 ${got}, the list says ${sha}`;
  }
  throw new Error(`not this build's file (${why})`);
}

async function olderCaches() {
  const names = (await caches.keys()).filter((name) => name.startsWith(PREFIX) && name !== CACHE);
  return Promise.all(names.map((name) => caches.open(name)));
}

// A copy of `url` with this sha256 in one of `caches`, or null.
async function copyOf(url, sha, older) {
  for (const cache of older) {
    const hit = await cache.match(url);
    if (hit && hit.headers.get(SHA) === sha) return hit;
  }
  return null;
}

async function install() {
  const t0 = Date.now();
  const cache = await caches.open(CACHE);
  const older = await olderCaches();
  const counts = { downloaded: 0, copied: 0, kept: 0, bytes: 0 };
  // The biggest first, so the long downloads overlap the many small ones.
  const todo = [...SITE.precache].sort((a, b) => b[2] - a[2]);
  const one = async ([path, sha, bytes]) => {
    const url = new URL(path, BASE).href;
    counts.bytes += bytes;
    const have = await cache.match(url);  // an interrupted install of this version got it
    if (have && have.headers.get(SHA) === sha) { counts.kept += 1; return; }
    const copy = await copyOf(url, sha, older);
    if (copy) { await cache.put(url, copy); counts.copied += 1; return; }
    await cache.put(url, await download(path, sha));
    counts.downloaded += 1;
  };
  await Promise.all(Array.from({ length: DOWNLOADS }, async () => {
    while (todo.length) await one(todo.shift());
  }));
  // Lazy files an older version cached on use come along when they did not change.
  for (const [path, sha] of SITE.lazy) {
    const url = new URL(path, BASE).href;
    if (await cache.match(url)) continue;
    const copy = await copyOf(url, sha, older);
    if (copy) await cache.put(url, copy);
  }
  const record = { version: SITE.version, files: SITE.precache.length, ...counts,
    seconds: (Date.now() - t0) / 1000 };
  await cache.put(RECORD, new Response(JSON.stringify(record), { headers: { "Content-Type": "application/json" } }));
}

self.addEventListener("install", (event) => event.waitUntil(install()));

self.addEventListener("activate", (event) => event.waitUntil((async () => {
  for (const name of await caches.keys()) {
    if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
  }
  await self.clients.claim();
})()));

// The site path a request asks for ("index.html" for the folder itself), or null.
function sitePath(url) {
  if (url.origin !== self.location.origin || !url.pathname.startsWith(BASE.pathname)) return null;
  let path;
  try { path = decodeURIComponent(url.pathname.slice(BASE.pathname.length)); } catch { return null; }
  return path === "" ? "index.html" : path;
}

async function fromCache(path, request) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(new URL(path, BASE).href);
  // Missing only if storage was cleared under us: the network may still have it.
  return hit || fetch(request);
}

async function onFirstUse(path, request, event) {
  const cache = await caches.open(CACHE);
  const url = new URL(path, BASE).href;
  const hit = await cache.match(url);
  if (hit) return hit;
  const response = await fetch(request);
  if (response.ok) {
    const copy = response.clone();
    event.waitUntil((async () => {
      const body = await copy.arrayBuffer();
      const sha = LAZY.get(path);
      if ((await sha256(body)) === sha) await cache.put(url, stored(copy, body, sha));
    })().catch(() => {}));
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || request.headers.has("range")) return;
  const path = sitePath(new URL(request.url));
  if (path === null) return;
  if (PRECACHED.has(path)) event.respondWith(fromCache(path, request));
  else if (LAZY.has(path)) event.respondWith(onFirstUse(path, request, event));
});

self.addEventListener("message", (event) => {
  const msg = event.data || {};
  if (msg.type === "skip-waiting") {
    self.skipWaiting();
  } else if (msg.type === "status" && event.ports[0]) {
    // The page asks what this worker keeps: its cache's record, or null while installing.
    const port = event.ports[0];
    caches.open(CACHE).then((cache) => cache.match(RECORD))
      .then((hit) => (hit ? hit.json() : null))
      .then((record) => port.postMessage(record), (err) => port.postMessage({ error: String(err) }));
  }
});

"""Python side of the browser's palace worker (``workers/palace.worker.js``).

The worker script boots Pyodide and loads packages; this module creates the engine, renders
the Panel document for the page and keeps the two documents in sync. It runs only in Pyodide.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from palazzo.hosts.bridge import Bridge
from palazzo.hosts.demo import DEMO_NAME
from palazzo.hosts.embedding import IndexingRate
from palazzo.retrieval.events import clauses

# How fast background embedding goes, for the status line (one worker, one palace at a time).
RATE = IndexingRate()

FIRST_PALACE = DEMO_NAME  # the worker opens it on a first launch


def _py(value: Any) -> Any:
    """Return ``value`` as Python data (JS proxies are converted; bytes stay bytes)."""
    if hasattr(value, "to_py"):
        value = value.to_py()
    if isinstance(value, dict):
        return {str(k): _py(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_py(v) for v in value]
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    return value


def _files(value: Any) -> dict[str, bytearray | None]:
    """Return the files the worker read ({name: bytes or None}) as {name: bytearray}, each
    copied once, straight from the JS buffer into the bytearray the mirror keeps.

    Why: a WebAssembly memory never shrinks, so whatever the boot held at its peak stays the
    tab's for good. Converting the whole object (``to_py``: a copy of every file), then to
    ``bytes`` (a second) and the mirror's ``bytearray`` (a third) held a big palace's snapshot
    three times at once. Cost: one copy of each file."""
    if value is None:
        return {}
    if not hasattr(value, "to_py"):  # already Python (tests, CPython)
        return {str(k): None if v is None else bytearray(v) for k, v in value.items()}
    out: dict[str, bytearray | None] = {}
    for key, item in value.to_py(depth=1).items():  # the files themselves stay in JS
        if item is None:
            out[str(key)] = None
        elif hasattr(item, "assign_to"):  # a Uint8Array: copied into the bytearray itself
            buf = bytearray(item.byteLength)
            item.assign_to(buf)
            out[str(key)] = buf
        else:
            out[str(key)] = bytearray(_py(item))
    return out


def start_engine(kind: str = "memory", names: Any = (), writable: bool = True,
                 name: str | None = None, files: Any = None) -> Bridge:
    """Return the bridge over the browser's palaces: ``kind`` is the storage the worker found
    ("opfs", "indexeddb" or "memory"), ``names`` the palaces it holds, ``files`` the files of
    ``name`` (the one to open, read by the worker). No palace yet: a first one is created.

    ``writable`` says whether the worker got the writer lock of ``name`` (of the first palace
    when there is none yet); without it the palace opens read-only and says so.
    """
    from palazzo.palace import Palace
    from palazzo.persist.library import Library
    from palazzo.persist.storage import QueuedRoot

    first = name if name is not None else FIRST_PALACE
    root = QueuedRoot(kind, list(_py(names)), held=[first] if writable else [])
    # Palaces opened later get the embedder once it has arrived (attach_embedder).
    library = Library(root, lambda **kw: Palace(embedder=bridge.hooks.embedder, **kw))
    bridge = Bridge(library=library)
    bridge.hooks.indexing = RATE.words
    if name is not None:
        root.load(name, _files(files))
        library.open_palace(name)
    elif not root.palaces():
        from palazzo.hosts import demo

        library.new_palace(FIRST_PALACE)
        demo.build(bridge.call)
    return bridge


def install_hooks(bridge: Bridge) -> None:
    """Connect the bridge to the worker script. Returns None.

    Changes made from the interface are written as they happen (``palazzoScheduleFlush``);
    the interface awaits ``persist`` before it says a change was saved, and runs the library
    calls (open, new, delete palace) through ``library_call``, which lets the worker take
    the palace's lock and read its files first, in turn with the page's calls.
    """
    import js
    from pyodide.ffi import JsException

    from palazzo.errors import PalazzoError, StorageError

    bridge.on_change = lambda: js.palazzoScheduleFlush()

    async def persist() -> None:
        try:
            await js.palazzoFlush()
        except JsException as err:
            raise StorageError(f"not saved: {err}") from None

    async def library_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
        reply = json.loads(await js.palazzoLibraryCall(name, json.dumps(args)))
        if reply["ok"]:
            return reply["result"]
        error = reply["error"]
        err = PalazzoError(error["message"])
        err.code = error["code"]
        raise err

    async def prepare_texts(texts: list[str]) -> None:
        await js.palazzoPrepareTexts(json.dumps(list(texts)))

    async def load_packages(names: list[str]) -> None:
        await js.palazzoLoadPackages(json.dumps(list(names)))

    bridge.hooks.persist = persist
    bridge.hooks.library_call = library_call
    bridge.hooks.prepare_texts = prepare_texts
    bridge.hooks.load_packages = load_packages


def packages_for(bridge: Bridge, name: str) -> list[str]:
    """Return the packages operation ``name`` imports that are not loaded yet (its
    ``packages``: SciPy for the atlas, which the page loads on first use: 176 MB less in
    the tab otherwise, docs/browser.md "Memory at 20k drawers"); empty for an unknown name.
    The worker loads them before it runs the call. Cost: a lookup per package."""
    from palazzo.errors import PalazzoError

    try:
        return bridge.registry.get(name).missing_packages()
    except PalazzoError:
        return []


def grant(bridge: Bridge, name: str, held: bool) -> None:
    """Tell the library's root whether the worker holds the writer lock of ``name`` (asked
    for before a call that opens, creates or deletes it). Returns None."""
    bridge.library.root.grant(name, bool(held))


def needs_files(bridge: Bridge, name: str) -> bool:
    """Return whether the worker must read the files of ``name`` before ``open_palace``: not
    when it is open here for writing (re-opening is then a no-op, and the mirror in use must
    stay the one the store writes through)."""
    lib = bridge.library
    return not (lib.name == name and lib.writable)


def load_palace(bridge: Bridge, name: str, files: Any) -> None:
    """Give the library the files of palace ``name`` that the worker read (before
    ``open_palace`` runs). A name the worker has no files for and never listed is left
    unknown, so opening it fails with NotFound instead of creating it. Returns None."""
    root = bridge.library.root
    files = _files(files)
    if files or name in root.palaces():
        root.load(name, files)


def open_name(bridge: Bridge) -> str | None:
    """Return the name of the open palace, or None."""
    return bridge.library.name


def reload_palace(bridge: Bridge, name: str, files: Any) -> None:
    """After a write failed: give the mirror of open palace ``name`` the files storage kept
    and boot it again from them (:meth:`Library.reload`), so memory holds only what was
    saved and the next write follows the last one kept. Returns None."""
    lib = bridge.library
    if lib.name != name:
        return
    root = lib.root
    root.spaces[name].drain()  # what the failed write did not reach is not on disk
    root.load(name, _files(files))
    lib.reload()
    hook = bridge.hooks.refresh_ui
    if hook is not None:
        hook()


def wanted(bridge: Bridge) -> list[list[str]]:
    """Return the files boot wanted but the worker had not read, as [palace, file] pairs
    (an older generation's snapshot, read only when the newest is damaged and boot falls
    back on it): the worker reads them and calls :func:`supply`."""
    lib = bridge.library
    if lib is None:
        return []
    return [[name, f] for name, space in lib.root.spaces.items() for f in space.wanted]


def unread(bridge: Bridge, name: str) -> list[str]:
    """Return the files of palace ``name`` the worker has not read yet (a check reads them
    all first)."""
    space = bridge.library.root.spaces.get(name)
    return sorted(space.deferred) if space is not None else []


def supply(bridge: Bridge, name: str, files: Any, boot: bool = True,
           asked: Any = None) -> None:
    """Give the mirror of palace ``name`` the files the worker read because they were wanted
    or unread; when ``boot`` and it is the open palace, boot it again from them (keeping its
    lock) and redraw. ``asked`` names the files the worker looked for: one that storage no
    longer holds (another tab's compaction removed it meanwhile) is forgotten, so boot sees
    it missing instead of asking for it after every call. Returns None."""
    lib = bridge.library
    space = lib.root.spaces.get(name)
    if space is None:
        return
    space.supply(_files(files), _py(asked) or ())
    if boot and lib.name == name:
        lib.reload()
        hook = bridge.hooks.refresh_ui
        if hook is not None:
            hook()


def read_only_palace(bridge: Bridge) -> str | None:
    """Return the open palace's name when it is open read-only here, else None (the worker
    then watches for its writer lock to come free)."""
    lib = bridge.library
    if lib is None or lib.store is None or lib.holds_lock:
        return None
    return lib.name


def lock_free(bridge: Bridge, name: str) -> None:
    """The writer of read-only palace ``name`` has gone: tell the interface, which offers to
    take over writing (``open_palace`` again). Returns None."""
    hook = bridge.hooks.lock_free
    if hook is not None and read_only_palace(bridge) == name:
        hook(name)


class Outgoing:
    """A file written whole (a snapshot, ``keys.json``), handed to the worker where it lies.

    Why: converted with the rest of :func:`drain`'s answer, a 20k palace's 130–190 MB
    snapshot was copied into the worker's JavaScript heap while Pyodide's memory still held
    it, and the tab grew by that much at every compaction. Not being a buffer, this wrapper
    is not converted; the worker keeps a proxy of it and writes from a view of ``data`` in
    Pyodide's memory (``workers/palace.worker.js``, ``outgoing``). Cost: none."""

    __slots__ = ("data",)

    def __init__(self, data: bytes | bytearray) -> None:
        self.data = data

    def __bytes__(self) -> bytes:
        """Return a copy of the bytes (CPython hosts and tests)."""
        return bytes(self.data)

    def __len__(self) -> int:
        """Return the file's size in bytes."""
        return len(self.data)


def drain(bridge: Bridge) -> list[list[Any]]:
    """Return what the worker must do, oldest first: [op, palace, file, data] with op
    write (data an :class:`Outgoing`), append (data bytes), mark (a small file rewritten
    in place, data bytes), truncate (data a size), rename (data the new name), delete
    (file) or remove (a palace),
    then ["release", palace, "", None] for each writer lock to give back.

    A lock is given back when the library released it (switching away, deleting) and when
    it is held for a palace that is not open here for writing (a lock taken for a call that
    then failed), so a tab never keeps a lock it does not use.
    """
    lib = bridge.library
    if lib is None:
        return []
    root = lib.root
    out: list[list[Any]] = [["remove", name, "", None] for name in root.removed]
    root.removed.clear()
    for name, space in root.spaces.items():
        out.extend([op, name, file, Outgoing(data) if op == "write" else data]
                   for op, file, data in space.drain())
    keep = {lib.name} if lib.holds_lock else set()
    for name in sorted(root.held - keep):
        root.unlock(name)
    out.extend(["release", name, "", None] for name in root.released)
    root.released.clear()
    return out


def attach_embedder(bridge: Bridge, weights: Any) -> dict[str, Any]:
    """Give the open palace (and every palace opened later) the MiniLM embedder from
    ``weights`` (the npz bytes, or a JS Uint8Array proxy); return {"missing": drawers still
    without a vector}. The worker then calls :func:`embed_step` until none is missing.

    Runs after the first render: the weights are 45 MB and take about a second to load, and
    until then search ranks by BM25 alone.
    """
    from palazzo.embed.cache import CachedEmbedder
    from palazzo.embed.minilm import MiniLMEmbedder

    data = weights.to_bytes() if hasattr(weights, "to_bytes") else bytes(weights)
    return _attach(bridge, CachedEmbedder(MiniLMEmbedder(data)))


def attach_hash_embedder(bridge: Bridge) -> dict[str, Any]:
    """Give the open palace (and every palace opened later) the feature-hashing embedder
    instead of MiniLM; return {"missing": drawers still without a vector}, as
    :func:`attach_embedder` does.

    For the page's ``?embedder=hash``: no weights to fetch, and a palace made by the command
    line with ``--embedder hash`` keeps its vectors (same fingerprint) instead of being
    embedded again with MiniLM, which takes hours for thousands of drawers in Pyodide.
    """
    from palazzo.embed import registry

    return _attach(bridge, registry.make("hash"))


def attach_remote_embedder(bridge: Bridge, vocab: str, card: str, runtime: str) -> dict[str, Any]:
    """Give the open palace (and every palace opened later) the MiniLM embedder whose
    vectors the embedding worker computes with ONNX Runtime; return {"missing"} as
    :func:`attach_embedder` does.

    ``vocab`` is the text of the site's ``vocab.txt``, ``card`` its ``minilm.json`` (JSON
    text: fingerprint, longest input), ``runtime`` what the status line's details say is
    computing ("ONNX Runtime, wasm, 1 thread"). The worker then alternates
    :func:`embed_plan`, the embedding worker, :func:`embed_supply` and :func:`embed_step`.
    """
    from palazzo.embed.cache import CachedEmbedder
    from palazzo.embed.remote import RemoteEmbedder

    info = json.loads(card)
    remote = RemoteEmbedder(vocab, info["fingerprint"], int(info["max_seq_length"]), runtime)
    return _attach(bridge, CachedEmbedder(remote))


# The batches of recent plans (embed_plan, query_plan) by number, until the worker supplies
# their vectors: the embedding worker sees only token ids, the texts stay here. A query's
# plan may come while the background's is being embedded, hence more than one.
_plans: dict[int, list[Any]] = {}
_PLANS_KEPT = 8


def _remote(bridge: Bridge) -> Any:
    from palazzo.embed.remote import RemoteEmbedder

    inner = getattr(bridge.hooks.embedder, "inner", None)
    return inner if isinstance(inner, RemoteEmbedder) else None


def _planned(remote: Any, texts: list[str]) -> list[Any]:
    batches = remote.requests(texts)
    if not batches:
        return []
    number = max(_plans, default=0) + 1
    _plans[number] = batches
    for old in sorted(_plans)[:-_PLANS_KEPT]:
        del _plans[old]
    return [number, [[b.ids.tobytes(), int(b.ids.shape[0]), int(b.ids.shape[1])]
                     for b in batches]]


# The page's background embedding gives a person's long turns their opening window's vector
# first, the rest after every drawer has one (Palace.embedding_texts): their own words are
# searchable by meaning sooner in a tab where the model is the slow part.
OPENING_FIRST = True


def embed_plan(bridge: Bridge, limit: int = 16) -> list[Any]:
    """Return the token ids the embedding worker must embed for the next ``limit`` drawers
    without a vector (those ``reindex`` takes next, :meth:`Palace.embedding_queue`'s
    order): [plan number, batches], each batch [ids (int32 bytes, n×t, 0-padded), n, t];
    empty when there is nothing to embed or the embedder is not the remote one. The texts
    are those the engine will ask for (:meth:`Palace.embedding_texts`: an assistant's
    answer, its opening window alone; a person's long turn, its opening window first);
    planning every window of an answer made the page's embedding worker compute vectors
    nothing used. Cost: tokenising those drawers' chunks."""
    remote = _remote(bridge)
    lib = bridge.library
    if remote is None or not lib.writable or lib.store is None:
        return []
    palace = bridge.palace
    rows = palace.embedding_queue()[: max(1, int(limit))]  # what reindex takes next
    texts = [t for r in rows for t in palace.embedding_texts(int(r), OPENING_FIRST)[0]]
    return _planned(remote, texts)


def unembedded(bridge: Bridge, rests: bool = True) -> int:
    """Return how many live drawers the embedding worker has still to embed: 0 unless the
    remote embedder is attached to a palace open for writing; with ``rests``, the long turns
    waiting for the rest of their windows count too (the worker starts its background
    embedding for them; a page call waits only for drawers without any vector). Cost: one
    pass over a boolean array, plus O(chunks) with ``rests`` (milliseconds at 20k
    drawers)."""
    lib = bridge.library
    if _remote(bridge) is None or not lib.writable or lib.store is None:
        return 0
    s = bridge.palace.drawers
    rows = s.live_rows()
    waiting = int((~s.has_vector[rows]).sum())
    return waiting + len(s.chunks.opening_rows()) if rests else waiting


def query_plan(bridge: Bridge, texts: Any) -> list[Any]:
    """Return the batches (as :func:`embed_plan`) for ``texts`` (a list, or JSON text of
    one): the query of a search about to run and the event clauses it names
    (:func:`palazzo.retrieval.events.clauses`), so it ranks by meaning too and finds the
    event it speaks of. Empty when they are known already or the embedder is not the remote
    one."""
    remote = _remote(bridge)
    texts = json.loads(texts) if isinstance(texts, str) else _py(texts)
    if remote is None or not texts:
        return []
    texts = [t for t in texts if isinstance(t, str) and t.strip()]
    return _planned(remote, texts + [c for t in texts for c in clauses(t)])


def embed_supply(bridge: Bridge, plan: int, index: int, vectors: Any) -> None:
    """Give the remote embedder the vectors of batch ``index`` of plan number ``plan`` (a
    JS Float32Array or bytes of float32, n×384). Returns None."""
    import numpy as np

    remote = _remote(bridge)
    batches = _plans.get(plan)
    if remote is None or batches is None or not 0 <= index < len(batches):
        return
    data = vectors.to_bytes() if hasattr(vectors, "to_bytes") else bytes(vectors)
    remote.supply(batches[index].texts, np.frombuffer(data, np.float32))
    if index == len(batches) - 1:
        del _plans[plan]


def _attach(bridge: Bridge, embedder: Any) -> dict[str, Any]:
    bridge.hooks.embedder = embedder
    if bridge.library.store is None:
        return {"missing": 0}
    bridge.palace.set_embedder(embedder)
    status = bridge.call("palace_status")
    _refresh_status(bridge)
    return {"missing": status["to_embed"]}


def embed_step(bridge: Bridge, limit: int = 16, seconds: float | None = None) -> dict[str, Any]:
    """Embed up to ``limit`` drawers that lack a vector; return {"embedded", "remaining"}.

    The worker runs one step at a time between other messages, so embedding a large palace
    (new, imported, or left half-done by a reload) never blocks the page's calls for long;
    the status line shows the count after each step and, given ``seconds`` (the step's
    wall time as the worker measured it, the embedding worker's part included), the rate and
    the time left.
    """
    lib = bridge.library
    # Vectors are derived data: a read-only tab leaves them to the tab that writes.
    if not lib.writable or bridge.palace.embedder is None:
        return {"embedded": 0, "remaining": 0}
    out = bridge.call("reindex", {"limit": limit, "opening_first": OPENING_FIRST})
    if seconds is not None:
        RATE.record(out["embedded"], float(seconds), out["remaining"], time.monotonic(),
                    out.get("work"))
    _refresh_status(bridge)
    return {"embedded": out["embedded"], "remaining": out["remaining"]}


def _refresh_status(bridge: Bridge) -> None:
    hook = bridge.hooks.refresh_status
    if hook is not None:
        hook()


def packages_loaded(bridge: Bridge) -> None:
    """Tell the interface the deferred packages have loaded (the worker calls this once
    they are in), so views that needed them show what they could not at boot. Returns
    None."""
    hook = bridge.hooks.packages_ready
    if hook is not None:
        hook()


def refresh_after(bridge: Bridge, name: str) -> None:
    """Reload the interface's views when operation ``name`` (run for the page's RPC, not by
    the interface itself) may have changed the palace. Returns None."""
    from palazzo.errors import PalazzoError

    hook = bridge.hooks.refresh_ui
    if hook is None:
        return
    try:
        changes = bridge.mutates(name)
    except PalazzoError:
        return
    if changes and bridge.library.store is not None:
        hook()


def import_panel(panel_dist: str) -> None:
    """Import Panel with its CSS served by the site; returns None.

    ``panel_dist`` is the absolute URL of the site's ``vendor/panel/`` folder: the build
    patched Panel to read its CSS root from ``PALAZZO_PANEL_DIST`` instead of a CDN, so it
    must be set before Panel is first imported. A separate step so boot can time it.
    """
    os.environ["PALAZZO_PANEL_DIST"] = panel_dist
    import panel  # noqa: F401
    import panel.io.pyodide  # noqa: F401


async def render_document(bridge: Bridge) -> tuple[str, str, str]:
    """Build the Panel app and return ``(docs_json, render_items, root_ids)`` for the page."""
    from panel.io.pyodide import init_doc, write_doc

    from palazzo.hosts.ui import build_app

    init_doc()
    build_app(bridge).servable()
    return await write_doc()


def link_document(send_patch: Callable[..., Any]) -> None:
    """Forward every later change of the Python document to the page through ``send_patch``."""
    from panel.io.pyodide import _link_docs_worker
    from panel.io.state import state

    _link_docs_worker(state.curdoc, send_patch, setter="js")


def apply_patch(patch: Any) -> None:
    """Apply a JSON patch that the page's document sent (a widget changed in the browser)."""
    from panel.io.pyodide import _convert_json_patch
    from panel.io.state import state

    state.curdoc.apply_json_patch(_convert_json_patch(patch), setter="js")


# -- imports the page drops on the worker (see palazzo.hosts.importing) ------------------------
_job: Any = None
# Calls a step of a dropped import applies: about a second of work in Pyodide at most, so
# the progress bar moves, clicks are answered and Stop takes effect between steps.
IMPORT_BATCH = 100


def _reply(fn: Callable[[], Any], root: str | None = None) -> str:
    """Run ``fn`` and return {"ok": true, "result"} or {"ok": false, "error"} as JSON text:
    a PalazzoError becomes its message (one sentence; paths under ``root``, the worker's
    folder of dropped files, as the person named them), anything else an internal error."""
    from palazzo.errors import PalazzoError

    try:
        return json.dumps({"ok": True, "result": fn()})
    except PalazzoError as err:
        text = str(err)
        if root:
            text = text.replace(root.rstrip("/") + "/", "")
        return json.dumps({"ok": False, "error": {"code": err.code, "message": text}})
    except Exception as err:  # noqa: BLE001 - reported to the person, never lost
        return json.dumps({"ok": False, "error": {"code": "internal",
                                                  "message": f"{type(err).__name__}: {err}"}})


# -- export: the palace file in pieces, straight to the page ------------------------------------
_export: dict[str, Any] = {}  # "name", "pieces" (an iterator of bytes), "bytes" so far


def export_begin(bridge: Bridge, vectors: str = "float16") -> str:
    """Start writing the open palace's file; return (JSON text) {"name"}: its download name.

    The worker then takes :func:`export_next` piece by piece and hands each to the page,
    which keeps them as a Blob and saves it: no string, bytes or base64 copy of the whole
    file is ever made (a 20k-drawer palace's file is tens of MB, and the download widget's
    way held five copies of it in the tab at once). Cost: one ``export`` operation (the
    document as Python objects), then the text a piece at a time."""
    from palazzo.core.jsontext import chunks
    from palazzo.formats.palacefile import export_filename

    def begin() -> dict[str, Any]:
        doc = bridge.call("export", {"vectors": vectors})["document"]
        name = export_filename(doc["palace"]["name"])
        _export.update(name=name, pieces=chunks(doc), bytes=0)
        return {"name": name}

    _export.clear()
    return _reply(begin)


def export_next(bridge: Bridge) -> bytes | None:
    """Return the next piece of the file :func:`export_begin` started, or None at its end
    (the document is let go then)."""
    pieces = _export.get("pieces")
    piece = None if pieces is None else next(pieces, None)
    if piece is None:
        _export.pop("pieces", None)
    else:
        _export["bytes"] += len(piece)
    return piece


def export_end(bridge: Bridge, error: str | None = None) -> None:
    """The page has the whole file (or ``error`` says why not): tell the interface, which
    says what was saved. Returns None."""
    hook = bridge.hooks.exported
    if hook is not None:
        hook(_export.get("name", ""), int(_export.get("bytes", 0)), error)
    _export.clear()


def import_prepare(bridge: Bridge, root: str) -> str:
    """Recognise and check the files the worker wrote under ``root``; return (JSON text) what
    :meth:`ImportJob.prepare` found, plus "open": the open palace's name. Nothing is
    written to any palace."""
    from palazzo.hosts.importing import ImportJob

    def prepare() -> dict[str, Any]:
        global _job
        _job = None
        job = ImportJob(bridge, root, batch=IMPORT_BATCH)
        found = job.prepare(bridge.library.root.palaces())
        _job = job
        return {**found, "open": bridge.library.name,
                "palaces": bridge.library.root.palaces()}

    return _reply(prepare, root)


def import_begin(bridge: Bridge, into_open: bool) -> str:
    """Start applying the prepared import into the palace open now; JSON reply."""
    return _reply(lambda: _job.begin(bool(into_open)))


def import_step(bridge: Bridge) -> str:
    """Apply the next batch; JSON reply {"done", "total", "finished"}."""
    return _reply(_job.step, str(_job.root))


def import_summary(bridge: Bridge, stopped: bool = False) -> str:
    """Return (JSON reply) what the import did; ``stopped`` when the person cancelled it.
    The views reload (new drawers, wings, rooms)."""
    if stopped:
        _job.stop()
    out = _reply(_job.summary)
    hook = bridge.hooks.refresh_ui
    if hook is not None and bridge.library.store is not None:
        hook()
    return out


def import_clear(root: str) -> None:
    """Remove the files of earlier drops under ``root`` (the worker's in-memory file
    system), so a new drop starts from an empty folder. Returns None."""
    import shutil

    shutil.rmtree(root, ignore_errors=True)

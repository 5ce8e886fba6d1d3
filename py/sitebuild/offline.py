"""The installable, offline site: icons, and the service worker's precache list.

The list names every file of the built site with its sha256 and size; ``version`` is the
sha256 of the whole list, so any change of content (a rebuilt palazzo wheel, an edited page,
a new pin in ``assets.lock.json``) gives a new version and a new cache, and a build that
changed nothing keeps it. The list is written into ``sw.js`` itself (the browser looks for a
new service worker by comparing that file byte for byte) and beside it as ``precache.json``.

Two kinds of file:

- **precache**: what a page load fetches, the deferred packages and the embedding model
  included (the page loads those right after its first render, on every visit), so a page
  opened offline works as it does online. The service worker caches them all before it
  takes over.
- **lazy**: files a page fetches only in a fallback: MiniLM's npz (the NumPy model, used when
  ONNX Runtime cannot run) and the lock's packages nothing loads (micropip, tzdata). They are
  cached on first use, checked against the same sha256.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sitebuild.digest import sha256_file
from sitebuild.errors import AssetError

SW_NAME = "sw.js"
LIST_NAME = "precache.json"
PLACEHOLDER = "/* PRECACHE */ null"
ICONS = "icons"
# Fetched only when ONNX Runtime cannot run (workers/palace.worker.js, attachEmbedder).
FALLBACK_FILES = ("vendor/models/minilm/minilm.npz",)


def _closure(lock: dict[str, Any], names: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(lock["packages"][name]["depends"])
    return seen


def lazy_files(lock: dict[str, Any], packages: list[str]) -> set[str]:
    """The site paths cached on first use: the fallback weights, and the lock's wheels that
    no package in ``packages`` (what the worker loads, deferred ones included) depends on."""
    used = _closure(lock, packages)
    unused = {
        f"vendor/pyodide/{entry['file_name']}"
        for name, entry in lock["packages"].items()
        if name not in used
    }
    return unused | set(FALLBACK_FILES)


def precache_list(site: Path, lazy: set[str]) -> dict[str, Any]:
    """Return ``{version, precache, lazy, precache_bytes, lazy_bytes}`` for the site in
    ``site`` (every file but ``sw.js`` and the list itself), sorted by path."""
    rows: dict[str, list] = {"precache": [], "lazy": []}
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        rel = path.relative_to(site).as_posix()
        if rel in (SW_NAME, LIST_NAME):
            continue
        kind = "lazy" if rel in lazy else "precache"
        rows[kind].append([rel, sha256_file(path), path.stat().st_size])
    missing = lazy - {row[0] for row in rows["lazy"]}
    if missing:
        raise AssetError(f"the precache list names files the site lacks: {sorted(missing)}")
    lines = "".join(f"{kind} {rel} {sha}\n" for kind in rows for rel, sha, _ in rows[kind])
    return {
        "version": hashlib.sha256(lines.encode()).hexdigest()[:16],
        "precache": rows["precache"],
        "lazy": rows["lazy"],
        "precache_bytes": sum(row[2] for row in rows["precache"]),
        "lazy_bytes": sum(row[2] for row in rows["lazy"]),
    }


def write(site: Path, lock: dict[str, Any], packages: list[str]) -> dict[str, Any]:
    """Write the precache list into ``site/sw.js`` (in place of its placeholder) and into
    ``site/precache.json``; return the list. Call it last, when every other file is there."""
    listing = precache_list(site, lazy_files(lock, packages))
    sw = site / SW_NAME
    template = sw.read_text(encoding="utf-8")
    if template.count(PLACEHOLDER) != 1:
        raise AssetError(f"{SW_NAME} must hold the placeholder {PLACEHOLDER!r} exactly once")
    compact = json.dumps(
        {k: listing[k] for k in ("version", "precache", "lazy")}, separators=(",", ":")
    )
    sw.write_text(template.replace(PLACEHOLDER, compact), encoding="utf-8")
    (site / LIST_NAME).write_text(json.dumps(listing, indent=1), encoding="utf-8")
    return listing

"""Assemble the offline site in ``dist/`` from the verified cache.

The site is built in a staging folder and swapped in whole, so a failed build (a tampered
file, a missing dependency) leaves the previous site as it was.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Any

from sitebuild import fetch, icons, lock, manifest, model, offline, pyc, recipes
from sitebuild.digest import check_bytes, sha256_file
from sitebuild.errors import AssetError

BOKEH_BUNDLES = ["bokeh.min.js", "bokeh-widgets.min.js", "bokeh-tables.min.js"]
PANEL_FILES = ("panel.min.js",)
PANEL_FOLDERS = ("css/", "bundled/theme/", "assets/", "images/")

# What the worker loads with pyodide.loadPackage before it renders; dependencies follow from
# the lock. DEFERRED_PACKAGES load right after the first render. sqlite3 (CPython's
# module, unvendored by Pyodide) is for importing OpenCode and MemPalace databases dropped on
# the page. NetworkX (pure Python, a pinned wheel) is for the atlas and the communities only.
WORKER_PACKAGES = ["numpy", "panel", "palazzo"]
DEFERRED_PACKAGES = ["sqlite3", "networkx"]
# Loaded when something first needs them (an operation's ``packages``: the atlas; the NumPy
# model when ONNX Runtime cannot run), and precached for offline use all the same: SciPy in
# the tab costs 176 MB with a 20k palace open (docs/browser.md "Memory at 20k drawers"), and
# BM25 has the same layout in NumPy.
ON_DEMAND_PACKAGES = ["scipy"]
# Declared by Bokeh, never imported by the worker (Bokeh imports them only to export PNGs
# and draw contours; the browser suite would fail on the ModuleNotFoundError): left out of
# every dependency list, so the worker does not unpack and instantiate them. Pandas cannot
# go: Bokeh's ColumnDataSource imports it whatever its data.
NOT_LOADED = ("pillow", "contourpy")


def _closure(official: dict[str, Any], names: list[str]) -> list[str]:
    seen: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in official["packages"]:
            raise AssetError(f"{name} is not in the official Pyodide lock")
        seen.append(name)
        todo.extend(official["packages"][name]["depends"])
    return sorted(seen)


def _pyodide_core(tgz: Path, core: list[str], dest: Path) -> dict[str, Any]:
    official = None
    with tarfile.open(tgz) as tf:
        for name in core:
            data = tf.extractfile(f"package/{name}").read()
            (dest / name).write_bytes(data)
            if name == "pyodide-lock.json":
                official = json.loads(data)
    if official is None:
        raise AssetError("the Pyodide core list must include pyodide-lock.json")
    return official


def _official_packages(
    src: Path, prefix: str, official: dict[str, Any], names: list[str], dest: Path
) -> None:
    with zipfile.ZipFile(src) as zf:
        for name in names:
            entry = official["packages"][name]
            member = prefix + entry["file_name"]
            try:
                data = zf.read(member)
            except KeyError:
                raise AssetError(f"{src.name} does not carry {entry['file_name']}") from None
            # The official lock is the authority for wasm wheels taken from another package.
            check_bytes(data, entry["sha256"], f"{entry['file_name']} (from {src.name})")
            (dest / entry["file_name"]).write_bytes(data)


def _cache_slot(cache: Path, tag: str, src: Path) -> Path:
    """Return the cache folder for what recipe ``tag`` derives from the file ``src``."""
    return cache / "derived" / tag / f"{sha256_file(src)[:20]}-r{recipes.RECIPE_VERSION}"


def _cached(slot: Path) -> Path | None:
    """Return the file cached in ``slot`` if it is there and unaltered, else None."""
    sums = slot / "SHA256SUMS.json"
    if not sums.exists():
        return None
    ((name, digest),) = json.loads(sums.read_text()).items()
    path = slot / name
    return path if path.exists() and sha256_file(path) == digest else None


def _store(slot: Path, path: Path) -> Path:
    """Record ``path`` (already inside ``slot``) as the slot's cached file; returns it."""
    (slot / "SHA256SUMS.json").write_text(json.dumps({path.name: sha256_file(path)}))
    return path


def _derived(cache: Path, src: Path, make, tag: str) -> Path:
    """Return a cached derived wheel of ``src``, rebuilding it when missing or altered."""
    slot = _cache_slot(cache, tag, src)
    found = _cached(slot)
    if found is not None:
        return found
    shutil.rmtree(slot, ignore_errors=True)
    slot.mkdir(parents=True)
    return _store(slot, make(src, slot))


def _precompile(cache: Path, vendor: Path, skip: set[str], log) -> int:
    """Replace the wheels in ``vendor`` (but ``skip``) and the standard-library zip by copies
    holding Python 3.12 bytecode, compiled by Pyodide under Node (see :mod:`sitebuild.pyc`).

    Pyodide never writes bytecode, so without this every boot compiles every module it
    imports. Results are cached by input sha256; only new inputs start Node. Returns how
    many files were compiled in this call.
    """
    wheel_jobs: list[tuple[Path, Path, Path]] = []
    stdlib_job = None
    targets = sorted(p for p in vendor.glob("*.whl") if p.name not in skip)
    for path in [*targets, vendor / "python_stdlib.zip"]:
        slot = _cache_slot(cache, "pyc", path)
        found = _cached(slot)
        if found is not None:
            shutil.copyfile(found, path)
            continue
        shutil.rmtree(slot, ignore_errors=True)
        slot.mkdir(parents=True)
        if path.suffix == ".whl":
            wheel_jobs.append((path, slot / path.name, slot))
        else:
            stdlib_job = (path, slot / path.name, slot)
    if wheel_jobs:
        log(f"precompiling {len(wheel_jobs)} wheel(s) with Pyodide's Python")
        pyc.compile_wheels([(src, dest) for src, dest, _ in wheel_jobs], vendor)
    if stdlib_job:
        log("precompiling the standard library with Pyodide's Python")
        pyc.compile_stdlib_zip(stdlib_job[0], stdlib_job[1], vendor)
    for src, dest, slot in [*wheel_jobs, *([stdlib_job] if stdlib_job else [])]:
        shutil.copyfile(_store(slot, dest), src)
    return len(wheel_jobs) + (1 if stdlib_job else 0)


def _extract_browser_files(bokeh: Path, panel: Path, dest: Path) -> None:
    (dest / "bokeh").mkdir(parents=True)
    with zipfile.ZipFile(bokeh) as zf:
        for name in BOKEH_BUNDLES:
            (dest / "bokeh" / name).write_bytes(zf.read(f"bokeh/server/static/js/{name}"))
    with zipfile.ZipFile(panel) as zf:
        for member in zf.namelist():
            if not member.startswith("panel/dist/") or member.endswith("/"):
                continue
            rel = member[len("panel/dist/") :]
            if rel in PANEL_FILES or rel.startswith(PANEL_FOLDERS):
                out = dest / "panel" / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(zf.read(member))


def _onnxruntime_web(tgz: Path, entry: dict[str, Any], dest: Path) -> None:
    """Extract the files of onnxruntime-web the embedding worker loads into ``dest``, with a
    NOTICE naming the package, its version and licence (the npm package carries none)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tgz) as tf:
        for name in entry["files"]:
            try:
                data = tf.extractfile(f"package/{name}").read()
            except KeyError:
                raise AssetError(f"{tgz.name} does not carry {name}") from None
            (dest / Path(name).name).write_bytes(data)
    (dest / "NOTICE").write_text(
        f"{entry['npm']} (ONNX Runtime Web), from the npm tarball {entry['file']}\n"
        f"sha256 {entry['sha256']}\nCopyright (c) Microsoft Corporation. "
        f"Licensed under the {entry['licence']} License: "
        "https://github.com/microsoft/onnxruntime/blob/main/LICENSE\n",
        encoding="utf-8",
    )


def _folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(root: Path, out: Path, cache: Path, log=print, precompile: bool = True) -> dict[str, Any]:
    """Build the site into ``out`` and return a report (files, sizes, seconds).

    ``precompile=False`` ships sources only (no bytecode), for measuring what bytecode buys.

    Raises :class:`AssetError` (and leaves ``out`` untouched) when any asset fails its check.
    """
    t0 = time.perf_counter()
    m = manifest.load(root / "assets.lock.json")
    npm_pin = json.loads((root / "package.json").read_text())["config"]["pyodide"]
    if npm_pin != m.pyodide_version:
        raise AssetError(
            f"package.json pins pyodide {npm_pin} but assets.lock.json pins {m.pyodide_version}"
        )
    files = fetch.ensure(m.pins(), cache / "assets", log=log)
    d = m.data

    staging = out.with_name(out.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    vendor_py = staging / "vendor" / "pyodide"
    vendor_py.mkdir(parents=True)
    try:
        official = _pyodide_core(files[d["pyodide"]["file"]], d["pyodide"]["core"], vendor_py)
        keep = _closure(official, d["pyodide_packages"]["packages"])
        src = d["pyodide_packages"]["source"]
        _official_packages(files[src["file"]], src["prefix"], official, keep, vendor_py)

        wheels: list[Path] = []
        for w in d["wheels"]:
            path = files[w["file"]]
            if w["file"].startswith("panel-"):
                path = _derived(cache, path, _make_panel, "panel")
                panel_src = files[w["file"]]
            elif w["file"].startswith("bokeh-"):
                path = _derived(cache, path, _make_bokeh, "bokeh")
                bokeh_src = files[w["file"]]
            wheels.append(path)
        for s in d["sdists"]:
            pkgs = s["packages"]
            wheels.append(
                _derived(
                    cache,
                    files[s["file"]],
                    lambda sd, folder, pkgs=pkgs: recipes.sdist_wheel(sd, folder, pkgs),
                    "sdist",
                )
            )
        for w in wheels:
            shutil.copy2(w, vendor_py / w.name)
        # palazzo changes with every edit and imports in milliseconds: not worth compiling.
        palazzo = recipes.palazzo_wheel(root, vendor_py)
        if precompile:
            _precompile(cache, vendor_py, {palazzo.name}, log)
        wheels.append(palazzo)
        merged = lock.merge(official, keep, [vendor_py / w.name for w in wheels], NOT_LOADED)
        # Official wasm wheels were checked against the official lock when extracted; the
        # lock now pins the files the site ships, which hold bytecode too.
        for entry in merged["packages"].values():
            entry["sha256"] = sha256_file(vendor_py / entry["file_name"])
        (vendor_py / "pyodide-lock.json").write_text(json.dumps(merged, indent=1))
        loaded = WORKER_PACKAGES + DEFERRED_PACKAGES + ON_DEMAND_PACKAGES
        missing = [p for p in loaded if p not in merged["packages"]]
        if missing:
            raise AssetError(f"the worker needs {missing}, which the lock does not have")

        _extract_browser_files(bokeh_src, panel_src, staging / "vendor")
        minilm_wheel = files[model.carrier_file(d["models"])]
        minilm = _derived(cache, minilm_wheel, model.convert, model.CACHE_TAG)
        graph = _derived(cache, minilm, model.onnx_graph, model.ONNX_TAG)
        model.ship(minilm, staging / "vendor" / "models" / "minilm", graph)
        ort = d["onnxruntime_web"]
        _onnxruntime_web(files[ort["file"]], ort, staging / "vendor" / "ort")
        shutil.copytree(root / "web", staging, dirs_exist_ok=True)
        shutil.copytree(root / "workers", staging / "workers", dirs_exist_ok=True)
        info = {
            "pyodide": m.pyodide_version,
            "packages": WORKER_PACKAGES,
            "deferred_packages": DEFERRED_PACKAGES,
            "on_demand_packages": ON_DEMAND_PACKAGES,
            "bokeh_bundles": BOKEH_BUNDLES,
            "lock_packages": len(merged["packages"]),
            "precompiled": precompile,
        }
        (staging / "build.json").write_text(json.dumps(info, indent=1))
        icons.write(staging / offline.ICONS)
        # Last: the service worker's list names every file above with its sha256.
        listing = offline.write(staging, merged, loaded)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    report = {
        **info,
        "site_bytes": _folder_size(out),
        "offline_version": listing["version"],
        "precache_bytes": listing["precache_bytes"],
        "lazy_bytes": listing["lazy_bytes"],
        "seconds": round(time.perf_counter() - t0, 2),
    }
    log(
        f"site built in {out} ({report['site_bytes'] / 1e6:.1f} MB, "
        f"{report['precache_bytes'] / 1e6:.1f} MB precached for offline use, "
        f"{report['seconds']} s)"
    )
    return report


def _make_panel(src: Path, folder: Path) -> Path:
    dest = folder / src.name
    recipes.panel_wheel(src, dest)
    return dest


def _make_bokeh(src: Path, folder: Path) -> Path:
    dest = folder / src.name
    recipes.bokeh_wheel(src, dest)
    return dest

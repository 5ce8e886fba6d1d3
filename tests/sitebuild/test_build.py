import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sitebuild import site
from sitebuild.digest import sha256_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory, asset_cache):
    out = tmp_path_factory.mktemp("site") / "dist"
    report = site.build(ROOT, out, asset_cache, log=lambda *a: None)
    return out, report


def test_site_has_page_worker_runtime_and_browser_bundles(built):
    out, report = built
    for rel in [
        "index.html",
        "main.js",
        "workers/palace.worker.js",
        "build.json",
        "vendor/pyodide/pyodide.js",
        "vendor/pyodide/pyodide.asm.wasm",
        "vendor/pyodide/python_stdlib.zip",
        "vendor/bokeh/bokeh.min.js",
        "vendor/panel/panel.min.js",
        "vendor/panel/css/loading.css",
        "vendor/panel/bundled/theme/native.css",
    ]:
        assert (out / rel).is_file(), rel
    panel_bytes = sum(p.stat().st_size for p in (out / "vendor/panel").rglob("*") if p.is_file())
    assert panel_bytes < 5e6  # the files the app uses, not Panel's whole 100 MB dist/
    # 118 MB, plus MiniLM's ONNX graph (46 MB; the npz stays for the NumPy fallback) and
    # ONNX Runtime Web (14 MB). A page downloads one of the two weight files, never both.
    assert report["site_bytes"] < 200e6


def test_site_ships_onnx_runtime_web_and_the_graph_with_the_npzs_fingerprint(built):
    from palazzo.embed.minilm import MiniLMEmbedder

    out, _ = built
    for rel in ["workers/embed.worker.js", "workers/embedder.js", "vendor/ort/NOTICE",
                "vendor/ort/ort.wasm.min.mjs", "vendor/ort/ort-wasm-simd-threaded.mjs",
                "vendor/ort/ort-wasm-simd-threaded.wasm", "vendor/models/minilm/vocab.txt"]:
        assert (out / rel).is_file(), rel
    models = out / "vendor/models/minilm"
    card = json.loads((models / "minilm.json").read_text())
    assert card["fingerprint"] == MiniLMEmbedder(models / "minilm.npz").fingerprint
    for part in ("onnx", "vocab", "npz"):
        path = models / card[part]["file"]
        assert sha256_file(path) == card[part]["sha256"]
        assert path.stat().st_size == card[part]["bytes"]
    assert 40e6 < card["onnx"]["bytes"] < 50e6  # float16 weights, as the npz
    assert "MIT" in (out / "vendor/ort/NOTICE").read_text()


def test_every_lock_entry_points_at_a_file_with_its_sha256(built):
    out, _ = built
    lock = json.loads((out / "vendor/pyodide/pyodide-lock.json").read_text())
    assert lock["info"]["version"] == "0.27.7"
    for name in ["numpy", "scipy", "openblas", "panel", "bokeh", "palazzo", "markupsafe", "pyyaml"]:
        assert name in lock["packages"], name
    for entry in lock["packages"].values():
        path = out / "vendor/pyodide" / entry["file_name"]
        assert sha256_file(path) == entry["sha256"], entry["file_name"]
        assert all(dep in lock["packages"] for dep in entry["depends"])


def test_panel_reads_its_css_root_from_the_site_not_a_cdn(built):
    out, _ = built
    lock = json.loads((out / "vendor/pyodide/pyodide-lock.json").read_text())
    with zipfile.ZipFile(out / "vendor/pyodide" / lock["packages"]["panel"]["file_name"]) as zf:
        resources = zf.read("panel/io/resources.py").decode()
        assert 'os.environ.get("PALAZZO_PANEL_DIST")' in resources
        assert not any(n.startswith("panel/dist/") for n in zf.namelist())


def loaded_packages(out):
    """Return the site's lock and the packages the worker loads: its boot and deferred
    packages with every dependency the lock gives them."""
    build = json.loads((out / "build.json").read_text())
    lock = json.loads((out / "vendor/pyodide/pyodide-lock.json").read_text())
    todo = build["packages"] + build["deferred_packages"] + build["on_demand_packages"]
    loaded = set()
    while todo:
        name = todo.pop()
        if name not in loaded:
            loaded.add(name)
            todo.extend(lock["packages"][name]["depends"])
    return lock, loaded


def test_the_worker_loads_no_package_it_never_imports(built):
    out, _ = built
    _, loaded = loaded_packages(out)
    assert {"panel", "bokeh", "numpy", "scipy", "networkx"} <= loaded
    assert not loaded & set(site.NOT_LOADED)  # Pillow, contourpy


def test_markupsafe_and_pyyaml_are_pure_wheels_without_c_code(built):
    out, _ = built
    lock = json.loads((out / "vendor/pyodide/pyodide-lock.json").read_text())
    for name, module in [("markupsafe", "markupsafe/__init__.py"), ("pyyaml", "yaml/__init__.py")]:
        file_name = lock["packages"][name]["file_name"]
        assert file_name.endswith("py3-none-any.whl")
        with zipfile.ZipFile(out / "vendor/pyodide" / file_name) as zf:
            assert module in zf.namelist()
            assert not any(n.endswith((".c", ".so", ".pyx")) for n in zf.namelist())


def test_a_second_build_is_identical(built, tmp_path, asset_cache):
    out, _ = built
    again = tmp_path / "dist"
    site.build(ROOT, again, asset_cache, log=lambda *a: None)
    first = json.loads((out / "vendor/pyodide/pyodide-lock.json").read_text())
    second = json.loads((again / "vendor/pyodide/pyodide-lock.json").read_text())
    assert first == second
    # The same content, the same offline version: a rebuild keeps the browser's cache.
    listings = [json.loads((d / "precache.json").read_text()) for d in (out, again)]
    assert listings[0] == listings[1]


def test_the_site_is_an_installable_app_with_a_precache_list_of_every_file(built):
    out, report = built
    listing = json.loads((out / "precache.json").read_text())
    assert report["offline_version"] == listing["version"]
    named = {row[0]: row for row in listing["precache"] + listing["lazy"]}
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert files - set(named) == {"sw.js", "precache.json"}
    for rel, sha, size in named.values():
        assert sha256_file(out / rel) == sha and (out / rel).stat().st_size == size, rel
    sw = (out / "sw.js").read_text()
    assert f'{{"version":"{listing["version"]}","precache":[' in sw
    # What a page load fetches is precached, the deferred packages and the model included;
    # only the NumPy fallback's weights and the packages nothing loads wait for first use.
    precached = {row[0] for row in listing["precache"]}
    lock, needed = loaded_packages(out)
    for name in needed:
        assert f"vendor/pyodide/{lock['packages'][name]['file_name']}" in precached, name
    for rel in ["index.html", "main.js", "offline.js", "manifest.webmanifest", "build.json",
                "workers/palace.worker.js", "workers/embed.worker.js", "workers/storage.js",
                "vendor/pyodide/pyodide.asm.wasm", "vendor/pyodide/python_stdlib.zip",
                "vendor/pyodide/pyodide-lock.json", "vendor/ort/ort-wasm-simd-threaded.wasm",
                "vendor/models/minilm/minilm.onnx", "vendor/models/minilm/vocab.txt",
                "vendor/bokeh/bokeh.min.js", "icons/icon-512.png"]:
        assert rel in precached, rel
    lazy = {row[0] for row in listing["lazy"]} - {"vendor/models/minilm/minilm.npz"}
    assert len(lazy) == len(listing["lazy"]) - 1
    assert all(rel.startswith("vendor/pyodide/") for rel in lazy)
    assert 100e6 < listing["precache_bytes"] < 150e6
    html = (out / "index.html").read_text()
    assert '<link rel="manifest" href="manifest.webmanifest">' in html
    manifest = json.loads((out / "manifest.webmanifest").read_text())
    for icon in manifest["icons"]:
        assert icon["src"] in precached, icon


def test_a_tampered_cached_wheel_fails_the_build_loudly(tmp_path, asset_cache):
    cache = tmp_path / "cache"
    shutil.copytree(asset_cache / "assets", cache / "assets", copy_function=os.link)
    victim = cache / "assets" / "param-2.4.2-py3-none-any.whl"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01  # one byte changed
    victim.unlink()  # break the hard link so the real cache stays intact
    victim.write_bytes(bytes(data))
    out = tmp_path / "dist"
    out.mkdir()
    (out / "previous-site.txt").write_text("kept")
    proc = subprocess.run(
        [sys.executable, "-m", "sitebuild", "build", "--out", str(out), "--cache", str(cache)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "py")},
    )
    assert proc.returncode == 1
    assert "sha256 mismatch for param-2.4.2-py3-none-any.whl" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["previous-site.txt"]


def test_shipped_wheels_and_stdlib_carry_python_312_bytecode(built):
    out, report = built
    assert report["precompiled"] is True
    vendor = out / "vendor/pyodide"
    lock = json.loads((vendor / "pyodide-lock.json").read_text())
    magic = b"\xcb\x0d\x0d\x0a"
    for name, member in [
        ("panel", "panel/__pycache__/__init__.cpython-312.pyc"),
        ("numpy", "numpy/__pycache__/__init__.cpython-312.pyc"),
        ("pyyaml", "yaml/__pycache__/__init__.cpython-312.pyc"),
    ]:
        with zipfile.ZipFile(vendor / lock["packages"][name]["file_name"]) as zf:
            assert zf.read(member)[:4] == magic, name
    with zipfile.ZipFile(vendor / "python_stdlib.zip") as zf:
        assert zf.read("json/__init__.pyc")[:4] == magic
        assert "json/__init__.py" in zf.namelist()  # sources stay for tracebacks

"""The precache list and the icons (py/sitebuild/offline.py, icons.py), on a small site."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest

from sitebuild import icons, offline
from sitebuild.digest import sha256_file
from sitebuild.errors import AssetError

ROOT = Path(__file__).resolve().parents[2]
LOCK = {
    "packages": {
        "numpy": {"file_name": "numpy.whl", "depends": []},
        "panel": {"file_name": "panel.whl", "depends": ["numpy"]},
        "scipy": {"file_name": "scipy.whl", "depends": ["numpy"]},
        "micropip": {"file_name": "micropip.whl", "depends": []},
    }
}


def _site(folder: Path) -> Path:
    files = {
        "index.html": "<!doctype html>",
        "main.js": "export {};",
        "vendor/pyodide/numpy.whl": "n",
        "vendor/pyodide/panel.whl": "p",
        "vendor/pyodide/scipy.whl": "s",
        "vendor/pyodide/micropip.whl": "m",
        "vendor/models/minilm/minilm.npz": "weights",
        "vendor/models/minilm/minilm.onnx": "graph",
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    (folder / "sw.js").write_text((ROOT / "web" / "sw.js").read_text())
    return folder


def _sw_list(site: Path) -> dict:
    text = (site / "sw.js").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("const SITE = "))
    return json.loads(line[len("const SITE = "):-1])


def test_the_list_names_every_file_with_its_sha256_and_keeps_fallbacks_for_first_use(tmp_path):
    site = _site(tmp_path / "site")
    listing = offline.write(site, LOCK, ["panel", "scipy"])
    precached = {row[0]: row for row in listing["precache"]}
    assert set(precached) == {"index.html", "main.js", "vendor/pyodide/numpy.whl",
                              "vendor/pyodide/panel.whl", "vendor/pyodide/scipy.whl",
                              "vendor/models/minilm/minilm.onnx"}
    # The NumPy model's weights and the packages nothing loads: on first use only.
    assert [row[0] for row in listing["lazy"]] == ["vendor/models/minilm/minilm.npz",
                                                   "vendor/pyodide/micropip.whl"]
    for rel, sha, size in listing["precache"] + listing["lazy"]:
        assert sha == sha256_file(site / rel) and size == (site / rel).stat().st_size
    assert listing["precache_bytes"] == sum(row[2] for row in listing["precache"])
    # The worker carries the same list; precache.json is written beside it.
    assert _sw_list(site) == {k: listing[k] for k in ("version", "precache", "lazy")}
    assert json.loads((site / "precache.json").read_text()) == listing
    assert "/* PRECACHE */" not in (site / "sw.js").read_text()


def test_the_version_follows_the_content(tmp_path):
    first = offline.write(_site(tmp_path / "a"), LOCK, ["panel", "scipy"])
    same = offline.write(_site(tmp_path / "b"), LOCK, ["panel", "scipy"])
    assert same["version"] == first["version"]  # a build that changed nothing keeps its cache
    changed = _site(tmp_path / "c")
    (changed / "main.js").write_text("export const v = 2;")
    assert offline.write(changed, LOCK, ["panel", "scipy"])["version"] != first["version"]
    # A file moving from the precache to the lazy list is a new version too.
    assert offline.write(_site(tmp_path / "d"), LOCK, ["panel"])["version"] != first["version"]


def test_a_worker_without_its_placeholder_or_a_missing_fallback_stops_the_build(tmp_path):
    site = _site(tmp_path / "site")
    (site / "sw.js").write_text("const SITE = {};\n")
    with pytest.raises(AssetError, match="placeholder"):
        offline.write(site, LOCK, ["panel", "scipy"])
    site = _site(tmp_path / "other")
    (site / "vendor/models/minilm/minilm.npz").unlink()
    with pytest.raises(AssetError, match="minilm.npz"):
        offline.write(site, LOCK, ["panel", "scipy"])


def _png_size(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, size, idat = 8, None, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body)
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return (*size, zlib.decompress(idat))


def test_icons_are_valid_pngs_and_an_svg_and_the_same_on_every_build(tmp_path):
    names = icons.write(tmp_path / "a")
    icons.write(tmp_path / "b")
    manifest = json.loads((ROOT / "web" / "manifest.webmanifest").read_text())
    assert sorted(f"icons/{n}" for n in names) == sorted(i["src"] for i in manifest["icons"])
    for icon in manifest["icons"]:
        data = (tmp_path / icon["src"].replace("icons/", "a/")).read_bytes()
        assert data == (tmp_path / icon["src"].replace("icons/", "b/")).read_bytes()
        if icon["type"] == "image/png":
            width, height, raw = _png_size(data)
            assert f"{width}x{height}" == icon["sizes"]
            assert len(raw) == height * (1 + 4 * width)
    assert (tmp_path / "a" / "icon.svg").read_text().startswith("<svg ")
    maskable = icons.rgba(64, rounded=False, scale=0.8)
    assert (maskable[..., 3] == 255).all()  # full bleed: a launcher's mask cuts it
    # The palace within the safe zone, the middle circle of 80 % of the width.
    ys, xs = (maskable[..., :3] != icons.BACKGROUND).any(axis=2).nonzero()
    assert (((xs + 0.5 - 32) ** 2 + (ys + 0.5 - 32) ** 2) ** 0.5).max() <= 0.4 * 64
    rounded = icons.rgba(64, rounded=True)
    assert rounded[0, 0, 3] == 0 and rounded[32, 32, 3] == 255

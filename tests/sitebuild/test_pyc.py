"""Precompiling pure wheels with Pyodide's own Python (sitebuild.pyc), checked in Pyodide."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from sitebuild.errors import AssetError
from sitebuild.pyc import cache_path, compile_wheels
from sitebuild.wheel import wheel_file, wheel_metadata_file, write_wheel

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "dist" / "vendor" / "pyodide"
NODE = shutil.which("node")
MAGIC_312 = b"\xcb\x0d\x0d\x0a"

needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
needs_pyodide = pytest.mark.skipif(
    NODE is None or not (PYODIDE / "pyodide.mjs").is_file(),
    reason=f"needs Node.js and the Pyodide core in {PYODIDE} (run `python -m sitebuild build`)",
)

# Loads each wheel with pyodide.loadPackage (as the worker does), then runs a Python check.
CHECK_MJS = r"""
import { pathToFileURL } from "node:url";
const [dir, wheel, code] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(dir + "/pyodide.mjs").href);
const py = await loadPyodide({ indexURL: dir + "/", stdout: () => {}, stderr: () => {} });
await py.loadPackage(wheel, { messageCallback: () => {} });
process.stdout.write(py.runPython(code));
"""

IMPORT_CHECK = """
import importlib
import json
import sys

pkg = "{pkg}"
site = "/lib/python3.12/site-packages"
if not {sourceless}:
    # Rewrite the source after install: an unchecked-hash pyc must still win.
    with open(f"{{site}}/{{pkg}}/mod.py", "w") as f:
        f.write("VALUE = 'from source'\\n")
mod = importlib.import_module(pkg + ".mod")
try:
    importlib.import_module(pkg + ".bad")
    bad = "imported"
except SyntaxError:
    bad = "SyntaxError"
json.dumps({{
    "version": sys.version.split()[0],
    "file": mod.__file__,
    "cached": mod.__cached__,
    "loader": type(mod.__spec__.loader).__name__,
    "value": mod.VALUE,
    "bad": bad,
}})
"""


def _tiny_wheel(path: Path, pkg: str) -> None:
    dist_info = f"{pkg}-0.1.dist-info"
    files = {
        f"{pkg}/__init__.py": b"",
        f"{pkg}/mod.py": b"VALUE = 'compiled'\n\ndef f(x):\n    return x + 1\n",
        f"{pkg}/bad.py": b'print "python 2 only"\n',
        f"{pkg}/data.txt": b"not python\n",
        f"{dist_info}/METADATA": wheel_metadata_file(pkg, "0.1"),
        f"{dist_info}/WHEEL": wheel_file(),
    }
    write_wheel(path, files, dist_info)


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _assert_record_complete(members: dict[str, bytes], pkg: str) -> None:
    record = members[f"{pkg}-0.1.dist-info/RECORD"].decode().splitlines()
    listed = {line.split(",", 1)[0] for line in record}
    assert listed == set(members)


def _assert_unchecked_pyc(data: bytes) -> None:
    assert data[:4] == MAGIC_312
    (flags,) = struct.unpack("<I", data[4:8])
    assert flags == 0b01, "hash-based (bit 0) and check_source off (bit 1)"


def _run_in_pyodide(tmp: Path, wheel: Path, code: str) -> dict:
    script = tmp / "check.mjs"
    script.write_text(CHECK_MJS)
    proc = subprocess.run(
        [NODE, str(script), str(PYODIDE), str(wheel), code],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("pyc")
    src_a, src_b = tmp / "tinya-0.1-py3-none-any.whl", tmp / "tinyb-0.1-py3-none-any.whl"
    _tiny_wheel(src_a, "tinya")
    _tiny_wheel(src_b, "tinyb")
    out_a, out_b = tmp / "out" / src_a.name, tmp / "sourceless" / src_b.name
    compile_wheels([(src_a, out_a)], PYODIDE)
    compile_wheels([(src_b, out_b)], PYODIDE, sourceless=True)
    return {"tmp": tmp, "a": out_a, "b": out_b, "src_a": src_a}


def test_cache_path() -> None:
    assert cache_path("pkg/sub/mod.py", "cpython-312") == "pkg/sub/__pycache__/mod.cpython-312.pyc"
    assert cache_path("top.py", "cpython-312") == "__pycache__/top.cpython-312.pyc"


@needs_node
def test_node_failure_is_an_asset_error(tmp_path: Path) -> None:
    fake = tmp_path / "pyodide"
    fake.mkdir()
    (fake / "pyodide.mjs").write_text('throw new Error("broken pyodide core");\n')
    wheel = tmp_path / "tinyc-0.1-py3-none-any.whl"
    _tiny_wheel(wheel, "tinyc")
    with pytest.raises(AssetError, match="broken pyodide core"):
        compile_wheels([(wheel, tmp_path / "out.whl")], fake)


@needs_pyodide
def test_unchecked_hash_layout(compiled: dict[str, Path]) -> None:
    members = _members(compiled["a"])
    for mod in ("__init__", "mod"):
        assert f"tinya/{mod}.py" in members
        _assert_unchecked_pyc(members[f"tinya/__pycache__/{mod}.cpython-312.pyc"])
    assert "tinya/bad.py" in members
    assert not any("bad" in n and n.endswith(".pyc") for n in members)
    assert "tinya/data.txt" in members
    _assert_record_complete(members, "tinya")


@needs_pyodide
def test_sourceless_layout(compiled: dict[str, Path]) -> None:
    members = _members(compiled["b"])
    assert "tinyb/mod.py" not in members and "tinyb/__init__.py" not in members
    _assert_unchecked_pyc(members["tinyb/mod.pyc"])
    _assert_unchecked_pyc(members["tinyb/__init__.pyc"])
    assert "tinyb/bad.py" in members and "tinyb/bad.pyc" not in members
    assert not any("__pycache__" in n for n in members)
    _assert_record_complete(members, "tinyb")


@needs_pyodide
def test_deterministic(compiled: dict[str, Path]) -> None:
    again = compiled["tmp"] / "again" / compiled["a"].name
    compile_wheels([(compiled["src_a"], again)], PYODIDE)
    assert again.read_bytes() == compiled["a"].read_bytes()


@needs_pyodide
def test_unchecked_pyc_is_used_in_pyodide(compiled: dict[str, Path]) -> None:
    code = IMPORT_CHECK.format(pkg="tinya", sourceless=False)
    got = _run_in_pyodide(compiled["tmp"], compiled["a"], code)
    assert got["version"] == "3.12.7"
    assert got["loader"] == "SourceFileLoader"
    assert got["file"].endswith("/tinya/mod.py")
    assert got["cached"].endswith("/tinya/__pycache__/mod.cpython-312.pyc")
    assert got["value"] == "compiled", "the pyc, not the rewritten source, was imported"
    assert got["bad"] == "SyntaxError"


@needs_pyodide
def test_sourceless_imports_in_pyodide(compiled: dict[str, Path]) -> None:
    code = IMPORT_CHECK.format(pkg="tinyb", sourceless=True)
    got = _run_in_pyodide(compiled["tmp"], compiled["b"], code)
    assert got["loader"] == "SourcelessFileLoader"
    assert got["file"].endswith("/tinyb/mod.pyc")
    assert got["value"] == "compiled"

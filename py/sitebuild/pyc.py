"""Precompile pure-Python wheels to Pyodide's bytecode, so the browser skips compiling.

Pyodide sets ``sys.dont_write_bytecode``, so without this every page load compiles every
module it imports. The host's CPython is another version and its bytecode is useless there, so
the compile runs in Pyodide's own Python under Node (``pyc_compile.mjs``), once for all wheels.

Two layouts:

- default: keep ``x.py`` and add ``__pycache__/x.cpython-312.pyc`` in unchecked-hash mode,
  which the import system uses without looking at the source's mtime (wheels are unpacked with
  fresh mtimes) or hashing the source; tracebacks still show source lines.
- ``sourceless=True``: replace ``x.py`` by ``x.pyc`` beside it (smaller; no source lines in
  tracebacks, and breaks packages that read their own ``.py`` files).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from sitebuild.errors import AssetError
from sitebuild.wheel import read_wheel, write_wheel

# Pyodide 0.27.7's Python; bytecode is only valid for this minor version.
EXPECTED_PYTHON = "3.12.7"
MAGIC_312 = b"\xcb\x0d\x0d\x0a"
# Where Pyodide installs wheels whose lock entry says install_dir "site".
SITE_PACKAGES = "/lib/python3.12/site-packages"
SCRIPT = Path(__file__).with_name("pyc_compile.mjs")
NODE_TIMEOUT = 1800


def compile_wheels(
    jobs: list[tuple[Path, Path]],
    pyodide_dir: Path,
    sourceless: bool = False,
    node: str | None = None,
) -> None:
    """Write each ``dest`` wheel as its ``src`` wheel with every module compiled by Pyodide.

    ``jobs`` lists (src_wheel, dest_wheel) pairs (dest may equal src). ``pyodide_dir`` holds
    the Pyodide core (``pyodide.mjs``, ``pyodide.asm.wasm``, ``python_stdlib.zip``, ...). One
    Node process compiles every file. Sources that do not compile (Python 2 files, templates
    named ``.py``) stay as source only. Each dest wheel gets a fresh RECORD and is
    deterministic for the same inputs. Returns None; raises AssetError if Node or Pyodide fail.
    """
    wheels: list[tuple[dict[str, bytes], str]] = []
    sources: dict[str, bytes] = {}
    for i, (src, _dest) in enumerate(jobs):
        files, dist_info = _read_wheel(src)
        wheels.append((files, dist_info))
        for name, data in files.items():
            if _compilable(name):
                sources[f"{i}/{name}"] = data
    compiled, cache_tag = compile_sources(sources, pyodide_dir, node=node)
    for i, ((files, dist_info), (_src, dest)) in enumerate(zip(wheels, jobs, strict=True)):
        out = dict(files)
        for name in files:
            pyc = compiled.get(f"{i}/{name}")
            if pyc is None:
                continue
            if sourceless:
                del out[name]
                out[name + "c"] = pyc
            else:
                out[cache_path(name, cache_tag)] = pyc
        write_wheel(dest, out, dist_info)


def compile_sources(
    sources: dict[str, bytes],
    pyodide_dir: Path,
    node: str | None = None,
    prefix: str = SITE_PACKAGES,
) -> tuple[dict[str, bytes], str]:
    """Compile ``sources`` (``"<job>/<path under prefix>"`` -> bytes) in Pyodide under Node.

    ``prefix`` is the folder the files will live in at run time (``/lib/python312.zip`` for
    the standard library); it only names the files in tracebacks of sourceless modules.

    Returns (the unchecked-hash ``.pyc`` bytes of every key that compiled, the interpreter's
    cache tag such as ``cpython-312``); keys that failed to compile are absent. It exists apart
    from :func:`compile_wheels` so tests and measurements can compile loose files. Raises
    AssetError when Node is missing or fails, or when Pyodide is not the expected Python.
    """
    if not sources:
        return {}, "cpython-" + "".join(EXPECTED_PYTHON.split(".")[:2])
    node = node or shutil.which("node")
    if node is None:
        raise AssetError("precompiling wheels needs Node.js ('node' is not on PATH)")
    pyodide_dir = Path(pyodide_dir)
    if not (pyodide_dir / "pyodide.mjs").is_file():
        raise AssetError(f"no Pyodide core at {pyodide_dir} (pyodide.mjs missing)")
    with tempfile.TemporaryDirectory(prefix="palazzo-pyc-") as tmp:
        work = Path(tmp)
        for key, data in sources.items():
            target = work / "src" / _safe(key)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        jobs = {"files": sorted(sources), "dfile_prefix": prefix}
        (work / "jobs.json").write_text(json.dumps(jobs))
        cmd = [node, str(SCRIPT), str(pyodide_dir.resolve()), str(work)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=NODE_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AssetError(f"precompiling wheels: could not run {node}: {exc}") from exc
        result_file = work / "result.json"
        if proc.returncode != 0 or not result_file.is_file():
            # Node may echo a line of minified pyodide.asm.js; keep each line short.
            tail = "\n".join(line[:300] for line in proc.stderr.strip().splitlines()[-20:])
            raise AssetError(f"precompiling wheels: node exited with {proc.returncode}:\n{tail}")
        result = json.loads(result_file.read_text())
        if result["version"] != EXPECTED_PYTHON or bytes.fromhex(result["magic"]) != MAGIC_312:
            raise AssetError(
                f"precompiling wheels: Pyodide in {pyodide_dir} runs Python {result['version']} "
                f"(magic {result['magic']}), expected {EXPECTED_PYTHON}"
            )
        compiled = {}
        for key in sources:
            pyc = work / "out" / (_safe(key) + "c")
            if key not in result["failed"] and pyc.is_file():
                compiled[key] = pyc.read_bytes()
    return compiled, result["cache_tag"]


def cache_path(member: str, cache_tag: str) -> str:
    """Return where the import system looks for ``member``'s bytecode (PEP 3147).

    ``pkg/mod.py`` -> ``pkg/__pycache__/mod.cpython-312.pyc``; a top-level ``mod.py`` ->
    ``__pycache__/mod.cpython-312.pyc``.
    """
    parent, _, base = member.rpartition("/")
    name = f"__pycache__/{base[:-3]}.{cache_tag}.pyc"
    return f"{parent}/{name}" if parent else name


def _compilable(name: str) -> bool:
    """Return whether the wheel member ``name`` is a module the import system could load."""
    if not name.endswith(".py") or "/__pycache__/" in f"/{name}":
        return False
    first = name.split("/", 1)[0]
    return not first.endswith((".dist-info", ".data"))


def _read_wheel(path: Path) -> tuple[dict[str, bytes], str]:
    """Return the members and the dist-info folder of a wheel (AssetError if it has none)."""
    try:
        return read_wheel(path)
    except ValueError as err:
        raise AssetError(str(err)) from None


def _safe(key: str) -> str:
    """Return ``key`` unchanged if it is a relative path without '..', else raise AssetError.

    It guards the temporary folder against wheel members named like ``../../x.py``.
    """
    parts = PurePosixPath(key).parts
    if key.startswith("/") or "\\" in key or ".." in parts or not parts:
        raise AssetError(f"precompiling wheels: unsafe member name {key!r}")
    return key


# Where Pyodide mounts its standard library; names the files in tracebacks.
STDLIB_PREFIX = "/lib/python312.zip"


def compile_stdlib_zip(src: Path, dest: Path, pyodide_dir: Path, node: str | None = None) -> None:
    """Write ``dest`` as the standard-library zip ``src`` with a ``.pyc`` beside every module.

    zipimport looks for ``mod.pyc`` before ``mod.py`` and does not check unchecked-hash
    bytecode against the source, so Python stops compiling the standard library at each boot.
    Sources stay (tracebacks keep their lines). Deterministic for the same inputs.
    """
    with zipfile.ZipFile(src) as zf:
        members = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    sources = {f"0/{n}": data for n, data in members.items() if n.endswith(".py")}
    compiled, _tag = compile_sources(sources, pyodide_dir, node=node, prefix=STDLIB_PREFIX)
    out = dict(members)
    for key, pyc in compiled.items():
        out[key[2:] + "c"] = pyc
    tmp = dest.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name in sorted(out):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, out[name])
    tmp.replace(dest)

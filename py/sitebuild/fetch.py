"""Bring pinned files into the cache through the registries' own clients.

Files already in the cache are only re-verified; missing ones are fetched in one ``pip
download`` (PyPI) or ``npm pack`` (npm) call and verified before they are moved into place,
so the cache never holds an unverified file under a pinned name.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sitebuild.digest import check
from sitebuild.errors import AssetError

# Ask pip for wheels that run anywhere (Pyodide included), whatever the host Python is.
PURE_WHEEL_FLAGS = [
    "--only-binary=:all:",
    "--implementation",
    "py",
    "--abi",
    "none",
    "--platform",
    "any",
    "--python-version",
    "3.12",
]


@dataclass(slots=True, frozen=True)
class Pin:
    """One file pinned by the manifest: how to ask for it, its file name and sha256."""

    source: str  # "pypi" or "npm"
    spec: str  # requirement ("panel==1.7.5") or npm spec ("pyodide@0.27.7")
    file: str
    sha256: str
    sdist: bool = False


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise AssetError(f"could not fetch {what}: {' '.join(cmd)}\n" + "\n".join(tail))


def _download_pypi(pins: list[Pin], into: Path) -> None:
    wheels = [p for p in pins if not p.sdist]
    sdists = [p for p in pins if p.sdist]
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(into)]
    if wheels:
        _run(base + PURE_WHEEL_FLAGS + [p.spec for p in wheels], ", ".join(p.spec for p in wheels))
    for p in sdists:
        _run(base + ["--no-binary=:all:", p.spec], p.spec)


def _download_npm(pins: list[Pin], into: Path) -> None:
    for p in pins:
        _run(["npm", "pack", "--silent", "--pack-destination", str(into), p.spec], p.spec)


def ensure(pins: list[Pin], cache: Path, log=print) -> dict[str, Path]:
    """Return ``{file name: cached path}`` for every pin, fetching the missing ones.

    Every returned file has been checked against its sha256 in this call; a mismatch raises
    :class:`AssetError` naming the file. Cost: one sha256 pass over the cache, plus the
    downloads of files not yet cached.
    """
    cache.mkdir(parents=True, exist_ok=True)
    missing = [p for p in pins if not (cache / p.file).exists()]
    if missing:
        log(f"fetching {len(missing)} pinned file(s) into {cache}")
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            tmpdir = Path(tmp)
            _download_pypi([p for p in missing if p.source == "pypi"], tmpdir)
            _download_npm([p for p in missing if p.source == "npm"], tmpdir)
            for p in missing:
                got = tmpdir / p.file
                if not got.exists():
                    names = ", ".join(sorted(x.name for x in tmpdir.iterdir()))
                    raise AssetError(
                        f"{p.spec} did not arrive as {p.file} (got: {names or 'nothing'})"
                    )
                check(got, p.sha256, p.file)
                shutil.move(str(got), cache / p.file)
    paths = {}
    for p in pins:
        path = cache / p.file
        check(path, p.sha256, p.file)
        paths[p.file] = path
    return paths

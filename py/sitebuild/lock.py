"""The merged ``pyodide-lock.json``: official wasm entries plus the pure wheels built here.

The worker then loads everything with ``pyodide.loadPackage`` and Pyodide checks each file's
sha256 against this lock; no micropip and no network at run time.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from sitebuild.digest import sha256_file
from sitebuild.errors import AssetError
from sitebuild.wheel import read_info


def pure_entry(path: Path) -> dict[str, Any]:
    """Return the lock entry for the pure wheel at ``path`` (sha256 of the file as written)."""
    info = read_info(path)
    return {
        "name": info.name,
        "version": info.version,
        "file_name": path.name,
        "install_dir": "site",
        "sha256": sha256_file(path),
        "package_type": "package",
        "imports": info.imports,
        "depends": info.depends,
        "unvendored_tests": False,
    }


def merge(official: dict[str, Any], keep: list[str], wheels: list[Path],
          unused: tuple[str, ...] = ()) -> dict[str, Any]:
    """Return a lock with the official ``keep`` entries and one entry per wheel in ``wheels``,
    with the packages ``unused`` taken out of every entry's dependencies (declared, never
    imported: ``loadPackage`` then does not unpack and instantiate them).

    Every dependency of every entry must itself be in the lock, so ``loadPackage`` can never
    reach for a file the site does not have; a gap raises :class:`AssetError`.
    """
    packages: dict[str, Any] = {}
    for name in keep:
        packages[name] = copy.deepcopy(official["packages"][name])
    for path in wheels:
        entry = pure_entry(path)
        packages[entry["name"]] = entry
    for entry in packages.values():
        entry["depends"] = [d for d in entry["depends"] if d not in unused]
    for _name, entry in sorted(packages.items()):
        gaps = [d for d in entry["depends"] if d not in packages]
        if gaps:
            raise AssetError(
                f"{entry['file_name']} depends on {', '.join(gaps)}, which the site does not "
                "ship; add it to assets.lock.json"
            )
    return {"info": copy.deepcopy(official["info"]), "packages": dict(sorted(packages.items()))}

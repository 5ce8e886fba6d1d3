"""Read, write and re-pack pure-Python wheels, byte-for-byte reproducibly.

Wheels written here have sorted entries, a fixed timestamp and a fresh RECORD, so the same
inputs always give the same sha256 (which the merged Pyodide lock then pins).
"""

from __future__ import annotations

import email.parser
import io
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sitebuild.digest import record_hash

_EPOCH = (1980, 1, 1, 0, 0, 0)

# The environment Pyodide 0.27.7 presents to dependency markers.
PYODIDE_MARKERS = {
    "python_version": "3.12",
    "python_full_version": "3.12.7",
    "sys_platform": "emscripten",
    "platform_system": "Emscripten",
    "platform_machine": "wasm32",
    "platform_release": "3.1.58",
    "implementation_name": "cpython",
    "implementation_version": "3.12.7",
    "platform_python_implementation": "CPython",
    "os_name": "posix",
    "extra": "",
}


def canonical(name: str) -> str:
    """Return the PEP 503 normalised project name (lower case, runs of -_. to one '-')."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(slots=True)
class WheelInfo:
    """What the Pyodide lock needs to know about a pure wheel."""

    name: str
    version: str
    imports: list[str]
    depends: list[str] = field(default_factory=list)


def write_wheel(path: Path, files: dict[str, bytes], dist_info: str) -> None:
    """Write ``files`` (archive path -> bytes) as a wheel at ``path`` with a new RECORD.

    ``dist_info`` is the ``name-version.dist-info`` folder; any RECORD in ``files`` is
    replaced. Returns None; the output depends only on the inputs.
    """
    record_name = f"{dist_info}/RECORD"
    entries = {k: v for k, v in files.items() if k != record_name}
    lines = [f"{name},{record_hash(data)},{len(data)}" for name, data in sorted(entries.items())]
    lines.append(f"{record_name},,")
    entries[record_name] = ("\n".join(lines) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name in sorted(entries):
            zi = zipfile.ZipInfo(name, date_time=_EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, entries[name])
    tmp.replace(path)


def wheel_metadata_file(name: str, version: str, requires: Iterable[str] = ()) -> bytes:
    """Return a minimal METADATA file for a wheel this build writes itself."""
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return ("\n".join(lines) + "\n").encode()


def wheel_file(tag: str = "py3-none-any") -> bytes:
    """Return the WHEEL file of a pure wheel with the given tag."""
    return (
        f"Wheel-Version: 1.0\nGenerator: palazzo-sitebuild\nRoot-Is-Purelib: true\nTag: {tag}\n"
    ).encode()


def read_wheel(path: Path, drop: Callable[[str], bool] = lambda name: False
               ) -> tuple[dict[str, bytes], str]:
    """Return a wheel's members (name -> bytes, folders and ``drop``-ed members left out,
    unread) and its ``.dist-info`` folder; a wheel without ``.dist-info/WHEEL`` is a
    ValueError."""
    files: dict[str, bytes] = {}
    dist_info = None
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if name.endswith("/"):
                continue
            if name.endswith(".dist-info/WHEEL") and name.count("/") == 1:
                dist_info = name.rsplit("/", 1)[0]
            if not drop(name):
                files[name] = zf.read(name)
    if dist_info is None:
        raise ValueError(f"{path.name} has no .dist-info/WHEEL")
    return files, dist_info


def repack(
    src: Path,
    dest: Path,
    drop: Callable[[str], bool] = lambda name: False,
    patches: dict[str, Callable[[bytes], bytes]] | None = None,
) -> None:
    """Copy the wheel ``src`` to ``dest`` without the members ``drop`` selects.

    ``patches`` maps member names to functions rewriting their bytes; a patch whose member is
    missing is an error (the upstream file moved and the patch would silently not apply).
    """
    files, dist_info = read_wheel(src, drop)
    missing = sorted(set(patches or {}) - set(files))
    if missing:
        raise ValueError(f"{src.name}: members to patch not found: {missing}")
    for name, patch in (patches or {}).items():
        files[name] = patch(files[name])
    write_wheel(dest, files, dist_info)


def read_info(path: Path, markers: dict[str, str] = PYODIDE_MARKERS) -> WheelInfo:
    """Return name, version, top-level imports and dependencies of the wheel at ``path``.

    Dependencies are the Requires-Dist entries whose markers hold in Pyodide with no extras.
    """
    from packaging.requirements import Requirement

    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.parser.BytesParser().parse(io.BytesIO(zf.read(meta_name)))
        top_level_name = meta_name.replace("METADATA", "top_level.txt")
        if top_level_name in names:
            imports = [
                line.strip()
                for line in zf.read(top_level_name).decode().splitlines()
                if line.strip() and not line.startswith("_")
            ]
        else:
            imports = _imports_from_names(names)
    depends = []
    for spec in meta.get_all("Requires-Dist") or []:
        req = Requirement(spec)
        if req.marker is None or req.marker.evaluate(dict(markers)):
            depends.append(canonical(req.name))
    return WheelInfo(
        name=canonical(meta["Name"]),
        version=meta["Version"],
        imports=sorted(set(imports)),
        depends=sorted(set(depends)),
    )


def _imports_from_names(names: list[str]) -> list[str]:
    tops = set()
    for n in names:
        first = n.split("/", 1)[0]
        if first.endswith((".dist-info", ".data")) or first.startswith("_"):
            continue
        if "/" in n and n.endswith("/__init__.py") and n.count("/") == 1:
            tops.add(first)
        elif "/" not in n and n.endswith(".py"):
            tops.add(n[:-3])
    return sorted(tops)

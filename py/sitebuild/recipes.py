"""How third-party wheels are adapted for the offline site, and how the local wheels are made.

- Panel: its CSS root is hard-coded to a CDN; the worker's copy reads it from the environment
  variable ``PALAZZO_PANEL_DIST`` instead. Its 100 MB ``dist/`` and its tests are dropped from
  the wheel Pyodide unpacks (the browser files are served from ``vendor/panel``).
- Bokeh: ``server/static`` (the browser bundles, served from ``vendor/bokeh``) and sample
  data are dropped from the wheel Pyodide unpacks.
- MarkupSafe, PyYAML: pure wheels from the sdists' Python sources (no C speedups).
- palazzo: a wheel of ``py/palazzo``.
"""

from __future__ import annotations

import email.parser
import tarfile
import tomllib
from pathlib import Path

from sitebuild.wheel import repack, wheel_file, wheel_metadata_file, write_wheel

# Bump when a recipe changes, so cached derived wheels are rebuilt.
RECIPE_VERSION = "2"

PANEL_CDN_LINE = b'CDN_DIST = f"{CDN_URL}dist/"'
PANEL_CDN_PATCH = b'CDN_DIST = os.environ.get("PALAZZO_PANEL_DIST") or f"{CDN_URL}dist/"'


def _patch_panel_resources(data: bytes) -> bytes:
    if data.count(PANEL_CDN_LINE) != 1:
        raise ValueError("panel/io/resources.py no longer has the CDN_DIST line this build patches")
    return data.replace(PANEL_CDN_LINE, PANEL_CDN_PATCH)


def panel_wheel(src: Path, dest: Path) -> None:
    """Write Panel's worker wheel: CSS root from the environment, no dist/ or tests."""
    repack(
        src,
        dest,
        drop=lambda n: n.startswith(("panel/dist/", "panel/tests/")),
        patches={"panel/io/resources.py": _patch_panel_resources},
    )


def bokeh_wheel(src: Path, dest: Path) -> None:
    """Write Bokeh's worker wheel without browser bundles and sample data."""
    repack(
        src,
        dest,
        drop=lambda n: n.startswith(("bokeh/server/static/", "bokeh/sampledata/")),
    )


def sdist_wheel(sdist: Path, dest_dir: Path, packages: dict[str, str]) -> Path:
    """Build a pure wheel from ``sdist`` holding only the Python files of ``packages``.

    ``packages`` maps an import package to its folder inside the sdist. Returns the wheel path.
    """
    files: dict[str, bytes] = {}
    with tarfile.open(sdist) as tf:
        members = tf.getmembers()
        root = members[0].name.split("/", 1)[0]
        pkg_info = tf.extractfile(f"{root}/PKG-INFO").read()
        meta = email.parser.BytesParser().parsebytes(pkg_info)
        for m in members:
            if not m.isfile():
                continue
            rel = m.name[len(root) + 1 :]
            for pkg, folder in packages.items():
                if rel.startswith(folder + "/") and rel.endswith((".py", ".typed", ".pyi")):
                    files[pkg + rel[len(folder) :]] = tf.extractfile(m).read()
    name, version = meta["Name"], meta["Version"]
    dist = f"{name.replace('-', '_')}-{version}"
    files[f"{dist}.dist-info/METADATA"] = pkg_info
    files[f"{dist}.dist-info/WHEEL"] = wheel_file()
    files[f"{dist}.dist-info/top_level.txt"] = ("\n".join(sorted(packages)) + "\n").encode()
    dest = dest_dir / f"{dist}-py3-none-any.whl"
    write_wheel(dest, files, f"{dist}.dist-info")
    return dest


def palazzo_wheel(root: Path, dest_dir: Path) -> Path:
    """Build the palazzo wheel from ``py/palazzo`` and return its path.

    Engine and host modules alike; it declares ``numpy`` and ``snowballstemmer`` (BM25's stemmer).
    ``networkx`` (the atlas's centrality, the communities) is left out on purpose: the worker
    loads it after the first render (``DEFERRED_PACKAGES``), off the boot path.
    """
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = project["name"], project["version"]
    src = root / "py" / "palazzo"
    files = {
        f"palazzo/{p.relative_to(src).as_posix()}": p.read_bytes()
        for p in sorted(src.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    dist = f"{name}-{version}"
    files[f"{dist}.dist-info/METADATA"] = wheel_metadata_file(name, version,
                                                           ["numpy", "snowballstemmer"])
    files[f"{dist}.dist-info/WHEEL"] = wheel_file()
    files[f"{dist}.dist-info/top_level.txt"] = b"palazzo\n"
    dest = dest_dir / f"{dist}-py3-none-any.whl"
    write_wheel(dest, files, f"{dist}.dist-info")
    return dest

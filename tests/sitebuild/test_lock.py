import hashlib
import zipfile

import pytest

from sitebuild.errors import AssetError
from sitebuild.lock import merge
from sitebuild.site import _official_packages
from sitebuild.wheel import wheel_file, wheel_metadata_file, write_wheel

OFFICIAL = {
    "info": {"version": "0.27.7"},
    "packages": {
        "numpy": {"name": "numpy", "file_name": "numpy.whl", "depends": [], "sha256": "x"},
        "scipy": {
            "name": "scipy",
            "file_name": "scipy.whl",
            "depends": ["numpy", "openblas"],
            "sha256": "y",
        },
    },
}


def _pure(tmp_path, name, requires=()):
    path = tmp_path / f"{name}-1.0-py3-none-any.whl"
    write_wheel(
        path,
        {
            f"{name}/__init__.py": b"",
            f"{name}-1.0.dist-info/METADATA": wheel_metadata_file(name, "1.0", requires),
            f"{name}-1.0.dist-info/WHEEL": wheel_file(),
        },
        f"{name}-1.0.dist-info",
    )
    return path


def test_merge_keeps_official_entries_and_adds_pure_wheels(tmp_path):
    wheel = _pure(tmp_path, "demo", ["numpy"])
    lock = merge(OFFICIAL, ["numpy"], [wheel])
    assert sorted(lock["packages"]) == ["demo", "numpy"]
    entry = lock["packages"]["demo"]
    assert entry["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert entry["depends"] == ["numpy"] and entry["file_name"] == wheel.name


def test_merge_refuses_a_dependency_the_site_lacks(tmp_path):
    with pytest.raises(AssetError, match="openblas"):
        merge(OFFICIAL, ["numpy", "scipy"], [])
    with pytest.raises(AssetError, match="depends on requests"):
        merge(OFFICIAL, ["numpy"], [_pure(tmp_path, "demo", ["requests"])])


def test_merge_leaves_packages_declared_but_never_imported_out_of_every_dependency_list(tmp_path):
    lock = merge(OFFICIAL, ["numpy"], [_pure(tmp_path, "demo", ["numpy", "requests"])],
                 unused=("requests",))
    assert lock["packages"]["demo"]["depends"] == ["numpy"]  # and no gap to refuse


def test_wasm_wheels_are_checked_against_the_official_lock(tmp_path):
    carrier = tmp_path / "carrier.whl"
    good = b"numpy bytes"
    with zipfile.ZipFile(carrier, "w") as zf:
        zf.writestr("assets/numpy.whl", good + b"!")  # one byte off
    official = {
        "packages": {
            "numpy": {"file_name": "numpy.whl", "sha256": hashlib.sha256(good).hexdigest()}
        }
    }
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(AssetError, match="sha256 mismatch for numpy.whl"):
        _official_packages(carrier, "assets/", official, ["numpy"], out)
    assert not (out / "numpy.whl").exists()

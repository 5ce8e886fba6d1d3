import zipfile

import pytest

from sitebuild.digest import record_hash
from sitebuild.wheel import read_info, repack, wheel_file, wheel_metadata_file, write_wheel


def _make(path, extra=None, requires=()):
    files = {
        "demo/__init__.py": b"VALUE = 1\n",
        "demo/core.py": b"X = 2\n",
        "demo/data/big.bin": b"\0" * 100,
        "demo-1.0.dist-info/METADATA": wheel_metadata_file("demo", "1.0", requires),
        "demo-1.0.dist-info/WHEEL": wheel_file(),
        **(extra or {}),
    }
    write_wheel(path, files, "demo-1.0.dist-info")
    return path


def test_written_wheels_are_reproducible_and_recorded(tmp_path):
    a = _make(tmp_path / "a" / "demo-1.0-py3-none-any.whl")
    b = _make(tmp_path / "b" / "demo-1.0-py3-none-any.whl")
    assert a.read_bytes() == b.read_bytes()
    with zipfile.ZipFile(a) as zf:
        record = zf.read("demo-1.0.dist-info/RECORD").decode().splitlines()
        listed = {line.split(",")[0]: line.split(",")[1] for line in record}
        assert set(listed) == set(zf.namelist())
        assert listed["demo/core.py"] == record_hash(b"X = 2\n")


def test_repack_drops_and_patches_members(tmp_path):
    src = _make(tmp_path / "demo-1.0-py3-none-any.whl")
    dest = tmp_path / "out" / src.name
    repack(
        src,
        dest,
        drop=lambda n: n.startswith("demo/data/"),
        patches={"demo/core.py": lambda b: b.replace(b"2", b"3")},
    )
    with zipfile.ZipFile(dest) as zf:
        assert "demo/data/big.bin" not in zf.namelist()
        assert zf.read("demo/core.py") == b"X = 3\n"
        assert "demo/data/big.bin" not in zf.read("demo-1.0.dist-info/RECORD").decode()


def test_repack_refuses_a_patch_that_no_longer_applies(tmp_path):
    src = _make(tmp_path / "demo-1.0-py3-none-any.whl")
    with pytest.raises(ValueError, match="not found"):
        repack(src, tmp_path / "x.whl", patches={"demo/moved.py": lambda b: b})


def test_read_info_evaluates_markers_for_pyodide(tmp_path):
    src = _make(
        tmp_path / "demo-1.0-py3-none-any.whl",
        requires=[
            "Numpy>=1",
            "pywin32; sys_platform == 'win32'",
            "Typing_Extensions",
            "pytest; extra == 'test'",
            "tomli; python_version < '3.11'",
        ],
    )
    info = read_info(src)
    assert info.name == "demo" and info.version == "1.0"
    assert info.imports == ["demo"]
    assert info.depends == ["numpy", "typing-extensions"]

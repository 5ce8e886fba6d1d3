"""The bound a zip member inflates under before it is refused as a zip bomb (``_zip``)."""

from __future__ import annotations

import zipfile

import pytest

from palazzo.errors import ImportRejected
from palazzo.importers._zip import FREE_BYTES, MAX_RATIO, inflation


def _info(file_size: int, compress_size: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("m.json")
    info.file_size, info.compress_size = file_size, compress_size
    return info


def test_the_bound_is_a_ratio_of_the_compressed_size_past_a_free_allowance():
    assert inflation(_info(10, 1), 1000, "a.zip!m.json").bound == FREE_BYTES
    big = inflation(_info(10, 1 << 20), 2 << 20, "a.zip!m.json")
    assert big.bound == MAX_RATIO << 20 and big.compressed == 1 << 20
    # A directory that claims more compressed bytes than the archive holds is not believed.
    liar = inflation(_info(10, 1 << 30), 1 << 20, "a.zip!m.json")
    assert liar.compressed == 1 << 20 and liar.bound == MAX_RATIO << 20


def test_declared_sizes_are_refused_before_anything_is_inflated():
    with pytest.raises(ImportRejected, match=r"^a.zip!m.json: inflates to more than "
                                             rf"{FREE_BYTES} bytes, over {MAX_RATIO} times "
                                             r"its 1000 compressed bytes .*zip bomb$"):
        inflation(_info(FREE_BYTES + 1, 1000), 5000, "a.zip!m.json")
    with pytest.raises(ImportRejected, match=r"^a.zip!m.json: inflates to more than 100 "
                                             r"bytes, the most an import may read \(the "
                                             r"archive says 101\)"):
        inflation(_info(101, 100), 5000, "a.zip!m.json", limit=100)
    inflation(_info(FREE_BYTES, 1000), 5000, "a.zip!m.json", limit=FREE_BYTES)  # at the bound


def test_the_bytes_read_are_held_to_the_bound_whatever_the_directory_says():
    bound = inflation(_info(10, 1000), 5000, "a.zip!m.json")  # declares a harmless size
    bound.check(FREE_BYTES)
    with pytest.raises(ImportRejected, match=r"a.zip!m.json: inflates to more than"):
        bound.check(FREE_BYTES + 1)

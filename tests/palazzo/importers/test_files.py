"""Opening a source's files: regular files only, never waiting on a FIFO (``_files``)."""

from __future__ import annotations

import os
import socket

import pytest

from palazzo.importers._files import irregular, open_regular, read_regular, regular_files

pytestmark = [pytest.mark.cpython_only,
              pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")]


@pytest.fixture
def specials(tmp_path):
    """A regular file, a FIFO, a socket, a folder and a character device."""
    (tmp_path / "note.json").write_bytes(b'{"a": 1}')
    os.mkfifo(tmp_path / "fifo.json")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock.json"))
    except OSError:  # a path too long for a socket address
        pytest.skip("cannot bind a socket here")
    (tmp_path / "folder.json").mkdir()
    yield tmp_path
    sock.close()


def test_irregular_names_what_a_path_is_without_opening_it(specials):
    assert irregular(specials / "note.json") is None
    assert irregular(specials / "fifo.json") == "not a regular file (a FIFO)"
    assert irregular(specials / "sock.json") == "not a regular file (a socket)"
    assert irregular(specials / "folder.json") == "not a regular file (a folder)"
    assert irregular(os.devnull) == "not a regular file (a character device)"
    (specials / "link.json").symlink_to(specials / "note.json")
    assert irregular(specials / "link.json") is None  # followed, as Path.is_file does
    with pytest.raises(FileNotFoundError):
        irregular(specials / "missing.json")


def test_read_regular_refuses_at_once_what_would_block_or_never_end(specials, in_time):
    fifo = specials / "fifo.json"
    assert read_regular(specials / "note.json") == b'{"a": 1}'
    with open_regular(specials / "note.json") as f:
        assert f.read(4) == b'{"a"'
    for path, what in ((fifo, "a FIFO"), (specials / "sock.json", "a socket"),
                       (os.devnull, "a character device"), ("/dev/zero", "a character device")):
        with pytest.raises(OSError) as err:
            in_time(lambda p=path: read_regular(p), fifo)
        assert err.value.strerror == f"not a regular file ({what})"


def test_a_path_swapped_for_a_fifo_after_the_check_is_refused_on_the_open_file(
        specials, monkeypatch, in_time):
    """The path is looked at again through the open descriptor: a FIFO put in place of a
    file between the check and the open is opened without waiting and refused."""
    fifo = specials / "fifo.json"
    import palazzo.importers._files as files

    monkeypatch.setattr(files, "irregular", lambda path: None)  # the check saw a file
    with pytest.raises(OSError, match=r"not a regular file \(a FIFO\)"):
        in_time(lambda: read_regular(fifo), fifo)


def test_regular_files_splits_a_listing_and_says_why(specials):
    paths = sorted(specials.iterdir()) + [specials / "missing.json"]
    files, left = regular_files(paths)
    assert files == [specials / "note.json"]
    assert [(p.name, why) for p, why in left] == [
        ("fifo.json", "not a regular file (a FIFO)"),
        ("folder.json", "not a regular file (a folder)"),
        ("sock.json", "not a regular file (a socket)"),
        ("missing.json", "unreadable: No such file or directory"),
    ]

"""The directory storage under CPython: durable files, atomic replace, flock writer lock."""

import pytest

from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ValidationError
from palazzo.library import Library
from palazzo.palace import Palace
from palazzo.palacefile import export_palace
from palazzo.storage import DirectoryRoot, MemoryRoot, check_palace_name


def make(**kw):
    return Palace(embedder=HashEmbedder(), clock=lambda: 0.0, **kw)


@pytest.mark.parametrize("root_kind", ["memory", "directory"])
def test_space_calls(tmp_path, root_kind):
    root = MemoryRoot() if root_kind == "memory" else DirectoryRoot(tmp_path)
    with pytest.raises(NotFound):
        root.space("p")
    s = root.space("p", create=True)
    assert s.read("a") is None
    s.append("a", b"12")
    s.append("a", b"34")
    s.write("b", b"xyz")
    s.write("b", b"new")
    s.truncate("a", 3)
    assert (s.read("a"), s.read("b"), s.names()) == (b"123", b"new", ["a", "b"])
    s.delete("a")
    assert s.names() == ["b"] and root.palaces() == ["p"]
    root.remove("p")
    assert root.palaces() == []


@pytest.mark.parametrize("name", ["", " x", ".hidden", "a/b", "..", "x" * 65, "tab\there",
                                  "dot."])
def test_bad_palace_names(name):
    with pytest.raises(ValidationError):
        check_palace_name(name)


@pytest.mark.cpython_only
def test_a_directory_palace_survives_a_new_library_and_locks_a_second_writer(tmp_path):
    lib = Library(DirectoryRoot(tmp_path), make)
    lib.new_palace("notes")
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "kept on disk"})
    expected = export_palace(lib.store.palace, vectors="float32", exported_at=0.0)
    second = Library(DirectoryRoot(tmp_path), make)
    assert second.open_palace("notes")["status"]["read_only"] is True
    assert export_palace(second.store.palace, vectors="float32", exported_at=0.0) == expected
    lib.root.unlock("notes")
    third = Library(DirectoryRoot(tmp_path), make)
    assert third.open_palace("notes")["status"]["read_only"] is False
    assert not any(p.name.endswith(".tmp") for p in (tmp_path / "notes").iterdir())

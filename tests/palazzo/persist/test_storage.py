"""The directory storage under CPython: durable files, atomic replace, flock writer lock,
private modes."""

import os
import stat

import pytest

from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ReadOnly, ValidationError
from palazzo.formats.palacefile import export_palace
from palazzo.palace import Palace
from palazzo.persist.library import Library
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import (
    DirectoryRoot,
    MemoryRoot,
    QueuedRoot,
    StorageError,
    check_palace_name,
)


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


@pytest.fixture(params=[0o022, 0o000], ids=["umask022", "umask000"])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


@pytest.mark.cpython_only
def test_every_palace_file_and_the_signing_keys_are_private_from_the_first_byte(tmp_path, umask):
    root = DirectoryRoot(tmp_path)
    space = root.space("notes", create=True)
    assert root.lock("notes")
    store = PalaceStore(space, make, clock=lambda: 1_700_000_000.0)
    store.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
    turn = store.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
    store.call("slice_context", {"anchor": turn})
    assert "keys.json" in space.names()
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "notes").iterdir()}
    assert {".lock", "keys.json", "journal-00000001.log", "snapshot-00000001.pz"} <= set(modes)
    assert modes == dict.fromkeys(modes, 0o600)
    assert stat.S_IMODE((tmp_path / "notes").stat().st_mode) == 0o700
    root.unlock("notes")


@pytest.mark.cpython_only
def test_a_write_never_goes_through_a_file_planted_at_its_temporary_name(tmp_path):
    space = DirectoryRoot(tmp_path).space("notes", create=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not yours")
    os.chmod(elsewhere, 0o644)
    (tmp_path / "notes" / ".keys.json.tmp").symlink_to(elsewhere)
    space.write("keys.json", b'{"secret": "00"}')
    assert elsewhere.read_bytes() == b"not yours"  # the link was replaced, not followed
    assert space.read("keys.json") == b'{"secret": "00"}'
    assert stat.S_IMODE((tmp_path / "notes" / "keys.json").stat().st_mode) == 0o600


def texts(lib):
    return [d["snippet"] for d in lib.store.call("list_drawers", {"wing": "w"})["drawers"]]


def memory_library():
    root = MemoryRoot()
    return root, Library(root, make)


def test_reopening_the_open_palace_changes_nothing():
    root, lib = memory_library()
    lib.new_palace("notes")
    store = lib.store
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "still writable"})
    assert lib.open_palace("notes")["status"]["read_only"] is False
    assert lib.store is store and root.locked == {"notes"}
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "after re-opening"})


def test_switching_palaces_releases_the_lock_of_the_one_left():
    root, lib = memory_library()
    lib.new_palace("a")
    lib.new_palace("b")
    assert root.locked == {"b"}
    assert lib.open_palace("a")["status"]["read_only"] is False
    assert root.locked == {"a"}
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "back in a"})


def test_a_deleted_open_palace_can_be_created_again_under_its_name():
    root, lib = memory_library()
    lib.new_palace("p")
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "old"})
    lib.delete_palace("p", "p")
    assert lib.store is None and root.locked == set()
    assert lib.new_palace("p")["status"]["read_only"] is False
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "new"})
    again = Library(root, make)
    root.unlock("p")
    again.open_palace("p")
    assert texts(again) == ["new"]


def test_a_palace_written_elsewhere_is_neither_deleted_nor_created_here():
    root, lib = memory_library()
    lib.new_palace("shared")
    other = Library(root, make)
    assert other.open_palace("shared")["status"]["read_only"] is True
    with pytest.raises(ReadOnly):
        other.delete_palace("shared", "shared")
    assert root.palaces() == ["shared"]
    root.locked.add("claimed")  # another writer holds a name this library has not seen
    with pytest.raises(ReadOnly):
        other.new_palace("claimed")
    assert other.name == "shared"


def test_a_reader_takes_over_by_opening_again_once_the_writer_has_gone():
    root, lib = memory_library()
    lib.new_palace("p")
    reader = Library(root, make)
    assert reader.open_palace("p")["status"]["read_only"] is True
    assert reader.open_palace("p")["status"]["read_only"] is True  # the writer is still here
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "before leaving"})
    lib.new_palace("elsewhere")  # the writer switches away and lets go of "p"
    assert reader.open_palace("p")["status"]["read_only"] is False
    assert texts(reader) == ["before leaving"]
    reader.store.call("add_drawer", {"wing": "w", "room": "r", "content": "taken over"})
    assert lib.open_palace("p")["status"]["read_only"] is True


def test_a_queued_root_answers_locks_from_what_the_host_granted():
    root = QueuedRoot("opfs", ["a"], held=["a"])
    assert root.lock("a") and not root.lock("b")
    root.grant("b", True)
    root.unlock("a")
    assert root.lock("b") and not root.lock("a") and root.released == ["a"]
    root.grant("a", True)  # taken again before the host gave it back: nothing to give back
    assert root.released == [] and root.lock("a")
    root.grant("b", False)
    assert not root.lock("b")


def test_a_queued_root_never_drops_a_mirror_with_unwritten_changes():
    root = QueuedRoot("opfs", [])
    root.space("p", create=True).append("journal", b"x")
    with pytest.raises(StorageError):
        root.load("p", {})
    assert root.space("p").pending == [("append", "journal", b"x")]
    root.space("p").drain()
    root.load("p", {"journal": b"xy"})
    assert root.space("p").read("journal") == b"xy"


def test_reload_boots_the_open_palace_from_what_storage_kept():
    root, lib = memory_library()
    lib.new_palace("p")
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "kept"})
    space = root.space("p")
    journal = next(n for n in space.names() if n.startswith("journal"))
    kept, tip = len(space.read(journal)), space.read("journal.tip")
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "lost by storage"})
    # The host's write of the last record failed, so it never wrote the tip queued after it.
    space.truncate(journal, kept)
    space.write("journal.tip", tip)
    assert lib.reload()["status"]["read_only"] is False
    assert texts(lib) == ["kept"] and root.locked == {"p"}
    lib.store.call("add_drawer", {"wing": "w", "room": "r", "content": "after"})
    again = Library(root, make)
    root.unlock("p")
    again.open_palace("p")
    assert sorted(texts(again)) == ["after", "kept"]


@pytest.mark.parametrize("root_kind", ["memory", "directory"])
def test_a_loaded_file_is_the_callers_to_change_and_outlives_its_replacement(tmp_path,
                                                                             root_kind):
    root = MemoryRoot() if root_kind == "memory" else DirectoryRoot(tmp_path)
    s = root.space("p", create=True)
    assert s.load("a") is None
    s.write("a", b"snapshot bytes")
    s.write("empty", b"")
    buffer = s.load("a")
    assert bytes(buffer) == b"snapshot bytes" and bytes(s.load("empty")) == b""
    buffer[0:8] = b"SNAPSHOT"  # the palace's arrays change; the file does not
    assert s.read("a") == b"snapshot bytes"
    s.write("a", b"the next one")  # a compaction replaces the file, then deletes it
    s.delete("a")
    assert bytes(buffer) == b"SNAPSHOT bytes"

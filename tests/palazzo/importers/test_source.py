"""Recognising dropped sources: folders, zips, chat exports, databases, palace files."""

import json
import os
import zipfile

import pytest

from palazzo import Palace
from palazzo.errors import ImportRejected
from palazzo.formats.palacefile import export_palace
from palazzo.importers.source import recognise, unpack_zip


def test_folders_of_notes_and_single_text_files(tmp_path):
    notes = tmp_path / "my notes"
    (notes / "garden").mkdir(parents=True)
    (notes / "garden" / "roses.md").write_text("Prune roses in late winter.\n")
    (notes / "todo.txt").write_text("Buy seeds.\n")
    src = recognise(notes)
    assert (src.kind, src.name, src.label) == ("folder", "my notes", "a folder of 2 files")
    assert recognise(notes / "todo.txt").kind == "folder"
    plan = src.plan()
    assert plan.summary["files"] == 2


def test_chat_exports_are_told_apart_from_palace_and_graphpalace_files(tmp_path):
    chatgpt = tmp_path / "conversations.json"
    chatgpt.write_text(json.dumps([{"title": "t", "mapping": {}}]))
    assert recognise(chatgpt).kind == "chats"
    palace = tmp_path / "mine.json"
    palace.write_text(json.dumps(export_palace(Palace(name="mine"))))
    assert recognise(palace).kind == "palace"
    big = tmp_path / "big.json"
    doc = export_palace(Palace(name="big"))
    doc["palace"]["padding"] = "x" * 10_000  # past the peek: decided on the first bytes
    big.write_text(json.dumps(doc))
    assert recognise(big).kind == "palace"
    gp = tmp_path / "gp.json"
    gp.write_text(json.dumps({"version": 1, "exported_at": "2026-01-01", "data": {}}))
    assert recognise(gp).kind == "graphpalace"
    jsonl = tmp_path / "log.jsonl"
    jsonl.write_text('{"role": "user", "content": "hi"}\n')
    assert recognise(jsonl).kind == "chats"
    # An export folder and an export zip are chat exports too.
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "conversations.json").write_text("[]")
    (folder / "chat.html").write_text("<html></html>")
    assert recognise(folder).kind == "chats"
    z = tmp_path / "export.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("conversations.json", "[]")
    assert recognise(z).kind == "chats"


@pytest.mark.cpython_only  # the test's sqlite3 databases; Pyodide loads sqlite3 on demand
def test_databases_by_name_and_first_bytes(tmp_path):
    import sqlite3

    db = tmp_path / "opencode.db"
    sqlite3.connect(db).execute("create table t (x)").connection.close()
    assert recognise(db).kind == "chats"
    chroma = tmp_path / "pal" / "chroma.sqlite3"
    chroma.parent.mkdir()
    sqlite3.connect(chroma).execute("create table t (x)").connection.close()
    assert recognise(chroma.parent).kind == "mempalace"


def test_a_zip_of_notes_unpacks_safely(tmp_path):
    z = tmp_path / "notes.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("notes/a.md", "alpha")
        f.writestr("notes/b/c.md", "gamma")
    src = recognise(z)
    assert src.kind == "folder" and src.name == "notes"
    out = unpack_zip(z, tmp_path / "out")
    assert out.name == "notes" and (out / "b" / "c.md").read_text() == "gamma"
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as f:
        f.writestr("../../escape.md", "no")
    with pytest.raises(ImportRejected, match="outside the archive"):
        unpack_zip(evil, tmp_path / "evil-out")
    assert not (tmp_path / "escape.md").exists()
    with pytest.raises(ImportRejected, match="inflates to more than"):
        unpack_zip(z, tmp_path / "small", limit=3)


def test_nothing_to_import_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportRejected, match="the folder is empty"):
        recognise(tmp_path / "empty")
    with pytest.raises(ImportRejected, match="no such file"):
        recognise(tmp_path / "missing")


@pytest.mark.cpython_only
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_dropped_alone_is_a_clear_error_not_a_wait(tmp_path, in_time):
    fifo = tmp_path / "export.json"
    os.mkfifo(fifo)
    with pytest.raises(ImportRejected, match=r"^export.json: not a regular file \(a FIFO\); "
                                             r"only files and folders are imported$"):
        in_time(lambda: recognise(fifo), fifo)
    with pytest.raises(ImportRejected, match=r"null: not a regular file \(a character "
                                             r"device\)"):
        recognise(os.devnull)


def test_a_zip_that_says_it_is_too_big_or_a_bomb_is_refused_before_writing(tmp_path):
    notes = tmp_path / "notes.zip"
    with zipfile.ZipFile(notes, "w") as f:
        f.writestr("notes/a.md", "alpha")
        f.writestr("notes/b.md", "beta")
    with pytest.raises(ImportRejected, match=r"notes.zip: inflates to more than 6 bytes "
                                             r"\(the archive says 9\)"):
        unpack_zip(notes, tmp_path / "small", limit=6)
    assert not (tmp_path / "small").exists() or not any((tmp_path / "small").iterdir())
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as f:
        f.writestr("notes/a.md", "alpha")
        f.writestr("notes/blank.md", b"\t \n" * (8 << 20))
    with pytest.raises(ImportRejected, match=r"bomb.zip!notes/blank.md: inflates to more "
                                             r"than 16777216 bytes.*zip bomb"):
        unpack_zip(bomb, tmp_path / "out")
    assert not any((tmp_path / "out").rglob("*"))

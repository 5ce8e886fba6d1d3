"""Folder importer: layout (rooms are folders, the top files in a room named after the
folder), .gitignore (nested, negation), binaries, encodings, chunking with positions,
unchanged files, changed files, files moved from the old per-file rooms and from the old
room ".", and --sync pruning."""

import os

import pytest

from palazzo import bind, call
from palazzo.errors import ImportRejected, ValidationError
from palazzo.importers import apply
from palazzo.importers.folder import (
    IgnoreRules,
    compile_rule,
    parse_rules,
    plan_index,
    room_of,
    split_source_file,
    top_room,
)
from palazzo.palace import Palace

pytestmark = pytest.mark.cpython_only


def tree(root, files):
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def indexed(plan):
    return sorted(c.args["source_file"] for c in plan.calls if c.name == "add_drawer")


def drawers(palace):
    s = palace.drawers
    return {s.source_file[r]: (s.wing[r], s.room[r], s.content[r]) for r in s.live_rows()}


# -- gitignore rules ---------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "path", "is_dir", "matches"), [
    ("*.log", "a.log", False, True),
    ("*.log", "deep/er/a.log", False, True),
    ("*.log", "a.logx", False, False),
    ("/top.txt", "top.txt", False, True),
    ("/top.txt", "sub/top.txt", False, False),
    ("doc/*.md", "doc/a.md", False, True),
    ("doc/*.md", "doc/x/a.md", False, False),
    ("doc/**/*.md", "doc/x/y/a.md", False, True),
    ("doc/**/*.md", "doc/a.md", False, True),
    ("**/cache", "a/b/cache", True, True),
    ("**/cache", "cache", False, True),
    ("out/**", "out/a/b.txt", False, True),
    ("out/**", "out", True, False),
    ("build/", "build", True, True),
    ("build/", "build", False, False),
    ("build/", "src/build", True, True),
    ("a?c", "abc", False, True),
    ("a?c", "a/c", False, False),
    ("[ab]x", "bx", False, True),
    ("[!ab]x", "cx", False, True),
    ("[!ab]x", "ax", False, False),
    (r"\#hash", "#hash", False, True),
    (r"\!bang", "!bang", False, True),
    ("trailing   ", "trailing", False, True),
    ("spaced\\ ", "spaced ", False, True),
])
def test_gitignore_patterns(pattern, path, is_dir, matches):
    rule = compile_rule(pattern)
    assert rule is not None and not rule.negate
    assert rule.matches(path, is_dir) is matches


def test_gitignore_comments_blanks_and_precedence():
    assert compile_rule("# a comment") is None
    assert compile_rule("   ") is None
    assert compile_rule("!keep.log").negate
    rules = IgnoreRules().with_file("", parse_rules("*.log\n!keep.log\n\n# x\n"))
    assert rules.ignored("a.log", False) and not rules.ignored("keep.log", False)
    nested = rules.with_file("sub", parse_rules("!*.log\nlocal.txt\n"))
    assert not nested.ignored("sub/a.log", False)  # the inner file wins
    assert nested.ignored("a.log", False)  # but only below its folder
    assert nested.ignored("sub/local.txt", False) and not nested.ignored("local.txt", False)


# -- indexing -----------------------------------------------------------------------------------

def test_layout_rooms_and_source_files(tmp_path):
    root = tree(tmp_path / "notes", {
        "README.md": "# Notes\nTop-level file.",
        "work/meetings/monday.md": "Standup moved to 10:00.",
        "work/todo.txt": "Write the importer.",
        "home/garden.md": "Basil needs sun.",
    })
    plan = plan_index(root)
    assert plan.summary["wing"] == "notes" and plan.summary["files"] == 4
    rooms = {c.args["source_file"]: c.args["room"] for c in plan.calls}
    assert rooms == {"README.md": "notes", "home/garden.md": "home",
                     "work/meetings/monday.md": "work/meetings", "work/todo.txt": "work"}
    assert all(c.args["source"] == "index" and "closet" not in c.args for c in plan.calls)
    palace = Palace()
    apply(plan, bind(palace))
    assert drawers(palace)["work/todo.txt"] == ("notes", "work", "Write the importer.")
    counts = palace.counts()
    assert apply(plan_index(root), bind(palace))["created"] == {}
    assert palace.counts() == counts
    other = plan_index(root, wing="Personal notes")
    assert {c.args["wing"] for c in other.calls} == {"Personal notes"}


def test_a_flat_folder_is_one_room_and_a_file_never_moves_for_its_neighbours(tmp_path):
    root = tree(tmp_path / "flat", {f"note-{i:03d}.txt": f"note number {i}" for i in range(300)})
    (root / "sub").mkdir()
    (root / "sub" / "a.md").write_text("in a folder", encoding="utf-8")
    plan = plan_index(root)
    assert {c.args["room"] for c in plan.calls} == {"flat", "sub"}
    palace = Palace()
    apply(plan, bind(palace))
    assert sorted(palace.rooms) == [("flat", "flat"), ("flat", "sub")]
    # One room, but each drawer says its file: search results and the drawer view show it.
    hit = call(palace, "search", {"query": "note number 7", "mode": "bm25", "limit": 1})
    assert hit["results"][0]["source"]["path"] == "note-007.txt"
    assert palace.counts()["drawers"] == 301
    (root / "note-300.txt").write_text("one more", encoding="utf-8")
    (root / "note-000.txt").unlink()
    more = plan_index(root, palace=palace, sync=True)
    assert [(c.name, c.args.get("source_file")) for c in more.calls] == \
        [("add_drawer", "note-300.txt"), ("delete_drawer", None)]
    assert more.summary["moved"] == [] and len(more.summary["unchanged"]) == 300


def old_layout(plan):
    """The calls of ``plan`` as palazzo made them before rooms were folders: a file directly
    in the indexed folder in the room of its stem."""
    from pathlib import PurePosixPath

    out = []
    for c in plan.calls:
        base = split_source_file(c.args["source_file"])[0]
        room = c.args["room"] if "/" in base else PurePosixPath(base).stem
        out.append({**c.args, "room": room})
    return out


def test_a_palace_indexed_with_per_file_rooms_moves_to_folder_rooms(tmp_path):
    files = {"README.md": "# Notes", "todo.txt": long_text(6), "work/plan.md": "the plan"}
    root = tree(tmp_path / "p", files)
    palace = Palace()
    for args in old_layout(plan_index(root, chunk_size=300)):
        call(palace, "add_drawer", args)
    s = palace.drawers
    assert {s.room[r] for r in s.live_rows()} == {"README", "todo", "work"}
    before = {s.ids[r] for r in s.live_rows()}

    move = plan_index(root, chunk_size=300, palace=palace)
    assert move.summary["moved"] == ["README.md", "todo.txt"]
    assert move.summary["unchanged"] == ["work/plan.md"] and move.summary["changed"] == []
    names = [c.name for c in move.calls]
    assert names == sorted(names)  # every add before any delete
    deleted = {c.args["drawer_id"] for c in move.calls if c.name == "delete_drawer"}
    moved_ids = {s.ids[r] for r in s.live_rows() if s.room[r] != "work"}
    assert deleted == moved_ids and deleted < before
    assert all(c.args["room"] == "p" for c in move.calls if c.name == "add_drawer")

    # Interrupted after the adds: every file is there twice, never absent, and the next
    # index finishes the move with deletes alone.
    adds = [c for c in move.calls if c.name == "add_drawer"]
    for c in adds:
        call(palace, c.name, c.args)
    assert rebuilt_files(palace, "p").keys() == files.keys()
    finish = plan_index(root, chunk_size=300, palace=palace)
    assert {c.name for c in finish.calls} == {"delete_drawer"}
    assert {c.args["drawer_id"] for c in finish.calls} == deleted
    apply(finish, bind(palace))
    assert rebuilt_files(palace, "p") == {k: v.encode() for k, v in files.items()}
    assert {s.room[r] for r in s.live_rows()} == {"p", "work"}
    assert len(plan_index(root, chunk_size=300, palace=palace, sync=True)) == 0


def test_the_top_room_is_named_after_the_folder_and_the_old_room_dot_moves(tmp_path):
    files = {"a.md": "first note", "b.md": "second note", "notes/c.md": "in a subfolder",
             "deep/d.md": "deeper"}
    root = tree(tmp_path / "notes", files)
    assert top_room(root) == "notes" and top_room(root / ".." / "notes") == "notes"
    assert top_room("/") == "."  # no name to give: the folder relative to itself
    assert room_of("a.md", "notes") == "notes" and room_of("deep/d.md", "notes") == "deep"
    assert room_of("a.md") == "."
    plan = plan_index(root)
    rooms = {c.args["source_file"]: c.args["room"] for c in plan.calls}
    # A subfolder with the folder's own name shares its room; the files keep their paths.
    assert rooms == {"a.md": "notes", "b.md": "notes", "notes/c.md": "notes",
                     "deep/d.md": "deep"}
    assert len({c.args["key"] for c in plan.calls}) == 4

    # A palace indexed when the top files were in room ".": they move, nothing is lost.
    old = Palace()
    for c in plan.calls:
        args = dict(c.args)
        if "/" not in args["source_file"]:
            args["room"] = "."
        call(old, "add_drawer", args)
    move = plan_index(root, palace=old)
    assert move.summary["moved"] == ["a.md", "b.md"]
    apply(move, bind(old))
    s = old.drawers
    assert {s.source_file[r]: s.room[r] for r in s.live_rows()} == rooms
    assert rebuilt_files(old, "notes") == {k: v.encode() for k, v in files.items()}
    assert len(plan_index(root, palace=old)) == 0


def test_gitignore_nested_and_negation(tmp_path):
    root = tree(tmp_path / "proj", {
        ".gitignore": "# build output\n*.log\n!keep.log\nbuild/\n/secret.txt\ndocs/**/draft*\n",
        "app.log": "noise", "keep.log": "important log",
        "secret.txt": "top secret", "sub/secret.txt": "not anchored here",
        "build/out.txt": "generated", "build/keep.log": "cannot be re-included",
        "docs/guide.md": "the guide", "docs/a/b/draft-1.md": "draft",
        "docs/.gitignore": "!*.log\nlocal/\n",
        "docs/trace.log": "re-included below docs/",
        "docs/local/x.md": "ignored by the nested file",
        ".git/config": "[core]",
        "src/main.py": "print('hi')",
    })
    plan = plan_index(root)
    assert indexed(plan) == ["docs/guide.md", "docs/trace.log", "keep.log", "src/main.py",
                             "sub/secret.txt"]
    skipped = {s["item"]: s["reason"] for s in plan.summary["skipped"]}
    assert skipped == {"app.log": "gitignored", "secret.txt": "gitignored",
                       "build/": "gitignored", "docs/a/b/draft-1.md": "gitignored",
                       "docs/local/": "gitignored"}


def test_include_and_exclude(tmp_path):
    root = tree(tmp_path / "p", {"a.md": "a", "b.txt": "b", "docs/c.md": "c",
                                 "docs/old/d.md": "d", "node_modules/x.md": "x"})
    plan = plan_index(root, include=["*.md"], exclude=["docs/old/", "node_modules"])
    assert indexed(plan) == ["a.md", "docs/c.md"]
    reasons = {s["item"]: s["reason"] for s in plan.summary["skipped"]}
    assert reasons == {"b.txt": "not included", "docs/old/": "excluded",
                       "node_modules/": "excluded"}
    assert indexed(plan_index(root, include="docs/**")) == ["docs/c.md", "docs/old/d.md"]


def test_binary_empty_symlink_and_encodings(tmp_path):
    root = tree(tmp_path / "p", {
        "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "late-nul.txt": b"x" * 9000 + b"\x00",
        "latin1.txt": "café crème".encode("latin-1"),
        "bom.txt": "\ufeffwith a byte order mark".encode(),
        "blank.txt": "  \n\n",
        "ok.txt": "plain",
    })
    (root / "link.txt").symlink_to(root / "ok.txt")
    plan = plan_index(root, chunk_size=20_000)
    contents = {c.args["source_file"]: c.args["content"] for c in plan.calls}
    assert contents["latin1.txt"] == "caf\ufffd cr\ufffdme"
    assert contents["bom.txt"] == "\ufeffwith a byte order mark"  # verbatim: the file's text
    assert "late-nul.txt" in contents  # NUL beyond the first 8 KiB: still text
    assert plan.summary["decoded_with_replacement"] == ["latin1.txt"]
    reasons = {s["item"]: s["reason"] for s in plan.summary["skipped"]}
    assert reasons == {"image.png": "binary (NUL byte in the first 8 KiB)",
                       "blank.txt": "empty", "link.txt": "symlink (not followed)"}
    small = plan_index(root, max_bytes=8)
    assert {s["item"] for s in small.summary["skipped"]
            if s["reason"].startswith("too large")} == {"latin1.txt", "bom.txt",
                                                        "late-nul.txt", "image.png"}


def long_text(paragraphs):
    return "\n\n".join(f"Paragraph {i}: " + " ".join(f"word{i}-{j}" for j in range(30))
                       for i in range(paragraphs)) + "\n"


def test_large_files_are_chunked_with_their_positions(tmp_path):
    text = long_text(40)
    root = tree(tmp_path / "p", {"docs/big.md": text, "small.md": "short"})
    plan = plan_index(root, chunk_size=1000)
    chunks = [c.args for c in plan.calls if c.args["source_file"].startswith("docs/big.md")]
    assert len(chunks) == plan.summary["chunked"]["docs/big.md"] > 3
    assert [split_source_file(a["source_file"]) for a in chunks] == \
        [("docs/big.md", k) for k in range(1, len(chunks) + 1)]
    assert all(a["closet"] == "big.md" and a["room"] == "docs" for a in chunks)
    assert all(len(a["content"]) <= 1000 for a in chunks)
    assert "".join(a["content"] for a in chunks) == text  # verbatim, in order, no overlap
    assert split_source_file("small.md") == ("small.md", 0)
    palace = Palace()
    apply(plan, bind(palace))
    assert palace.counts()["drawers"] == len(chunks) + 1
    assert palace.closets[("p", "docs", "big.md")]


def test_unchanged_files_are_skipped_and_changed_ones_replaced(tmp_path):
    root = tree(tmp_path / "p", {"a.md": "alpha", "sub/b.md": long_text(12),
                                 "sub/c.md": "gamma"})
    palace = Palace()
    apply(plan_index(root, chunk_size=500), bind(palace))
    before = palace.counts()
    again = plan_index(root, chunk_size=500, palace=palace)
    assert len(again) == 0
    assert again.summary["unchanged"] == ["a.md", "sub/b.md", "sub/c.md"]

    (root / "a.md").write_text("alpha, revised", encoding="utf-8")
    paragraphs = long_text(12).split("\n\n")
    paragraphs[-1] = "A new ending."
    (root / "sub" / "b.md").write_text("\n\n".join(paragraphs), encoding="utf-8")
    changed = plan_index(root, chunk_size=500, palace=palace)
    assert changed.summary["changed"] == ["a.md", "sub/b.md"]
    assert changed.summary["unchanged"] == ["sub/c.md"]
    names = [c.name for c in changed.calls]
    assert names == sorted(names)  # every add before any delete
    deleted = [c.args["drawer_id"] for c in changed.calls if c.name == "delete_drawer"]
    added = [c.args for c in changed.calls if c.name == "add_drawer"]
    # b.md: its first chunks are the same text, so they stay; its last two paragraphs
    # now fit one chunk, which replaces the old two.
    assert [a["source_file"] for a in added] == ["a.md", f"sub/b.md#chunk-{len(paragraphs) - 1}"]
    assert len(deleted) == 3
    apply(changed, bind(palace))
    assert palace.counts()["drawers"] == before["drawers"] - 1
    got = drawers(palace)
    assert got["a.md"][2] == "alpha, revised"
    assert all(d not in palace.drawers.row_of for d in deleted)
    assert len(plan_index(root, chunk_size=500, palace=palace)) == 0


def test_sync_prunes_drawers_of_deleted_files_only(tmp_path):
    root = tree(tmp_path / "p", {"a.md": "alpha", "b.md": "beta", "old/c.md": long_text(8)})
    palace = Palace()
    apply(plan_index(root, chunk_size=500), bind(palace))
    call(palace, "add_drawer", {"wing": "p", "room": "old", "content": "typed by hand",
                               "source_file": "old/c.md"})
    call(palace, "add_drawer", {"wing": "elsewhere", "room": "old", "content": "other wing",
                               "source": "index", "source_file": "old/c.md"})
    (root / "old" / "c.md").unlink()
    (root / "b.md").unlink()
    kept = plan_index(root, palace=palace)
    assert len(kept) == 0  # without sync nothing is deleted
    plan = plan_index(root, palace=palace, sync=True)
    assert plan.summary["pruned_files"] == ["b.md", "old/c.md"]
    assert {c.name for c in plan.calls} == {"delete_drawer"}
    n_chunks = sum(1 for f in drawers(palace) if f.startswith("old/c.md#chunk-"))
    assert len(plan) == 1 + n_chunks
    apply(plan, bind(palace))
    s = palace.drawers
    left = {(s.wing[r], s.source[r], s.source_file[r]) for r in s.live_rows()}
    assert left == {("p", "index", "a.md"), ("p", "", "old/c.md"),
                    ("elsewhere", "index", "old/c.md")}
    assert len(plan_index(root, palace=palace, sync=True)) == 0


def test_bad_arguments(tmp_path):
    with pytest.raises(ImportRejected, match="not a folder"):
        plan_index(tmp_path / "missing")
    root = tree(tmp_path / "p", {"a.md": "a"})
    with pytest.raises(ValidationError, match="sync needs the palace"):
        plan_index(root, sync=True)
    with pytest.raises(ValidationError, match="chunk_size"):
        plan_index(root, chunk_size=10)
    with pytest.raises(ValidationError, match="wing name"):
        plan_index(root, wing="\n")


def test_plan_is_checked_before_anything_is_written(tmp_path):
    from palazzo.importers import Call, Plan, PlanBuilder

    builder = PlanBuilder("x", "folder")
    builder.add("add_drawer", {"wing": "w", "room": "r", "content": "fine"}, "x/a.md")
    builder.add("add_drawer", {"wing": "w", "room": "r", "content": ""}, "x/b.md")
    with pytest.raises(ImportRejected, match="x/b.md: Content is empty"):
        builder.finish()
    builder = PlanBuilder("x", "folder")
    builder.add("add_drawer", {"wing": "w", "room": "r", "content": "x", "extra": 1}, "x/c.md")
    with pytest.raises(ImportRejected, match="x/c.md: Unknown field"):
        builder.finish()
    assert isinstance(Plan([Call("add_wing", {"name": "w"})], {}).pairs()[0], tuple)


def test_compares_with_a_journaled_store(tmp_path):
    from palazzo.persist.palacestore import PalaceStore
    from palazzo.persist.storage import MemorySpace

    root = tree(tmp_path / "p", {"a.md": "alpha", "b/c.md": "gamma"})
    store = PalaceStore(MemorySpace(), lambda **kw: Palace(**kw))
    apply(plan_index(root), store.call)
    assert store.status.journal_records == 2
    assert len(plan_index(root, palace=store, sync=True)) == 0
    (root / "a.md").unlink()
    apply(plan_index(root, palace=store, sync=True), store.call)
    assert [store.palace.drawers.source_file[r] for r in store.palace.drawers.live_rows()] \
        == ["b/c.md"]


# -- nothing lost: every file rebuilds from its drawers ------------------------------------------

BLOCK = ("Traceback (most recent call last):\n  File \"app.py\", line 7, in <module>\n"
         "    main()\nValueError: the same error again\n\n")


def _variants(chunk_size):
    """Files whose repeated block lands at every offset of a chunk boundary, in every line
    ending style, with and without a byte order mark, plus blank runs longer than a chunk."""
    out = {}
    endings = {"lf": lambda t: t, "crlf": lambda t: t.replace("\n", "\r\n"),
               "mixed": lambda t: "".join(line + ("\r\n", "\n", "\r")[i % 3] for i, line
                                          in enumerate(t.split("\n")))}
    for offset in range(chunk_size + 1):
        body = "x" * offset + " start.\n\n" + BLOCK * 5 + "tail " * 30
        for name, ending in endings.items():
            for bom in (False, True):
                data = ("\ufeff" if bom else "") + ending(body)
                out[f"{name}/{'bom-' if bom else ''}off{offset:03d}.log"] = data.encode()
    out["blank/runs.txt"] = ("words\n" + " \n" * chunk_size + "more words\n" + "\n" * 300
                             + "end").encode()
    out["blank/leading.txt"] = ("\n" * (chunk_size * 2) + "text after blank lines").encode()
    out["same/lines.md"] = ("the very same line of text\n" * 200).encode()
    return out


def rebuilt_files(palace, wing):
    """{file: bytes} rebuilt the way a reader would: the wing's indexed drawers grouped by
    the file in their source_file, ordered by the chunk position it records, joined."""
    s = palace.drawers
    parts = {}
    for r in s.live_rows():
        if s.wing[r] == wing and s.source[r] == "index":
            base, k = split_source_file(s.source_file[r])
            parts.setdefault(base, []).append((k, s.content[r]))
    return {base: "".join(text for _, text in sorted(p)).encode() for base, p in parts.items()}


def test_every_file_rebuilds_byte_for_byte_from_its_drawers(tmp_path):
    chunk = 120
    files = _variants(chunk)
    root = tree(tmp_path / "logs", files)
    plan = plan_index(root, chunk_size=chunk)
    assert plan.summary["files"] == len(files) and plan.summary["skipped"] == []
    chunks = [c.args["content"] for c in plan.calls]
    assert len(chunks) > len(set(chunks))  # the same text at several places: kept each time
    palace = Palace()
    result = apply(plan, bind(palace))
    assert result["created"]["add_drawer"] == plan.summary["drawers_added"] == len(plan)
    assert rebuilt_files(palace, "logs") == files
    again = plan_index(root, chunk_size=chunk, palace=palace)
    assert len(again) == 0 and again.summary["unchanged"] == sorted(files)


def test_identical_files_in_one_room_are_two_drawers(tmp_path):
    root = tree(tmp_path / "p", {"README.md": "same words", "README.txt": "same words",
                                 "a/x.txt": "same words", "a/y.txt": "same words"})
    palace = Palace()
    apply(plan_index(root), bind(palace))
    assert palace.counts()["drawers"] == 4
    assert sorted(rebuilt_files(palace, "p")) == ["README.md", "README.txt", "a/x.txt",
                                                  "a/y.txt"]
    assert len(plan_index(root, palace=palace)) == 0


def test_a_file_stored_incompletely_is_healed(tmp_path):
    """Indexed before drawers had keys, a log whose chunks repeat kept one drawer for them
    all and never rebuilt; the next index sees that and re-imports it."""
    from palazzo.importers.folder import reassemble

    text = "start\n\n" + BLOCK * 8
    root = tree(tmp_path / "p", {"app.log": text, "ok.md": "fine"})
    palace = Palace()
    plan = plan_index(root, chunk_size=len(BLOCK))
    for c in plan.calls:  # what the importer did before: no key, so repeats collapse
        call(palace, "add_drawer", {k: v for k, v in c.args.items() if k != "key"})
    assert palace.counts()["drawers"] < len(plan)
    assert "app.log" not in {b for b, t in rebuilt_files(palace, "p").items()
                             if t == text.encode()}
    heal = plan_index(root, chunk_size=len(BLOCK), palace=palace)
    assert heal.summary["healed"] == ["app.log"] and heal.summary["changed"] == []
    assert heal.summary["unchanged"] == ["ok.md"]
    apply(heal, bind(palace))
    assert rebuilt_files(palace, "p") == {"app.log": text.encode(), "ok.md": b"fine"}
    assert len(plan_index(root, chunk_size=len(BLOCK), palace=palace)) == 0

    gap = next(r for r in palace.drawers.live_rows()
               if palace.drawers.source_file[r] == "app.log#chunk-3")
    call(palace, "delete_drawer", {"drawer_id": palace.drawers.ids[gap]})
    mended = plan_index(root, chunk_size=len(BLOCK), palace=palace)
    assert mended.summary["healed"] == ["app.log"]
    assert [c.args["source_file"] for c in mended.calls] == ["app.log#chunk-3"]
    apply(mended, bind(palace))
    assert rebuilt_files(palace, "p")["app.log"] == text.encode()
    assert reassemble([]) is None


# -- hostile folders: clear results, never a traceback or a hang ---------------------------------

def test_a_backwards_range_in_a_gitignore_matches_nothing(tmp_path):
    root = tree(tmp_path / "p", {".gitignore": "[z-a]\n[!z-a]x\n*.log\n", "m": "kept",
                                 "ax": "ignored by [!z-a]x", "b.log": "ignored"})
    assert compile_rule("[z-a]").matches("m", False) is False
    assert indexed(plan_index(root)) == ["m"]


def test_globs_with_many_stars_do_not_backtrack(tmp_path):
    """``a*a*…a*b`` against a long name of a's backtracked exponentially in a regex."""
    pattern = "a*" * 22 + "b"
    root = tree(tmp_path / "p", {"a" * 60: "no b in the name", "a" * 30 + "b": "matches"})
    plan = plan_index(root, exclude=[pattern])
    assert indexed(plan) == ["a" * 60]
    assert compile_rule(pattern).matches("a/" + "a" * 200, False) is False
    (root / ".gitignore").write_text(pattern + "\n", encoding="utf-8")
    assert indexed(plan_index(root)) == ["a" * 60]


def test_names_that_are_not_utf8_are_skipped_and_named(tmp_path):
    import json
    import os

    root = tree(tmp_path / "p", {"ok.md": "fine"})
    bad = os.fsencode(root) + b"/caf\xe9.md"
    with open(bad, "wb") as f:
        f.write(b"latin-1 name")
    os.mkdir(os.fsencode(root) + b"/d\xfcr")
    with open(os.fsencode(root) + b"/d\xfcr/inner.md", "wb") as f:
        f.write(b"inside a folder whose name is not UTF-8")
    plan = plan_index(root)
    assert indexed(plan) == ["ok.md"]
    reasons = {s["item"]: s["reason"] for s in plan.summary["skipped"]}
    assert reasons == {"caf\ufffd.md": "file name is not UTF-8",
                       "d\ufffdr/": "folder name is not UTF-8"}
    json.dumps(plan.summary, ensure_ascii=False).encode()
    palace = Palace()
    apply(plan, bind(palace))
    assert palace.counts()["drawers"] == 1


def _remove_tree(top):
    """Delete a folder tree without recursion (shutil.rmtree, which pytest uses to clean
    its temporary folders, recurses once a level and fails on 1,100 of them)."""
    import os

    stack = [top]
    while stack:
        with os.scandir(stack[-1]) as it:
            entries = list(it)
        folders = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        for e in entries:
            if not e.is_dir(follow_symlinks=False):
                os.unlink(e.path)
        if folders:
            stack.extend(folders)
        else:
            os.rmdir(stack.pop())


def test_deeply_nested_folders_are_walked(tmp_path):
    import os

    root = tree(tmp_path / "p", {"top.md": "top"})
    deep = str(root / "d")
    os.mkdir(deep)
    try:
        for _ in range(1099):  # os.makedirs recurses once a level itself
            deep = os.path.join(deep, "d")
            os.mkdir(deep)
        with open(os.path.join(deep, "bottom.md"), "w", encoding="utf-8") as f:
            f.write("at the bottom")
        plan = plan_index(root)
        assert indexed(plan) == ["top.md"]
        bottom = "/".join(["d"] * 1100) + "/bottom.md"
        assert [s["reason"] for s in plan.summary["skipped"] if s["item"] == bottom] == \
            ["no usable room name (folder path too long?)"]
    finally:
        _remove_tree(str(root / "d"))
    shallow = os.path.join(str(root), *(["e"] * 40))
    os.makedirs(shallow)
    with open(os.path.join(shallow, "mid.md"), "w", encoding="utf-8") as f:
        f.write("forty folders down")
    assert "/".join(["e"] * 40) + "/mid.md" in indexed(plan_index(root))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_sockets_and_devices_are_named_never_opened(tmp_path, in_time):
    """A FIFO among the notes is left out with the reason (it used to vanish without a
    word), and one put in place of a file after the walk listed it is refused on opening
    without waiting for a writer."""
    import socket

    root = tree(tmp_path / "p", {"ok.txt": "plain", "sub/deep.md": "deep"})
    fifo = root / "sub" / "pipe.md"
    os.mkfifo(fifo)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(root / "s.sock"))
        plan = in_time(lambda: plan_index(root), fifo)
    finally:
        sock.close()
    assert indexed(plan) == ["ok.txt", "sub/deep.md"]
    assert {s["item"]: s["reason"] for s in plan.summary["skipped"]} == {
        "sub/pipe.md": "not a regular file (a FIFO)",
        "s.sock": "not a regular file (a socket)"}
    from palazzo.importers.folder import _read

    assert in_time(lambda: _read(fifo, 1 << 20), fifo) == (
        None, "unreadable: not a regular file (a FIFO)", False)

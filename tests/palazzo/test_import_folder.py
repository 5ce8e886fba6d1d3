"""Folder importer: layout, .gitignore (nested, negation), binaries, encodings, chunking with
positions, unchanged files, changed files and --sync pruning."""

import pytest

from palazzo.errors import ImportRejected, ValidationError
from palazzo.importers import apply
from palazzo.importers.folder import (
    IgnoreRules,
    compile_rule,
    parse_rules,
    plan_index,
    split_source_file,
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
    assert rooms == {"README.md": "README", "home/garden.md": "home",
                     "work/meetings/monday.md": "work/meetings", "work/todo.txt": "work"}
    assert all(c.args["source"] == "index" and "closet" not in c.args for c in plan.calls)
    palace = Palace()
    apply(plan, palace.call)
    assert drawers(palace)["work/todo.txt"] == ("notes", "work", "Write the importer.")
    counts = palace.counts()
    assert apply(plan_index(root), palace.call)["created"] == {}
    assert palace.counts() == counts
    other = plan_index(root, wing="Personal notes")
    assert {c.args["wing"] for c in other.calls} == {"Personal notes"}


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
    assert contents["bom.txt"] == "with a byte order mark"
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
    apply(plan, palace.call)
    assert palace.counts()["drawers"] == len(chunks) + 1
    assert palace.closets[("p", "docs", "big.md")]


def test_unchanged_files_are_skipped_and_changed_ones_replaced(tmp_path):
    root = tree(tmp_path / "p", {"a.md": "alpha", "sub/b.md": long_text(12),
                                 "sub/c.md": "gamma"})
    palace = Palace()
    apply(plan_index(root, chunk_size=500), palace.call)
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
    apply(changed, palace.call)
    assert palace.counts()["drawers"] == before["drawers"] - 1
    got = drawers(palace)
    assert got["a.md"][2] == "alpha, revised"
    assert all(d not in palace.drawers.row_of for d in deleted)
    assert len(plan_index(root, chunk_size=500, palace=palace)) == 0


def test_sync_prunes_drawers_of_deleted_files_only(tmp_path):
    root = tree(tmp_path / "p", {"a.md": "alpha", "b.md": "beta", "old/c.md": long_text(8)})
    palace = Palace()
    apply(plan_index(root, chunk_size=500), palace.call)
    palace.call("add_drawer", {"wing": "p", "room": "old", "content": "typed by hand",
                               "source_file": "old/c.md"})
    palace.call("add_drawer", {"wing": "elsewhere", "room": "old", "content": "other wing",
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
    apply(plan, palace.call)
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
    with pytest.raises(ImportRejected, match="x/b.md: add_drawer arguments.content"):
        builder.finish()
    builder = PlanBuilder("x", "folder")
    builder.add("add_drawer", {"wing": "w", "room": "r", "content": "x", "extra": 1}, "x/c.md")
    with pytest.raises(ImportRejected, match="x/c.md: .*unknown field"):
        builder.finish()
    assert isinstance(Plan([Call("add_wing", {"name": "w"})], {}).pairs()[0], tuple)


def test_compares_with_a_journaled_store(tmp_path):
    from palazzo.persistence import PalaceStore
    from palazzo.storage import MemorySpace

    root = tree(tmp_path / "p", {"a.md": "alpha", "b/c.md": "gamma"})
    store = PalaceStore(MemorySpace(), lambda **kw: Palace(**kw))
    apply(plan_index(root), store.call)
    assert store.status.journal_records == 2
    assert len(plan_index(root, palace=store, sync=True)) == 0
    (root / "a.md").unlink()
    apply(plan_index(root, palace=store, sync=True), store.call)
    assert [store.palace.drawers.source_file[r] for r in store.palace.drawers.live_rows()] \
        == ["b/c.md"]

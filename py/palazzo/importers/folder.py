"""Index a folder of text files as drawers.

Layout (documented rule):

- **wing**: ``wing`` if given, else the name of the folder being indexed.
- **room**: the file's parent folder relative to the indexed folder (posix, e.g.
  ``docs/api``); a file directly in the indexed folder gets the room of its stem
  (``README.md`` -> ``README``).
- **drawer**: the file's text, verbatim. ``source`` is ``"index"`` and ``source_file`` the
  file's path relative to the indexed folder (posix).
- **large files** (more than ``chunk_size`` characters) are cut into consecutive,
  non-overlapping pieces at paragraph, sentence or word boundaries
  (:func:`palazzo.chunking.spans` with no overlap, so the pieces concatenate to the file).
  Each piece is a drawer in the file's room, in the closet named after the file
  (``notes.md``), with ``source_file`` ``<path>#chunk-<k>`` (k counts from 1 in file order).
  The text itself is never prefixed, so drawers stay verbatim.

What is read: every regular file under the folder except ``.git`` directories, symbolic
links (never followed, so a link cannot loop or leave the folder), ``.gitignore`` files
themselves, files matched by a ``.gitignore`` (the root one and nested ones; see
:class:`IgnoreRules`), files matched by ``exclude`` or, when ``include`` is given, not matched
by it, binary files (a NUL byte in the first 8 KiB), files over ``max_bytes`` and empty
files. Text that is not valid UTF-8 is **decoded with replacement characters** (U+FFFD) and
the file is listed under ``decoded_with_replacement`` in the summary; a UTF-8 byte order mark
is dropped.

Against an existing palace (``palace`` given), a file whose drawers are already there with
the same text is skipped as unchanged; a changed file gets its new drawers and its stale
drawers deleted (only drawers of this wing with source ``"index"``). With ``sync=True``,
drawers of this wing with source ``"index"`` whose file no longer exists under the folder are
deleted too. So a wing is the image of one folder: index different folders into different
wings (a drawer's ``source_file`` is relative to the folder it came from).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palazzo.chunking import spans
from palazzo.errors import ImportRejected, ValidationError
from palazzo.importers import Plan, PlanBuilder, planned_drawer_id, usable_name
from palazzo.model import clean_name

SOURCE = "index"
CHUNK_MARK = "#chunk-"
DEFAULT_CHUNK = 4000  # characters: a memory-sized piece; the palace embeds it in ~5 windows
BINARY_PROBE = 8192
MAX_BYTES = 20 << 20
GITIGNORE = ".gitignore"

__all__ = ["IgnoreRules", "Rule", "compile_rule", "plan_index", "split_source_file"]


# -- gitignore patterns --------------------------------------------------------------------------

@dataclass(slots=True, frozen=True)
class Rule:
    """One gitignore pattern, compiled: it matches a path relative to its file's folder."""

    pattern: str
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Whether this pattern matches ``rel`` (posix, relative to its .gitignore)."""
        return (is_dir or not self.dir_only) and self.regex.match(rel) is not None


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces are ignored unless the last one is escaped with a backslash."""
    end = len(line)
    while end and line[end - 1] == " ":
        backslashes = 0
        k = end - 2
        while k >= 0 and line[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2:
            break
        end -= 1
    return line[:end]


def _class(pattern: str, i: int) -> tuple[str, int] | None:
    """Translate the bracket expression starting at ``pattern[i] == "["``; None if unclosed."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    start = j
    if j < len(pattern) and pattern[j] == "]":
        j += 1  # a "]" first in the class is a literal
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return None
    body = "".join("\\" + ch if ch in "\\^[]" else ch for ch in pattern[start:j])
    return f"(?!/)[{'^' if negate else ''}{body}]", j + 1


def _translate(pattern: str) -> str:
    """Return the regex body of a gitignore glob (``*``, ``?``, ``[...]``, ``**``, ``\\``)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if i == 0 and pattern.startswith("**/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**/", i):
            out.append("/(?:.*/)?")
            i += 4
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pattern[i] == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (cls := _class(pattern, i)) is not None:
            out.append(cls[0])
            i = cls[1]
        elif pattern[i] == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def compile_rule(line: str, allow_negation: bool = True) -> Rule | None:
    """Return the :class:`Rule` of one gitignore line, or None for blanks and comments.

    Follows gitignore(5): ``#`` starts a comment (``\\#`` is a literal), ``!`` negates
    (``\\!`` is a literal), a trailing ``/`` matches directories only, a ``/`` at the start
    or in the middle anchors the pattern to the .gitignore's folder (otherwise it matches at
    any depth), ``*`` and ``?`` never match ``/``, ``**/`` matches any leading folders,
    ``/**`` everything inside, ``/**/`` zero or more folders.
    """
    line = _strip_trailing_spaces(line.rstrip("\r\n"))
    if not line or line.startswith("#"):
        return None
    original = line
    negate = False
    if line.startswith("!") and allow_negation:
        negate, line = True, line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    anchored = "/" in line
    if line.startswith("/"):
        line = line[1:]
    regex = ("^" if anchored else "^(?:.*/)?") + _translate(line) + "$"
    return Rule(original, re.compile(regex, re.DOTALL), negate, dir_only)


def parse_rules(text: str) -> list[Rule]:
    """Return the rules of a .gitignore's text, in file order."""
    return [r for r in (compile_rule(line) for line in text.splitlines()) if r is not None]


@dataclass(slots=True, frozen=True)
class IgnoreRules:
    """The .gitignore files in force for one folder: (folder relative to the root, rules),
    outermost first.

    A path is ignored when the last rule that matches it — reading outer files before
    inner ones, each top to bottom — is not a negation. Ignored folders are never entered,
    so (as in git) a file inside an ignored folder cannot be re-included by ``!``.
    """

    files: tuple[tuple[str, tuple[Rule, ...]], ...] = ()

    def with_file(self, base: str, rules: list[Rule]) -> IgnoreRules:
        """Return these rules plus those of the .gitignore in folder ``base``."""
        return IgnoreRules((*self.files, (base, tuple(rules)))) if rules else self

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the path ``rel`` (posix, relative to the root) is ignored. O(rules)."""
        state = False
        for base, rules in self.files:
            if base:
                if not rel.startswith(base + "/"):
                    continue
                sub = rel[len(base) + 1:]
            else:
                sub = rel
            for rule in rules:
                if rule.matches(sub, is_dir):
                    state = not rule.negate
        return state


def _any_match(rules: list[Rule], rel: str, is_dir: bool) -> bool:
    return any(r.matches(rel, is_dir) for r in rules)


def _compile_globs(patterns: Iterable[str] | None, what: str) -> list[Rule]:
    if patterns is None:
        return []
    if isinstance(patterns, str):
        patterns = [patterns]
    out = []
    for p in patterns:
        if not isinstance(p, str):
            raise ValidationError(f"{what} patterns must be strings, got {p!r}")
        rule = compile_rule(p, allow_negation=False)
        if rule is not None:
            out.append(rule)
    return out


# -- walking -------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Walk:
    root: Path
    include: list[Rule]
    exclude: list[Rule]
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def files(self) -> Iterator[tuple[str, Path]]:
        """Yield (relative posix path, path) of every file to read, in sorted order."""
        yield from self._visit(self.root, "", IgnoreRules())

    def _visit(self, folder: Path, rel_dir: str, rules: IgnoreRules) -> Iterator[tuple[str, Path]]:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as err:
            self.skipped.append((rel_dir or ".", f"unreadable folder: {err.strerror}"))
            return
        gitignore = folder / GITIGNORE
        if gitignore.is_file() and not gitignore.is_symlink():
            text = gitignore.read_bytes().decode("utf-8", errors="replace")
            rules = rules.with_file(rel_dir, parse_rules(text))
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_symlink():
                self.skipped.append((rel, "symlink (not followed)"))
            elif entry.is_dir():
                if entry.name == ".git":
                    continue
                if rules.ignored(rel, True):
                    self.skipped.append((rel + "/", "gitignored"))
                elif _any_match(self.exclude, rel, True):
                    self.skipped.append((rel + "/", "excluded"))
                else:
                    yield from self._visit(Path(entry.path), rel, rules)
            elif entry.is_file():
                if entry.name == GITIGNORE:
                    continue
                if rules.ignored(rel, False):
                    self.skipped.append((rel, "gitignored"))
                elif _any_match(self.exclude, rel, False):
                    self.skipped.append((rel, "excluded"))
                elif self.include and not _any_match(self.include, rel, False):
                    self.skipped.append((rel, "not included"))
                else:
                    yield rel, Path(entry.path)


# -- planning --------------------------------------------------------------------------------------

@dataclass(slots=True)
class _File:
    """A file read and cut: its place and the drawers it becomes."""

    rel: str
    room: str
    pieces: list[tuple[int, str]]  # (position from 1, text); position 0: the whole file
    ids: list[str]


def split_source_file(source_file: str) -> tuple[str, int]:
    """Return (file path, chunk position) of an indexed drawer's ``source_file``; position
    0 means the drawer is the whole file."""
    base, mark, k = source_file.rpartition(CHUNK_MARK)
    if mark and k.isdigit() and base:
        return base, int(k)
    return source_file, 0


def _room_of(rel: str) -> str:
    parent, _, name = rel.rpartition("/")
    return parent if parent else (Path(name).stem or name)


def _read(path: Path, rel: str, max_bytes: int) -> tuple[str | None, str | None, bool]:
    """Return (text, reason it is skipped, decoded with replacement)."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, f"too large ({size} bytes > {max_bytes})", False
        data = path.read_bytes()
    except OSError as err:
        return None, f"unreadable: {err.strerror}", False
    if b"\x00" in data[:BINARY_PROBE]:
        return None, "binary (NUL byte in the first 8 KiB)", False
    try:
        return data.decode("utf-8-sig"), None, False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff"), None, True


def _existing(palace: Any, wing: str) -> dict[str, dict[str, int]]:
    """Return {file path: {drawer id: chunk position}} of the wing's indexed drawers."""
    out: dict[str, dict[str, int]] = {}
    s = getattr(palace, "palace", palace).drawers  # a PalaceStore or the Palace itself
    for r in s.live_rows():
        if s.wing[r] == wing and s.source[r] == SOURCE:
            base, k = split_source_file(s.source_file[r])
            out.setdefault(base, {})[s.ids[r]] = k
    return out


def plan_index(
    path: str | os.PathLike[str],
    wing: str | None = None,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    sync: bool = False,
    palace: Any = None,
    chunk_size: int = DEFAULT_CHUNK,
    max_bytes: int = MAX_BYTES,
) -> Plan:
    """Return the plan that indexes the text files under ``path`` into ``wing``.

    ``include``/``exclude`` are gitignore-style globs matched against paths relative to
    ``path`` (``*.md`` at any depth, ``docs/**`` under ``docs``; a trailing ``/`` matches
    folders); ``exclude`` wins. ``palace`` (a :class:`~palazzo.palace.Palace` or a
    :class:`~palazzo.persistence.PalaceStore`) lets unchanged files be skipped and stale
    drawers of changed files be deleted; ``sync`` (which needs ``palace``) also deletes
    drawers of files that no longer exist. The plan adds first and deletes last, so an
    interrupted apply never loses text.
    Cost: one read of every candidate file; O(drawers of the palace) for the comparison.
    """
    root = Path(path)
    if not root.is_dir():
        raise ImportRejected(f"{root}: not a folder")
    if chunk_size < 100:
        raise ValidationError("chunk_size must be at least 100 characters")
    if sync and palace is None:
        raise ValidationError("sync needs the palace to compare with (pass palace=…)")
    wing_name = usable_name(wing if wing is not None else root.resolve().name)
    if wing_name is None:
        raise ValidationError(f"cannot use {wing!r} (or the folder name) as a wing name; "
                              "pass wing=…")
    wing_name = clean_name(wing_name, "wing")
    walk = _Walk(root, _compile_globs(include, "include"), _compile_globs(exclude, "exclude"))
    builder = PlanBuilder(str(root), "folder")
    replaced: list[str] = []
    files: list[_File] = []
    for rel, file_path in walk.files():
        text, reason, lossy = _read(file_path, rel, max_bytes)
        if text is None:
            builder.skip(rel, reason or "unreadable")
            continue
        if not text.strip():
            builder.skip(rel, "empty")
            continue
        room = usable_name(_room_of(rel))
        if room is None:
            builder.skip(rel, "no usable room name (folder path too long?)")
            continue
        if lossy:
            replaced.append(rel)
        if len(text) <= chunk_size:
            pieces = [(0, text)]
        else:
            pieces = [(k, text[a:b]) for k, (a, b) in enumerate(spans(text, chunk_size, 0), 1)
                      if text[a:b].strip()]
        files.append(_File(rel, room, pieces,
                           [planned_drawer_id(p, wing_name, room) for _, p in pieces]))
    for item, reason in walk.skipped:
        builder.skip(item, reason)

    existing = _existing(palace, wing_name) if palace is not None else {}
    planned = {i for f in files for i in f.ids}
    unchanged: list[str] = []
    changed: list[str] = []
    stale: list[tuple[str, str]] = []
    for f in files:
        before = existing.get(f.rel, {})
        if palace is not None and set(before) == set(f.ids):
            unchanged.append(f.rel)
            continue
        if before:
            changed.append(f.rel)
            stale += [(f.rel, d) for d in sorted(before) if d not in planned]
        for (k, piece), did in zip(f.pieces, f.ids, strict=True):
            if did in before:
                continue
            args: dict[str, Any] = {"wing": wing_name, "room": f.room, "content": piece,
                                    "source": SOURCE, "source_file": f.rel}
            if k:
                args["source_file"] = f"{f.rel}{CHUNK_MARK}{k}"
                args["closet"] = usable_name(Path(f.rel).name) or "file"
            builder.add("add_drawer", args, f"{root}/{f.rel}" + (f" chunk {k}" if k else ""))
    for rel, did in stale:
        builder.add("delete_drawer", {"drawer_id": did}, f"{root}/{rel} (changed)")
    pruned: list[str] = []
    if sync:
        for base, ids in sorted(existing.items()):
            if _exists_under(root, base):
                continue
            pruned.append(base)
            for did in sorted(ids):
                if did not in planned:
                    builder.add("delete_drawer", {"drawer_id": did}, f"{root}/{base} (gone)")
    return builder.finish(
        wing=wing_name,
        files=len(files),
        indexed=len(files) - len(unchanged),
        unchanged=unchanged,
        changed=changed,
        chunked={f.rel: len(f.pieces) for f in files if f.pieces[0][0]},
        drawers_added=sum(c.name == "add_drawer" for c in builder.calls),
        drawers_deleted=sum(c.name == "delete_drawer" for c in builder.calls),
        pruned_files=pruned,
        decoded_with_replacement=replaced,
    )


def _exists_under(root: Path, rel: str) -> bool:
    """Whether ``rel`` names an existing file under ``root`` (never outside it)."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts or "" in parts:
        return False
    return (root / Path(*parts)).is_file()

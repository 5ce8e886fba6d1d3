"""Index a folder of text files as drawers.

Layout (documented rule):

- **wing**: ``wing`` if given, else the name of the folder being indexed.
- **room**: the file's folder relative to the indexed folder, posix (``docs/api``); the
  files directly in the indexed folder share the room named after that folder itself
  (:func:`top_room`: ``notes`` for ``~/notes/a.md``; ``.``, :data:`TOP_ROOM`, only when
  the folder's name cannot name a room). So rooms are folders, never files: a flat folder
  of 5,000 files is one room of 5,000 drawers, told apart by their files (each drawer's
  ``source_file``, which search results and the drawer view show), and a file's room
  depends on its own path and the folder's name alone — adding or removing other files
  never moves it (a rule that gave each file a room only while a folder held few would move
  them all, and re-key their drawers, the day one file too many arrived). A subfolder
  directly under the indexed folder with the folder's own name (``notes/notes/``) shares
  that room; its files keep their own paths.
- **drawer**: the file's text, verbatim. ``source`` is ``"index"`` and ``source_file`` the
  file's path relative to the indexed folder (posix). Every drawer is added with the
  identity key ``<path>#<position>`` (:func:`chunk_key`), so its id is content + wing + room
  + file + position: text repeated inside a file, or identical files in one room, are kept
  as often as they occur.
- **large files** (more than ``chunk_size`` characters) are cut into consecutive,
  non-overlapping pieces at paragraph, sentence or word boundaries
  (:func:`palazzo.core.chunking.spans` with no overlap); a piece that is only whitespace joins
  the piece before it. Each piece is a drawer in the file's room, in the closet named after
  the file (``notes.md``), with ``source_file`` ``<path>#chunk-<k>`` (k counts from 1 in file
  order). The text itself is never prefixed, so drawers stay verbatim.
- **reassembly**: a file is rebuilt by ordering its drawers by the position in their
  ``source_file`` (0 alone, or 1..n) and joining their texts (:func:`reassemble`); for a
  UTF-8 file the result is the file byte for byte (line endings and a byte order mark are
  kept).

What is read: every regular file under the folder except ``.git`` directories, symbolic
links (never followed, so a link cannot loop or leave the folder), ``.gitignore`` files
themselves, files matched by a ``.gitignore`` (the root one and nested ones; see
:class:`IgnoreRules`), files matched by ``exclude`` or, when ``include`` is given, not matched
by it, binary files (a NUL byte in the first 8 KiB), files over ``max_bytes``, empty files,
FIFOs, sockets and devices (never opened: opening a FIFO would wait for a writer forever)
and files or folders whose names are not UTF-8 (each named in the summary with the reason).
Text that is not valid UTF-8 is **decoded with replacement characters** (U+FFFD) and the
file is listed under ``decoded_with_replacement`` in the summary (such a file cannot be
rebuilt byte for byte). Folders are walked without recursion, so any depth is read.

Against an existing palace (``palace`` given), a file whose stored drawers reassemble to
exactly its text is skipped as unchanged; any other file gets its missing drawers and its
stale ones deleted (only drawers of this wing with source ``"index"``) — a changed file, or
one whose stored drawers no longer rebuild it (listed as ``healed``). With ``sync=True``,
drawers of this wing with source ``"index"`` whose file no longer exists under the folder
are deleted too. So a wing is the image of one folder: index different folders into
different wings (a drawer's ``source_file`` is relative to the folder it came from).

A file whose stored drawers rebuild its text but lie in another room than the rule gives
(``moved``) is indexed again in its room and its old drawers deleted — as a changed file is.
That is what re-indexing a palace made before rooms were folders does: a file that was
directly in the indexed folder had the room of its stem (``README.md`` in ``README``), or
later the room ``.``, and its drawers move to the folder's room. Nothing is dropped:
drawer ids include the room, so the new drawers are added first and the old ones deleted
after every add of the plan (an interrupted apply leaves both; the next index finishes the
move). What hung on the old drawer ids (pheromone, SIMILAR_TO edges, links made by hand)
does not move with them, and the old rooms stay, empty (palazzo has no operation that
deletes a room).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palazzo.core.chunking import spans
from palazzo.core.model import MAX_CONTENT, MAX_KEY, clean_name
from palazzo.errors import ImportRejected, ValidationError
from palazzo.importers import Plan, PlanBuilder, planned_drawer_id, usable_name
from palazzo.importers._files import irregular, read_regular
from palazzo.memory.sources import CHUNK_MARK, split_source_file

SOURCE = "index"
TOP_ROOM = "."  # the top files' room when the folder's name cannot name one (see top_room)
DEFAULT_CHUNK = 4000  # characters: a memory-sized piece; the palace embeds it in ~5 windows
BINARY_PROBE = 8192
MAX_BYTES = 20 << 20
GITIGNORE = ".gitignore"

__all__ = ["TOP_ROOM", "IgnoreRules", "Rule", "StoredPiece", "chunk_key", "compile_rule",
           "plan_index", "reassemble", "room_of", "split_source_file", "top_room"]


# -- gitignore patterns --------------------------------------------------------------------------

# A glob is matched segment by segment (a path split at "/"), never through a backtracking
# regex: ``a*a*a*…b`` against a long name is exponential in Python's ``re``, and a .gitignore
# or an --exclude is user input. Within a segment the stars are matched greedily leftmost
# (each fixed piece between stars at its first fit), which is exact for globs and costs
# O(len(name) x len(pattern)); across segments a set of reachable positions handles ``**``.

_STAR = ("*",)
_ANY = ("?",)
_SEP = ("/",)
# A token: ("c", char), _ANY, _STAR, or ("[", negate, ((lo, hi), …)). A segment: one of
# the globstars (zero or more whole folders; one or more, for a trailing "/**") or the
# pieces between its stars, each a plain string or a tuple of tokens (one piece: no star).
_GLOBSTAR = "**"
_GLOBSTAR_ONE = "**+"
Token = tuple[Any, ...]
Piece = str | tuple[Token, ...]
Segment = tuple[Piece, ...] | str


@dataclass(slots=True, frozen=True)
class Rule:
    """One gitignore pattern, compiled: it matches a path relative to its file's folder."""

    pattern: str
    segments: tuple[Segment, ...]
    negate: bool
    dir_only: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Whether this pattern matches ``rel`` (posix, relative to its .gitignore).
        Cost: O(segments of the path x segments of the pattern x their lengths)."""
        return (is_dir or not self.dir_only) and _match_path(self.segments, rel.split("/"))


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


def _class(pattern: str, i: int) -> tuple[Token, int] | None:
    """Return (class token, index after it) of the bracket expression at ``pattern[i] ==
    "["``, or None when it is not closed (then "[" is a literal). A range written backwards
    (``[z-a]``) matches nothing, as in git; ``\\x`` inside is a literal x."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    start = j
    if j < len(pattern) and pattern[j] == "]":
        j += 1  # a "]" first in the class is a literal
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" and j + 1 < len(pattern) else 1
    if j >= len(pattern):
        return None
    chars: list[str] = []
    k = start
    while k < j:
        if pattern[k] == "\\" and k + 1 < j:
            k += 1
        chars.append(pattern[k])
        k += 1
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(chars):
        if k + 2 < len(chars) and chars[k + 1] == "-":
            ranges.append((chars[k], chars[k + 2]))  # lo > hi: an empty range
            k += 3
        else:
            ranges.append((chars[k], chars[k]))
            k += 1
    return ("[", negate, tuple(ranges)), j + 1


def _tokens(pattern: str) -> list[Token]:
    """Return the tokens of a gitignore glob: literals, ``?``, ``*`` runs, classes, "/"."""
    out: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            run = i
            while i < n and pattern[i] == "*":
                i += 1
            out.append(("**",) if i - run >= 2 else _STAR)
        elif ch == "?":
            out.append(_ANY)
            i += 1
        elif ch == "[" and (cls := _class(pattern, i)) is not None:
            out.append(cls[0])
            i = cls[1]
        elif ch == "\\" and i + 1 < n:
            out.append(_SEP if pattern[i + 1] == "/" else ("c", pattern[i + 1]))
            i += 2
        elif ch == "/":
            out.append(_SEP)
            i += 1
        else:
            out.append(("c", ch))
            i += 1
    return out


def _segments(pattern: str) -> list[Segment]:
    """Split a glob into segments; a whole-segment ``**`` becomes a globstar (leading or
    inner: zero or more folders; trailing: everything inside), any other ``**`` a ``*``.
    Each other segment is stored as its pieces between stars (see :data:`Segment`)."""
    parts: list[list[Token]] = [[]]
    for t in _tokens(pattern):
        if t == _SEP:
            parts.append([])
        else:
            parts[-1].append(t)
    out: list[Segment] = []
    last = len(parts) - 1
    for j, part in enumerate(parts):
        if part == [("**",)] and last > 0:
            out.append(_GLOBSTAR_ONE if j == last else _GLOBSTAR)
            continue
        pieces: list[list[Token]] = [[]]
        for t in part:
            if t in (_STAR, ("**",)):
                pieces.append([])
            else:
                pieces[-1].append(t)
        out.append(tuple(_piece(p) for p in pieces))
    return out


def _piece(tokens: list[Token]) -> Piece:
    """A run of tokens between stars: a plain string when every token is a literal (matched
    with the string methods), else the tokens."""
    if all(t[0] == "c" for t in tokens):
        return "".join(t[1] for t in tokens)
    return tuple(tokens)


def _char_matches(t: Token, ch: str) -> bool:
    if t[0] == "c":
        return t[1] == ch
    if t[0] == "?":
        return True
    return t[1] != any(lo <= ch <= hi for lo, hi in t[2])


def _fits(piece: Piece, name: str, at: int) -> bool:
    if isinstance(piece, str):
        return name.startswith(piece, at)
    return all(_char_matches(t, name[at + k]) for k, t in enumerate(piece))


def _find(piece: Piece, name: str, pos: int, end: int) -> int:
    """Return the first index >= ``pos`` where ``piece`` fits wholly before ``end``, or -1."""
    if isinstance(piece, str):
        return name.find(piece, pos, end)
    while pos + len(piece) <= end:
        if _fits(piece, name, pos):
            return pos
        pos += 1
    return -1


def _match_segment(pieces: tuple[Piece, ...], name: str) -> bool:
    """Whether one path segment ``name`` matches a segment's pieces (the runs between its
    stars). Greedy leftmost placement of the middle pieces; O(len(name) x pattern)."""
    if len(pieces) == 1:
        return len(name) == len(pieces[0]) and _fits(pieces[0], name, 0)
    first, last = pieces[0], pieces[-1]
    if len(first) + len(last) > len(name) or not _fits(first, name, 0) \
            or not _fits(last, name, len(name) - len(last)):
        return False
    pos, end = len(first), len(name) - len(last)
    for piece in pieces[1:-1]:
        pos = _find(piece, name, pos, end)
        if pos < 0:
            return False
        pos += len(piece)
    return True


def _match_path(segments: tuple[Segment, ...], names: list[str]) -> bool:
    """Whether the path segments ``names`` match the pattern's segments: the set of path
    positions each pattern segment can end at, left to right. A pattern whose only globstar
    leads (``*.log``, ``a/b``) can only match the path's last segments, so only those are
    compared."""
    if segments and segments[0] == _GLOBSTAR and _GLOBSTAR not in segments[1:] \
            and _GLOBSTAR_ONE not in segments:
        tail = segments[1:]
        return len(tail) <= len(names) and all(
            isinstance(seg, tuple) and _match_segment(seg, name)
            for seg, name in zip(tail, names[len(names) - len(tail):], strict=True))
    reach = {0}
    for seg in segments:
        if not reach:
            return False
        if seg == _GLOBSTAR:
            reach = set(range(min(reach), len(names) + 1))
        elif seg == _GLOBSTAR_ONE:
            reach = set(range(min(reach) + 1, len(names) + 1))
        else:
            reach = {i + 1 for i in reach if i < len(names) and _match_segment(seg, names[i])}
    return len(names) in reach


def compile_rule(line: str, allow_negation: bool = True) -> Rule | None:
    """Return the :class:`Rule` of one gitignore line, or None for blanks and comments.

    Follows gitignore(5): ``#`` starts a comment (``\\#`` is a literal), ``!`` negates
    (``\\!`` is a literal), a trailing ``/`` matches directories only, a ``/`` at the start
    or in the middle anchors the pattern to the .gitignore's folder (otherwise it matches at
    any depth), ``*`` and ``?`` never match ``/``, ``**/`` matches any leading folders,
    ``/**`` everything inside, ``/**/`` zero or more folders. Any line compiles: a class
    that is not closed is a literal ``[``, a backwards range matches nothing.
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
    segments = _segments(line)
    if not anchored:
        segments.insert(0, _GLOBSTAR)
    return Rule(original, tuple(segments), negate, dir_only)


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

def _printable(name: str) -> str:
    """Return a file name that is not UTF-8 (kept by Python as surrogate escapes) with its
    bad bytes as U+FFFD, so it can be shown and written to JSON."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(slots=True)
class _Walk:
    root: Path
    include: list[Rule]
    exclude: list[Rule]
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def files(self) -> Iterator[tuple[str, Path]]:
        """Yield (relative posix path, path) of every file to read, depth first in sorted
        order. Iterative (a stack of folders being listed), so any depth of nesting is
        walked. Cost: one directory listing a folder, O(rules) a path."""
        opened = self._open(self.root, "", IgnoreRules())
        if opened is None:
            return
        stack: list[tuple[Iterator[os.DirEntry[str]], str, IgnoreRules]] = [opened]
        while stack:
            entries, rel_dir, rules = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_link, is_dir = entry.is_symlink(), entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file(follow_symlinks=False)
            except OSError as err:
                self.skipped.append((_printable(rel), f"unreadable: {err.strerror}"))
                continue
            if is_link:
                self.skipped.append((_printable(rel), "symlink (not followed)"))
            elif is_dir:
                if entry.name == ".git":
                    continue
                if not _is_utf8(entry.name):
                    self.skipped.append((_printable(rel) + "/", "folder name is not UTF-8"))
                elif rules.ignored(rel, True):
                    self.skipped.append((rel + "/", "gitignored"))
                elif _any_match(self.exclude, rel, True):
                    self.skipped.append((rel + "/", "excluded"))
                elif (inner := self._open(Path(entry.path), rel, rules)) is not None:
                    stack.append(inner)
            elif not is_file:
                self.skipped.append((_printable(rel), _special(entry)))
            else:
                if entry.name == GITIGNORE:
                    continue
                if not _is_utf8(entry.name):
                    self.skipped.append((_printable(rel), "file name is not UTF-8"))
                elif rules.ignored(rel, False):
                    self.skipped.append((rel, "gitignored"))
                elif _any_match(self.exclude, rel, False):
                    self.skipped.append((rel, "excluded"))
                elif self.include and not _any_match(self.include, rel, False):
                    self.skipped.append((rel, "not included"))
                else:
                    yield rel, Path(entry.path)

    def _open(self, folder: Path, rel_dir: str, rules: IgnoreRules
              ) -> tuple[Iterator[os.DirEntry[str]], str, IgnoreRules] | None:
        """Return (sorted entries, rel_dir, rules with the folder's .gitignore) of a folder,
        or None (and a skipped item) when it cannot be listed."""
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            self.skipped.append((rel_dir or ".", f"unreadable folder: {err.strerror}"))
            return None
        gitignore = folder / GITIGNORE
        try:
            if gitignore.is_file() and not gitignore.is_symlink():
                text = read_regular(gitignore).decode("utf-8", errors="replace")
                rules = rules.with_file(rel_dir, parse_rules(text))
        except OSError as err:
            self.skipped.append((f"{rel_dir}/{GITIGNORE}" if rel_dir else GITIGNORE,
                                 f"unreadable: {err.strerror} (its rules are not applied)"))
        return iter(entries), rel_dir, rules


def _special(entry: os.DirEntry[str]) -> str:
    """Return why an entry that is neither a folder, a regular file nor a link is left out
    ("not a regular file (a FIFO)", a socket, a device). Cost: one ``stat``; not opened."""
    try:
        return irregular(entry.path) or "not a regular file"
    except OSError as err:
        return f"unreadable: {err.strerror}"


# -- planning --------------------------------------------------------------------------------------

@dataclass(slots=True)
class _File:
    """A file read and cut: its place, its text and the drawers it becomes."""

    rel: str
    room: str
    text: str
    pieces: list[tuple[int, str]]  # (position from 1, text); position 0: the whole file
    keys: list[str]
    ids: list[str]


@dataclass(slots=True, frozen=True)
class StoredPiece:
    """One indexed drawer of a file as the palace holds it."""

    position: int  # 0: the whole file; k >= 1: chunk k
    drawer_id: str
    content: str
    room: str = ""  # the room it lies in ("" when not known)


def chunk_key(rel: str, position: int) -> str:
    """Return the identity key of piece ``position`` of file ``rel`` (``"docs/a.md#3"``;
    0 for a whole file), passed to ``add_drawer`` so that the same text at two places of a
    file, or in two files of one room, is two drawers. A path too long for a key is
    replaced by its sha256."""
    key = f"{rel}#{position}"
    if len(key) <= MAX_KEY:
        return key
    return f"sha256:{hashlib.sha256(rel.encode()).hexdigest()}#{position}"


def reassemble(pieces: Iterable[StoredPiece]) -> str | None:
    """Return a file's text rebuilt from its stored drawers, or None when they cannot
    rebuild it.

    The order is the position each drawer records in its ``source_file`` (``path`` for a
    whole file, ``path#chunk-k`` for chunk k): the positions must be exactly ``0`` alone or
    ``1..n``, each once; the texts are then joined in that order with nothing between them
    (chunks are cut without overlap, so they concatenate to the file). Cost: O(text).
    """
    ordered = sorted(pieces, key=lambda p: p.position)
    positions = [p.position for p in ordered]
    if not positions or (positions != [0] and positions != list(range(1, len(ordered) + 1))):
        return None
    return "".join(p.content for p in ordered)


def top_room(root: str | os.PathLike[str]) -> str:
    """Return the room of the files directly in the folder ``root``: the folder's own
    name (``~/notes`` -> ``notes``), or :data:`TOP_ROOM` when that name cannot name a room
    (the file system's root, a name too long). Cost: one path resolution."""
    return usable_name(Path(root).resolve().name) or TOP_ROOM


def room_of(rel: str, top: str = TOP_ROOM) -> str:
    """Return the room of the file at ``rel`` (posix, relative to the indexed folder): its
    folder (``docs/api/x.md`` -> ``docs/api``), or ``top`` (the indexed folder's room,
    :func:`top_room`) for a file directly in the indexed folder. A function of the path and
    ``top`` alone. Cost: O(len(rel))."""
    return rel.rpartition("/")[0] or top


def _read(path: Path, max_bytes: int) -> tuple[str | None, str | None, bool]:
    """Return (text, reason it is skipped, decoded with replacement).

    The text is the file's, verbatim: line endings and a byte order mark are kept, so the
    drawers rebuild the file exactly (bytes that are not UTF-8 become U+FFFD, and the file
    is listed as decoded with replacement). A path that stopped being a regular file since
    it was listed is unreadable, never opened in a way that waits.
    """
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, f"too large ({size} bytes > {max_bytes})", False
        data = read_regular(path)
    except OSError as err:
        return None, f"unreadable: {err.strerror}", False
    if b"\x00" in data[:BINARY_PROBE]:
        return None, "binary (NUL byte in the first 8 KiB)", False
    try:
        return data.decode("utf-8"), None, False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), None, True


def _pieces(text: str, chunk_size: int) -> list[tuple[int, str]]:
    """Return the (position, text) pieces of a file: ``[(0, text)]`` when it fits one
    drawer, else consecutive chunks 1..n of at most about ``chunk_size`` characters that
    concatenate to the text. A chunk that is only whitespace (a drawer must have text) is
    joined to the chunk before it (the first one to the chunk after), so nothing is
    dropped."""
    if len(text) <= chunk_size:
        return [(0, text)]
    out: list[str] = []
    for a, b in spans(text, chunk_size, 0):
        piece = text[a:b]
        if out and (not piece.strip() or not out[-1].strip()):
            out[-1] += piece
        else:
            out.append(piece)
    if len(out) == 1:
        return [(0, out[0])]
    return list(enumerate(out, 1))


def _existing(palace: Any, wing: str) -> dict[str, list[StoredPiece]]:
    """Return {file path: its stored pieces} of the wing's indexed drawers (source
    ``"index"``), the position read from each drawer's ``source_file``."""
    out: dict[str, list[StoredPiece]] = {}
    s = getattr(palace, "palace", palace).drawers  # a PalaceStore or the Palace itself
    for r in s.live_rows():
        if s.wing[r] == wing and s.source[r] == SOURCE:
            base, k = split_source_file(s.source_file[r])
            out.setdefault(base, []).append(StoredPiece(k, s.ids[r], s.content[r], s.room[r]))
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
    :class:`~palazzo.persist.palacestore.PalaceStore`) lets unchanged files be skipped and stale
    drawers of changed files be deleted; ``sync`` (which needs ``palace``) also deletes
    drawers of files that no longer exist. The plan adds first and deletes last, so an
    interrupted apply never loses text.

    A file is unchanged when its stored drawers :func:`reassemble` to exactly its text and
    all lie in its room (:func:`room_of`; the files directly under ``path`` in
    :func:`top_room`); otherwise it is indexed again (``changed``;
    ``healed`` when its stored drawers could not rebuild any text — a position missing or
    repeated, as the content-addressed ids of earlier versions left files with repeated
    chunks; ``moved`` when they rebuild it in another room, as the per-file rooms and the
    room ``.`` of earlier versions did). Every drawer carries the identity key
    :func:`chunk_key` of its file and position.
    Cost: one read of every candidate file; O(text of the wing's indexed drawers) for the
    comparison.
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
    top = top_room(root)
    builder = PlanBuilder(str(root), "folder")
    replaced: list[str] = []
    files: list[_File] = []
    for rel, file_path in walk.files():
        text, reason, lossy = _read(file_path, max_bytes)
        if text is None:
            builder.skip(rel, reason or "unreadable")
            continue
        if not text.lstrip("\ufeff").strip():
            builder.skip(rel, "empty")
            continue
        room = usable_name(room_of(rel, top))
        if room is None:
            builder.skip(rel, "no usable room name (folder path too long?)")
            continue
        pieces = _pieces(text, chunk_size)
        if any(len(p) > MAX_CONTENT for _, p in pieces):
            builder.skip(rel, f"a blank run too long for a drawer (over {MAX_CONTENT} "
                              "characters)")
            continue
        if lossy:
            replaced.append(rel)
        keys = [chunk_key(rel, k) for k, _ in pieces]
        files.append(_File(rel, room, text, pieces, keys,
                           [planned_drawer_id(p, wing_name, room, key)
                            for (_, p), key in zip(pieces, keys, strict=True)]))
    for item, reason in walk.skipped:
        builder.skip(item, reason)

    existing = _existing(palace, wing_name) if palace is not None else {}
    planned = {i for f in files for i in f.ids}
    unchanged: list[str] = []
    changed: list[str] = []
    healed: list[str] = []
    moved: list[str] = []
    stale: list[tuple[str, str, str]] = []
    for f in files:
        before = existing.get(f.rel, [])
        rebuilt = reassemble(before) if before else None
        in_place = all(p.room == f.room for p in before)
        if rebuilt == f.text and in_place:
            unchanged.append(f.rel)
            continue
        before_ids = {p.drawer_id for p in before}
        if before:
            why = "changed" if rebuilt != f.text else "moved"
            if rebuilt is None:
                healed.append(f.rel)
            else:
                (changed if why == "changed" else moved).append(f.rel)
            stale += [(f.rel, d, why) for d in sorted(before_ids) if d not in planned]
        for (k, piece), key, did in zip(f.pieces, f.keys, f.ids, strict=True):
            if did in before_ids:
                continue
            args: dict[str, Any] = {"wing": wing_name, "room": f.room, "content": piece,
                                    "source": SOURCE, "source_file": f.rel, "key": key}
            if k:
                args["source_file"] = f"{f.rel}{CHUNK_MARK}{k}"
                args["closet"] = usable_name(Path(f.rel).name) or "file"
            builder.add("add_drawer", args, f"{root}/{f.rel}" + (f" chunk {k}" if k else ""))
    for rel, did, why in stale:
        builder.add("delete_drawer", {"drawer_id": did}, f"{root}/{rel} ({why})")
    pruned: list[str] = []
    if sync:
        for base, stored in sorted(existing.items()):
            if _exists_under(root, base):
                continue
            pruned.append(base)
            for did in sorted({p.drawer_id for p in stored}):
                if did not in planned:
                    builder.add("delete_drawer", {"drawer_id": did}, f"{root}/{base} (gone)")
    return builder.finish(
        wing=wing_name,
        files=len(files),
        indexed=len(files) - len(unchanged),
        unchanged=unchanged,
        changed=changed,
        healed=healed,
        moved=moved,
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

"""The assistants' settings files that ``palazzo hooks install`` writes its hooks into.

Codex (0.171) reads hooks of the same shape from ``hooks.json`` in ``$CODEX_HOME`` (else
``~/.codex``) or a project's ``.codex/``, with the same input on standard input (the session
file is its rollout) and the same ``additionalContext`` answer; it has no SessionEnd. Codex
runs a hook only once the user trusted it (``/hooks`` in codex; ``codex exec
--dangerously-bypass-hook-trust`` for one run): palazzo does not write that trust.

Claude Code reads hooks from ``settings.json``: the user's (``~/.claude/settings.json``, or
``$CLAUDE_CONFIG_DIR/settings.json``) or a project's (``<project>/.claude/settings.json``),
as ``{"hooks": {EVENT: [{"hooks": [{"type": "command", "command": …}]}]}}``; and MCP servers
from ``~/.claude.json`` (``mcpServers``, the user's scope of ``claude mcp add``) or a
project's ``.mcp.json``. :func:`plan` works out what installing (or uninstalling) changes in
each file: palazzo's entries merged beside whatever is there (other hooks, permissions,
every other key, in their order), each entry added once however often it is installed, and
uninstalling removes exactly the entries installing adds (an event left with no entry is
removed, as is a ``hooks`` object left empty). :func:`apply` writes the files (atomically,
keeping their modes) or, for ``--dry-run``, :func:`diff` shows what would change.

Installing writes the ``palazzo`` command as the absolute path of the one running (so the
assistant finds it whatever its ``PATH``), ``hook EVENT`` and ``--palace`` with the palace's
absolute path. An entry is palazzo's when its command runs a ``palazzo`` (any path, or
``python -m palazzo``) with ``hook EVENT --palace P`` for this palace: so an upgrade that
moved the executable, or an uninstall run from another installation, still finds it.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palazzo.errors import ValidationError

ASSISTANTS = ("claude-code", "codex", "gemini")
BUILT = ("claude-code", "codex")  # the ones install can write today
# The events palazzo answers (palazzo.hosts.hooks) that each assistant has, in order written.
EVENTS = ("SessionStart", "Stop", "SubagentStop", "PreCompact", "SessionEnd")
ASSISTANT_EVENTS = {"claude-code": EVENTS,
                    "codex": ("SessionStart", "Stop", "SubagentStop", "PreCompact")}
SERVER_NAME = "palazzo"  # the MCP server's name in the assistant's list


@dataclass(slots=True)
class Change:
    """One settings file: its path, its text now (None: it does not exist) and after."""

    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def palazzo_command() -> str:
    """Return the ``palazzo`` command to write into settings: the absolute path of the
    script that runs now when it is one, else of ``palazzo`` on ``PATH``, else
    ``python -m palazzo`` with this Python."""
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if here is not None and here.name == "palazzo" and here.exists():
        return shlex.quote(str(here.resolve()))
    found = shutil.which("palazzo")
    if found:
        return shlex.quote(str(Path(found).resolve()))
    return f"{shlex.quote(sys.executable)} -m palazzo"


def hook_command(event: str, palace: Path, command: str) -> str:
    """Return the hook command for ``event`` on ``palace``."""
    return f"{command} hook {event} --palace {shlex.quote(str(palace))}"


def claude_dir() -> Path:
    """Return Claude Code's user folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() if env else Path.home() / ".claude"


def codex_dir() -> Path:
    """Return Codex's user folder: ``$CODEX_HOME``, else ``~/.codex``."""
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def files(project: Path | None) -> tuple[Path, Path]:
    """Return (the hooks' settings file, the MCP servers' file) of the user's scope
    (``project`` None) or of the project folder ``project``."""
    if project is None:
        d = claude_dir()
        mcp = (d / ".claude.json") if os.environ.get("CLAUDE_CONFIG_DIR") \
            else Path.home() / ".claude.json"
        return d / "settings.json", mcp
    return project / ".claude" / "settings.json", project / ".mcp.json"


def _read(path: Path) -> tuple[str | None, dict[str, Any]]:
    """Return (the file's text, its JSON object); (None, {}) when it does not exist; raise
    ValidationError when it is not a JSON object (nothing is written then)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except OSError as err:
        raise ValidationError(f"cannot read {path}: {err.strerror}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as err:
        raise ValidationError(f"{path} is not valid JSON (line {err.lineno}, column "
                              f"{err.colno}: {err.msg}); fix it first, nothing was changed"
                              ) from None
    if not isinstance(data, dict):
        raise ValidationError(f"{path} does not hold a JSON object; nothing was changed")
    return text, data


def _text(data: dict[str, Any]) -> str | None:
    """The file's new text (indented as Claude Code writes it); None (delete the file) for
    an object left empty, as uninstalling leaves a file installing made."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n" if data else None


def is_ours(command: Any, event: str, palace: Path) -> bool:
    """Return whether ``command`` is palazzo's hook for ``event`` on ``palace``: a
    ``palazzo`` executable (any path) or ``python -m palazzo`` running ``hook EVENT
    --palace P``, whatever options follow."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    want = ["hook", event, "--palace", str(palace)]
    for i in range(1, len(words) - 3):
        if words[i:i + 4] == want:
            head = words[:i]
            return Path(head[0]).name.startswith("palazzo") or head[-2:] == ["-m", "palazzo"]
    return False


def _merge_hooks(data: dict[str, Any], commands: dict[str, str | None], install: bool,
                 path: Path, palace: Path) -> dict[str, Any]:
    """Return ``data`` with palazzo's hook entries set as asked: for each event of
    ``commands``, every entry of palazzo's on ``palace`` taken out (:func:`is_ours`), then,
    when installing, the event's command (None: none) added at the end; an event or a
    ``hooks`` object left empty is removed. An event already holding exactly the command,
    and no other of palazzo's, is left as it is."""
    hooks = data.get("hooks")
    if hooks is None:
        if not install:
            return data
        hooks = {}
    if not isinstance(hooks, dict):
        raise ValidationError(f"{path}: 'hooks' is not an object; nothing was changed")
    hooks = dict(hooks)
    for event, command in commands.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise ValidationError(f"{path}: hooks.{event} is not a list; nothing was changed")
        def ours(h: Any, event: str = event) -> bool:
            return isinstance(h, dict) and is_ours(h.get("command"), event, palace)

        present = [h["command"] for g in groups if isinstance(g, dict)
                   for h in g.get("hooks", []) if ours(h)]
        if install and command is not None and present == [command]:
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and any(ours(h) for h in g.get("hooks", [])):
                rest = [h for h in g["hooks"] if not ours(h)]
                if rest:
                    kept.append({**g, "hooks": rest})
            else:
                kept.append(g)
        if install and command is not None:
            kept.append({"hooks": [{"type": "command", "command": command}]})
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    out = dict(data)
    if hooks:
        out["hooks"] = hooks
    else:
        out.pop("hooks", None)
    return out


def _merge_mcp(data: dict[str, Any], server: dict[str, Any], install: bool, path: Path
               ) -> dict[str, Any]:
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ValidationError(f"{path}: 'mcpServers' is not an object; nothing was changed")
    servers = dict(servers or {})
    if install:
        held = servers.get(SERVER_NAME)
        if held is not None and held != server:
            raise ValidationError(f"{path} already names an MCP server {SERVER_NAME!r} "
                                  "(another palace or command); remove it first, nothing "
                                  "was changed")
        servers[SERVER_NAME] = server
    elif servers.get(SERVER_NAME) == server:
        del servers[SERVER_NAME]
    out = dict(data)
    if servers:
        out["mcpServers"] = servers
    else:
        out.pop("mcpServers", None)
    return out


def plan(assistant: str, palace: Path, install: bool = True, project: Path | None = None,
         mcp: bool = False, command: str | None = None, recall: int = 0,
         redact: bool = False) -> list[Change]:
    """Return what installing (``install``) or uninstalling palazzo's hooks for
    ``assistant`` on ``palace`` changes: one :class:`Change` a file (the hooks' settings,
    and with ``mcp`` the MCP servers' file), nothing written yet. ``recall``: tokens of
    drawers the UserPromptSubmit hook adds for each prompt (0: no such hook; installing
    again without it takes it out); ``redact``: the saving hooks take secrets out (their
    commands end with ``--redact``). Raises ValidationError
    for an assistant palazzo cannot install into yet, or a settings file that is not a
    JSON object (then nothing is written). Cost: reading the files."""
    if assistant not in ASSISTANTS:
        raise ValidationError(f"no assistant {assistant!r} (the ones palazzo knows: "
                              f"{', '.join(ASSISTANTS)})")
    if assistant not in BUILT:
        raise ValidationError(f"palazzo hooks install {assistant} is not built yet (built: "
                              f"{', '.join(BUILT)}); nothing was changed")
    palace = Path(palace).expanduser().resolve()
    command = command or palazzo_command()
    where = None if project is None else Path(project).resolve()
    if assistant == "codex":  # hooks.json in Codex's shape, which is Claude Code's
        if mcp:
            raise ValidationError("palazzo hooks install codex --mcp is not built: register "
                                  "the MCP server with `codex mcp add palazzo -- palazzo mcp "
                                  "--palace PALACE`; nothing was changed")
        settings = (codex_dir() if where is None else where / ".codex") / "hooks.json"
        servers = settings
    else:
        settings, servers = files(where)
    changes = []
    before, data = _read(settings)
    saving = " --redact" if redact else ""
    commands: dict[str, str | None] = {
        e: hook_command(e, palace, command) + ("" if e == "SessionStart" else saving)
        for e in ASSISTANT_EVENTS[assistant]}
    commands["UserPromptSubmit"] = None if recall <= 0 else \
        f"{hook_command('UserPromptSubmit', palace, command)} --recall {int(recall)}"
    after = _merge_hooks(data, commands, install, settings, palace)
    changes.append(Change(settings, before, before if after == data else _text(after)))
    if mcp:
        before, data = _read(servers)
        argv = shlex.split(command)
        server = {"type": "stdio", "command": argv[0],
                  "args": [*argv[1:], "mcp", "--palace", str(palace)]}
        after = _merge_mcp(data, server, install, servers)
        changes.append(Change(servers, before, before if after == data else _text(after)))
    return changes


def diff(changes: list[Change]) -> str:
    """Return a unified diff of every change (what ``--dry-run`` prints)."""
    out = []
    for c in changes:
        if c.changed:
            out += difflib.unified_diff((c.before or "").splitlines(keepends=True),
                                        (c.after or "").splitlines(keepends=True),
                                        str(c.path) if c.before is not None else "/dev/null",
                                        str(c.path) if c.after is not None else "/dev/null")
    return "".join(out)


def apply(changes: list[Change]) -> list[Path]:
    """Write every changed file (a new one 0600, its folder made; an existing one keeps its
    mode), each through a temporary file renamed over it, and delete a file left empty;
    return the paths written or deleted."""
    written = []
    for c in changes:
        if not c.changed:
            continue
        if c.after is None:
            c.path.unlink(missing_ok=True)
            written.append(c.path)
            continue
        c.path.parent.mkdir(parents=True, exist_ok=True)
        path = c.path.resolve() if c.path.is_symlink() else c.path  # (a dotfile manager's
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600  # link stays one)
        tmp = path.with_name(f".{path.name}.palazzo-{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(c.after)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        written.append(c.path)
    return written

"""``palazzo hooks install|uninstall claude-code``: the real command on settings files laid
out as Claude Code keeps them (a user folder named by ``CLAUDE_CONFIG_DIR``, a project's
``.claude/settings.json`` and ``.mcp.json``)."""

import json
import subprocess
import sys
from pathlib import Path

import palazzo
from palazzo.hosts import assistants

ENV = {"PYTHONPATH": str(Path(palazzo.__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"}

THEIRS = {"permissions": {"allow": ["Bash(ls)"]},
          "hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command",
                                                       "command": "notify-send done"}]}]},
          "model": "opus"}


def hooks(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**ENV, "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
           "CODEX_HOME": str(tmp_path / "codex")}
    return subprocess.run([sys.executable, "-m", "palazzo", "hooks", *argv, "--palace",
                           str(tmp_path / "my palace")], env=env, capture_output=True,
                          text=True, timeout=60)


def commands(settings: dict) -> dict[str, list[str]]:
    return {event: [h["command"] for g in groups for h in g["hooks"]]
            for event, groups in settings.get("hooks", {}).items()}


def test_install_merges_beside_what_is_there_once_and_uninstall_takes_out_exactly_it(
        tmp_path):
    user = tmp_path / "cc"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps(THEIRS, indent=2) + "\n")
    before = (user / "settings.json").read_text()
    dry = hooks(tmp_path, "install", "claude-code", "--dry-run", "--mcp")
    assert dry.returncode == 0, dry.stderr
    assert f"+++ {user / 'settings.json'}" in dry.stdout and "/dev/null" in dry.stdout
    assert (user / "settings.json").read_text() == before  # nothing written
    assert not (user / ".claude.json").exists()
    done = hooks(tmp_path, "install", "claude-code", "--mcp")
    assert done.returncode == 0, done.stderr
    settings = json.loads((user / "settings.json").read_text())
    assert list(settings) == ["permissions", "hooks", "model"]  # their order kept
    assert settings["permissions"] == THEIRS["permissions"] and settings["model"] == "opus"
    got = commands(settings)
    palace = str((tmp_path / "my palace").resolve())
    assert got["Stop"][0] == "notify-send done"  # theirs first, untouched
    for event in assistants.EVENTS:
        ours = [c for c in got[event] if " hook " in c]
        assert len(ours) == 1 and ours[0].endswith(f"hook {event} --palace '{palace}'")
    server = json.loads((user / ".claude.json").read_text())["mcpServers"]["palazzo"]
    assert server["args"][-3:] == ["mcp", "--palace", palace]
    assert oct((user / ".claude.json").stat().st_mode & 0o777) == "0o600"
    text = (user / "settings.json").read_text()
    again = hooks(tmp_path, "install", "claude-code", "--mcp")  # idempotent
    assert again.returncode == 0 and "already as asked" in again.stdout
    assert (user / "settings.json").read_text() == text
    gone = hooks(tmp_path, "uninstall", "claude-code", "--mcp")
    assert gone.returncode == 0, gone.stderr
    assert json.loads((user / "settings.json").read_text()) == THEIRS
    assert not (user / ".claude.json").exists()  # it held only what install wrote


def test_a_project_and_the_installed_hook_command_runs(tmp_path):
    """--project writes the project's files; the command it writes runs the hook (a
    SessionStart on an empty palace answers, exit 0)."""
    project = tmp_path / "proj"
    project.mkdir()
    assert hooks(tmp_path, "install", "claude-code", "--project", str(project),
                 "--mcp").returncode == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["palazzo"]["type"] == "stdio"
    assert not (tmp_path / "cc").exists()  # the user's folder untouched
    command = commands(settings)["SessionStart"][0]
    out = subprocess.run(command, shell=True, input='{"session_id": "s", "source": "startup"}',
                         env={**ENV, "HOME": str(tmp_path / "home")}, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stderr.startswith("palazzo hook SessionStart: ")


def test_bad_settings_and_unknown_assistants_change_nothing(tmp_path):
    user = tmp_path / "cc"
    user.mkdir()
    (user / "settings.json").write_text('{"hooks": [1, 2]}')
    out = hooks(tmp_path, "install", "claude-code")
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "nothing was changed" in \
        out.stderr
    assert (user / "settings.json").read_text() == '{"hooks": [1, 2]}'
    (user / "settings.json").write_text("{not json")
    out = hooks(tmp_path, "install", "claude-code")
    assert out.returncode == 1 and "not valid JSON" in out.stderr
    out = hooks(tmp_path, "install", "gemini")
    assert out.returncode == 1 and "not built yet" in out.stderr
    (user / "settings.json").write_text("{}")
    (tmp_path / "home").mkdir()
    (user / ".claude.json").write_text('{"mcpServers": {"palazzo": {"command": "other"}}}')
    out = hooks(tmp_path, "install", "claude-code", "--mcp")
    assert out.returncode == 1 and "already names an MCP server" in out.stderr
    assert (user / "settings.json").read_text() == "{}"


def test_recall_adds_a_user_prompt_submit_hook_and_installing_without_it_takes_it_out(
        tmp_path):
    user = tmp_path / "cc"
    assert hooks(tmp_path, "install", "claude-code", "--recall", "300").returncode == 0
    got = commands(json.loads((user / "settings.json").read_text()))
    assert len(got["UserPromptSubmit"]) == 1
    assert got["UserPromptSubmit"][0].endswith("--recall 300")
    assert hooks(tmp_path, "install", "claude-code", "--recall", "200").returncode == 0
    got = commands(json.loads((user / "settings.json").read_text()))
    assert [c[-12:] for c in got["UserPromptSubmit"]] == ["--recall 200"]
    assert hooks(tmp_path, "install", "claude-code").returncode == 0
    assert "UserPromptSubmit" not in commands(json.loads((user / "settings.json").read_text()))
    assert hooks(tmp_path, "install", "claude-code", "--recall", "200").returncode == 0
    assert hooks(tmp_path, "uninstall", "claude-code").returncode == 0
    assert not (user / "settings.json").exists()


def test_redact_goes_on_the_saving_hooks_commands(tmp_path):
    user = tmp_path / "cc"
    assert hooks(tmp_path, "install", "claude-code", "--redact").returncode == 0
    got = commands(json.loads((user / "settings.json").read_text()))
    assert all(got[e][0].endswith("--redact") for e in ("Stop", "PreCompact", "SessionEnd"))
    assert not got["SessionStart"][0].endswith("--redact")
    assert hooks(tmp_path, "install", "claude-code").returncode == 0  # (switched off again)
    got = commands(json.loads((user / "settings.json").read_text()))
    assert [len(v) for v in got.values()] == [1] * len(assistants.EVENTS)
    assert not any(v[0].endswith("--redact") for v in got.values())


def test_entries_of_another_palazzo_installation_are_recognised_and_a_link_stays_a_link(
        tmp_path):
    """An entry written by a palazzo at another path (an upgrade moved it) is palazzo's:
    install replaces it rather than adding a second, uninstall takes it out; another
    palace's entries and other programs' are left; a settings file that is a link (a
    dotfile manager's) is written through the link."""
    user = tmp_path / "cc"
    user.mkdir()
    palace = str((tmp_path / "my palace").resolve())
    quoted = f"'{palace}'"
    theirs = {"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": f"/old/venv/bin/palazzo hook Stop --palace "
                                                   f"{quoted} --redact"}]},
        {"hooks": [{"type": "command", "command": "/usr/bin/palazzo hook Stop --palace /other"}]},
        {"hooks": [{"type": "command", "command": f"mytool hook Stop --palace {quoted}"}]}]}}
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(json.dumps(theirs))
    (user / "settings.json").symlink_to(real)
    assert hooks(tmp_path, "install", "claude-code").returncode == 0
    assert (user / "settings.json").is_symlink()
    stop = commands(json.loads(real.read_text()))["Stop"]
    assert stop[0] == "/usr/bin/palazzo hook Stop --palace /other"
    assert stop[1].startswith("mytool ")
    assert len(stop) == 3 and stop[2].endswith(f"hook Stop --palace {quoted}")
    assert hooks(tmp_path, "uninstall", "claude-code").returncode == 0
    assert commands(json.loads(real.read_text()))["Stop"] == stop[:2]


def test_codex_gets_its_hooks_json_and_is_told_to_trust_them(tmp_path):
    """Codex: ``$CODEX_HOME/hooks.json`` (Claude Code's shape; no SessionEnd in Codex), the
    reminder that Codex runs them once trusted, and uninstall taking them out; --mcp is
    refused with the command that does it."""
    done = hooks(tmp_path, "install", "codex", "--recall", "300")
    assert done.returncode == 0, done.stderr
    assert "/hooks" in done.stderr
    got = commands(json.loads((tmp_path / "codex" / "hooks.json").read_text()))
    assert sorted(got) == sorted([*assistants.ASSISTANT_EVENTS["codex"], "UserPromptSubmit"])
    assert not (tmp_path / "cc").exists()
    refused = hooks(tmp_path, "install", "codex", "--mcp")
    assert refused.returncode == 1 and "codex mcp add" in refused.stderr
    assert hooks(tmp_path, "uninstall", "codex").returncode == 0
    assert not (tmp_path / "codex" / "hooks.json").exists()

"""``palazzo hook`` as Claude Code runs it: a real process, the event's JSON on stdin, and
session files written by the real Claude Code CLI 2.1.332 (tests/palazzo/data/importers)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import palazzo
from palazzo.embed.hashing import HashEmbedder
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory

ENV = {"PYTHONPATH": str(Path(palazzo.__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin",
       "PALAZZO_LOCK_WAIT": "1"}
DATA = Path(__file__).resolve().parents[1] / "palazzo" / "data" / "importers"
SESSION = "7d3c2a10-5b8e-4f61-9c2d-0a1b2c3d4e5f"
PROJECT = DATA / "claude-code-2.1.332" / "projects" / "-home-user-project"


def hook(palace: Path, event: str, payload, *extra: str) -> subprocess.CompletedProcess:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "palazzo", "hook", event, "--palace",
                           str(palace), "--embedder", "hash", *extra], input=text, env=ENV,
                          capture_output=True, text=True, timeout=120)


def cli(palace: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "palazzo", *argv, "--palace", str(palace),
                           "--embedder", "hash"], env=ENV, capture_output=True, text=True,
                          timeout=120)


def make(**kw):
    return Palace(embedder=HashEmbedder(), **kw)


def keys_of(palace: Path) -> list[tuple[str, str, str]]:
    """Every drawer of the palace as (room, id, text), sorted."""
    with PalaceDirectory(palace, make) as d:
        drawers = d.store.palace.drawers
        return sorted((drawers.room[r], drawers.ids[r], drawers.content[r])
                      for r in drawers.live_rows())


def session_copy(tmp_path: Path, lines: int | None) -> Path:
    """The recorded session's folder copied, its session file cut to its first ``lines``
    lines (as the file stood earlier in the session)."""
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    path = project / f"{SESSION}.jsonl"
    if lines is not None:
        kept = path.read_text(encoding="utf-8").splitlines(keepends=True)[:lines]
        path.write_text("".join(kept), encoding="utf-8")
    return path


def payload(path: Path, event: str, **more) -> dict:
    return {"session_id": SESSION, "transcript_path": str(path), "cwd": "/home/user/project",
            "hook_event_name": event, **more}


def test_stop_saves_the_new_messages_only_and_twice_adds_nothing(tmp_path):
    palace = tmp_path / "atrium"
    assert cli(palace, "init").returncode == 0
    whole = (PROJECT / f"{SESSION}.jsonl").read_text(encoding="utf-8")
    path = session_copy(tmp_path, 20)  # the session after its first turns
    done = hook(palace, "Stop", payload(path, "Stop"))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    first = keys_of(palace)
    assert first
    assert hook(palace, "stop", payload(path, "Stop")).returncode == 0
    assert keys_of(palace) == first  # run twice: nothing twice
    path.write_text(whole, encoding="utf-8")  # the session went on
    assert hook(palace, "PreCompact", payload(path, "PreCompact", trigger="auto")
                ).returncode == 0
    assert hook(palace, "session-end", payload(path, "SessionEnd")).returncode == 0
    after = keys_of(palace)
    assert set(first) < set(after) and len(after) == len(set(after))
    # The same as importing the whole session file at once.
    other = tmp_path / "other"
    assert cli(other, "init").returncode == 0
    imported = cli(other, "import-chats", str(path))
    assert imported.returncode == 0, imported.stderr
    assert keys_of(other) == after


def test_session_start_gives_the_wake_up_context_as_additional_context(tmp_path):
    palace = tmp_path / "atrium"
    assert cli(palace, "init").returncode == 0
    assert cli(palace, "add", "--wing", "w", "--room", "r", "We decided to keep the lantern "
               "notes in the attic.").returncode == 0
    out = hook(palace, "SessionStart", {"session_id": "s", "source": "startup",
                                        "hook_event_name": "SessionStart"}, "--budget", "300")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert "lantern" in answer["additionalContext"]


def test_a_hook_that_fails_exits_0_with_one_line_and_status_shows_it(tmp_path):
    palace = tmp_path / "atrium"
    assert cli(palace, "init").returncode == 0
    cases = [("Stop", "{not json"), ("Stop", {"session_id": "s"}),
             ("Stop", payload(tmp_path / "missing.jsonl", "Stop")), ("Teatime", {})]
    for event, data in cases:
        out = hook(palace, event, data)
        assert out.returncode == 0 and out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"palazzo hook {event}: ")
    status = cli(palace, "status")
    assert status.returncode == 0
    failed = json.loads(status.stdout)["hooks_failed"]
    assert failed["count"] == 4 and failed["last"]["event"] == "Teatime"
    # No palace at all: still exit 0, and nothing is created.
    nowhere = tmp_path / "nowhere"
    out = hook(nowhere, "Stop", payload(session_copy(tmp_path, None), "Stop"))
    assert out.returncode == 0 and "no palace" in out.stderr and not nowhere.exists()
    empty = tmp_path / "empty"  # a folder that holds no palace gets no file from a hook
    empty.mkdir()
    out = hook(empty, "Stop", payload(tmp_path / "project" / f"{SESSION}.jsonl", "Stop"))
    assert out.returncode == 0 and "no palace" in out.stderr and list(empty.iterdir()) == []


def test_a_locked_palace_leaves_the_session_going(tmp_path):
    palace = tmp_path / "atrium"
    assert cli(palace, "init").returncode == 0
    path = session_copy(tmp_path, None)
    with PalaceDirectory(palace, make) as other, other.hold():
        out = hook(palace, "Stop", payload(path, "Stop"))
        assert out.returncode == 0 and "palazzo hook Stop: " in out.stderr
    assert keys_of(palace) == []
    assert hook(palace, "Stop", payload(path, "Stop")).returncode == 0  # saved next time
    assert keys_of(palace)


def test_hooks_go_through_a_running_palace_server(tmp_path):
    """With ``palazzo serve`` running on the palace, the hooks call it (found through its
    discovery file) instead of loading the palace: the session saved in two steps equals
    the whole file imported at once, and SessionStart gets its context from the server."""
    import http.client
    import socket
    import time

    palace = tmp_path / "atrium"
    assert cli(palace, "init").returncode == 0
    assert cli(palace, "add", "--wing", "w", "--room", "r", "We keep the lantern notes in the "
               "attic.").returncode == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "palazzo", "serve", "--palace", str(palace),
                               "--embedder", "hash", "--port", str(port)], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def get(path: str) -> str:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", path)
            return conn.getresponse().read().decode()
        finally:
            conn.close()

    try:
        deadline = time.monotonic() + 60
        while not (palace / ".server.json").exists():
            assert server.poll() is None, server.communicate()[1]
            assert time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.1)
        path = session_copy(tmp_path, 20)
        whole = (PROJECT / f"{SESSION}.jsonl").read_text(encoding="utf-8")
        assert hook(palace, "Stop", payload(path, "Stop")).returncode == 0
        path.write_text(whole, encoding="utf-8")
        for event in ("Stop", "SessionEnd"):
            out = hook(palace, event, payload(path, event))
            assert out.returncode == 0 and out.stderr == "", out.stderr
        out = hook(palace, "SessionStart", {"session_id": "s", "source": "resume",
                                            "hook_event_name": "SessionStart"})
        assert "lantern" in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        metrics = get("/metrics")
        for op in ("list_rooms", "batch", "wake_up"):
            assert f'palazzo_requests_total{{op="{op}",outcome="ok"}}' in metrics, op
    finally:
        server.terminate()
        server.wait(timeout=30)
    other = tmp_path / "other"
    assert cli(other, "init").returncode == 0
    assert cli(other, "add", "--wing", "w", "--room", "r", "We keep the lantern notes in the "
               "attic.").returncode == 0
    assert cli(other, "import-chats", str(path)).returncode == 0
    assert [k[0] for k in keys_of(palace)] == [k[0] for k in keys_of(other)]
    assert [k[2] for k in keys_of(palace)] == [k[2] for k in keys_of(other)]


def test_a_hook_through_a_server_loads_none_of_the_engine():
    """What ``palazzo hook`` imports on its way to a running server (the hook parser, the
    server client, the chat readers and their plan) leaves NumPy and the operations
    unloaded: an assistant waits for every hook, and they are 0.2 s of a start."""
    code = ("import sys\n"
            "import palazzo.hosts.cli as cli\n"
            "cli.hook_parser().parse_args(['hook', 'Stop'])\n"
            "import palazzo.hosts.hooks, palazzo.hosts.server.client, palazzo.importers\n"
            "from palazzo.importers.chats import plan_chats\n"
            "print(sorted(m for m in ('numpy', 'palazzo.ops', 'palazzo.palace') "
            "if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_user_prompt_submit_recalls_drawers_only_when_asked_and_not_the_sessions_own(tmp_path):
    palace = tmp_path / "atrium"
    assert cli(palace, "init").returncode == 0
    assert cli(palace, "add", "--wing", "decisions", "--room", "storage", "We keep the memory "
               "palace notes in the attic, beside the lantern.").returncode == 0
    path = session_copy(tmp_path, None)
    assert hook(palace, "Stop", payload(path, "Stop")).returncode == 0  # (it talks of palaces)
    ask = payload(path, "UserPromptSubmit", prompt="Where are the memory palace notes kept?")
    off = hook(palace, "UserPromptSubmit", ask)
    assert off.returncode == 0 and off.stdout == "" and off.stderr == ""
    on = hook(palace, "UserPromptSubmit", ask, "--recall", "300")
    assert on.returncode == 0, on.stderr
    answer = json.loads(on.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    lines = answer["additionalContext"].splitlines()[1:]
    assert lines and lines[0].startswith("- [decisions/storage] We keep the memory palace")
    assert not any("conversations/" in line for line in lines)  # the session's own: not
    other = payload(path, "UserPromptSubmit", prompt="What is a memory palace?",
                    session_id="another-session")
    lines = json.loads(hook(palace, "UserPromptSubmit", other, "--recall", "300").stdout)[
        "hookSpecificOutput"]["additionalContext"].splitlines()
    assert any("conversations/" in line for line in lines)  # another session's: yes
    assert sum(len(line) // 4 + 1 for line in lines[1:]) <= 300
    bad = hook(palace, "UserPromptSubmit", payload(path, "UserPromptSubmit"), "--recall", "300")
    assert bad.returncode == 0 and "no prompt" in bad.stderr and bad.stdout == ""


KEY = "sk-ant-api03-Zx9vQ2mN8bT4kL6pR1sW3yU5aC7eG0iJ"


def test_redact_takes_secrets_out_and_a_palazzoignore_keeps_a_project_out(tmp_path):
    path = session_copy(tmp_path, None)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("Hello! What is a memory palace?",
                                 f"Hello! My key is {KEY}. What is a memory palace?"),
                    encoding="utf-8")
    plain, redacted = tmp_path / "plain", tmp_path / "redacted"
    for palace in (plain, redacted):
        assert cli(palace, "init").returncode == 0
    assert hook(plain, "Stop", payload(path, "Stop")).returncode == 0
    out = hook(redacted, "Stop", payload(path, "Stop"), "--redact")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert any(KEY in c for _, _, c in keys_of(plain))  # (kept as said when not asked)
    kept = [c for _, _, c in keys_of(redacted)]
    assert not any(KEY in c for c in kept)
    assert any("My key is [redacted: anthropic key]." in c for c in kept)
    assert len(kept) == len(keys_of(plain))
    assert hook(redacted, "Stop", payload(path, "Stop"), "--redact").returncode == 0
    assert [c for _, _, c in keys_of(redacted)] == kept  # again: nothing twice
    # A .palazzoignore in the session's folder, or above it: nothing saved, nothing said.
    project = tmp_path / "work" / "secret-project" / "src"
    project.mkdir(parents=True)
    (tmp_path / "work" / "secret-project" / ".palazzoignore").write_text("")
    other = tmp_path / "other"
    assert cli(other, "init").returncode == 0
    assert cli(other, "add", "--wing", "w", "--room", "r", "a lantern note").returncode == 0
    for event in ("Stop", "SessionEnd", "SessionStart"):
        out = hook(other, event, payload(path, event, cwd=str(project), source="startup"))
        assert out.returncode == 0 and out.stdout == "" and out.stderr == ""
    assert [c for _, _, c in keys_of(other)] == ["a lantern note"]

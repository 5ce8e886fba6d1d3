"""palazzo's hooks as the real Claude Code CLI 2.1.332 (and Codex CLI 0.171.0) ran them,
replayed.

``tests/hosts/data/claude-code-hooks/made-with/record.sh`` drove the real CLI (against a
scripted model API on 127.0.0.1) with the hooks installed by ``palazzo hooks install``: a
three-turn session, a ``/compact`` and one more resumed turn, a second session, and a third
on a damaged palace. It kept every hook's input as the CLI sent it (and how long the session
file was then: the CLI only appends to it), the session files as they ended, the wake-up
context the CLI put in each session's first model request, and the palace's drawers at the
end. Here each hook runs again, in order, as ``palazzo hook`` with that input and the
session file cut to that length, and the palace must come out as the live run left it.
"""

import json
import re
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
DATA = Path(__file__).resolve().parent / "data" / "claude-code-hooks"
NOTE = "We decided to keep the lantern notes in the attic."
BROKEN_SESSION = "c5e7f0c4-1d9a-4c3e-8f5b-6a7b8c9d0e53"  # (run on the damaged palace)


def run(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "palazzo", *argv], input=stdin, env=ENV,
                          capture_output=True, text=True, timeout=120)


def drawers(palace: Path) -> list[tuple[str, str, str]]:
    with PalaceDirectory(palace, lambda **kw: Palace(embedder=HashEmbedder(), **kw)) as d:
        s = d.store.palace.drawers
        return sorted((s.ids[r], s.room[r], s.content[r]) for r in s.live_rows())


def turn_of(drawer: dict) -> tuple:
    source = drawer.get("source") if isinstance(drawer.get("source"), dict) else {}
    return (drawer["room"], source.get("turn", 0), source.get("role", ""), drawer["snippet"])


def undated(text: str) -> str:
    return re.sub(r"\d{4}-\d{2}-\d{2}", "DATE", text)


def with_the_note(palace: Path, data: Path = DATA) -> None:
    """Make the palace the recording started with: one note, at the time it was made (the
    wake-up context orders its lines by time)."""
    recorded = json.loads((data / "palace.json").read_text())["drawers"]
    at = next(d["created_at"] for d in recorded if d["room"] == "storage")
    assert run("init", "--palace", str(palace), "--embedder", "hash").returncode == 0
    assert run("call", "add_drawer", "--palace", str(palace), "--embedder", "hash", "--args",
               json.dumps({"wing": "decisions", "room": "storage", "content": NOTE,
                           "created_at": at})).returncode == 0


def test_the_real_clis_hooks_replayed_leave_the_palace_it_left(tmp_path):
    palace, home = tmp_path / "palace", tmp_path / "home"
    with_the_note(palace)
    finals = {p.stem: p.read_bytes() for p in (DATA / "projects").rglob("*.jsonl")}
    hooks = [json.loads(line) for line in (DATA / "hooks.jsonl").read_text().splitlines()]
    contexts: list[str] = []
    broken = tmp_path / "broken"
    for payload in hooks:
        sid, event = payload["session_id"], payload["hook_event_name"]
        if sid == BROKEN_SESSION and not broken.exists():  # the damage the recording made
            shutil.copytree(palace, broken)
            snap = sorted(broken.glob("snapshot-*"))[0]
            with snap.open("r+b") as f:
                f.seek(40)
                f.write(b"XXXXXXXX")
        target = broken if sid == BROKEN_SESSION else palace
        path = Path(payload["transcript_path"].replace("/home/user", str(home)))
        n = payload.pop("_transcript_bytes", None)
        if n is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(finals[sid][:n])
        payload = {**payload, "transcript_path": str(path)}
        out = run("hook", event, "--palace", str(target), "--embedder", "hash",
                  stdin=json.dumps(payload))
        assert out.returncode == 0, out.stderr
        if target is palace:
            assert out.stderr == "", out.stderr
        if event == "SessionStart":
            context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
            contexts.append(undated(f"SessionStart hook additional context: {context}"))
        else:
            assert out.stdout == ""
    # Every wake-up context the real CLI put before the model (followed there by the CLI's
    # own environment notes) is one the replay printed.
    seen = json.loads((DATA / "wake-up-seen.json").read_text())
    live = [undated(t) for t in seen if "Palace 'broken'" not in t]
    assert live and all(any(t == c or t.startswith(c + "\n") for c in contexts) for t in live)
    assert any(NOTE in t for t in seen[:1])  # the first session's first request had the note
    # The palace as the live run left it: the same drawers, turn by turn (compared by room,
    # turn, role and text: an id is made from the text, and the recording's paths were
    # made neutral after the palace was written).
    recorded = json.loads((DATA / "palace.json").read_text())["drawers"]
    listed = json.loads(run("call", "list_drawers", "--palace", str(palace), "--embedder",
                            "hash", "--args", '{"limit": 1000}').stdout)["drawers"]
    assert sorted(map(turn_of, listed)) == sorted(map(turn_of, recorded))
    assert len(listed) == len(recorded) == 17
    now = drawers(palace)
    # Exactly the two sessions' turns: the same as their files imported at once.
    other = tmp_path / "other"
    with_the_note(other)
    for sid, data in finals.items():
        if sid != BROKEN_SESSION:
            f = tmp_path / "whole" / f"{sid}.jsonl"
            f.parent.mkdir(exist_ok=True)
            f.write_bytes(data)
            assert run("import-chats", str(f), "--palace", str(other), "--embedder",
                       "hash").returncode == 0
    assert drawers(other) == now
    # The damaged palace: the session went on (every hook exit 0, above); the saves failed
    # soft, each kept for `palazzo status`.
    status = json.loads(run("status", "--palace", str(broken), "--embedder", "hash").stdout)
    assert status["hooks_failed"]["count"] == 2
    assert {f["event"] for f in json.loads((broken / ".hook-failures.json").read_text())} \
        == {"Stop", "SessionEnd"}


CODEX = Path(__file__).resolve().parent / "data" / "codex-hooks"


def test_the_real_codex_clis_hooks_replayed(tmp_path):
    """``tests/hosts/data/codex-hooks/made-with/record.sh``: the real Codex CLI 0.171.0 with
    the hooks ``palazzo hooks install codex`` wrote (a session and a resumed turn). Each hook
    again, in order, with the rollout cut to its length then: the palace the live run left,
    the same as the rollout imported at once, and the wake-up context Codex gave the model
    (as a developer message) is what the replayed SessionStart printed."""
    palace, home = tmp_path / "palace", tmp_path / "home"
    with_the_note(palace, CODEX)
    finals = {p.name: p.read_bytes() for p in (CODEX / "sessions").glob("*.jsonl")}
    contexts = []
    for line in (CODEX / "hooks.jsonl").read_text().splitlines():
        payload = json.loads(line)
        event = payload["hook_event_name"]
        path = home / Path(payload["transcript_path"]).name
        n = payload.pop("_transcript_bytes", None)
        if n is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(finals[path.name][:n])
        out = run("hook", event, "--palace", str(palace), "--embedder", "hash",
                  stdin=json.dumps({**payload, "transcript_path": str(path)}))
        assert out.returncode == 0 and out.stderr == "", out.stderr
        if event == "SessionStart":
            contexts.append(undated(json.loads(out.stdout)["hookSpecificOutput"][
                "additionalContext"]))
    seen = [undated(t) for t in json.loads((CODEX / "wake-up-seen.json").read_text())]
    assert seen and all(t in contexts for t in seen)
    recorded = json.loads((CODEX / "palace.json").read_text())["drawers"]
    listed = json.loads(run("call", "list_drawers", "--palace", str(palace), "--embedder",
                            "hash", "--args", '{"limit": 1000}').stdout)["drawers"]
    assert sorted(map(turn_of, listed)) == sorted(map(turn_of, recorded))
    assert len(listed) == 12
    other = tmp_path / "other"
    with_the_note(other, CODEX)
    (whole,) = finals
    f = tmp_path / "whole" / whole
    f.parent.mkdir()
    f.write_bytes(finals[whole])
    assert run("import-chats", str(f), "--palace", str(other), "--embedder",
               "hash").returncode == 0
    assert drawers(other) == drawers(palace)

"""Finding a running ``palazzo serve`` for a palace, and calling it as if it were the palace.

``palazzo serve`` writes ``.server.json`` into the palace directory (mode 0600: the URL it
listens on and its process id) while it runs, and deletes it when it stops. The command line
and ``palazzo mcp`` look for it (:func:`find_server`; ``$PALAZZO_URL`` names a server
directly) and, when it answers, call the server (:class:`RemotePalace`) instead of opening
the palace's files, so every process on the machine shares the server's one palace in
memory instead of each loading it. Where none runs (or it does not answer within a second),
they open the directory as before: many processes may write it anyway. ``$PALAZZO_TOKEN``
is sent as the bearer token to a server that asks for one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from palazzo import errors
from palazzo.errors import PalazzoError, StorageError

DISCOVERY = ".server.json"
TIMEOUT = 300.0  # seconds a call through the server may take (the server's own deadline: 30)


def _codes() -> dict[str, type[PalazzoError]]:
    out: dict[str, type[PalazzoError]] = {}
    todo: list[type[PalazzoError]] = [PalazzoError]
    while todo:
        cls = todo.pop()
        out.setdefault(cls.code, cls)
        todo += cls.__subclasses__()
    return out


def url_of(host: str, port: int) -> str:
    """Return the http URL of a server on ``host``:``port`` (an IPv6 address bracketed)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def write_discovery(palace: Path, url: str) -> Path:
    """Write the discovery file of a server at ``url`` for ``palace``; return its path."""
    path = Path(palace) / DISCOVERY
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"url": url, "pid": os.getpid()}, f)
    return path


def remove_discovery(palace: Path) -> None:
    """Delete the discovery file if it is this process's."""
    path = Path(palace) / DISCOVERY
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


def find_server(palace: Path) -> str | None:
    """Return the URL of a server that runs for ``palace`` and answers now: ``$PALAZZO_URL``
    when set, else the discovery file's (its process alive); None when there is none.
    Cost: a file read and one health request (at most a second)."""
    url = os.environ.get("PALAZZO_URL")
    if not url:
        try:
            found = json.loads((Path(palace) / DISCOVERY).read_text(encoding="utf-8"))
            url, pid = found["url"], int(found["pid"])
            os.kill(pid, 0)  # the process is gone: a crash left the file
        except (OSError, ValueError, KeyError, TypeError):
            return None
    try:
        status, _ = _request(url, "GET", "/health/live", None, timeout=1.0)
    except OSError:
        return None
    return url.rstrip("/") if status == 200 else None


def _request(url: str, method: str, path: str, body: bytes | None,
             timeout: float = TIMEOUT) -> tuple[int, bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80,
                                      timeout=timeout)
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("PALAZZO_TOKEN")
    if token:  # a server that asks for tokens
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


@dataclasses.dataclass
class RemoteStatus:
    """What a caller reads of a served palace's status (``read_only``: writes fail)."""

    read_only: bool = False
    problem: str | None = None
    damaged: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"served": True, "read_only": self.read_only, "problem": self.problem}


class RemotePalace:
    """A palace served by ``palazzo serve``, called like a :class:`PalaceDirectory`
    (``call``, ``status``, ``registry``, ``path``; a context manager). Each call is one HTTP
    request; an error the server answered is raised as the PalazzoError of its code."""

    def __init__(self, url: str, path: Path) -> None:
        self.url = url
        self.path = Path(path)
        self._errors = _codes()

    @property
    def registry(self) -> Any:
        """The operations registry (imported on first use: a hook that only calls the
        server needs none of the engine)."""
        from palazzo.ops import REGISTRY

        return REGISTRY

    def __enter__(self) -> RemotePalace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to give back: the server holds no lock for this process."""

    @property
    def rooms(self) -> dict[tuple[str, str], Any]:
        """The palace's rooms as an importer's plan reads them (``{(wing, name): room}``,
        each room with its ``name`` and ``source``): so a plan made against a served palace
        keeps a conversation imported before in its room. Cost: one ``list_rooms`` call."""
        from types import SimpleNamespace

        return {(r["wing"], r["name"]): SimpleNamespace(name=r["name"], source=r.get("source"))
                for r in self.call("list_rooms", {})["rooms"]}

    @property
    def status(self) -> RemoteStatus:
        try:
            code, data = _request(self.url, "GET", "/health/ready", None, timeout=10)
        except OSError as err:
            raise StorageError(f"the palace server at {self.url} does not answer: {err}") \
                from None
        problem = None if code == 200 else json.loads(data).get("problem")
        return RemoteStatus(read_only=code != 200, problem=problem, damaged=code != 200)

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            code, data = _request(self.url, "POST", f"/api/ops/{name}",
                                  json.dumps(args or {}).encode("utf-8"))
        except OSError as err:
            raise StorageError(f"the palace server at {self.url} does not answer: {err}") \
                from None
        out = json.loads(data)
        if code == 200:
            return out
        err = out.get("error", {})
        cls = self._errors.get(err.get("code", ""), PalazzoError)
        message = err.get("message", f"the server answered {code}")
        if issubclass(cls, errors.ValidationError):
            raise cls(message, field=err.get("field"))
        try:
            raised = cls(message)
        except TypeError:  # a class that needs more than a sentence
            raised = PalazzoError(message)
        raise raised

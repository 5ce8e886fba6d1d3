"""Bearer tokens for ``palazzo serve``: who may read, write or administer, and which wings.

``palazzo token create --scope read|write|admin [--wing W …] [--expires DAYS]`` makes a token,
prints it once, and keeps only its SHA-256 in ``tokens.json`` in the palace directory (mode
0600); ``palazzo token list`` shows them without secrets, ``palazzo token revoke ID`` removes
one. The server asks for ``Authorization: Bearer <token>`` when it listens beyond the loopback
address (which it refuses without a token to ask for) or with ``--tokens``.

**Scopes.** ``read``: operations that change nothing. ``write``: those too, and every write
except :data:`ADMIN` (replacing or importing a whole palace, repair, merging, keys and
policies, agents' runs). ``admin``: everything.

**Wings.** A token made with ``--wing`` sees and writes only those wings, deny by default:
only the operations of :data:`WING_OPS` are open to it, each checked against its wings
before it runs (a ``wing`` argument, or the wing of the drawer it names) and its result
filtered after (search hits and listings outside its wings dropped, and nothing from the
knowledge graph, which is not kept by wing). The change feed sends it only writes whose
drawers are all in its wings. Anything else is refused with 403 and the reason.

Cost of a check: one SHA-256 and a dict lookup; the file is read again when it changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from palazzo.errors import Forbidden, NotFound, PalazzoError, Unauthorized, ValidationError

FILE = "tokens.json"
PREFIX = "pzt_"
SCOPES = ("read", "write", "admin")
ADMIN = frozenset({"import", "bulk_replace", "repair", "merge_drawers", "dedup", "rotate_key",
                   "delete_key", "register_policy", "run_swarm", "write_swarm_notes",
                   "decay_now", "reindex", "batch"})
# What a wing-scoped token may call: each names its wing or its drawer.
WING_OPS = frozenset({"search", "list_drawers", "list_rooms", "list_wings", "get_drawer",
                      "add_drawer", "add_room", "update_drawer", "delete_drawer"})


@dataclass(slots=True)
class Token:
    """A token as kept: its id, what it may do, never the secret (only its SHA-256)."""

    id: str
    name: str
    scope: str
    wings: list[str] = field(default_factory=list)
    created: float = 0.0
    expires: float | None = None
    sha256: str = ""

    def public(self) -> dict[str, Any]:
        """Return the token without its hash (what ``palazzo token list`` shows)."""
        d = asdict(self)
        d.pop("sha256")
        return d


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class Tokens:
    """The tokens of one palace directory (``tokens.json``)."""

    def __init__(self, palace: Path) -> None:
        self.path = Path(palace) / FILE
        self._seen: tuple[int, int] | None = None
        self._by_hash: dict[str, Token] = {}

    def all(self) -> list[Token]:
        """Return every token kept, oldest first. Reads the file when it changed."""
        self._load()
        return sorted(self._by_hash.values(), key=lambda t: (t.created, t.id))

    def _load(self) -> None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._by_hash, self._seen = {}, None
            return
        if self._seen == (st.st_mtime_ns, st.st_size):
            return
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            tokens = [Token(**r) for r in rows]
        except (OSError, ValueError, TypeError) as err:
            raise PalazzoError(f"{self.path} cannot be read ({err}); no token is accepted "
                               "until it is fixed or removed") from None
        self._by_hash = {t.sha256: t for t in tokens}
        self._seen = (st.st_mtime_ns, st.st_size)

    def _save(self, tokens: list[Token]) -> None:
        tmp = self.path.with_name(f".{FILE}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump([asdict(t) for t in tokens], f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self._seen = None

    def create(self, scope: str, wings: list[str] | None = None, name: str = "",
               days: float | None = None) -> tuple[str, Token]:
        """Make a token; return (its secret, shown once, and what is kept)."""
        if scope not in SCOPES:
            raise ValidationError(f"scope must be one of {', '.join(SCOPES)}")
        if days is not None and not days > 0:
            raise ValidationError("a token's lifetime must be a positive number of days")
        secret = PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        token = Token(id=_digest(secret)[:12], name=name, scope=scope,
                      wings=sorted(set(wings or [])), created=now,
                      expires=None if days is None else now + days * 86400.0,
                      sha256=_digest(secret))
        self._save([*self.all(), token])
        return secret, token

    def revoke(self, token_id: str) -> Token:
        """Remove a token by id; return it (NotFound when there is none)."""
        tokens = self.all()
        gone = [t for t in tokens if t.id == token_id]
        if not gone:
            raise NotFound(f"no token with id {token_id!r} (`palazzo token list`)")
        self._save([t for t in tokens if t.id != token_id])
        return gone[0]

    def check(self, header: str | None) -> Token:
        """Return the token an ``Authorization`` header carries; raise Unauthorized for none,
        an unknown one or an expired one."""
        if not header or not header.startswith("Bearer "):
            raise Unauthorized("this server asks for a token: Authorization: Bearer <token> "
                               "(`palazzo token create`)")
        try:
            self._load()
        except PalazzoError as err:  # an unreadable tokens.json lets nobody in, and says so
            raise Unauthorized(str(err)) from None
        token = self._by_hash.get(_digest(header[7:].strip()))
        if token is None:
            raise Unauthorized("unknown token (revoked, or never made for this palace)")
        if token.expires is not None and token.expires < time.time():
            raise Unauthorized(f"token {token.id} expired")
        return token


class Scoped:
    """A palace (a :class:`PalaceDirectory` or anything with ``call``, ``status``,
    ``registry``, ``path``) as one token may use it: :meth:`call` refuses what the token
    does not reach and filters what a wing-scoped token may not see."""

    def __init__(self, inner: Any, token: Token | None) -> None:
        self.inner, self.token = inner, token
        self.registry = inner.registry
        self.path = getattr(inner, "path", None)

    @property
    def status(self) -> Any:
        return self.inner.status

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        args = dict(args or {})
        t = self.token
        if t is None:
            return self.inner.call(name, args)
        op = self.registry.get(name)
        if op.mutates and t.scope == "read":
            raise Forbidden(f"token {t.id} may only read; {name} writes")
        if name in ADMIN and t.scope != "admin":
            raise Forbidden(f"{name} needs an admin token; token {t.id} is {t.scope}")
        if not t.wings:
            return self.inner.call(name, args)
        return self._in_wings(name, args)

    def visible(self, event: dict[str, Any]) -> bool:
        """Return whether this token may be told of a change feed's event."""
        t = self.token
        if t is None or not t.wings:
            return True
        wings = event.get("wings") or []
        return bool(wings) and set(wings) <= set(t.wings)

    def _in_wings(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        t = self.token
        assert t is not None
        mine = set(t.wings)
        if name not in WING_OPS:
            raise Forbidden(f"token {t.id} is scoped to wings {', '.join(t.wings)}; {name} "
                            "reaches beyond them")
        if name in ("search", "list_drawers", "list_rooms", "add_drawer", "add_room"):
            wing = args.get("wing")
            if wing is None and len(mine) == 1 and name != "add_room":
                args["wing"] = wing = next(iter(mine))
            if wing not in mine:
                raise Forbidden(f"token {t.id} is scoped to wings {', '.join(t.wings)}: "
                                f"name one of them as wing")
        if name in ("get_drawer", "update_drawer", "delete_drawer"):
            drawer = self.inner.call("get_drawer", {"drawer_id": args.get("drawer_id", "")})
            if drawer["drawer"]["wing"] not in mine:
                raise NotFound(f"no drawer {args.get('drawer_id')!r}")  # not told it exists
        out = self.inner.call(name, args)
        if name == "search":
            out = {"query": out.get("query"),
                   "results": [h for h in out.get("results", []) if h.get("wing") in mine]}
            for h in out["results"]:
                h.pop("entities", None)
        elif name == "list_wings":
            out = {"wings": [w for w in out.get("wings", []) if w.get("name") in mine]}
        return out

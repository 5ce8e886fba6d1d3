"""Signing keys: the secrets that sign admissibility tokens, and the keyring that holds them.

Keys are 32 bytes from :func:`secrets.token_bytes`, made on first use (or injected, for tests)
and named by a key id derived from the secret (:func:`key_id_of`). Rotation makes a new key
sign while old ones still verify; a deleted key verifies nothing. Keys live in
:class:`Keyring`, which the palace file never contains (the export says ``"keys": "not
exported"``); ``Keyring.to_json`` is for storing them locally beside the palace.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from palazzo.errors import NotFound, PalazzoError, ValidationError
from palazzo.memory.conversation import is_hex

KEY_BYTES = 32
KEY_ID = re.compile(r"key_[0-9a-f]{16}")  # the form key_id_of gives


def key_id_of(secret: bytes) -> str:
    """Return the key id of ``secret``: ``key_`` + 16 hex of HMAC(secret, label), which names
    the key without revealing anything about it."""
    return "key_" + hmac.new(secret, b"palazzo-key-id-v1", hashlib.sha256).hexdigest()[:16]


@dataclass(slots=True)
class SigningKey:
    """One signing secret. ``retired_at`` is set when a newer key took over signing."""

    key_id: str
    secret: bytes = field(repr=False)
    created_at: float
    retired_at: float | None = None

    def describe(self, current: bool) -> dict[str, Any]:
        """Return the key's public facts (never the secret)."""
        return {"key_id": self.key_id, "created_at": self.created_at,
                "retired_at": self.retired_at, "current": current}


class Keyring:
    """The signing keys of one palace: one current key signs, retired keys only verify.

    ``entropy(n)`` returns n random bytes (``secrets.token_bytes``; inject a function for
    tests). ``revision`` grows with every change, so a host knows when to store the keyring
    again. Keys are never part of a palace file.
    """

    def __init__(self, entropy: Callable[[int], bytes] = secrets.token_bytes) -> None:
        self.entropy = entropy
        self.keys: dict[str, SigningKey] = {}
        self.current: str | None = None
        self.revision = 0

    def __repr__(self) -> str:
        return f"Keyring(keys={list(self.keys)}, current={self.current!r})"

    @classmethod
    def with_secret(cls, secret: bytes, created_at: float = 0.0) -> Keyring:
        """Return a keyring whose current key is ``secret`` (fixed key material for tests, or
        a key brought from elsewhere)."""
        ring = cls()
        ring.install(secret, created_at)
        return ring

    def get(self, key_id: Any) -> SigningKey | None:
        """Return the key ``key_id`` (current or retired), or None."""
        return self.keys.get(key_id) if isinstance(key_id, str) else None

    def signing_key(self, now: float) -> SigningKey:
        """Return the current key, making the first one now if there is none."""
        if self.current is None:
            return self.install(self._fresh(), now)
        return self.keys[self.current]

    def install(self, secret: bytes, now: float) -> SigningKey:
        """Make ``secret`` (at least 32 bytes) the current key, retiring the one before;
        return it. Raises ValidationError for short or already known secrets."""
        if not isinstance(secret, bytes) or len(secret) < KEY_BYTES:
            raise ValidationError(f"a signing key must be at least {KEY_BYTES} bytes")
        kid = key_id_of(secret)
        if kid in self.keys:
            raise ValidationError(f"key {kid} is already in the keyring")
        if self.current is not None:
            self.keys[self.current].retired_at = float(now)
        self.keys[kid] = SigningKey(kid, secret, float(now))
        self.current = kid
        self.revision += 1
        return self.keys[kid]

    def rotate(self, now: float) -> SigningKey:
        """Make a new random key current; the old one stays for verification only."""
        return self.install(self._fresh(), now)

    def delete(self, key_id: str) -> SigningKey:
        """Remove a retired key: tokens it signed no longer verify. Returns the removed key.
        The current key cannot be deleted (rotate first): NotFound/ValidationError."""
        key = self.get(key_id)
        if key is None:
            raise NotFound(f"no key {key_id!r} in the keyring")
        if key_id == self.current:
            raise ValidationError(f"key {key_id} signs new tokens; rotate_key first, then "
                                  "delete it")
        del self.keys[key_id]
        self.revision += 1
        return key

    def describe(self) -> list[dict[str, Any]]:
        """Return the public facts of every key, oldest first."""
        return [k.describe(k.key_id == self.current) for k in self.keys.values()]

    def _fresh(self) -> bytes:
        secret = self.entropy(KEY_BYTES)
        if not isinstance(secret, bytes) or len(secret) != KEY_BYTES:
            raise PalazzoError(f"the key source returned something other than {KEY_BYTES} "
                               "bytes")
        return secret

    def to_json(self) -> dict[str, Any]:
        """Return the keyring with its secrets (hex) for local storage beside the palace:
        never put this in a palace file or send it anywhere."""
        return {"format": "palazzo-keyring", "version": 1, "current": self.current,
                "keys": [{"key_id": k.key_id, "secret": k.secret.hex(),
                          "created_at": k.created_at, "retired_at": k.retired_at}
                         for k in self.keys.values()]}

    @classmethod
    def from_json(cls, value: Any, entropy: Callable[[int], bytes] = secrets.token_bytes
                  ) -> Keyring:
        """Return the keyring ``to_json`` wrote; raise ValidationError on anything else (ids
        are recomputed from the secrets and must match)."""
        if not isinstance(value, dict) or value.get("format") != "palazzo-keyring" \
                or value.get("version") != 1:
            raise ValidationError("not a palazzo keyring (format palazzo-keyring, version 1)")
        keys = value.get("keys")
        if not isinstance(keys, list):
            raise ValidationError("keyring.keys must be a list")
        ring = cls(entropy)
        for i, k in enumerate(keys):
            at = f"keyring.keys[{i}]"
            text = k.get("secret") if isinstance(k, dict) else None
            if not isinstance(text, str) or len(text) < 2 * KEY_BYTES or len(text) % 2 \
                    or not is_hex(text, len(text)):
                raise ValidationError(f"{at}.secret must be at least {KEY_BYTES} bytes in hex")
            secret = bytes.fromhex(text)
            if k.get("key_id") != key_id_of(secret) or key_id_of(secret) in ring.keys:
                raise ValidationError(f"{at}.key_id does not match its secret (or repeats)")
            created = k.get("created_at")
            retired = k.get("retired_at")
            for name, t in (("created_at", created), ("retired_at", retired)):
                if name == "retired_at" and t is None:
                    continue
                if isinstance(t, bool) or not isinstance(t, int | float):
                    raise ValidationError(f"{at}.{name} must be a number")
            ring.keys[k["key_id"]] = SigningKey(k["key_id"], secret, float(created),
                                                None if retired is None else float(retired))
        current = value.get("current")
        if current is not None and current not in ring.keys:
            raise ValidationError("keyring.current must name one of its keys (or be null)")
        ring.current = current
        return ring

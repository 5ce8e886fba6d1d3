"""sha256 helpers shared by fetching, verification and wheel writing."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from sitebuild.errors import AssetError


def sha256_bytes(data: bytes) -> str:
    """Return the hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of the file at ``path``, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record_hash(data: bytes) -> str:
    """Return the ``sha256=<urlsafe-b64>`` form a wheel's RECORD uses."""
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def check(path: Path, expected: str, what: str) -> None:
    """Raise :class:`AssetError` naming ``what`` when ``path``'s sha256 is not ``expected``."""
    actual = sha256_file(path)
    if actual != expected:
        raise AssetError(
            f"sha256 mismatch for {what} ({path}): expected {expected}, got {actual}. "
            "The file was altered or the pin is wrong; delete it to fetch it again, "
            "or fix assets.lock.json."
        )


def check_bytes(data: bytes, expected: str, what: str) -> None:
    """Raise :class:`AssetError` naming ``what`` when ``data``'s sha256 is not ``expected``."""
    actual = sha256_bytes(data)
    if actual != expected:
        raise AssetError(f"sha256 mismatch for {what}: expected {expected}, got {actual}")

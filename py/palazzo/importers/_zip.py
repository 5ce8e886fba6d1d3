"""How far a zip member may inflate before it is refused as a zip bomb.

Deflate turns a run of one byte into about a thousandth of its size: a 204 KB zip holds
210 MB of blank lines. An importer's byte limit (1 GiB for a chat export) bounds what a
real export may hold, not what a tiny archive may unpack to, so each member is also held to
:data:`MAX_RATIO` times its compressed size once it is past :data:`FREE_BYTES` (JSON text,
chats and notes compress some 3 to 20 times; a member far past that is built, not written).
The bound is checked twice: on the sizes the archive's directory declares, before a byte
is inflated, and on the bytes as they inflate, since a directory can lie.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass

from palazzo.errors import ImportRejected

__all__ = ["FREE_BYTES", "MAX_RATIO", "Inflation", "inflation"]

MAX_RATIO = 200  # inflated : compressed bytes a member may reach past FREE_BYTES
FREE_BYTES = 16 << 20  # a member may inflate this far whatever its compressed size


@dataclass(slots=True, frozen=True)
class Inflation:
    """The bound on one member: ``bound`` bytes, from its ``compressed`` size."""

    where: str
    compressed: int
    bound: int

    def check(self, inflated: int) -> None:
        """Raise ImportRejected naming the member and the bound once ``inflated`` (bytes
        read so far) passes it. Cost: O(1)."""
        if inflated > self.bound:
            raise ImportRejected(self._refusal())

    def _refusal(self) -> str:
        return (f"{self.where}: inflates to more than {self.bound} bytes, over {MAX_RATIO} "
                f"times its {self.compressed} compressed bytes (no real export compresses so "
                "well); refused as a zip bomb")


def inflation(info: zipfile.ZipInfo, archive_bytes: int, where: str,
              limit: int | None = None) -> Inflation:
    """Return the bound the member ``info`` of an archive of ``archive_bytes`` bytes is read
    under: the larger of :data:`FREE_BYTES` and :data:`MAX_RATIO` times its compressed size
    (never counted larger than the archive). Raises ImportRejected, before anything is
    inflated, when the archive's directory declares the member larger than that bound or
    than ``limit`` (the importer's own byte limit, when given). Cost: O(1)."""
    compressed = max(0, min(info.compress_size, archive_bytes))
    out = Inflation(where, compressed, max(FREE_BYTES, MAX_RATIO * compressed))
    if limit is not None and info.file_size > limit:
        raise ImportRejected(f"{where}: inflates to more than {limit} bytes, the most an "
                             f"import may read (the archive says {info.file_size}); "
                             "refusing to read it")
    out.check(info.file_size)
    return out

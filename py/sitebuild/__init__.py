"""Build the offline palazzo site from pinned, sha256-verified assets.

Every third-party file comes from a package registry through its ordinary client (``pip
download``, ``npm pack``), is checked against the committed manifest ``assets.lock.json`` and
is cached under ``.cache/assets``; the site is written to ``dist/`` (git-ignored).
"""

from sitebuild.errors import AssetError

__all__ = ["AssetError"]

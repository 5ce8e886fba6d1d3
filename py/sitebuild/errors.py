"""The build's one error: something about an asset is wrong and the site is not written."""


class AssetError(Exception):
    """An asset is missing, could not be fetched, or does not match its pinned sha256."""

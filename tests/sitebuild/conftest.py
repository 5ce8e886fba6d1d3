from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"


@pytest.fixture(scope="session")
def asset_cache() -> Path:
    """The build's verified cache; `npm test` fills it before pytest starts."""
    if not (CACHE / "assets").is_dir():
        pytest.skip("no asset cache yet: run `npm test` (or `npm run build`) first")
    return CACHE

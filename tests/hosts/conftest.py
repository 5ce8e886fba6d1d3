"""Shared by the command-line tests: a palace directory made by ``palazzo init``."""

import pytest

from palazzo.hosts.cli import main


@pytest.fixture
def palace(tmp_path, monkeypatch):
    """Return a palace directory ``palazzo init --embedder hash`` made, as $PALAZZO_PALACE."""
    path = tmp_path / "palace"
    monkeypatch.setenv("PALAZZO_PALACE", str(path))
    assert main(["init", "--embedder", "hash"]) == 0
    return path

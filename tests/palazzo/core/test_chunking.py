import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palazzo.core.chunking import chunks, spans
from palazzo.core.model import CHUNK_SIZE
from palazzo.palace import Palace


def test_a_short_text_is_its_own_single_chunk():
    assert chunks("one short memory.") == ["one short memory."]
    assert chunks("x" * CHUNK_SIZE) == ["x" * CHUNK_SIZE]
    assert chunks("x" * 900, 900, 150) == ["x" * 900]
    assert chunks("") == []


def test_the_defaults_are_the_palaces_cut():
    text = "Alpha beta gamma. " * 200
    assert chunks(text) == chunks(text, CHUNK_SIZE, CHUNK_SIZE // 6)
    assert chunks(text) == Palace(embedder=None, similar_threshold=None).pieces(text)


def test_windows_end_at_a_paragraph_then_a_sentence_then_a_space():
    para = "First paragraph sentence one. " * 20 + "\n\n" + "Second paragraph words. " * 30
    first = chunks(para, 900, 150)[0]
    assert first.endswith("\n\n") and len(first) <= 900
    prose = "A sentence that ends here. " * 60
    assert chunks(prose, 900, 150)[0].endswith("here. ")
    words = "word " * 400
    assert all(c.endswith(" ") for c in chunks(words, 900, 150)[:-1])
    blob = "x" * 2000  # no boundary at all: hard cuts at size
    assert [len(c) for c in chunks(blob, 900, 150)] == [900, 900, 500]


def test_consecutive_windows_overlap_by_about_the_overlap():
    text = " ".join(f"w{i:04d}" for i in range(1000))
    pieces = chunks(text, size=900, overlap=150)
    bounds = spans(text, 900, 150)
    for (_, end), (start, _) in zip(bounds, bounds[1:], strict=False):
        assert 130 <= end - start <= 150
    assert all(len(p) <= 900 for p in pieces)


def test_chunking_is_deterministic():
    text = "Alpha beta. Gamma delta!\n" * 300
    assert chunks(text) == chunks(text)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        chunks("text", size=100, overlap=100)
    with pytest.raises(ValueError):
        chunks("text", size=0, overlap=0)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab .!?\n\t"), max_size=3000),
       size=st.integers(20, 400), ratio=st.floats(0, 0.9))
def test_chunks_cover_the_whole_text_in_order(text, size, ratio):
    overlap = int(size * ratio)
    pieces = chunks(text, size=size, overlap=overlap)
    assert all(pieces) and all(len(p) <= size for p in pieces)
    if len(text) <= size:
        assert pieces == ([text] if text else [])
        return
    bounds = spans(text, size, overlap)
    assert pieces == [text[s:e] for s, e in bounds]
    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    for (s0, e0), (s1, _) in zip(bounds, bounds[1:], strict=False):
        assert s0 < s1 <= e0  # in order, no gap between windows

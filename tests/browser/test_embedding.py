"""Embedding in Chromium: the page embeds with ONNX Runtime in its embedding worker, with the
NumPy model's vectors (same fingerprint, within 1e-5), searches by meaning, and falls back to
MiniLM in NumPy inside Pyodide when ONNX Runtime cannot load."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest

from .conftest import SITE, new_guarded_context

BOOT_TIMEOUT_MS = 300_000
TEXTS = ["Quarterly tax payment to the revenue office is due on the fifteenth of April.",
         "Our landlord finally fixed the leaking kitchen tap after three weeks."]
QUERY = "when must the income levy be settled"  # shares no word (nor stem) with its drawer

# A page call's reply waits for the vectors of the few drawers it added (with ONNX Runtime
# the embedding worker computes them after the call), so the status right after counts them.
ADD_THEN_STATUS = """(async (texts) => {
  const call = window.palazzo.call;
  for (const t of texts) await call('add_drawer', {wing: 'life', room: 'notes', content: t});
  return await call('palace_status', {});
})"""


def boot(context, url):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(BOOT_TIMEOUT_MS)
    page.goto(url)
    page.evaluate("window.palazzo.deferred")
    return page, errors


def vectors_of(page, texts: list[str]) -> np.ndarray:
    """Return the palace's stored vectors of the drawers holding ``texts``, in order."""
    doc = page.evaluate("window.palazzo.call('export', {vectors: 'float32'})")["document"]
    palace = doc["palace"]
    ids = {d["content"]: d["id"] for d in palace["drawers"]}
    vec = palace["vectors"]
    data = np.frombuffer(base64.b64decode(vec["data"]), "<f4").reshape(-1, vec["dim"])
    rows = {i: k for k, i in enumerate(vec["ids"])}
    return np.stack([data[rows[ids[t]]] for t in texts])


def numpy_vectors(texts: list[str]) -> np.ndarray:
    from palazzo.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(Path(SITE) / "vendor/models/minilm/minilm.npz").embed(texts)


def check_embeds_and_finds_by_meaning(page, runtime: str) -> None:
    status = page.evaluate(ADD_THEN_STATUS, TEXTS)
    assert status["embedded"] == status["drawers"]
    assert status["embedder"]["name"] == "minilm"
    assert status["embedder"]["runtime"].startswith(runtime)
    from palazzo.embed.minilm import MiniLMEmbedder

    npz = Path(SITE) / "vendor/models/minilm/minilm.npz"
    assert status["embedder"]["fingerprint"] == MiniLMEmbedder(npz).fingerprint
    got = vectors_of(page, TEXTS)
    assert np.abs(got - numpy_vectors(TEXTS)).max() <= 1e-5
    hits = page.evaluate(f"window.palazzo.call('search', {{query: {QUERY!r}}})")["results"]
    assert hits[0]["content"] == TEXTS[0]
    assert hits[0]["scores"]["vector_rank"] == 1 and hits[0]["scores"]["bm25_rank"] is None


EVENT = ("We spent the weekend repainting the hallway, and the neighbours lent us a ladder. "
         "Today I passed my driving test on the first attempt. The cat ignored all of it.")
EVENT_QUESTION = "Which company employed me when the road exam happened?"


def check_finds_the_event_a_question_names(page) -> None:
    """The dated sentence is embedded apart in the worker, and a question naming the event in
    other words gets the event list (its clause's vector computed before the search)."""
    page.evaluate(ADD_THEN_STATUS, [EVENT, "I work at Northwind Logistics as an analyst."])
    doc = page.evaluate("window.palazzo.call('export', {vectors: 'float32'})")["document"]
    assert "1" in doc["palace"]["chunk_vectors"]["kinds"]
    hits = page.evaluate(f"window.palazzo.call('search', {{query: {EVENT_QUESTION!r}}})")
    found = {h["content"]: h for h in hits["results"]}
    assert found[EVENT]["scores"]["event"] > 0


@pytest.mark.browser
def test_the_page_embeds_with_onnx_runtime_and_searches_by_meaning(browser, site_url):
    context, guard = new_guarded_context(browser)
    page, errors = boot(context, site_url)
    check_embeds_and_finds_by_meaning(page, "ONNX Runtime, wasm")
    check_finds_the_event_a_question_names(page)
    # A thread a core (at most 4) on a cross-origin isolated page, as the site is served.
    cores = page.evaluate("crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency) : 1")
    runtime = page.evaluate("window.palazzo.call('palace_status', {})")["embedder"]["runtime"]
    assert runtime.startswith(f"ONNX Runtime, wasm, {cores} thread"), runtime
    context.close()
    assert guard.outside == [] and guard.failed == [] and errors == []


@pytest.mark.browser
def test_without_onnx_runtime_the_numpy_model_embeds_and_the_onnx_graph_is_not_fetched(
        browser, site_url):
    context, guard = new_guarded_context(browser)
    blocked: list[str] = []

    def block(route) -> None:
        blocked.append(route.request.url)
        route.abort("blockedbyclient")

    context.route("**/vendor/ort/**", block)  # as a host that does not serve ONNX Runtime
    fetched: list[str] = []
    context.on("request", lambda r: fetched.append(r.url))
    page, errors = boot(context, site_url)
    check_embeds_and_finds_by_meaning(page, "NumPy")
    assert blocked and not any(u.endswith("minilm.onnx") for u in fetched)
    context.close()
    assert guard.outside == [] and guard.failed == [] and errors == []


@pytest.mark.browser
def test_with_onnx_runtime_the_npz_weights_are_never_downloaded(browser, site_url):
    context, guard = new_guarded_context(browser)
    fetched: list[str] = []
    context.on("request", lambda r: fetched.append(r.url))
    page, errors = boot(context, site_url)
    assert page.evaluate("window.palazzo.call('palace_status', {})")["embedder"]["runtime"] \
        .startswith("ONNX Runtime")
    assert any(u.endswith("minilm.onnx") for u in fetched)
    assert not any(u.endswith("minilm.npz") for u in fetched)
    context.close()
    assert guard.outside == [] and guard.failed == []

"""docs/operations.md is the registry's catalogue, written by palazzo.hosts.reference."""

from pathlib import Path

import pytest

from palazzo import REGISTRY
from palazzo.hosts.reference import markdown
from palazzo.persist.library import LIBRARY_REGISTRY

PAGE = Path(__file__).resolve().parents[3] / "docs" / "operations.md"


@pytest.mark.cpython_only  # the page is in the checkout, not in the Pyodide test archive
def test_the_operations_page_is_current():
    assert PAGE.read_text(encoding="utf-8") == markdown(), (
        "docs/operations.md is stale: run `PYTHONPATH=py python -m palazzo.hosts.reference "
        "docs/operations.md`")


def test_the_page_names_every_operation_once_with_its_summary():
    page = markdown()
    for registry in (REGISTRY, LIBRARY_REGISTRY):
        for op in registry.describe():
            assert page.count(f"### `{op['name']}`") == 1
            assert op["summary"] in page

"""The engine never imports browser or UI modules; only palazzo.hosts may."""

import ast
from pathlib import Path

import palazzo

FORBIDDEN = {"js", "pyodide", "panel", "bokeh", "pyodide_js"}
PACKAGE = Path(palazzo.__file__).parent


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_engine_modules_import_no_host_libraries():
    engine = [p for p in PACKAGE.rglob("*.py") if "hosts" not in p.relative_to(PACKAGE).parts]
    assert len(engine) >= 5
    offenders = {
        str(p.relative_to(PACKAGE)): sorted(_imported_roots(p) & FORBIDDEN)
        for p in engine
        if _imported_roots(p) & FORBIDDEN
    }
    assert offenders == {}


def test_the_checker_sees_host_imports():
    # The hosts do import Panel: if the checker missed that, the test above would prove nothing.
    assert "panel" in _imported_roots(PACKAGE / "hosts" / "ui" / "__init__.py")

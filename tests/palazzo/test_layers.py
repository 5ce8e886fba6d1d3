"""The package's floors hold: no import goes up a layer and no modules import each other in a
circle (DESIGN §10). The graph is read from the source with ``ast``, every import counted —
those inside functions and under ``TYPE_CHECKING`` too, since a lazy import that only hides a
cycle is still the cycle."""

import ast
from pathlib import Path

import pytest

import palazzo

PACKAGE = Path(palazzo.__file__).parent

# Bottom up; a module may import its own layer and the ones below.
LAYERS = [
    ("errors", "_version"),
    ("core",),
    ("retrieval", "embed"),
    ("stigmergy", "memory", "provenance"),
    ("formats",),
    ("palace",),
    ("ops",),
    ("persist", "importers"),
    ("hosts", "bench"),
    ("__main__",),
]
FACE = len(LAYERS)  # the package's __init__: it gathers the top, nothing may import it


def module_name(path: Path) -> str:
    """Return the dotted name of a source file of the package."""
    parts = ["palazzo", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    """Return the layer index of a palazzo module (its first name below the package)."""
    if module == "palazzo":
        return FACE
    top = module.split(".")[1]
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module} is in no layer of DESIGN §10: add it to LAYERS")


def imports_of(module: str) -> set[str]:
    """Return the palazzo modules ``module`` imports anywhere in its file.

    ``from palazzo.ops import agents`` counts as importing ``palazzo.ops.agents`` when that is
    a module, else the package ``palazzo.ops``.
    """
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "palazzo")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            if base.split(".")[0] != "palazzo":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {name for name in found if name != module}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_import_names_a_module_of_the_package():
    unknown = sorted((m, t) for m, ts in GRAPH.items() for t in ts if t not in MODULES)
    assert unknown == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_goes_up_a_layer(module):
    up = sorted(t for t in GRAPH[module] if layer(t) > layer(module))
    assert up == [], f"{module} (layer {layer(module)}) imports from higher layers: {up}"


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the components of more than one module (Tarjan, iterative): the circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circle():
    assert strongly_connected(GRAPH) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_the_registry_and_core_import_no_operation_module_and_no_palace():
    bottom = [m for m in MODULES
              if m == "palazzo.ops.registry" or layer(m) <= layer("palazzo.core")]
    reach = {m: sorted(t for t in GRAPH[m] if t == "palazzo.palace" or
                       (t.startswith("palazzo.ops") and t != "palazzo.ops.registry"))
             for m in bottom}
    assert {m: ts for m, ts in reach.items() if ts} == {}


def test_the_engine_below_the_hosts_never_imports_the_package_face():
    assert sorted(m for m, ts in GRAPH.items() if "palazzo" in ts and m != "palazzo.__main__") \
        == []


def test_every_public_error_class_lives_in_errors():
    from palazzo import errors

    family = {n for n, v in vars(errors).items() if isinstance(v, type)
              and issubclass(v, BaseException)} | {"Exception", "ValueError", "RuntimeError",
                                                    "KeyError", "TypeError", "OSError"}
    outside = sorted(
        f"{m}.{node.name}" for m, path in MODULES.items() if m != "palazzo.errors"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
        and any(isinstance(b, ast.Name) and b.id in family for b in node.bases))
    assert outside == []


def test_the_error_tree_names_every_error_with_its_own_code():
    from palazzo import errors

    classes = [v for v in vars(errors).values() if isinstance(v, type)
               and issubclass(v, errors.PalazzoError)]
    codes = [c.code for c in classes]
    assert len(set(codes)) == len(codes)
    for cls in classes:
        assert f"{cls.__name__} " in errors.__doc__ and cls.code in errors.__doc__

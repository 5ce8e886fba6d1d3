"""The engine's own pytest tests, run inside Pyodide in Chromium (DESIGN §8).

So that nothing CPython-only slips into the engine, every test file under tests/palazzo runs a
second time in Pyodide, in a worker like the app's engine, against the palazzo wheel shipped in
dist/ (rebuild after changing py/palazzo). New files are picked up by glob. Left out are:

- the files in ``EXCLUDE``, each with its reason (whole files that need CPython);
- single tests marked ``@pytest.mark.cpython_only`` (or a module's
  ``pytestmark = pytest.mark.cpython_only``), deselected in Pyodide;
- files that import hypothesis while no hypothesis wheel is among the manifest's
  ``test_wheels``: they are named in a warning, and run here once the wheel is pinned.

Every other collected test must pass in Pyodide; a file that cannot be collected there, or
collects nothing, fails this test with pytest's own report.

The page, the worker (``pyodide_runner.html`` / ``.worker.js``) and the Python side of the run
(``pyodide_pytest.py``) are served with dist/, the engine tests and the test-only wheels from
``.cache/assets`` (``test_wheels`` in assets.lock.json, sha256-checked here because Pyodide
checks only the wheels its lock names) by a loopback server of this module's own.
"""

from __future__ import annotations

import ast
import shutil
import warnings
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT, SITE, new_guarded_context

pytestmark = pytest.mark.browser

HERE = Path(__file__).resolve().parent
ENGINE_TESTS = ROOT / "tests" / "palazzo"
ASSETS = ROOT / ".cache" / "assets"
RUNNER_FILES = ("pyodide_runner.html", "pyodide_runner.worker.js", "pyodide_pytest.py")
SITE_PACKAGES = ["numpy", "scipy", "packaging", "palazzo", "networkx"]
PYODIDE_ROOT = "/tmp/palazzo-tests"  # where the tests are unpacked in Pyodide's file system
SITE_FILES = ["vendor/models/minilm/minilm.npz"]
RUN_TIMEOUT_MS = 180_000
# pytest's own output of the run in Pyodide, its slowest tests listed at the end, is written
# here after each run (the run is the suite's longest single step: this says where it goes).
OUTPUT_LOG = ROOT / ".cache" / "engine-in-pyodide.log"
SLOWEST = 30
OK_OUTCOMES = {"passed", "xfailed"}

# Whole files that cannot run in Pyodide, by path relative to tests/palazzo, with the reason.
EXCLUDE = dict.fromkeys(
    ("hosts/test_ui.py", "hosts/test_ui_knowledge.py", "hosts/test_ui_map.py",
     "hosts/test_ui_search.py", "hosts/test_ui_shell.py", "hosts/test_ui_act.py",
     "hosts/test_ui_damage.py", "hosts/test_ui_heat_use.py", "hosts/test_ui_sources.py",
     "hosts/test_ui_words.py"),
    "builds the Panel app with Panel's server-side rendering; Panel is not loaded here "
    "(tests/browser/test_ui*.py cover the app in the real worker)")
EXCLUDE.update(dict.fromkeys(
    ("importers/test_chats.py", "importers/test_folder.py", "importers/test_graphpalace.py",
     "importers/test_mempalace.py"),
    "cpython_only: their fixtures are made with the host's sqlite3 and files; in the browser "
    "the importers run in the worker on dropped files (tests/browser/test_ui_import.py; "
    "importers/test_source.py and hosts/test_importing.py run here)"))

EXCLUDE["importers/test_files.py"] = (
    "cpython_only: it makes FIFOs, sockets and devices, which Pyodide's file system has not; "
    "in the browser the worker writes only the dropped regular files")
EXCLUDE.update(dict.fromkeys(
    ("embed/test_graph.py", "embed/test_runtime.py"),
    "cpython_only: ONNX Runtime and the onnx package are CPython's; in the browser the "
    "embedding worker runs onnxruntime-web (tests/browser/test_embedding.py)"))


def _imports_hypothesis(path: Path) -> bool:
    """Whether the file imports hypothesis (a file that does not parse is left to pytest)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "hypothesis" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hypothesis":
            return True
    return False


def pinned_test_wheels() -> list[dict]:
    """The manifest's ``test_wheels`` entries: the pure wheels the tests load into Pyodide."""
    from sitebuild.manifest import load

    return load(ROOT / "assets.lock.json").data["test_wheels"]


def has_hypothesis(pins: list[dict]) -> bool:
    return any(p["file"].lower().startswith("hypothesis-") for p in pins)


def engine_test_files(with_hypothesis: bool) -> tuple[list[str], list[str]]:
    """Return ``(selected, waiting)``: test files to run here, and those waiting for hypothesis.

    Paths are relative to tests/palazzo, found the way pytest finds them (test_*.py, *_test.py).
    """
    found = sorted({*ENGINE_TESTS.rglob("test_*.py"), *ENGINE_TESTS.rglob("*_test.py")})
    selected, waiting = [], []
    for path in found:
        rel = path.relative_to(ENGINE_TESTS).as_posix()
        if rel in EXCLUDE:
            continue
        if not with_hypothesis and _imports_hypothesis(path):
            waiting.append(rel)
        else:
            selected.append(rel)
    return selected, waiting


def verified_wheels(pins: list[dict]) -> list[Path]:
    """The cached test wheels, each checked against its pinned sha256."""
    from sitebuild.digest import sha256_file

    wheels = []
    for pin in pins:
        path = ASSETS / pin["file"]
        if not path.exists():
            pytest.fail(f"{path} is missing: run `python -m sitebuild build` first")
        if sha256_file(path) != pin["sha256"]:
            pytest.fail(f"{path} does not match its sha256 in assets.lock.json")
        wheels.append(path)
    return wheels


def write_tests_archive(dest: Path) -> None:
    """Zip tests/palazzo (data files and conftests too) as ``tests/palazzo/...``."""
    with zipfile.ZipFile(dest, "w") as archive:
        for path in sorted(ENGINE_TESTS.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(ROOT).as_posix())


def stage_runner_site(root: Path, wheels: list[Path]) -> None:
    """Lay out what the runner page fetches: site/ (dist), the runner, wheels/, tests.zip."""
    (root / "site").symlink_to(SITE, target_is_directory=True)
    for name in RUNNER_FILES:
        shutil.copy2(HERE / name, root / name)
    (root / "wheels").mkdir()
    for wheel in wheels:
        shutil.copy2(wheel, root / "wheels" / wheel.name)
    write_tests_archive(root / "tests.zip")


def stale_wheel_modules() -> list[str]:
    """Modules of py/palazzo that the palazzo wheel in dist/ lacks or has in another version."""
    (wheel,) = (SITE / "vendor" / "pyodide").glob("palazzo-*-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {n: archive.read(n) for n in archive.namelist() if n.endswith(".py")}
    source = ROOT / "py"
    current = {
        p.relative_to(source).as_posix(): p.read_bytes()
        for p in (source / "palazzo").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    return sorted(name for name, data in current.items() if shipped.get(name) != data)


def run_config(base: str, wheels: list[Path], files: list[str]) -> dict:
    """The message the runner worker gets: URLs to load and pytest's arguments."""
    args = [f"tests/palazzo/{rel}" for rel in files]
    args += ["-q", "--tb=short", "-p", "no:cacheprovider", "--import-mode=importlib"]
    args += ["--continue-on-collection-errors"]  # one broken file must not hide the others
    args += ["--rootdir", PYODIDE_ROOT, "-m", "not cpython_only"]
    args += [f"--durations={SLOWEST}"]  # kept in OUTPUT_LOG: where the run's time goes
    return {
        "pyodide": f"{base}site/vendor/pyodide/pyodide.js",
        "lockFile": f"{base}site/vendor/pyodide/pyodide-lock.json",
        "packages": SITE_PACKAGES,
        "wheels": [f"{base}wheels/{w.name}" for w in wheels],
        "tests": f"{base}tests.zip",
        "runner": f"{base}pyodide_pytest.py",
        "root": PYODIDE_ROOT,
        "args": args,
        # Site files some engine tests read (the MiniLM parity test), at the paths they use.
        "files": {f"{PYODIDE_ROOT}/dist/{rel}": f"{base}site/{rel}" for rel in SITE_FILES},
    }


@pytest.fixture(scope="module")
def selection():
    """``(files, wheels)``: the engine test files to run in Pyodide and the wheels to load."""
    pins = pinned_test_wheels()
    files, waiting = engine_test_files(has_hypothesis(pins))
    if waiting:
        warnings.warn(
            f"not run in Pyodide until a hypothesis wheel is among test_wheels: {waiting}",
            stacklevel=1,
        )
    return files, verified_wheels(pins)


@pytest.fixture(scope="module")
def pyodide_run(browser, selection, tmp_path_factory):
    """Run the selected engine tests once in Pyodide; the reply of the runner worker."""
    from sitebuild.serve import serve_in_thread

    if not (SITE / "vendor" / "pyodide" / "pyodide-lock.json").exists():
        pytest.fail("dist/ is not built: run the tests through `npm test`")
    stale = stale_wheel_modules()
    if stale:
        pytest.fail(f"dist/ has an older palazzo wheel ({stale} differ): rebuild the site first")
    files, wheels = selection
    root = tmp_path_factory.mktemp("pyodide-runner")
    stage_runner_site(root, wheels)
    server, base = serve_in_thread(root)
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    page.set_default_timeout(RUN_TIMEOUT_MS)
    try:
        page.goto(f"{base}pyodide_runner.html")
        reply = page.evaluate("(c) => window.runEngineTests(c)", run_config(base, wheels, files))
    finally:
        context.close()
        server.shutdown()
    assert guard.outside == [], f"non-local requests were attempted: {guard.outside}"
    assert guard.failed == [], f"local requests failed: {guard.failed}"
    assert page_errors == []
    assert reply["ok"], f"the runner worker failed:\n{reply['error']}"
    OUTPUT_LOG.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT_LOG.write_text(reply["result"]["output"], encoding="utf-8")
    return reply["result"] | {"times": reply["times"], "files": files}


def _report(result: dict, nodeids) -> str:
    return "\n\n".join(
        f"--- {nodeid}: {result['outcomes'].get(nodeid, 'not run')}\n"
        f"{result['details'].get(nodeid, '')}"
        for nodeid in nodeids
    )


def test_exclusions_name_existing_files():
    stale = [rel for rel in EXCLUDE if not (ENGINE_TESTS / rel).is_file()]
    assert stale == [], f"EXCLUDE names files that no longer exist: {stale}"


def test_engine_tests_ran_in_pyodide_against_the_shipped_wheel(pyodide_run):
    env = pyodide_run["environment"]
    assert env["sys.platform"] == "emscripten"
    assert env["python"].startswith("3.12")
    assert env["palazzo"] == "/lib/python3.12/site-packages/palazzo", env


def test_every_engine_test_file_is_collected_in_pyodide(pyodide_run):
    errors = pyodide_run["collect_errors"]
    if errors:
        pytest.fail(
            "collection failed in Pyodide:\n"
            + "\n\n".join(f"--- {nodeid}\n{text}" for nodeid, text in errors.items()),
            pytrace=False,
        )
    collected_files = {nodeid.split("::")[0] for nodeid in pyodide_run["collected"]}
    empty = [rel for rel in pyodide_run["files"] if f"tests/palazzo/{rel}" not in collected_files]
    if empty:
        pytest.fail(
            f"these files collected no test in Pyodide: {empty}; if they cannot run there, "
            "add them to EXCLUDE in tests/browser/test_engine_in_pyodide.py with the reason",
            pytrace=False,
        )
    # 1 is "some test failed", the next test's business; anything else means pytest broke down.
    code = pyodide_run["exit_code"]
    assert code in (0, 1), f"pytest in Pyodide exited with {code}:\n{pyodide_run['output']}"


def test_every_collected_engine_test_passes_in_pyodide(pyodide_run):
    collected = pyodide_run["collected"]
    outcomes = pyodide_run["outcomes"]
    assert collected, f"no engine test was collected in Pyodide:\n{pyodide_run['output']}"
    bad = [n for n in collected if outcomes.get(n) not in OK_OUTCOMES]
    if bad:
        pytest.fail(
            f"{len(bad)} of {len(collected)} engine tests did not pass in Pyodide:\n"
            + _report(pyodide_run, bad),
            pytrace=False,
        )

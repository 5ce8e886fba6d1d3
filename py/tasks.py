"""The npm scripts' entry point: set up, build, serve, test and benchmark palazzo.

Runs under the system ``python3`` with the standard library only: it creates ``.venv`` at the
repository root when missing (or when ``pyproject.toml`` or ``py/constraints.txt`` changed),
installs palazzo with its ``ui``, ``serve`` and ``dev`` extras into it at the versions
``py/constraints.txt`` pins, then re-runs the requested task inside that environment.

    python3 py/tasks.py start        build the site and serve it (PORT, default 8000)
    python3 py/tasks.py test [args]  build the site and run the whole pytest suite
    python3 py/tasks.py build        build the site into dist/
    python3 py/tasks.py bench-boot   measure page boot stages in Chromium
    python3 py/tasks.py bench-browser-scale   boot and search a 20k-drawer palace in Chromium
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
VENV_PY = VENV / "bin" / "python"
STAMP = VENV / ".palazzo-setup"
# Every package .venv holds, at one version: a new release (NumPy 2.4's float32 rounding once
# failed a test on a fresh clone) reaches the suite only when this file is changed.
CONSTRAINTS = ROOT / "py" / "constraints.txt"


def _setup_key() -> str:
    # Reinstall when the declared dependencies or their pinned versions change.
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()
                          + CONSTRAINTS.read_bytes()).hexdigest()


def ensure_venv() -> None:
    """Create ``.venv`` and install palazzo[ui,serve,dev] unless it is already current."""
    key = _setup_key()
    if STAMP.exists() and STAMP.read_text() == key and VENV_PY.exists():
        return
    if not VENV_PY.exists():
        print("setting up .venv (one time)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run(
        [str(VENV_PY), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True
    )
    subprocess.run(
        [str(VENV_PY), "-m", "pip", "install", "--quiet", "-c", str(CONSTRAINTS),
         "-e", f"{ROOT}[ui,serve,dev]"], check=True
    )
    STAMP.write_text(key)


def in_venv() -> bool:
    return Path(sys.prefix).resolve() == VENV.resolve()


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    if not in_venv():
        ensure_venv()
        env = dict(os.environ, PYTHONPATH=str(ROOT / "py"))
        return subprocess.run([str(VENV_PY), __file__, *argv], env=env, cwd=ROOT).returncode
    sys.path.insert(0, str(ROOT / "py"))
    from sitebuild import cli

    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

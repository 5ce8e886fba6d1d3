"""Tasks behind the npm scripts (see ``py/tasks.py``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from pathlib import Path

from sitebuild import manifest, site
from sitebuild.errors import AssetError
from sitebuild.serve import make_server

ROOT = Path(__file__).resolve().parent.parent.parent
DIST = ROOT / "dist"
CACHE = ROOT / ".cache"


def _build(args) -> int:
    site.build(ROOT, Path(args.out), Path(args.cache), precompile=not args.no_precompile)
    return 0


def _start(args) -> int:
    site.build(ROOT, DIST, CACHE)
    port = int(os.environ.get("PORT", "8000"))
    server = make_server(DIST, port, verbose=True)
    print(f"palazzo is served at http://127.0.0.1:{port}/  (Ctrl+C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


def _test(args) -> int:
    site.build(ROOT, DIST, CACHE)
    return subprocess.run([sys.executable, "-m", "pytest", *args.rest], cwd=ROOT).returncode


def _bench_boot(args) -> int:
    site.build(ROOT, DIST, CACHE)
    cmd = [sys.executable, str(ROOT / "tests" / "bench" / "boot.py"), *args.rest]
    return subprocess.run(cmd, cwd=ROOT).returncode


def _bench_browser_scale(args) -> int:
    site.build(ROOT, DIST, CACHE)
    cmd = [sys.executable, str(ROOT / "tests" / "bench" / "browser_scale.py"), *args.rest]
    return subprocess.run(cmd, cwd=ROOT).returncode


def _pin(args) -> int:
    manifest.pin(ROOT / "assets.lock.json")
    return 0


def main(argv: list[str]) -> int:
    """Run one task; an asset problem is one clear message and exit status 1."""
    parser = argparse.ArgumentParser(prog="tasks")
    sub = parser.add_subparsers(dest="task", required=True)
    b = sub.add_parser("build", help="build the offline site")
    b.add_argument("--out", default=str(DIST))
    b.add_argument("--cache", default=str(CACHE))
    b.add_argument(
        "--no-precompile", action="store_true", help="ship sources only (to measure bytecode)"
    )
    b.set_defaults(fn=_build)
    sub.add_parser("start", help="build, then serve on 127.0.0.1:$PORT").set_defaults(fn=_start)
    # These pass every further argument on (to pytest, to the benchmarks).
    sub.add_parser("test", help="build, then run pytest").set_defaults(fn=_test)
    sub.add_parser("bench-boot", help="build, then time page boots").set_defaults(fn=_bench_boot)
    sub.add_parser(
        "bench-browser-scale", help="build, then boot and search a 20k palace in Chromium"
    ).set_defaults(fn=_bench_browser_scale)
    sub.add_parser("pin", help="fill in unpinned manifest entries").set_defaults(fn=_pin)
    args, rest = parser.parse_known_args(argv)
    if rest and args.task not in ("test", "bench-boot", "bench-browser-scale"):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    try:
        return args.fn(args)
    except AssetError as err:
        print(f"build failed: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

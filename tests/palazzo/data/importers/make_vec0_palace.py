"""Write ``rust-vec0/palace.db``: a Rust MemPalace palace as it is in its normal mode, with
sqlite-vec loaded, so it holds the ``vec0`` virtual table ``vec_drawers``.

The Rust port creates ``CREATE VIRTUAL TABLE IF NOT EXISTS vec_drawers USING vec0(embedding
float[384]);`` and a plain ``vec_embedded`` table beside its drawers (``src/db.rs``; the same
statement appears in the code corpus). An SQLite without the extension sees the table in the
schema but cannot open it: ``PRAGMA table_info`` raises ``no such module: vec0``. That is what
palazzo's importer meets, so the file is made by the real extension, not imitated.

Made with the system Python (its ``sqlite3`` can load extensions; palazzo's venv Python
cannot) and the ``sqlite-vec`` 0.1.9 wheel from PyPI unpacked into a folder, not installed
in palazzo's environment::

    pip download --no-deps sqlite-vec==0.1.9 -d /tmp/whl && unzip /tmp/whl/*.whl -d /tmp/sv
    PYTHONPATH=/tmp/sv /usr/bin/python3 tests/palazzo/data/importers/make_vec0_palace.py

No vector is inserted: sqlite-vec allocates its first 1,024-vector chunk (1.5 MB) on the
first insert, too large for a fixture, and the failure does not depend on the table's rows
(palazzo never reads vectors). The file is vacuumed.
"""

from __future__ import annotations

import importlib.util
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE / "rust-vec0" / "palace.db"


def main() -> int:
    import sqlite_vec  # noqa: PLC0415 - only this script needs the extension

    spec = importlib.util.spec_from_file_location("fixtures", HERE / "make_mempalace_fixtures.py")
    fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixtures)
    OUT.unlink(missing_ok=True)
    fixtures.make_rust_palace(OUT)
    conn = sqlite3.connect(OUT)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS vec_drawers USING vec0(embedding "
                 "float[384]);")
    conn.execute("CREATE TABLE IF NOT EXISTS vec_embedded (rowid INTEGER PRIMARY KEY);")
    conn.commit()
    conn.execute("VACUUM")
    conn.close()
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes) with sqlite-vec {sqlite_vec.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

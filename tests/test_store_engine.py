"""The store's modules take DuckDB's engine module; a read path still finds the package's relational API (issue #31).

procbench/submissions/sql.py: intake's blocks (inside ``engine_only``) import no ``duckdb`` package, every other
store block imports it before its first statement, so ``con.sql`` and Arrow results work in a process where
nothing else imported it.  Each case runs in a fresh interpreter (the package, once imported, stays).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from procbench.paths import PROJECT_ROOT, SCHEMA_DIR

_CHILD = """
import json, sys
from pathlib import Path
from procbench.submissions import store
from procbench.submissions.sql import engine_only
db, make = Path(sys.argv[1]), sys.argv[2] == "make"
out = {}
if make:
    with engine_only(), store.writer(db) as con:
        out["version"] = store.schema_version(con)
    out["package_after_engine_only"] = "duckdb" in sys.modules
with store.reader(db) as con:
    out["sql"] = con.sql("SELECT count(*) FROM submissions").fetchall()[0][0]
    out["arrow_rows"] = con.sql("SELECT 1 AS x").to_arrow_table().num_rows
out["package_after_read"] = "duckdb" in sys.modules
print(json.dumps(out))
"""


def test_engine_only_blocks_import_no_package_and_read_paths_get_its_relational_api(
    tmp_path: Path,
) -> None:
    db = tmp_path / "board.duckdb"
    made, read = _child(db, "make"), _child(db, "read")  # the second reads a store it did not write
    migrations = sorted(SCHEMA_DIR.glob("[0-9][0-9][0-9]_*.sql"))
    assert made["version"] == int(migrations[-1].name[:3])  # the store was made and migrated
    assert made["package_after_engine_only"] is False
    for out in (made, read):
        assert out["sql"] == 0 and out["arrow_rows"] == 1
        assert out["package_after_read"] is True


def _child(db: Path, mode: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(db), mode],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return out

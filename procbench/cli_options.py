"""Options several command modules share, declared once (issue #33)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DB_ENV = "PROCBENCH_DB"  # the store when --db is not given; `procbench leaderboard` passes it on to the site's process (procbench/serving.py)

# --db on every command that reads or writes the store: PROCBENCH_DB, else runners.paths.DEFAULT_DB
DbOption = Annotated[
    Path,
    typer.Option(
        "--db", envvar=DB_ENV, help="DuckDB file (default: PROCBENCH_DB, else var/procbench.duckdb)"
    ),
]

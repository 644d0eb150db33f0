"""``procbench site``: the leaderboard's benchmark store and page load-time benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

site_app = typer.Typer(help="The leaderboard site: a large generated store and page load-time benchmark.", no_args_is_help=True)


@site_app.command("generate")
def generate(
    db: Annotated[Path, typer.Option(help="DuckDB file to fill (created if absent)")] = Path("var/bench.duckdb"),
    submissions: Annotated[int, typer.Option(help="how many generated submissions")] = 10_000,
    seed: Annotated[int, typer.Option()] = 0,
    fresh: Annotated[bool, typer.Option(help="delete the database first")] = True,
) -> None:
    """Fill a store with generated submissions over every task (per-item mixtures of the samples)."""
    from leaderboard.bench import generate as fill

    if fresh:
        for suffix in ("", ".wal", ".lock"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    fill(db, submissions, seed=seed)


@site_app.command("bench")
def bench(
    db: Annotated[Path, typer.Option(help="a store made by `procbench site generate`")] = Path("var/bench.duckdb"),
    task: Annotated[Optional[list[str]], typer.Option(help="tasks to load pages for (default: every task on the board)")] = None,
    page: Annotated[Optional[list[str]], typer.Option(help="pages to load (default: all)")] = None,
    output: Annotated[Optional[Path], typer.Option(help="write the timings as JSON here")] = None,
) -> None:
    """Time every page (cold, then warm) on a store: the server-side render a visitor waits for."""
    from leaderboard.bench import PAGES, measure
    from submissions.store import reader

    if not db.exists():
        typer.echo(f"error: no database at {db} (make one with `procbench site generate`)", err=True)
        raise typer.Exit(4)
    if not task:
        with reader(db) as con:
            task = [r[0] for r in con.execute("SELECT DISTINCT task FROM submissions WHERE NOT is_reference ORDER BY task").fetchall()]
    timings = measure(db, task, page or PAGES)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps([t.__dict__ for t in timings], indent=1))


def register(app: typer.Typer) -> None:
    app.add_typer(site_app, name="site")

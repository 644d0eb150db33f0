"""``procbench site``: the leaderboard's benchmark stores, the whole-page browser bench and the screenshots."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from procbench.exit_codes import EXIT_DATA_MISSING

site_app = typer.Typer(
    help="The leaderboard site: a large benchmark store, page load times in a real browser, screenshots.",
    no_args_is_help=True,
)


@site_app.command("generate")
def generate(
    db: Annotated[Path, typer.Option(help="DuckDB file to fill (created if absent)")] = Path(
        "var/bench.duckdb"
    ),
    submissions: Annotated[int, typer.Option(help="how many generated submissions")] = 10_000,
    seed: Annotated[int, typer.Option()] = 0,
    fresh: Annotated[bool, typer.Option(help="delete the database first")] = True,
    from_store: Annotated[
        Optional[Path],
        typer.Option(
            help="a real-data board (`procbench demo --db ...`): copy it and mix the new rows from its stored submissions"
        ),
    ] = None,
) -> None:
    """Fill a store with generated submissions: mixed from a real board's rows (--from-store), else from the bundled samples."""
    if from_store is not None:
        from procbench.leaderboard.bench import generate_from_store

        if not from_store.exists():
            typer.echo(
                f"error: no database at {from_store} (make one with `procbench demo --db {from_store}`)",
                err=True,
            )
            raise typer.Exit(EXIT_DATA_MISSING)
        generate_from_store(from_store, db, submissions, seed=seed)
        return
    from procbench.leaderboard.bench import generate as fill

    if fresh:
        for suffix in ("", ".wal", ".lock"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    fill(db, submissions, seed=seed)


@site_app.command("bench")
def bench(
    store: Annotated[
        Optional[list[str]],
        typer.Option(
            help="NAME=DB, repeated: the stores to load pages from (default: demo=var/site-bench/demo.duckdb)"
        ),
    ] = None,
    output: Annotated[Path, typer.Option(help="the results as JSON")] = Path("var/bench-site.json"),
    doc: Annotated[
        Optional[Path],
        typer.Option(help="write the results between the site-bench markers of this Markdown file"),
    ] = None,
    view: Annotated[
        Optional[list[str]], typer.Option(help="only the views whose name contains this (repeated)")
    ] = None,
) -> None:
    """Whole pages in headless Chromium: first paint and content, first-ever / cold / warm, server CPU per view, 20 viewers at once."""
    from procbench.leaderboard import browserbench

    stores: dict[str, Path] = {}
    for entry in store or ["demo=var/site-bench/demo.duckdb"]:
        name, _, path = entry.partition("=")
        if not path or not Path(path).exists():
            typer.echo(
                f"error: --store {entry!r}: expected NAME=DB with an existing DB (make it with `procbench demo` / `procbench site generate`)",
                err=True,
            )
            raise typer.Exit(EXIT_DATA_MISSING)
        stores[name] = Path(path)
    env = {k: v for k, v in os.environ.items() if k.startswith("PROCBENCH_")}
    browserbench.run(stores, output=output, doc=doc, env=env, only=tuple(view or ()))
    typer.echo(f"wrote {output}" + (f" and the site-bench section of {doc}" if doc else ""))


@site_app.command("screenshots")
def screenshots(
    db: Annotated[
        Path,
        typer.Option(
            help="the store to show (`procbench demo --db ...` builds the real-data board)"
        ),
    ] = Path("var/site-bench/demo.duckdb"),
    out: Annotated[Path, typer.Argument(help="folder for the PNG files")] = Path("var/screenshots"),
) -> None:
    """Full-page screenshots of Home, boards, a model page and Compare in headless Chromium."""
    from procbench.leaderboard import screenshots as shots

    if not db.exists():
        typer.echo(
            f"error: no database at {db} (make one with `procbench demo --db {db}`)", err=True
        )
        raise typer.Exit(EXIT_DATA_MISSING)
    for path in shots.take(db, out):
        typer.echo(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(site_app, name="site")

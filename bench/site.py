"""The site's benchmark tools (``make bench-site``, ``make screenshots``): a checkout tool, not in the wheel.

``python -m procbench.bench.site generate``     fill a store with generated submissions (:mod:`.site_stores`);
``python -m procbench.bench.site pages``        whole pages in headless Chromium (:mod:`.browserbench`);
``python -m procbench.bench.site home``         Home in-process after a write, then warm (:mod:`.site_home`);
``python -m procbench.bench.site screenshots``  full-page screenshots of a store (:mod:`.screenshots`).

A missing store exits 4 (missing data), as every ``procbench`` command does (procbench/exit_codes.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from procbench.exit_codes import EXIT_DATA_MISSING

DEMO_STORE = Path("var/site-bench/demo.duckdb")


def _missing(what: str) -> int:
    print(f"error: {what}", file=sys.stderr)
    return EXIT_DATA_MISSING


def generate(args: argparse.Namespace) -> int:
    """Fill a store with generated submissions: mixed from a real board's rows (--from-store), else from the samples.

    What the run cost (wall and CPU seconds, this process's peak RSS) is written beside the store
    (:func:`site_stores.cost_path`), where ``pages`` reports it with the store (issue #31: ≤ 2 GB for any size).
    """
    from procbench.bench import site_stores

    started = site_stores.Cost.start()
    if args.from_store is not None:
        if not args.from_store.exists():
            return _missing(
                f"no database at {args.from_store} (make one with `procbench demo --db {args.from_store}`)"
            )
        site_stores.generate_from_store(args.from_store, args.db, args.submissions, seed=args.seed)
    else:
        if not args.keep:
            for suffix in ("", ".wal", ".lock"):
                Path(str(args.db) + suffix).unlink(missing_ok=True)
        site_stores.generate(args.db, args.submissions, seed=args.seed)
    cost = started.stop(args.submissions)
    cost.write(args.db)
    print(cost.line())
    return 0


def pages(args: argparse.Namespace) -> int:
    """Whole pages in headless Chromium: first paint and content, first-ever / cold / warm, server CPU, 20 viewers."""
    stores: dict[str, Path] = {}
    for entry in args.store or [f"demo={DEMO_STORE}"]:
        name, _, path = entry.partition("=")
        if not path or not Path(path).exists():
            return _missing(
                f"--store {entry!r}: expected NAME=DB with an existing DB "
                "(make it with `procbench demo` / `python -m procbench.bench.site generate`)"
            )
        stores[name] = Path(path)
    from procbench.bench import browserbench

    env = {k: v for k, v in os.environ.items() if k.startswith("PROCBENCH_")}
    browserbench.run(stores, output=args.output, doc=args.doc, env=env, only=tuple(args.view))
    print(
        f"wrote {args.output}" + (f" and the site-bench section of {args.doc}" if args.doc else "")
    )
    return 0


def home(args: argparse.Namespace) -> int:
    """Home in-process (AppTest) after one real intake, then warm, beside what a write cost Home before issue #31."""
    if not args.db.exists():
        return _missing(
            f"no database at {args.db} (make one with `python -m procbench.bench.site generate`)"
        )
    from procbench.bench import site_home

    site_home.run(args.db, doc=args.doc)
    return 0


def screenshots(args: argparse.Namespace) -> int:
    """Full-page screenshots of Home, boards, a model page and Compare in headless Chromium."""
    if not args.db.exists():
        return _missing(f"no database at {args.db} (make one with `procbench demo --db {args.db}`)")
    from procbench.bench import screenshots as shots

    for path in shots.take(args.db, args.out):
        print(f"wrote {path}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m procbench.bench.site",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = top.add_subparsers(dest="command", required=True)

    gen = commands.add_parser("generate", help=generate.__doc__)
    gen.add_argument("--db", type=Path, default=Path("var/bench.duckdb"), help="store to fill")
    gen.add_argument("--submissions", type=int, default=10_000, help="how many to generate")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument(
        "--keep", action="store_true", help="add to the store instead of deleting it first"
    )
    gen.add_argument(
        "--from-store",
        type=Path,
        default=None,
        help="a real-data board (`procbench demo --db ...`): copy it and mix the new rows from its rows",
    )
    gen.set_defaults(run=generate)

    page = commands.add_parser("pages", help=pages.__doc__)
    page.add_argument(
        "--store",
        action="append",
        help=f"NAME=DB, repeated: the stores to load pages from (default: demo={DEMO_STORE})",
    )
    page.add_argument("--output", type=Path, default=Path("var/bench-site.json"))
    page.add_argument(
        "--doc",
        type=Path,
        default=None,
        help="write the results between the site-bench markers of this Markdown file",
    )
    page.add_argument(
        "--view",
        action="append",
        default=[],
        help="only the views whose name contains this (repeated)",
    )
    page.set_defaults(run=pages)

    first = commands.add_parser("home", help=home.__doc__)
    first.add_argument(
        "--db",
        type=Path,
        default=Path("var/bench.duckdb"),
        help="the store (it gets one submission more)",
    )
    first.add_argument(
        "--doc",
        type=Path,
        default=None,
        help="also write the figures into the site-bench block of this Markdown file",
    )
    first.set_defaults(run=home)

    shot = commands.add_parser("screenshots", help=screenshots.__doc__)
    shot.add_argument("--db", type=Path, default=DEMO_STORE, help="the store to show")
    shot.add_argument(
        "out", type=Path, nargs="?", default=Path("var/screenshots"), help="folder for the PNGs"
    )
    shot.set_defaults(run=screenshots)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())

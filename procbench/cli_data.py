"""``procbench data``: fetch a benchmark's upstream files into the data root, check them offline, lock them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from procbench.dsl import SpecError  # procbench.dsl.errors only (dsl imports the rest on first use)
from procbench.paths import SPECS_DIR, resolve_data_root

if TYPE_CHECKING:
    from procbench.dsl import lock as locking
    from procbench import data as fetching

from procbench.exit_codes import EXIT_DATA_MISSING, EXIT_FETCH_FAILED, EXIT_SPEC_ERROR, EXIT_TIMEOUT

data_app = typer.Typer(
    no_args_is_help=True, help="Fetch and check the benchmarks' upstream data files."
)


def _plan(target: str, split: str | None) -> list[fetching.FetchItem]:
    from procbench import data as fetching  # httpx: imported by the data commands only

    try:
        return fetching.plan(target, split=split)
    except SpecError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(EXIT_SPEC_ERROR) from None
    except (fetching.FetchError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_DATA_MISSING) from None


def _origin_note(item: fetching.FetchItem, result: fetching.FetchResult) -> str:
    if result.source == "present":
        return "already in place"
    if result.source == "cache":
        return "from the local cache"
    resumed = f", resumed at byte {result.resumed_from}" if result.resumed_from else ""
    return f"from {item.origin}{resumed}"


@data_app.command("fetch")
def fetch_command(
    target: Annotated[
        str, typer.Argument(help="a benchmark (e.g. PARADISE) or a task name (e.g. paradise-tip)")
    ],
    to: Annotated[
        Optional[Path],
        typer.Option(
            "--to",
            help="data root to fill (default: PROCBENCH_DATA, else ~/.local/share/procbench/data)",
        ),
    ] = None,
    split: Annotated[Optional[str], typer.Option(help="only the files this split needs")] = None,
    cache: Annotated[
        Optional[Path],
        typer.Option(help="download cache (default: PROCBENCH_CACHE, else ~/.cache/procbench)"),
    ] = None,
    mirror: Annotated[
        Optional[str],
        typer.Option(
            help="fetch https://HOST/PATH from MIRROR/HOST/PATH instead (env PROCBENCH_MIRROR)"
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bars")] = False,
    deadline: Annotated[
        float,
        typer.Option(
            min=0,
            envvar="PROCBENCH_FETCH_DEADLINE",
            help="seconds the whole fetch may take, every file together (0: no limit)",
        ),
    ] = 3600.0,  # procbench.data.DEFAULT_DEADLINE_S, written out: importing procbench.data (httpx) would slow every command's start
) -> None:
    """Download a benchmark's files in the upstream layout, verify size and sha256, resume partial downloads.

    Files already in place and verified are kept; a second run works offline from the cache.
    Exit 4 when nothing is declared for the target, 10 when a file could not be fetched or verified
    (or a URL redirects more than 10 times), 124 when the deadline passed.
    """
    from procbench import data as fetching

    items = _plan(target, split)
    root = (to or fetching.default_fetch_root()).expanduser().resolve()
    typer.echo(
        f"{len(items)} file(s) for {target}{f' (split {split})' if split else ''} into {root}"
    )

    from procbench.logs import Progress

    progress = Progress(f"fetch {target}", len(items))

    def report(item: fetching.FetchItem, result: fetching.FetchResult | None, error: str) -> None:
        progress.step(f"{item.spec.path} {'failed' if result is None else 'verified'}")
        if result is None:
            typer.echo(f"  FAILED  {item.spec.path}\n          {error}", err=True)
        else:
            typer.echo(
                f"  ok      {item.spec.path}  ({result.size:,} bytes, {_origin_note(item, result)})"
            )

    outcome = fetching.fetch_all(
        items,
        root,
        on_result=report,
        cache_dir=cache,
        mirror=mirror or os.environ.get("PROCBENCH_MIRROR") or None,
        show_progress=not quiet and sys.stderr.isatty(),
        deadline_s=deadline,
    )
    counts = {
        source: sum(r.source == source for r in outcome.results)
        for source in ("downloaded", "hub", "cache", "present")
    }
    typer.echo(
        f"{len(outcome.results)} verified ({counts['downloaded'] + counts['hub']} downloaded, {counts['cache']} from cache, "
        f"{counts['present']} already present), {len(outcome.failures)} failed"
    )
    if not outcome.ok:
        raise typer.Exit(EXIT_TIMEOUT if outcome.timed_out else EXIT_FETCH_FAILED)
    if (
        os.environ.get("PROCBENCH_DATA")
        and Path(os.environ["PROCBENCH_DATA"]).expanduser().resolve() == root
    ):
        return
    typer.echo(f"score against it with --data-dir {root} (or export PROCBENCH_DATA={root})")


@data_app.command("status")
def status_command(
    target: Annotated[str, typer.Argument(help="a benchmark or a task name")],
    data_dir: Annotated[
        Optional[Path],
        typer.Option(
            help="data root to check (default: PROCBENCH_DATA, else ~/.local/share/procbench/data)"
        ),
    ] = None,
    split: Annotated[Optional[str], typer.Option(help="only the files this split needs")] = None,
) -> None:
    """Check, without the network, that every declared file is present with its size and sha256 (exit 4 if not)."""
    from procbench import data as fetching

    items = _plan(target, split)
    root = (data_dir or fetching.default_fetch_root()).expanduser().resolve()
    states = fetching.status(items, root)
    for st in states:
        typer.echo(f"  {st.state:<8} {st.item.spec.path}{f'  ({st.detail})' if st.detail else ''}")
    bad = [st for st in states if st.state != "ok"]
    typer.echo(f"{len(states) - len(bad)} of {len(states)} file(s) verified under {root}")
    if bad:
        typer.echo(
            f"hint: procbench data fetch {target}{f' --split {split}' if split else ''} --to {root}",
            err=True,
        )
        raise typer.Exit(EXIT_DATA_MISSING)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _declared(spec_file: Path) -> tuple[str, locking.Declared | None]:
    """The task's name and what its fetch blocks declare, checked without reading its lock (which may be stale)."""
    from procbench.dsl import lock as locking
    from procbench.dsl.checker import check_file

    with locking.declarations_only() as found:
        spec = check_file(spec_file, search=[SPECS_DIR]).spec
    return spec.name, next(iter(found.values()), None)


@data_app.command("lock")
def lock_command(
    tasks: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="task names or spec files (default: every spec in specs/)", show_default=False
        ),
    ] = None,
    data_dir: Annotated[
        Optional[Path],
        typer.Option(
            help="the local copy to hash (default: PROCBENCH_DATA, else the shared or fetched data root)"
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="only verify that each lock matches its spec's fetch blocks (no data needed, writes nothing)",
        ),
    ] = False,
) -> None:
    """Write <spec>.lock beside each spec: every file its fetch blocks expand to, with size and sha256.

    The digests are computed from the files under the data root, which must be the upstream files
    (fetch blocks name a pinned commit).  `--check` exits 3 when a lock is missing, malformed or
    stale, or a lock has no spec with fetch blocks; writing exits 4 when declared files are missing.
    """
    from procbench.dsl import lock as locking
    from procbench.api import all_spec_paths, spec_path

    try:
        spec_files = [spec_path(t) for t in tasks] if tasks else all_spec_paths()
    except FileNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_SPEC_ERROR) from None
    root = resolve_data_root(data_dir)
    failures, exit_code = 0, 0
    for spec_file in spec_files:
        try:
            name, declared = _declared(spec_file)
        except SpecError as exc:
            typer.echo(str(exc), err=True)
            failures, exit_code = failures + 1, EXIT_SPEC_ERROR
            continue
        target = declared.lock if declared else locking.lock_path(spec_file)
        if declared is None:
            if target.is_file():
                typer.echo(
                    f"  FAILED  {_shown(target)}: {name} has no fetch blocks, so this lock belongs to nothing; delete it",
                    err=True,
                )
                failures, exit_code = failures + 1, EXIT_SPEC_ERROR
            else:
                typer.echo(f"  -       {name}: no fetch blocks, no lock needed")
            continue
        try:
            if check:
                files = locking.read_lock(target, declared.origins, declared.task_splits)
                if target.read_text(encoding="utf-8") != locking.lock_text(
                    json.loads(target.read_text(encoding="utf-8"))
                ):
                    raise locking.LockError(
                        f"{target} is not in the form procbench writes (hand-edited?)",
                        hint=f"run `procbench data lock {name}`",
                    )
                typer.echo(f"  ok      {_shown(target)}  ({len(files)} files)")
            else:
                written = locking.write_lock(
                    name, declared.origins, declared.task_splits, root, target
                )
                size = sum(entry["size"] for entry in written["files"])
                typer.echo(
                    f"  wrote   {_shown(target)}  ({len(written['files'])} files, {size:,} bytes hashed under {root})"
                )
        except locking.LockError as exc:
            typer.echo(f"  FAILED  {exc}", err=True)
            failures, exit_code = failures + 1, EXIT_SPEC_ERROR if check else EXIT_DATA_MISSING
    if check and not tasks:  # a lock whose spec is gone is stale too
        for orphan in sorted(
            p
            for p in SPECS_DIR.glob(f"*{locking.LOCK_SUFFIX}")
            if not p.with_suffix(".spec").is_file()
        ):
            typer.echo(
                f"  FAILED  {_shown(orphan)}: no spec {orphan.with_suffix('.spec').name} beside it; delete it",
                err=True,
            )
            exit_code = EXIT_SPEC_ERROR
    typer.echo(
        f"{len(spec_files) - failures} of {len(spec_files)} spec(s) {'checked' if check else 'locked'}, {failures} failed"
    )
    if exit_code:
        raise typer.Exit(exit_code)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")

"""The ``procbench`` command line: check, compile, score, submit, leaderboard, demo."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

# Only what every command needs is imported here: the spec language, the registry (NumPy) and the
# store are imported by the commands that use them, so `procbench --help` does not pay for them.
from procbench import console_commands
from procbench.cli_options import ComponentsOption, DbOption, lean_command
from procbench.cli_options import as_typer as _as_typer
from procbench.exit_codes import (
    EXIT_DATA_MISSING,
    EXIT_FINDINGS,
    EXIT_INVALID_PREDICTIONS,
    EXIT_NOT_COMPARABLE,
    EXIT_REFUSED,
    EXIT_SPEC_ERROR,
    EXIT_USAGE,
)
from procbench.paths import DEFAULT_DB

__all__ = ["EXIT_DATA_MISSING", "EXIT_INVALID_PREDICTIONS", "EXIT_SPEC_ERROR", "app"]


class _App(typer.Typer):
    """The typer app; called with no arguments (``app()``), ``score`` and ``check`` skip typer.

    procbench/cli_lean.py parses their arguments as typer would and hands anything else (``--help``, a
    usage error) back to typer; the console script (procbench/console.py) does the same without
    importing this module. Tests that invoke ``app`` through typer's CliRunner get typer.
    """

    def __call__(self, *args: object, **kwargs: object) -> object:
        if not args and not kwargs:
            from procbench.console_commands import run as run_lean

            status = run_lean(sys.argv[1:])
            if status is not None:
                sys.stdout.flush()
                raise SystemExit(status)
        return super().__call__(*args, **kwargs)


# Help and usage errors in plain text (rich_markup_mode=None): Rich's import costs more than the rest of `--help`.
app = _App(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Declarative evaluation and leaderboard for procedural-text benchmarks.",
)


def _err(text: str) -> None:
    typer.echo(text, err=True)


def _version(value: bool) -> None:
    if value:
        from procbench.logs import version_line

        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def main(
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            help="more log lines on stderr (-v: each step, -vv: debug)",
        ),
    ] = 0,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="only warnings and errors on stderr (no progress lines)"
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="print procbench's version and exit"
        ),
    ] = False,
) -> None:
    """Declarative evaluation and leaderboard for procedural-text benchmarks (exit statuses: docs/submissions.md, "Exit codes")."""
    from procbench.logs import configure

    configure(verbose=verbose, quiet=quiet)


def _parse_metadata(pairs: list[str]) -> dict[str, object]:
    with _as_typer():
        return console_commands.parse_metadata(pairs)


def _load(spec: str) -> Any:
    with _as_typer():
        return console_commands.load(spec)


# `check`, `score` (and cli_admin's `submit`) are declared once, in procbench/console_commands.py's COMMANDS:
# the console parses them from there without typer, and typer's commands are built from the same declaration.
check = app.command()(lean_command("check"))


@app.command()
def fmt(
    specs: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="spec files or task names (default: every spec in specs/ and the reported files beside them)"
        ),
    ] = None,
    check_only: Annotated[
        bool, typer.Option("--check", help="only report files that are not canonical")
    ] = False,
) -> None:
    """Rewrite specs in canonical form (parse → print → parse is the identity; comments stay where they are)."""
    from procbench.dsl.comments import in_order
    from procbench.dsl.errors import SpecError
    from procbench.dsl.parser import parse, parse_file
    from procbench.dsl.printer import format_file
    from procbench.api import all_spec_paths, reported_file_paths, spec_path

    paths = [spec_path(s) for s in specs] if specs else [*all_spec_paths(), *reported_file_paths()]
    status = 0
    for path in paths:
        try:
            tree = parse_file(path)
        except SpecError as exc:
            _err(str(exc))
            status = EXIT_SPEC_ERROR
            continue
        canonical = format_file(tree)
        if canonical == tree.source:
            continue
        again = parse(canonical, str(path))
        if (
            not in_order(tree) == in_order(again) == list(tree.comments)
            or format_file(again) != canonical
        ):
            # a safety net: never rewrite a file when the printer would lose, reorder or keep moving its comments
            _err(
                f"{path}: error: fmt cannot keep this file's comments in place; the file is left as it is\n  hint: this is a bug in procbench fmt; please "
                "report it with the file"
            )
            status = EXIT_SPEC_ERROR
            continue
        if check_only:
            _err(f"{path}: not canonically formatted (run `procbench fmt {path}`)")
            status = EXIT_FINDINGS
        else:
            path.write_text(canonical, encoding="utf-8")
            typer.echo(f"formatted {path}")
    if status:
        raise typer.Exit(status)


@app.command("compile")
def compile_(
    spec: str,
    explain_plan: Annotated[
        bool, typer.Option("--explain", help="print the runner's plan stage by stage")
    ] = False,
    out_dir: Annotated[
        Path,
        typer.Option(
            help="folder to write <task>.predictions.schema.json into (created if absent)"
        ),
    ] = Path("."),
    components: ComponentsOption = None,
) -> None:
    """Compile a spec: write its prediction-file JSON Schema into --out-dir (default: the current directory); --explain prints the plan."""
    console_commands.allow_components(components)
    task, _ = _load(spec)
    from procbench.dsl import explain
    from procbench.submissions.schema import prediction_schema

    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{task.name}.predictions.schema.json"
    out.write_text(json.dumps(prediction_schema(task), indent=2) + "\n", encoding="utf-8")
    if explain_plan:
        typer.echo(explain(task))
    typer.echo(f"wrote {out}")


score = app.command()(lean_command("score"))


# `procbench submit` (with teams, tokens and the model card) lives in procbench/cli_admin.py.


@app.command()
def demo(
    db: Annotated[Path, typer.Option()] = Path("var/demo.duckdb"),
    fresh: Annotated[bool, typer.Option(help="delete the database first")] = True,
    neural: Annotated[
        bool,
        typer.Option(
            help="run the neural baselines whose model is installed (their files are reused while unchanged)"
        ),
    ] = True,
) -> None:
    """Build the board: from the real data when the data root has it (PROCBENCH_DATA or ../shared/data), else the bundled samples."""
    from procbench.demo import build_board

    if fresh:
        import shutil

        for suffix in ("", ".wal", ".lock", ".gated"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        shutil.rmtree(Path(str(db) + ".raw"), ignore_errors=True)
        shutil.rmtree(
            Path(str(db) + ".inputs"), ignore_errors=True
        )  # the prediction files build_board writes
    n = build_board(db, heavy=neural)
    typer.echo(f"demo database {db}: {n} submissions")


@app.command()
def leaderboard(
    db: DbOption = DEFAULT_DB,
    port: Annotated[int, typer.Option(min=1, max=65535, help="the port to listen on")] = 8501,
    address: Annotated[
        str,
        typer.Option(
            help="the interface to listen on; 0.0.0.0 serves other machines too (and their users the Upload page)"
        ),
    ] = "127.0.0.1",
    headless: Annotated[bool, typer.Option(help="do not open a browser")] = True,
    run_baselines: Annotated[
        bool,
        typer.Option(
            help="once the site answers, run the baselines that need a model into the store (their boards say 'computing' meanwhile)"
        ),
    ] = False,
) -> None:
    """Serve the Streamlit leaderboard over a procbench database."""
    from procbench.serving import exposure_warning, serve_board

    warning = exposure_warning(address)
    if warning:
        _err(f"warning: {warning}")
    if not db.exists():
        _err(f"error: no database at {db} (build one with `procbench demo` or `procbench submit`)")
        raise typer.Exit(EXIT_DATA_MISSING)
    raise typer.Exit(
        serve_board(db, port=port, address=address, headless=headless, run_baselines=run_baselines)
    )


# `procbench compare`: an unknown metric or slice is a bad option value; an unknown submission refused as `admin items` refuses it
EXIT_COMPARE = {
    "metric": EXIT_USAGE,
    "slice": EXIT_USAGE,
    "unknown": EXIT_REFUSED,
    "board": EXIT_NOT_COMPARABLE,
    "different": EXIT_NOT_COMPARABLE,
}


@app.command()
def compare(
    a: Annotated[str, typer.Argument(help="submission id of A")],
    b: Annotated[str, typer.Argument(help="submission id of B")],
    metric: Annotated[
        Optional[str], typer.Option(help="metric to compare (default: the task's primary metric)")
    ] = None,
    slice_: Annotated[
        Optional[str],
        typer.Option("--slice", help="one slice value, DIM=VALUE (default: the whole split)"),
    ] = None,
    db: DbOption = DEFAULT_DB,
    permutation: Annotated[
        bool,
        typer.Option(help="also run the approximate randomisation test (1000 re-aggregations)"),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """A − B as the site's Compare page computes it: paired bootstrap interval and p-value, approximate randomisation p, the verdict
    (exit 2 unknown metric or slice, 4 no store, 5 unknown submission, 7 not on its board, or another task, split or fingerprint)."""
    from procbench.comparison import CompareError
    from procbench.comparison import compare as compare_submissions

    try:
        result = compare_submissions(
            a, b, metric=metric, slice=slice_, db=db, permutation=permutation
        )
    except FileNotFoundError as exc:
        _err(f"error: {exc} (build one with `procbench demo` or `procbench submit`)")
        raise typer.Exit(EXIT_DATA_MISSING) from None
    except CompareError as exc:
        from procbench.submissions.display import for_terminal

        _err(f"error: {for_terminal(str(exc))}")
        raise typer.Exit(EXIT_COMPARE[exc.kind]) from None
    typer.echo(result.to_json() if as_json else result.text())


# Commands of other areas live in their own modules, each exposing ``register(app)``.
_COMMAND_MODULES = (
    "procbench.cli_admin",
    "procbench.cli_data",
    "procbench.cli_export",
    "procbench.cli_models",
    "procbench.cli_components",
)


def _register_command_modules() -> None:
    import importlib
    import importlib.util

    for module_name in _COMMAND_MODULES:
        if importlib.util.find_spec(module_name) is not None:
            importlib.import_module(module_name).register(app)


_register_command_modules()

if __name__ == "__main__":
    app()

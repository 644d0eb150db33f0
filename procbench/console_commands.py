"""What ``procbench score`` and ``procbench check`` do, written without typer, and the parameters they take.

Each command is declared once, here: :data:`COMMANDS` holds its function and its parameters
(:class:`procbench.cli_lean.Param`: names, option spellings, defaults, types, environment variables,
help).  The console script (procbench/console.py) runs them through :func:`run` when
procbench/cli_lean.py parses the command line from those parameters, so that the commands users run
most import neither typer nor click (issue #19); procbench/cli.py and procbench/cli_admin.py register
the typer commands built from the same declaration (``procbench.cli_options.lean_command``) for
``--help``, usage errors and typer's CliRunner.  A command stops with :class:`CommandExit`, which
typer's command turns into ``typer.Exit`` and the console into its exit status.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

from procbench.cli_lean import Param, parse
from procbench.paths import DEFAULT_DB, SAMPLE_DATA_ROOT, resolve_data_root

from procbench.exit_codes import (
    EXIT_DATA_MISSING,
    EXIT_INVALID_PREDICTIONS,
    EXIT_SPEC_ERROR,
    EXIT_UNKNOWN_SPLIT,
    unknown_split,
)


class CommandExit(Exception):
    """The command is done with this exit status (what ``typer.Exit`` says inside a typer command)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class BadMetadata(ValueError):
    """A ``--metadata`` value that is not ``key=value`` (typer shows it as a bad parameter)."""


def echo(text: str, *, err: bool = False) -> None:
    """One line on stdout (or stderr), flushed, as ``typer.echo`` writes plain text."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def err(text: str) -> None:
    echo(text, err=True)


def parse_metadata(pairs: list[str]) -> dict[str, object]:
    """``["cot=true", "k=v"]`` -> ``{"cot": True, "k": "v"}``; raises BadMetadata for a pair without ``=``."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise BadMetadata(f"metadata must be key=value, got {pair!r}")
        out[key.strip()] = {"true": True, "false": False}.get(value.strip().lower(), value.strip())
    return out


def load(spec: str) -> Any:
    """The checked spec and compiled runner of a task name or spec file; CommandExit(3) with the error shown."""
    from procbench.dsl.errors import SpecError
    from procbench.dsl.tasks import load_task

    try:
        return load_task(spec)
    except SpecError as exc:
        err(str(exc))
        raise CommandExit(EXIT_SPEC_ERROR) from None
    except FileNotFoundError as exc:
        err(f"error: {exc}")
        raise CommandExit(EXIT_SPEC_ERROR) from None


def load_cached(spec: str) -> tuple[Any, Any]:
    """What ``submit`` needs of a task: its board fields and its runner (procbench.dsl.tasks.load_board), both from the
    cached plan on a hit, as ``score`` loads its runner, compiling nothing (issue #31).  CommandExit(3) with the error shown.
    """
    from procbench.dsl.tasks import load_board

    return _loaded(load_board, spec)


def load_runner(spec: str) -> Any:
    """The compiled runner of a task name or spec file, from its cached plan when there is one (procbench.dsl.tasks.load_runner).

    CommandExit(3) with the error shown.
    """
    from procbench.dsl.tasks import load_runner as load_task_runner

    return _loaded(load_task_runner, spec)


def _loaded(loader: Callable[[str], Any], spec: str) -> Any:
    """``loader(spec)``; CommandExit(3) with the error shown for a missing spec or a SpecError.

    A SpecError can only come from a loaded ``procbench.dsl.errors``: the plan's path imports none of the spec
    language, not even its errors.
    """
    try:
        return loader(spec)
    except FileNotFoundError as exc:
        err(f"error: {exc}")
        raise CommandExit(EXIT_SPEC_ERROR) from None
    except Exception as exc:
        errors = sys.modules.get("procbench.dsl.errors")
        if errors is None or not isinstance(exc, errors.SpecError):
            raise
        err(str(exc))
        raise CommandExit(EXIT_SPEC_ERROR) from None


def allow_components(folders: Optional[list[Path]]) -> None:
    """``--components DIR``: the operator allows the component modules in DIR (procbench.runners.runtime.registry.allow_folders)."""
    if folders:
        from procbench.runners.runtime import registry

        registry.allow_folders(folders)


def check(
    specs: Optional[list[str]] = None,
    data: bool = False,
    data_dir: Optional[Path] = None,
    components: Optional[list[Path]] = None,
    ship: bool = False,
) -> None:
    """Check specs; exit 0, or 3 with file:line:col, the line, a caret and a hint for each error (--ship: 1 when a requirement is missing)."""
    allow_components(components)
    if ship:  # every requirement of a shipped task, in one command (procbench/ship.py)
        from procbench.ship import check_ship

        status = check_ship(specs)
        if status:
            raise CommandExit(status)
        return
    from procbench.dsl.cache import checked_spec
    from procbench.dsl.errors import SpecError
    from procbench.dsl.tasks import all_spec_paths, spec_path

    paths = [spec_path(s) for s in specs] if specs else all_spec_paths()
    failed = 0
    for path in paths:
        try:
            result = checked_spec(
                path, search=[path.parent]
            )  # cached by content: an unchanged spec is not re-checked
        except SpecError as exc:
            err(str(exc))
            failed += 1
            continue
        for warning in result.warnings:
            err(warning.render(result.source))
        note = ""
        if data:
            from procbench.dsl.compiler import compile_spec
            from procbench.dsl.datacheck import check_against_data

            root = resolve_data_root(data_dir)
            diagnostics, checked = check_against_data(
                result.spec, compile_spec(result.spec), root, partial=root == SAMPLE_DATA_ROOT
            )
            for d in diagnostics:
                err(d.render(result.source))
            if any(d.severity == "error" for d in diagnostics):
                failed += 1
                continue
            note = f", data checked: {', '.join(checked) or 'none present'}"
        echo(f"ok  {path}  (task {result.spec.name}{note}{_code_loaded(result.spec)})")
    if failed:
        raise CommandExit(EXIT_SPEC_ERROR)


def refuse_unfit_data(
    spec: str, runner: Any, root: Path, split: str, *, force: bool = False, gold: Any = None
) -> None:
    """What ``check --data`` refuses about the split (procbench.dsl.datacheck.DataRefused, in its words); nothing when the data fits.

    The split is read once, into the runner's cache, and scoring reuses it.  The spec language is
    imported only when the split lacks something a check across splits looks for, or is unreadable:
    a clean run stays on the rebuilt runner.
    """
    from procbench.dsl.cache import cache_dir, code_signature
    from procbench.runners.runtime._types import GoldDataError
    from procbench.runners.runtime.data_findings import (
        lacks_something,
        passed_mark,
        remember_passed,
    )

    mark = None
    if not force:
        try:
            if (
                gold is None
            ):  # a streamed score passes what its read found (runners/runtime/streaming.py)
                gold, _ = runner.gold(root, split)
        except GoldDataError:
            pass
        else:
            if not lacks_something(runner, gold):
                return
            mark = passed_mark(runner, root, split, cache_dir(), code_signature())
            if mark is not None and mark.is_file():
                return  # checked across splits already, with these files and this checker
    from procbench.dsl.datacheck import refuse_unfit_data as refuse
    from procbench.dsl.tasks import load_task

    task, _ = load_task(spec)
    refuse(task, runner, root, split, force=force)
    remember_passed(mark)


def _code_loaded(spec: Any) -> str:
    """``; code: FILE, ...``: the operator-allowed component files the spec uses ('' when it uses only installed code)."""
    from procbench.runners.runtime import registry

    if (
        not registry.operator_folders()
    ):  # nothing but installed code can be in use: no lookup (the lean check stays lean)
        return ""
    from procbench.dsl.compiler import components_used

    origins = {registry.get(c.kind, c.name).origin for c in components_used(spec)}
    files = sorted(
        o for o in origins if o != registry.BUILTIN_ORIGIN and not o.startswith("entry point")
    )
    return f"; code: {', '.join(files)}" if files else ""


def score(
    spec: str,
    split: str,
    predictions: Path,
    data_dir: Optional[Path] = None,
    as_json: bool = False,
    metadata: Optional[list[str]] = None,
    partial: bool = False,
    components: Optional[list[Path]] = None,
) -> None:
    """Score a prediction file and print the metrics (and slices)."""
    allow_components(components)
    from procbench.runners.runtime._types import InvalidPredictions

    runner = load_runner(spec)
    root = resolve_data_root(data_dir)
    if split not in runner.splits:
        err(unknown_split(runner.name, split, runner.splits))
        raise CommandExit(EXIT_UNKNOWN_SPLIT)
    if not predictions.is_file():
        err(f"error: no prediction file at {predictions}")
        raise CommandExit(EXIT_DATA_MISSING)
    from procbench import (
        cli_data_root,
    )  # issue #29: say which data root is read, and when it is the bundled samples

    kind = cli_data_root.announce(spec, runner.name, split, root)
    if (
        partial
    ):  # issue #18: metrics over the scored items only, with the coverage (procbench.partial)
        from procbench.cli_partial import score_partial_cli

        raise CommandExit(
            score_partial_cli(
                spec, split, predictions, root, parse_metadata(metadata or []), as_json, kind
            )
        )
    try:
        given = parse_metadata(metadata or [])
        from procbench.runners.runtime import stream_choice

        # issue #31: a large input is read, scored and held a chunk at a time, to the same numbers
        streamed = stream_choice.chosen(runner, root, split, predictions, given)
        if not streamed:
            refuse_unfit_data(spec, runner, root, split)

        def check(gold: Any) -> None:  # the streamed read's findings, refused as above
            refuse_unfit_data(spec, runner, root, split, gold=gold)

        try:
            if streamed:
                from procbench.runners.runtime import streaming

                evaluation = streaming.evaluate(
                    runner, root, split, predictions, given, check=check
                )
            else:
                evaluation = runner.evaluate(root, split, predictions, given)
        except ValueError as exc:
            datacheck = sys.modules.get("procbench.dsl.datacheck")
            if datacheck is not None and isinstance(exc, datacheck.DataRefused):
                raise  # refused by the streamed read's check, in check --data's words already
            refuse_unfit_data(
                spec, runner, root, split, force=True
            )  # scoring stopped on the gold: say why as check --data does
            raise
    except InvalidPredictions as exc:
        err(cli_data_root.refusal(exc, runner, root, split, kind))
        raise CommandExit(EXIT_INVALID_PREDICTIONS) from None
    except FileNotFoundError as exc:
        err(
            f"error: missing data: {exc}\n  hint: point --data-dir or PROCBENCH_DATA at the data root"
        )
        raise CommandExit(EXIT_DATA_MISSING) from None
    except ValueError as exc:
        datacheck = sys.modules.get(
            "procbench.dsl.datacheck"
        )  # loaded only when something was wrong with the data
        if datacheck is not None and isinstance(exc, datacheck.DataRefused):
            err(str(exc))
            raise CommandExit(EXIT_SPEC_ERROR) from None
        err(f"error: {exc}")
        raise CommandExit(EXIT_DATA_MISSING) from None
    for warning in evaluation.warnings:
        err(f"warning: {warning}")
    if (
        as_json
    ):  # the warnings printed above, kept in the object too (as a --partial run's; issue #33)
        echo(
            json.dumps(
                {
                    **evaluation.to_json(),
                    "partial": False,
                    "warnings": list(evaluation.warnings),
                    "data_kind": kind,
                },
                indent=2,
            )
        )
        return
    answered = "" if evaluation.answered is None else f", {evaluation.answered} answered"
    echo(
        f"{evaluation.task} / {evaluation.split}: {evaluation.n_items} items{answered}  (fingerprint {evaluation.fingerprint[:12]})"
    )
    for name, value in evaluation.metrics.items():
        echo(f"  {name:<24} {value:.6f}")


def submit(
    spec: str,
    split: str,
    predictions: Path,
    model: str,
    team: Optional[str] = None,
    token: Optional[str] = None,
    db: Path = DEFAULT_DB,
    data_dir: Optional[Path] = None,
    metadata: Optional[list[str]] = None,
    size_class: str = "unknown",
    weights: str = "unknown",
    method: str = "unknown",
    paper_url: str = "",
    code_url: str = "",
    description: str = "",
    contamination: str = "unknown",
    contamination_source: str = "",
    run_by: str = "submitter",
    components: Optional[list[Path]] = None,
) -> None:
    """Validate, score and store a submission in one transaction (the same file twice is stored once)."""
    # procbench/cli_admin.py registers it with typer; the console runs it lean (issue #31: the store's
    # writers import no data-frame library, the judge's HTTP client only when a judge is called).
    from procbench.exit_codes import EXIT_FAILED, EXIT_REFUSED

    allow_components(components)
    from procbench.runners.runtime._types import InvalidPredictions
    from procbench.submissions import SubmissionRequest, submit as do_submit
    from procbench.submissions.details import ModelCard
    from procbench.submissions.errors import MissingData, ScoringFailed, SubmissionRefused

    task, runner = load_cached(spec)
    if not predictions.is_file():
        _stored_text(f"error: no prediction file at {predictions}", err=True)
        raise CommandExit(EXIT_DATA_MISSING)
    card = ModelCard(
        size_class,
        weights,
        method,
        paper_url,
        code_url,
        description,
        contamination,
        contamination_source,
    )
    from procbench import (
        cli_data_root,
    )  # issue #29: say which data root is read, and when it is the bundled samples

    root = resolve_data_root(data_dir)
    kind = cli_data_root.announce(spec, task.name, split, root) if split in task.splits else ""
    try:
        outcome = do_submit(
            SubmissionRequest(
                split=split,
                predictions=predictions,
                model=model,
                team=team,
                token=token,
                metadata=parse_metadata(metadata or []),
                card=card,
                run_by=run_by,
            ),
            task,
            runner,
            data_root=root,
            db_path=db,
        )
    except InvalidPredictions as exc:
        _stored_text(cli_data_root.refusal(exc, runner, root, split, kind), err=True)
        _stored_text(f"nothing was stored{_receipt(exc)}", err=True)
        raise CommandExit(EXIT_INVALID_PREDICTIONS) from None
    except SubmissionRefused as exc:
        _stored_text(f"error: {exc.message}", err=True)
        _stored_text(f"nothing was stored{_receipt(exc)}", err=True)
        # intake refuses an unknown split at stage `request`, with a receipt: its own status (issue #33)
        raise CommandExit(
            EXIT_UNKNOWN_SPLIT
            if exc.stage == "request" and split not in runner.splits
            else EXIT_REFUSED
        ) from None
    except (MissingData, FileNotFoundError, ValueError) as exc:
        _stored_text(f"error: {exc}", err=True)
        raise CommandExit(EXIT_DATA_MISSING) from None
    except ScoringFailed as exc:
        _stored_text(f"error: {exc}", err=True)
        _stored_text(f"nothing was stored{_receipt(exc)}", err=True)
        raise CommandExit(EXIT_FAILED) from None
    for warning in outcome.warnings:
        _stored_text(f"warning: {warning}", err=True)
    answered, n_items = outcome.evaluation.answered, outcome.evaluation.n_items
    if (
        answered is not None and answered < n_items
    ):  # issue #33: a partial file (a --limit run) is stored whole; say so
        _stored_text(
            f"warning: partial: the file answers {answered} of {n_items} items; the other {n_items - answered} count by the task's missing convention, "
            f"and the board shows the row's coverage as '{answered} / {n_items} · partial'",
            err=True,
        )
    state = "stored" if outcome.created else "already stored (same file, task, split and team)"
    primary = outcome.evaluation.metrics.get(task.primary, float("nan"))
    _stored_text(
        f"{state}: submission {outcome.submission_id}  {task.primary}={primary:.6f}  (team {outcome.team}, receipt {outcome.receipt or '-'})"
    )
    _say_if_not_shown(
        db, task.name, split, outcome.evaluation.fingerprint, outcome.board_fingerprint
    )


def _stored_text(text: str, *, err: bool = False) -> None:
    """Print a line that may hold stored text (names, reasons): escaped for the terminal (issue #17)."""
    from procbench.submissions.display import for_terminal

    echo(for_terminal(text, newlines=True), err=err)


def _receipt(exc: BaseException) -> str:
    receipt = getattr(exc, "receipt", "")
    return f" (receipt {receipt})" if receipt else ""


def _say_if_not_shown(
    db: Path, task: str, split: str, fingerprint: str, shown: str | None = None
) -> None:
    """Warn when a stored row's fingerprint is not the one its board shows (issue #29: registering never moves a board).

    ``shown``: the board's fingerprint as intake read it with the row (SubmissionOutcome.board_fingerprint); without
    it the store is read.
    """
    if shown is None:
        from procbench.submissions import boards, store
        from procbench.submissions.sql import engine_only

        with (
            engine_only(),
            store.reader(db) as con,
        ):  # one execute(): DuckDB's engine alone (issue #31)
            shown = boards.current(con, task, split)
    if shown not in (None, fingerprint):
        _stored_text(
            f"warning: stored under fingerprint {fingerprint[:12]}, but the board of {task} / {split} shows {shown[:12]}, so this row is not on it; "
            f"`procbench admin board list {task}` shows what each fingerprint was scored on (after a spec change, `procbench rescore {task}` moves the "
            "board once every stored submission has re-scored)",
            err=True,
        )


def _metadata_is_well_formed(kwargs: dict[str, Any]) -> bool:
    """A malformed ``--metadata`` is typer's to report (a usage error with the command's usage lines)."""
    return all("=" in pair for pair in kwargs.get("metadata") or [])


# --db, on submit here and on every typer command that reads or writes the store (procbench/cli_options.py's DbOption)
DB = Param(
    "db",
    option=True,
    base=Path,
    default=DEFAULT_DB,
    decls=("--db",),
    envvar="PROCBENCH_DB",
    help="DuckDB file (default: PROCBENCH_DB, else var/procbench.duckdb)",
)
# --components DIR on the commands that load specs: the operator allows the component modules in DIR (docs/submissions.md)
COMPONENTS = Param(
    "components",
    option=True,
    base=Path,
    many=True,
    default=None,
    decls=("--components",),
    help="allow the component modules (*.py) in this folder; as PROCBENCH_COMPONENTS",
)

# name -> (the function, its parameters: the command's one declaration, which the lean parser reads and
# procbench.cli_options.lean_command makes typer's signature of; a test of the parsed arguments that the
# lean run can report every error of: False hands the line to typer).  The function's docstring is its help.
COMMANDS: dict[
    str, tuple[Callable[..., None], tuple[Param, ...], Callable[[dict[str, Any]], bool]]
] = {
    "score": (
        score,
        (
            Param("spec", option=False, base=str, default=...),
            Param("split", option=True, base=str, default=..., help="split to score against"),
            Param("predictions", option=True, base=Path, default=..., help="prediction file"),
            Param(
                "data_dir",
                option=True,
                base=Path,
                default=None,
                help="data root (default: PROCBENCH_DATA, then ../shared/data, then the bundled samples)",
            ),
            Param(
                "as_json",
                option=True,
                base=bool,
                default=False,
                decls=("--json",),
                help="print one JSON object",
            ),
            Param(
                "metadata",
                option=True,
                base=str,
                many=True,
                default=None,
                help="submission metadata key=value (e.g. cot=true)",
            ),
            Param(
                "partial",
                option=True,
                base=bool,
                default=False,
                decls=("--partial",),
                help="score only the items the file names (a --limit run); reports coverage, never a board result",
            ),
            COMPONENTS,
        ),
        _metadata_is_well_formed,
    ),
    "submit": (
        submit,
        (
            Param("spec", option=False, base=str, default=...),
            Param("split", option=True, base=str, default=...),
            Param(
                "predictions",
                option=True,
                base=Path,
                default=...,
                help="prediction file (plain, or gzip-compressed)",
            ),
            Param(
                "model", option=True, base=str, default=..., help="model name shown on the board"
            ),
            Param(
                "team",
                option=True,
                base=str,
                default=None,
                help="team (default: the token's team, else 'anonymous')",
            ),
            Param(
                "token",
                option=True,
                base=str,
                default=None,
                envvar="PROCBENCH_TOKEN",
                help="the team's token (required once the team has one)",
            ),
            DB,
            Param("data_dir", option=True, base=Path, default=None),
            Param(
                "metadata",
                option=True,
                base=str,
                many=True,
                default=None,
                help="key=value read by some scorers, e.g. cot=true",
            ),
            Param(
                "size_class",
                option=True,
                base=str,
                default="unknown",
                help="unknown | none | small (<1B) | medium (1-10B) | large (10-100B) | xlarge (>100B) | commercial | big open-source"
                " | small (<=8 GB) | tiny (<=4 GB)",
            ),
            Param(
                "weights", option=True, base=str, default="unknown", help="unknown | open | closed"
            ),
            Param(
                "method",
                option=True,
                base=str,
                default="unknown",
                help="unknown | heuristic | neural | llm",
            ),
            Param("paper_url", option=True, base=str, default="", help="http(s) link to the paper"),
            Param("code_url", option=True, base=str, default="", help="http(s) link to the code"),
            Param(
                "description",
                option=True,
                base=str,
                default="",
                help="free text shown with the submission",
            ),
            Param(
                "contamination",
                option=True,
                base=str,
                default="unknown",
                help="known exposure to this benchmark's data: unknown | none | suspected | confirmed",
            ),
            Param(
                "contamination_source",
                option=True,
                base=str,
                default="",
                help="where that exposure is stated (a link or a citation)",
            ),
            Param(
                "run_by",
                option=True,
                base=str,
                default="submitter",
                help="who ran the model: submitter | operator (the board's own run)",
            ),
            COMPONENTS,
        ),
        _metadata_is_well_formed,
    ),
    "check": (
        check,
        (
            Param(
                "specs",
                option=False,
                base=str,
                many=True,
                default=None,
                help="spec files or task names (default: every spec in specs/)",
            ),
            Param(
                "data",
                option=True,
                base=bool,
                default=False,
                decls=("--data",),
                help="also check fields and slices against the data, where present",
            ),
            Param("data_dir", option=True, base=Path, default=None, help="data root for --data"),
            COMPONENTS,
            Param(
                "ship",
                option=True,
                base=bool,
                default=False,
                decls=("--ship",),
                help="also list what a task must have before it ships (lock, samples, baseline)",
            ),
        ),
        lambda kwargs: True,
    ),
}


def run(argv: Sequence[str]) -> int | None:
    """Run ``procbench ARGV`` without typer when it is a lean command line: its exit status, or None (typer's to run)."""
    command = COMMANDS.get(argv[0]) if argv else None
    if command is None:
        return None
    function, params, reportable = command
    kwargs = parse(params, argv[1:])
    if kwargs is None or not reportable(kwargs):
        return None
    # Scoring and checking compute in one thread: OpenBLAS's threads (started by importing NumPy) would only
    # spin, costing CPU time. A user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        function(**kwargs)
    except CommandExit as exc:
        return exc.code
    # as typer's main ends a command interrupted, at the end of its input, or writing into a closed pipe
    except KeyboardInterrupt:
        return 130
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        return 1
    except BrokenPipeError:
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the interpreter's exit flushes it
        return 1
    return 0

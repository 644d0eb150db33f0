"""``procbench export`` (an evaluate metric module, the board as a Hub dataset, .eval_results files) and ``procbench import``
(lm-evaluation-harness and Inspect logs as prediction files)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from procbench.dsl import SpecError
from procbench.cli_options import DbOption
from procbench.exit_codes import (
    EXIT_DATA_MISSING,
    EXIT_FAILED,
    EXIT_FETCH_FAILED,
    EXIT_INVALID_PREDICTIONS,
    EXIT_REFUSED,
    EXIT_SPEC_ERROR,
    EXIT_UNKNOWN_SPLIT,
)
from procbench.paths import DEFAULT_DB

export_app = typer.Typer(
    no_args_is_help=True, help="Export a task or the board to the Hugging Face ecosystem."
)
import_app = typer.Typer(
    no_args_is_help=True, help="Turn another harness's per-item log into a prediction file."
)


def _err(text: str) -> None:
    typer.echo(text, err=True)


# -- export --------------------------------------------------------------------------------------


@export_app.command("evaluate")
def export_evaluate(
    spec: Annotated[str, typer.Argument(help="task name or spec file")],
    directory: Annotated[
        Path,
        typer.Argument(
            help="where the module goes (DIR/<task>/ unless DIR is already named after the task)"
        ),
    ],
) -> None:
    """Write a Hugging Face `evaluate` metric module that scores in-memory predictions with procbench."""
    from procbench.export.evaluate_module import write_module

    try:
        module = write_module(spec, directory)
    except SpecError as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_SPEC_ERROR) from None
    except (FileNotFoundError, KeyError) as exc:
        _err(f"error: {exc.args[0] if exc.args else exc}")
        raise typer.Exit(EXIT_SPEC_ERROR) from None
    typer.echo(f"wrote {module.script} (+ README.md)")
    typer.echo(f'load it with: evaluate.load("{module.folder}")')


@export_app.command("hub-dataset")
def export_hub_dataset(
    directory: Annotated[
        Path,
        typer.Argument(help="folder to write (Parquet per task, README.md card, metrics.json)"),
    ],
    db: DbOption = DEFAULT_DB,
    push: Annotated[
        Optional[str],
        typer.Option(help="also upload the folder to this Hub dataset repo (org/name)"),
    ] = None,
    private: Annotated[bool, typer.Option(help="create the Hub repo private")] = False,
) -> None:
    """Write the public board as a dataset folder ready for `huggingface_hub.upload_folder`; --push uploads it."""
    from procbench.export.hub_dataset import PublishError, push_folder, write_dataset

    if not db.exists():
        _err(f"error: no database at {db}")
        raise typer.Exit(EXIT_DATA_MISSING)
    folder = write_dataset(db, directory)
    typer.echo(
        f"wrote {folder.root}: {len(folder.tasks)} task(s), {folder.rows} row(s), {len(folder.details)} per-item details file(s)"
    )
    for task, path in folder.tasks.items():
        typer.echo(f"  {path.relative_to(folder.root)}  ({task})")
    if push:
        try:
            url = push_folder(folder.root, push, private=private)
        except PublishError as exc:
            _err(f"error: {exc}")
            raise typer.Exit(EXIT_FETCH_FAILED) from None
        typer.echo(f"pushed to {url}")


@export_app.command("eee")
def export_eee(
    task: Annotated[
        Optional[str], typer.Argument(help="only this task's boards (default: every task)")
    ] = None,
    db: DbOption = DEFAULT_DB,
    out: Annotated[
        Path,
        typer.Option(
            help="folder to write (data/<task>/<team>/<model>/<uuid>.json and _samples.jsonl)"
        ),
    ] = Path("eee"),
    organization: Annotated[
        str, typer.Option(help="source_organization_name of the records: who runs this board")
    ] = "procbench",
) -> None:
    """Write the public board as Every Eval Ever records: one per visible row and split, per-instance lines for public splits."""
    from procbench.export.eee import export_eee as write_eee

    if not db.exists():
        _err(f"error: no database at {db}")
        raise typer.Exit(EXIT_DATA_MISSING)
    try:
        folder = write_eee(db, out, task=task, organization=organization)
    except LookupError as exc:
        _err(f"error: {exc.args[0]}")
        raise typer.Exit(EXIT_DATA_MISSING) from None
    typer.echo(
        f"wrote {folder.root}: {len(folder.records)} record(s), {len(folder.instances)} per-instance file(s) ({folder.instance_lines} line(s))"
    )


@export_app.command("eval-results")
def export_eval_results(
    db: DbOption = DEFAULT_DB,
    out: Annotated[
        Path, typer.Option(help="folder to write <model>/.eval_results/<task>.yaml into")
    ] = Path("eval_results"),
    model: Annotated[Optional[str], typer.Option(help="only this model's files")] = None,
    dataset_prefix: Annotated[
        str,
        typer.Option(
            help="dataset id prefix for tasks whose spec names no Hub dataset (<prefix>/<task>)"
        ),
    ] = "procbench",
    source_url: Annotated[
        Optional[str],
        typer.Option(help="the board's address, named as the source of submitted rows"),
    ] = None,
) -> None:
    """Write the Hub's .eval_results YAML files for each model on the board (one entry per board it is ranked on)."""
    from procbench.export.eval_results import write_eval_results

    if not db.exists():
        _err(f"error: no database at {db}")
        raise typer.Exit(EXIT_DATA_MISSING)
    written = write_eval_results(db, out, model=model, prefix=dataset_prefix, source_url=source_url)
    if not written.files:
        _err(
            f"error: no ranked row{' of model ' + repr(model[:100]) if model else ''} on the board"
        )
        raise typer.Exit(EXIT_DATA_MISSING)
    typer.echo(
        f"wrote {written.entries} entr{'y' if written.entries == 1 else 'ies'} for {len(written.files)} model(s) under {out}"
    )
    for name, paths in written.files.items():
        for path in paths:
            typer.echo(f"  {path.relative_to(out)}")


# -- import --------------------------------------------------------------------------------------


def _import(
    fmt: str,
    log: Path,
    task: str,
    out: Path,
    split: str | None,
    data_dir: Path | None,
    **reader: object,
) -> None:
    from procbench.imports import ImportFailed, ImportOptions, import_log

    options = ImportOptions(
        choice_rule=reader.pop("choice_rule", "acc"),  # type: ignore[arg-type]
        separator=reader.pop("separator", None),  # type: ignore[arg-type]
        id_field=reader.pop("id_field", None),  # type: ignore[arg-type]
        unanswered=reader.pop("unanswered", "refuse"),  # type: ignore[arg-type]
        id_offset=reader.pop("id_offset", 0),  # type: ignore[arg-type]
        errored=reader.pop("errored", "refuse"),  # type: ignore[arg-type]
    )
    if not log.is_file():
        _err(f"error: no log file at {log}")
        raise typer.Exit(EXIT_DATA_MISSING)
    if split is not None:
        _refuse_unknown_split(task, split)
    try:
        imported = import_log(
            fmt,  # type: ignore[arg-type]
            log,
            task,
            split=split,
            data_dir=data_dir,
            options=options,
            **reader,  # type: ignore[arg-type]
        )
    except KeyError as exc:
        _err(f"error: {exc.args[0]}")
        raise typer.Exit(EXIT_SPEC_ERROR) from None
    except SpecError as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_SPEC_ERROR) from None
    except ImportFailed as exc:
        _err(exc.render())
        _err("no prediction file was written")
        raise typer.Exit(EXIT_INVALID_PREDICTIONS) from None
    except (FileNotFoundError, ValueError) as exc:
        _err(
            f"error: {exc}\n  hint: point --data-dir or PROCBENCH_DATA at the data root, or fetch it with `procbench data fetch {task}`"
        )
        raise typer.Exit(EXIT_DATA_MISSING) from None
    for warning in imported.warnings:
        _err(f"warning: {warning}")
    imported.write_jsonl(out)
    typer.echo(f"wrote {out}: {len(imported.records)} prediction(s) for {task}")
    typer.echo(f"score it with: {score_command(task, split, out, data_dir, imported)}")


def _refuse_unknown_split(task: str, split: str) -> None:
    """Exit EXIT_UNKNOWN_SPLIT (the task's splits listed) for a split the task does not have; a task that does not load is import_log's to report."""
    from procbench.console_commands import CommandExit, load_runner
    from procbench.exit_codes import unknown_split

    try:
        runner = load_runner(task)
    except CommandExit as exc:
        raise typer.Exit(exc.code) from None
    if split not in runner.splits:
        _err(unknown_split(runner.name, split, runner.splits))
        raise typer.Exit(EXIT_UNKNOWN_SPLIT)


def score_command(
    task: str, split: str | None, out: Path, data_dir: Path | None, imported: object
) -> str:
    """The complete ``procbench score`` command for an imported file: the data root spelled out (never left to a fallback),
    and ``--partial`` when the log answers only part of the split (a --limit run)."""
    import shlex

    from procbench.paths import resolve_data_root

    root = resolve_data_root(data_dir).resolve()
    n_split = getattr(imported, "n_split_items", None)
    partial = n_split is not None and len(getattr(imported, "records", ())) < n_split
    parts = [
        "procbench",
        "score",
        task,
        "--split",
        split or "<split>",
        "--predictions",
        str(out),
        "--data-dir",
        str(root),
    ]
    return " ".join(shlex.quote(p) if not p.startswith("<") else p for p in parts) + (
        " --partial" if partial else ""
    )


SplitOption = Annotated[
    Optional[str], typer.Option(help="check ids and items against this split's gold (recommended)")
]
DataDirOption = Annotated[Optional[Path], typer.Option(help="data root for --split")]
IdFieldOption = Annotated[
    Optional[str],
    typer.Option(
        help="dotted path to the item id inside the logged item: lm-eval's `doc` row, Inspect's sample `metadata` (so `--id-field row.idx`; a "
        "leading `doc.`/`metadata.` is accepted too); default: the task's mapping"
    ),
]
SeparatorOption = Annotated[
    Optional[str], typer.Option(help="split generated text on this instead of the task's separator")
]
UnansweredOption = Annotated[
    str,
    typer.Option(
        help="an output naming no answer: refuse (list it as a problem) or wrong (count it wrong, as the harness's accuracy does)"
    ),
]
IdOffsetOption = Annotated[
    int, typer.Option(help="add this to every integer item id (e.g. -1 for a log numbered from 1)")
]


def _check_unanswered(value: str) -> None:
    if value not in ("refuse", "wrong"):
        raise typer.BadParameter("--unanswered is refuse or wrong")


@import_app.command("lm-eval")
def import_lm_eval(
    log: Annotated[
        Path,
        typer.Argument(
            help="lm-evaluation-harness samples_<task>_<date>.jsonl (from --log_samples)"
        ),
    ],
    task: Annotated[str, typer.Option(help="procbench task the log answers")],
    out: Annotated[Path, typer.Option(help="prediction file to write (JSON lines)")],
    split: SplitOption = None,
    data_dir: DataDirOption = None,
    filter_name: Annotated[
        Optional[str],
        typer.Option("--filter", help="which filter's responses, when the log has several"),
    ] = None,
    raw: Annotated[
        bool, typer.Option(help="use `resps` (before filters) instead of `filtered_resps`")
    ] = False,
    choice_rule: Annotated[
        str,
        typer.Option(
            help="multiple choice: acc (argmax log-likelihood) or acc_norm (per character)"
        ),
    ] = "acc",
    separator: SeparatorOption = None,
    id_field: IdFieldOption = None,
    unanswered: UnansweredOption = "refuse",
    id_offset: IdOffsetOption = 0,
) -> None:
    """Import an lm-evaluation-harness --log_samples file as a prediction file for TASK (exit 8 listing every problem)."""
    if choice_rule not in ("acc", "acc_norm"):
        raise typer.BadParameter("--choice-rule is acc or acc_norm")
    _check_unanswered(unanswered)
    _import(
        "lm-eval",
        log,
        task,
        out,
        split,
        data_dir,
        filter_name=filter_name,
        raw=raw,
        choice_rule=choice_rule,
        separator=separator,
        id_field=id_field,
        unanswered=unanswered,
        id_offset=id_offset,
    )


@import_app.command("inspect")
def import_inspect(
    log: Annotated[Path, typer.Argument(help="Inspect log (.eval archive or .json)")],
    task: Annotated[str, typer.Option(help="procbench task the log answers")],
    out: Annotated[Path, typer.Option(help="prediction file to write (JSON lines)")],
    split: SplitOption = None,
    data_dir: DataDirOption = None,
    epoch: Annotated[int, typer.Option(help="which epoch's outputs, when the run had several")] = 1,
    separator: SeparatorOption = None,
    id_field: IdFieldOption = None,
    unanswered: UnansweredOption = "refuse",
    id_offset: IdOffsetOption = 0,
    errored: Annotated[
        str,
        typer.Option(
            help="a sample that failed in the run (no output): refuse (list it as a problem), skip (leave it out: a partial file) or wrong "
            "(write a wrong answer for it); the run's own completed count is quoted"
        ),
    ] = "refuse",
) -> None:
    """Import an Inspect evaluation log as a prediction file for TASK (exit 8 listing every problem)."""
    _check_unanswered(unanswered)
    if errored not in ("refuse", "wrong", "skip"):
        raise typer.BadParameter("--errored is refuse, wrong or skip")
    _import(
        "inspect",
        log,
        task,
        out,
        split,
        data_dir,
        epoch=epoch,
        separator=separator,
        id_field=id_field,
        unanswered=unanswered,
        id_offset=id_offset,
        errored=errored,
    )


@import_app.command("eee")
def import_eee(
    record: Annotated[Path, typer.Argument(help="an EEE aggregate record (<uuid>.json)")],
    db: DbOption = DEFAULT_DB,
    task: Annotated[
        Optional[str],
        typer.Option(help="the procbench task (default: the one a procbench record names)"),
    ] = None,
    split: Annotated[
        Optional[str], typer.Option(help="the split (default: the record's, else test)")
    ] = None,
    samples: Annotated[
        Optional[Path],
        typer.Option(
            help="its per-instance file (default: the <uuid>_samples.jsonl beside the record)"
        ),
    ] = None,
    team: Annotated[
        Optional[str],
        typer.Option(
            help="team of a re-scored row (default: the record's team, else its organization)"
        ),
    ] = None,
    token: Annotated[
        Optional[str],
        typer.Option(
            envvar="PROCBENCH_TOKEN", help="the team's token (required once the team has one)"
        ),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Put an Every Eval Ever record on the board: re-scored through intake when its instances hold the predictions, else an unranked external row."""
    from procbench.imports.eee import EeeRefused
    from procbench.imports.eee import import_eee as do_import
    from procbench.paths import resolve_data_root
    from procbench.runners.runtime._types import InvalidPredictions
    from procbench.submissions.errors import MissingData, ScoringFailed, SubmissionRefused

    if not record.is_file():
        _err(f"error: no record file at {record}")
        raise typer.Exit(EXIT_DATA_MISSING)
    try:
        done = do_import(
            record,
            db_path=db,
            data_root=resolve_data_root(data_dir),
            task=task,
            split=split,
            samples=samples,
            team=team,
            token=token,
        )
    except EeeRefused as exc:
        _err(f"error: {exc}")
        _err("nothing was stored")
        raise typer.Exit(EXIT_INVALID_PREDICTIONS) from None
    except InvalidPredictions as exc:
        _err(f"error: the record's predictions were refused: {exc}")
        _err(f"nothing was stored{_receipt(exc)}")
        raise typer.Exit(EXIT_INVALID_PREDICTIONS) from None
    except SubmissionRefused as exc:
        _err(f"error: {exc.message}")
        _err(f"nothing was stored{_receipt(exc)}")
        raise typer.Exit(EXIT_REFUSED) from None
    except (MissingData, FileNotFoundError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_DATA_MISSING) from None
    except ScoringFailed as exc:
        _err(f"error: {exc}")
        _err(f"nothing was stored{_receipt(exc)}")
        raise typer.Exit(EXIT_FAILED) from None
    for warning in done.warnings:
        _err(f"warning: {warning}")
    state = "stored" if done.created else "already stored"
    what = (
        "re-scored by the board (ranked)"
        if done.how == "rescored"
        else "an external row (unranked, shown with its source)"
    )
    typer.echo(
        f"{state}: submission {done.submission_id}, {done.record.task} / {done.record.split}, model {done.record.model!r}: {what}"
    )


def _receipt(exc: BaseException) -> str:
    receipt = getattr(exc, "receipt", "")
    return f" (receipt {receipt})" if receipt else ""


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")
    app.add_typer(import_app, name="import")

"""Commands of the submission store: submit (with tokens and a model card), team, admin, rescore, export.

``register(app)`` replaces the basic ``submit`` of procbench/cli.py with one that takes ``--token``
and the model card, and prints the receipt of a refused submission; its output and exit codes
for the cases cli.py handled are unchanged.
"""

from __future__ import annotations

import getpass
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from procbench.cli_options import DbOption, lean_command
from procbench.exit_codes import (
    EXIT_DATA_MISSING,
    EXIT_FAILED,
    EXIT_FINDINGS,
    EXIT_REFUSED,
    EXIT_SPEC_ERROR,
)
from procbench.paths import DEFAULT_DB


def _say(text: str, *, err: bool = False) -> None:
    """Print a line that may hold stored text (names, reasons): escaped for the terminal (issue #17)."""
    from procbench.submissions.display import for_terminal

    typer.echo(for_terminal(text, newlines=True), err=err)


def _err(text: str) -> None:
    _say(text, err=True)


def _actor() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER", "")


# `procbench submit` is declared once, in procbench/console_commands.py's COMMANDS: the console runs it
# lean from there (issue #31), and typer's command is built from the same declaration.
submit = lean_command("submit")


def _replace_command(app: typer.Typer, name: str, callback) -> None:
    for info in list(app.registered_commands):
        if (info.name or (info.callback.__name__ if info.callback else "")) == name:
            app.registered_commands.remove(info)
    app.command(name)(callback)


# -- teams -------------------------------------------------------------------------------------------

team_app = typer.Typer(
    no_args_is_help=True, help="Teams and their tokens (only token hashes are stored)."
)


def _expiry(days: Optional[float]):
    from procbench.submissions.store import now

    return now() + timedelta(days=days) if days is not None else None


@team_app.command("create")
def team_create(
    name: str,
    db: DbOption = DEFAULT_DB,
    expires_days: Annotated[
        Optional[float], typer.Option(help="the token expires after this many days")
    ] = None,
) -> None:
    """Create a team and print its token (shown once; keep it secret)."""
    from procbench.submissions import auth, store

    try:
        auth.check_new_team(name)  # before opening the store: a refused name must not create one
        with store.writer(db) as con, store.transaction(con):
            token = auth.create_team(con, name, now=store.now(), expires_at=_expiry(expires_days))
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    _say(f"team {name} created; its token (shown once, only its hash is stored):\n{token}")


@team_app.command("token")
def team_token(
    name: str,
    db: DbOption = DEFAULT_DB,
    expires_days: Annotated[Optional[float], typer.Option()] = None,
    revoke_old: Annotated[bool, typer.Option(help="revoke the team's other tokens")] = False,
) -> None:
    """Issue a new token for a team (printed once)."""
    from procbench.submissions import auth, store

    try:
        with store.writer(db, create=False) as con, store.transaction(con):
            token = auth.issue_token(
                con,
                name,
                now=store.now(),
                expires_at=_expiry(expires_days),
                revoke_others=revoke_old,
            )
    except (ValueError, FileNotFoundError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    typer.echo(token)


@team_app.command("revoke")
def team_revoke(name: str, db: DbOption = DEFAULT_DB) -> None:
    """Revoke every token of a team (it then cannot submit until it gets a new one)."""
    from procbench.submissions import auth, store

    try:
        with store.writer(db, create=False) as con, store.transaction(con):
            n = auth.revoke_tokens(con, name, now=store.now())
    except FileNotFoundError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    _say(f"revoked {n} token{'s' if n != 1 else ''} of team {name}")


@team_app.command("list")
def team_list(db: DbOption = DEFAULT_DB) -> None:
    """Teams, their live tokens and the latest expiry."""
    from procbench.submissions import auth, store

    try:
        with store.reader(db) as con:
            rows = auth.list_teams(con, now=store.now())
    except (
        FileNotFoundError
    ) as exc:  # a mistyped --db: a message, as the other team commands give (docs/submissions.md)
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    for team, live, expires in rows:
        _say(
            f"{team:<24} {live} live token{'s' if live != 1 else ''}"
            + (f", latest expiry {expires:%Y-%m-%d %H:%M} UTC" if expires else "")
        )


# -- admin -------------------------------------------------------------------------------------------

admin_app = typer.Typer(
    no_args_is_help=True, help="Quotas, hiding and deleting submissions, receipts, consistency."
)


@admin_app.command("quota")
def admin_quota(
    task: str,
    db: DbOption = DEFAULT_DB,
    per_day: Annotated[
        Optional[int], typer.Option(help="scored submissions per team in any 24 hours")
    ] = None,
    max_attempts: Annotated[
        Optional[int], typer.Option(help="hard cap on attempts per team (scored + failed)")
    ] = None,
    split: Annotated[str, typer.Option(help="one split (default: every split of the task)")] = "",
    clear: Annotated[bool, typer.Option(help="remove the quota")] = False,
) -> None:
    """Set (or --clear) a task's quota, counted per team and split."""
    from procbench.submissions import quotas, store

    try:
        quotas.check_limits(
            per_day=per_day, max_attempts=max_attempts
        )  # before opening the store: a refusal must not create one
    except ValueError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    with store.writer(db) as con, store.transaction(con):
        if clear:
            quotas.clear_quota(con, task, split=split)
            typer.echo(f"quota of {task}{' / ' + split if split else ''} cleared")
            return
        try:
            quotas.set_quota(
                con, task, split=split, per_day=per_day, max_attempts=max_attempts, now=store.now()
            )
        except ValueError as exc:
            _err(f"error: {exc}")
            raise typer.Exit(EXIT_REFUSED) from None
    typer.echo(
        f"quota of {task} / {split or 'every split'}: per day {per_day if per_day is not None else 'unlimited'}, max attempts "
        f"{max_attempts if max_attempts is not None else 'unlimited'}"
    )


@admin_app.command("quotas")
def admin_quotas(db: DbOption = DEFAULT_DB) -> None:
    """List the quotas."""
    from procbench.submissions import quotas, store

    with store.reader(db) as con:
        for q in quotas.list_quotas(con):
            typer.echo(
                f"{q.task:<24} {q.split or '*':<8} per day {q.per_day if q.per_day is not None else '-'}  max attempts "
                f"{q.max_attempts if q.max_attempts is not None else '-'}"
            )


def _action(action: str):
    def command(
        submission: Annotated[
            str, typer.Argument(help="submission id (or a unique prefix of 6+ characters)")
        ],
        reason: Annotated[str, typer.Option(help="why (kept in the history)")] = "",
        db: DbOption = DEFAULT_DB,
    ) -> None:
        from procbench.submissions.admin import apply

        try:
            result = apply(db, submission, action, reason=reason, actor=_actor())
        except (LookupError, FileNotFoundError) as exc:
            _err(f"error: {exc}")
            raise typer.Exit(EXIT_REFUSED) from None
        typer.echo(
            f"{action}: submission {result.origin_id} ({result.rows} row{'s' if result.rows != 1 else ''} incl. re-scored copies)"
        )

    command.__doc__ = {
        "hide": "Hide a submission from the board (kept, with history).",
        "unhide": "Show a hidden submission again.",
        "delete": "Delete a submission (soft: flagged, kept with history, never on the board).",
        "restore": "Undo a delete.",
    }[action]
    return command


for _name in ("hide", "unhide", "delete", "restore"):
    admin_app.command(_name)(_action(_name))


@admin_app.command("check")
def admin_check(
    db: DbOption = DEFAULT_DB,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="remove orphan raw files (failed stores) and staging leftovers (killed intakes)",
        ),
    ] = False,
) -> None:
    """Check the store for half-written submissions, missing raw files, orphan raw files and staging leftovers (exit 1 if any)."""
    from procbench.submissions.admin import (
        check_boards,
        check_consistency,
        collect_orphans,
        collect_staging,
        orphan_blobs,
        staging_leftovers,
    )
    from procbench.submissions.blobs import blob_root

    if not db.exists():
        _err(f"error: no procbench database at {db}")
        raise typer.Exit(EXIT_REFUSED)
    problems = check_consistency(db) + check_boards(db)
    for problem in problems:
        _say(problem)
    if fix:
        removed = collect_orphans(db)
        _say(
            f"removed {len(removed)} orphan raw file{'s' if len(removed) != 1 else ''} from {blob_root(db)}"
            + "".join(f"\n  {location}" for location in removed)
        )
        orphans = []
    else:
        orphans = orphan_blobs(db)
        for location in orphans:
            _say(
                f"orphan raw file {location} in {blob_root(db)}: no raw_files row references it (a failed store; `procbench admin check --fix` removes it)"
            )
    orphans += _staging_leftovers(db, fix, collect_staging if fix else staging_leftovers)
    if problems or orphans:
        raise typer.Exit(EXIT_FINDINGS)
    typer.echo(f"{db}: consistent")


def _staging_leftovers(db: Path, fix: bool, find: Any) -> list[str]:
    """issue #29: staging folders a killed intake left under ``<db>.raw/tmp``: listed (a problem), or removed with --fix (reported)."""
    from procbench.submissions.blobs import scratch_root

    found = find(db)
    if fix:
        if found:
            _say(
                f"removed {len(found)} staging leftover{'s' if len(found) != 1 else ''} from {scratch_root(db)}"
                + "".join(f"\n  {left.name} ({left.size_bytes} bytes)" for left in found)
            )
        return []
    for left in found:
        _say(
            f"staging leftover {left.name} in {scratch_root(db)} ({left.size_bytes} bytes): a killed intake's copy of an upload "
            "(`procbench admin check --fix` removes it)"
        )
    return [left.name for left in found]


@admin_app.command("receipt")
def admin_receipt(receipt: str, db: DbOption = DEFAULT_DB) -> None:
    """What happened to a refused submission, by its receipt."""
    from procbench.submissions.queries import failure

    try:
        row = failure(db, receipt)
    except FileNotFoundError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    if row is None:
        _err(
            f"no failure with receipt {receipt!r} (a stored submission has its receipt in `submissions.receipt_id`)"
        )
        raise typer.Exit(EXIT_REFUSED)
    from procbench.submissions.display import for_terminal

    # the fields are the submitter's text (names, a split, a reason quoting their file): escaped, and
    # kept on their line (only the reason may span lines)
    task, split, team, model = (for_terminal(row[k]) for k in ("task", "split", "team", "model"))
    _say(
        f"{row['created_at']:%Y-%m-%d %H:%M:%S} UTC  {task} / {split}  team {team}  model {model}  stage {row['stage']}"
    )
    _say(row["reason"])


@admin_app.command("items")
def admin_items(
    submission: str,
    db: DbOption = DEFAULT_DB,
    admin: Annotated[bool, typer.Option(help="include hidden splits and submissions")] = False,
) -> None:
    """Per-item scores of a submission as JSON lines (refused on hidden splits without --admin)."""
    from procbench.submissions.queries import item_scores

    try:
        frame = item_scores(db, submission, admin=admin)
    except (LookupError, PermissionError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    for row in frame.iter_rows(named=True):
        typer.echo(json.dumps(row))


# -- which fingerprint each board shows (issue #29) ----------------------------------------------------

board_app = typer.Typer(
    no_args_is_help=True,
    help="Which fingerprint each board shows: list, point (logged, undoable), undo, log.",
)


@board_app.command("list")
def board_list(
    task: str,
    db: DbOption = DEFAULT_DB,
    split: Annotated[Optional[str], typer.Option(help="one split")] = None,
) -> None:
    """Every fingerprint registered for a task's boards: its data, its rows, and which one each board shows (*)."""
    from procbench.submissions import boards, store

    if not db.exists():
        _err(f"error: no procbench database at {db}")
        raise typer.Exit(EXIT_REFUSED)
    with store.reader(db) as con:
        splits = (
            [split]
            if split
            else [
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT split FROM tasks WHERE task = ? ORDER BY split", [task]
                ).fetchall()
            ]
        )
        listed = {name: boards.registered(con, task, name) for name in splits}
    if not any(listed.values()):
        _err(f"error: no board of {task}{' / ' + split if split else ''} in {db}")
        raise typer.Exit(EXIT_REFUSED)
    for name, rows in listed.items():
        for r in rows:
            items = f"{r.gold_items} items" if r.gold_items is not None else "? items"
            _say(
                f"{'*' if r.current else ' '} {task} / {name}  {r.fingerprint[:12]}  {r.data_kind:<10} {items:<11} {r.rows:>5} rows  "
                f"registered {r.registered_at:%Y-%m-%d %H:%M:%S}"
                + (f"  data root {r.data_root}" if r.data_root else "")
            )


@board_app.command("point")
def board_point(
    task: str,
    split: str,
    fingerprint: Annotated[
        str,
        typer.Argument(
            help="a registered fingerprint of the board (or a unique prefix of 6+ characters)"
        ),
    ],
    reason: Annotated[str, typer.Option(help="why (kept in the board's log)")] = "",
    db: DbOption = DEFAULT_DB,
) -> None:
    """Show another registered fingerprint on a board; logged (who, when, from, to, why) and undoable."""
    from procbench.submissions.admin import point_board

    try:
        moved = point_board(db, task, split, fingerprint, reason=reason, actor=_actor())
    except (LookupError, FileNotFoundError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    if moved is None:
        _say(f"{task} / {split} already shows that fingerprint; nothing changed")
        return
    _say(
        f"{task} / {split}: the board now shows {moved.to_fingerprint[:12]} (was {moved.from_fingerprint[:12] or '-'}; move {moved.seq})"
    )


@board_app.command("undo")
def board_undo(
    task: str,
    split: str,
    reason: Annotated[str, typer.Option(help="why (kept in the board's log)")] = "",
    db: DbOption = DEFAULT_DB,
) -> None:
    """Undo a board's latest move: show the fingerprint it showed before (itself a logged move)."""
    from procbench.submissions.admin import undo_board

    try:
        moved = undo_board(db, task, split, reason=reason, actor=_actor())
    except (LookupError, FileNotFoundError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    _say(
        f"{task} / {split}: the board now shows {moved.to_fingerprint[:12]} again (was {moved.from_fingerprint[:12]}; move {moved.seq})"
    )


@board_app.command("log")
def board_log(
    task: str,
    db: DbOption = DEFAULT_DB,
    split: Annotated[Optional[str], typer.Option(help="one split")] = None,
) -> None:
    """Every move of a task's boards, oldest first: when, how, who, from, to, why."""
    from procbench.submissions import boards, store

    if not db.exists():
        _err(f"error: no procbench database at {db}")
        raise typer.Exit(EXIT_REFUSED)
    with store.reader(db) as con:
        for m in boards.moves(con, task, split):
            _say(
                f"{m.moved_at:%Y-%m-%d %H:%M:%S} UTC  {m.task} / {m.split}  #{m.seq} {m.how:<9} {m.from_fingerprint[:12] or '-':<12} -> "
                f"{m.to_fingerprint[:12]}  by {m.actor or '-'}: {m.reason}"
            )


admin_app.add_typer(board_app, name="board")


# -- rescore, export ---------------------------------------------------------------------------------


def rescore(
    task: Annotated[str, typer.Argument(help="task name or spec file")],
    engine: Annotated[
        str,
        typer.Option(
            help="local, processes (local worker processes), or an engine registered in procbench.submissions.engines (e.g. ray)"
        ),
    ] = "local",
    split: Annotated[Optional[list[str]], typer.Option(help="only these splits")] = None,
    db: DbOption = DEFAULT_DB,
    data_dir: Annotated[Optional[Path], typer.Option()] = None,
    inline: Annotated[
        bool, typer.Option(help="ship raw files inside the jobs (workers without the store's disk)")
    ] = False,
    workers: Annotated[
        Optional[int],
        typer.Option(
            min=1,
            help="worker processes of --engine processes (default: the CPU count, or PROCBENCH_WORKERS)",
        ),
    ] = None,
) -> None:
    """Re-score stored raw files under the spec's current fingerprint (old results are kept)."""
    if workers is not None and engine != "processes":
        raise typer.BadParameter(
            "--workers is a setting of --engine processes", param_hint="--workers"
        )
    from procbench.dsl import SpecError
    from procbench.paths import resolve_data_root
    from procbench.rescore import DataKindMismatch
    from procbench.rescore import rescore as do_rescore

    try:
        report = do_rescore(
            db,
            task,
            data_root=resolve_data_root(data_dir),
            engine=engine,
            splits=split,
            inline=inline,
            actor=_actor(),
            workers=workers,
        )
    except DataKindMismatch as exc:  # issue #29: refused before anything ran
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_DATA_MISSING) from None
    except (SpecError, FileNotFoundError) as exc:
        _err(str(exc))
        raise typer.Exit(EXIT_SPEC_ERROR) from None
    except KeyError as exc:
        _err(f"error: {exc.args[0]}")
        raise typer.Exit(EXIT_REFUSED) from None
    for split_name, fingerprint in report.fingerprints.items():
        if split_name in report.moved:
            typer.echo(
                f"{report.task} / {split_name}: the board now shows fingerprint {fingerprint[:12]} (was {report.moved[split_name][0][:12]})"
            )
        elif split_name in report.kept:
            typer.echo(
                f"{report.task} / {split_name}: new fingerprint {fingerprint[:12]} registered; the board was not moved"
            )
        else:
            typer.echo(f"{report.task} / {split_name}: current fingerprint {fingerprint[:12]}")
    for split_name in report.skipped_splits:
        _err(f"warning: {report.task} / {split_name}: no data under the data root; not re-scored")
    for origin, reason in report.failed:
        _err(f"failed: {origin}: {reason}")
    for split_name, why in report.kept.items():
        _err(f"board kept: {report.task} / {split_name}: {why}")
    typer.echo(
        f"re-scored {len(report.rescored)}, already current {report.up_to_date}, failed {len(report.failed)}"
    )
    if report.failed:
        raise typer.Exit(EXIT_FAILED)


export_app = typer.Typer(no_args_is_help=True, help="Export results.")


def export_board(
    out: Annotated[Path, typer.Option(help="output file")],
    fmt: Annotated[str, typer.Option("--format", help="csv | parquet | json")] = "csv",
    task: Annotated[Optional[str], typer.Option(help="one task (default: the whole board)")] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """The board (visible submissions, current fingerprints; one row per metric and slice value)."""
    from procbench.submissions.export import export_board as do_export

    try:
        n = do_export(db, out, fmt=fmt, task=task)
    except (ValueError, LookupError, FileNotFoundError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    typer.echo(f"wrote {n} rows to {out}")


def export_ledger(
    out: Annotated[Path, typer.Option(help="output file (.json or .csv)")],
    fmt: Annotated[
        str, typer.Option("--format", help="json | csv (default: from the file's suffix)")
    ] = "",
    db: DbOption = DEFAULT_DB,
) -> None:
    """The public submission ledger: per team, model, task and split, the attempts, refusals, hidden and retracted rows (issue #34)."""
    from procbench.submissions.ledger import export_ledger as do_export

    if not Path(db).exists():  # nothing to read: create no store
        _err(f"error: no procbench database at {db}")
        raise typer.Exit(EXIT_REFUSED)
    try:
        n = do_export(Path(db), out, fmt=fmt)
    except (ValueError, FileNotFoundError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_REFUSED) from None
    typer.echo(f"wrote {n} rows to {out}")


def _export_group(app: typer.Typer) -> typer.Typer:
    """``procbench export``: procbench/cli_export.py owns the group when it exists; add ours to it."""
    try:
        from procbench import cli_export
    except ImportError:
        cli_export = None  # type: ignore[assignment]
    group = getattr(cli_export, "export_app", None)
    if isinstance(group, typer.Typer):
        return group  # cli_export.register adds it to the app
    app.add_typer(export_app, name="export")
    return export_app


def register(app: typer.Typer) -> None:
    _replace_command(app, "submit", submit)
    app.add_typer(team_app, name="team")
    app.add_typer(admin_app, name="admin")
    app.command("rescore")(rescore)
    group = _export_group(app)
    group.command("board")(export_board)
    group.command("ledger")(export_ledger)

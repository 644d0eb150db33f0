"""A board changes only by an explicit, successful act (issue #29).

The sequence that lost a public board: a store of real rows, ``rescore`` with the data root at the bundled
samples (every job fails), ``rescore`` again with the real data ("already current"), a new real
submission.  Each step runs as the real ``procbench`` command in a subprocess, once to the end and once
killed with SIGKILL at each named point on its way (``PROCBENCH_CRASH_AT``: the process kills itself
there, ``procbench.submissions.store.crash_point``, so the moment is deterministic); after each, ``admin check``
says the store is consistent and every board row is still there.  Board rows are read from the store's
``board`` view, the rows the site shows.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import duckdb
import pytest

from procbench.api import load_task
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, default_data_root
from procbench.rescore import DataKindMismatch, rescore
from procbench.submissions import SubmissionRequest, provenance, submit
from procbench.submissions.admin import check_boards, check_consistency, point_board, undo_board
from tests.test_submissions_support import (
    STRONG,
    TEMPLATE,
    openpi_spec_variant,
    query,
    submit_openpi,
)

PROCBENCH = str(PROJECT_ROOT / ".venv" / "bin" / "procbench")
TASKS = ("openpi", "paradise-tip")
BOARD = (
    "SELECT submission_id, task, split, slice, slice_value, metric, value FROM board ORDER BY ALL"
)


def _real_root() -> Path:
    root = default_data_root()
    if root is None:
        pytest.skip("no real data root (PROCBENCH_DATA or ../shared/data) here")
    for task in TASKS:
        spec, _ = load_task(task)
        if (
            provenance.of(spec, "test", root, gold_items=None, scorer_digest="").kind
            != provenance.REAL
        ):
            pytest.skip(
                f"the data root {root} does not hold the real {task} test split (its files do not match the lock)"
            )
    return root


def _real_file(folder: Path, task: str, root: Path, salt: str = "") -> Path:
    """A valid prediction file for the real test split of ``task``: every gold id, an answer derived from it."""
    _, runner = load_task(task)
    gold, _ = runner.gold(root, "test")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}{salt}.jsonl"
    lines = []
    for item_id in gold.items:
        pick = int(hashlib.sha256(f"{salt}{item_id}".encode()).hexdigest(), 16)
        answer = (
            "there will be no change."
            if pick % 2
            else "the thing was whole before and in pieces afterwards"
        )
        record = (
            {"id": item_id, "answers": [answer]}
            if task == "openpi"
            else {"id": int(item_id), "label": pick % 4}
        )
        lines.append(json.dumps(record) + "\n")
    path.write_text("".join(lines))
    return path


def _run(
    *args: str, crash_at: str | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PROCBENCH_CRASH_AT"}
    if crash_at:
        env["PROCBENCH_CRASH_AT"] = crash_at
    return subprocess.run(
        [PROCBENCH, *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _copy(db: Path, to: Path) -> Path:
    shutil.copy(db, to)
    if Path(f"{db}.raw").is_dir():
        shutil.copytree(f"{db}.raw", f"{to}.raw")
    return to


def _consistent(db: Path, *, killed: bool = False) -> None:
    """``admin check`` says consistent; after a kill, the only findings may be what a killed intake leaves for ``--fix`` (docs/submissions.md)."""
    checked = _run("admin", "check", "--db", str(db))
    if killed and checked.returncode == 1:
        leftovers = checked.stdout.strip().splitlines()
        assert leftovers and all(
            "`procbench admin check --fix` removes" in line for line in leftovers
        ), checked.stdout
        fixed = _run("admin", "check", "--fix", "--db", str(db))
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        checked = _run("admin", "check", "--db", str(db))
    assert checked.returncode == 0 and checked.stdout.strip().endswith("consistent"), (
        checked.stdout + checked.stderr
    )


@pytest.fixture(scope="module")
def real_store(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, list[tuple[object, ...]]]:
    """Two tasks' real test boards, two submissions each (and the papers' rows), as procbench submit stores them."""
    root = _real_root()
    folder = tmp_path_factory.mktemp("real")
    db = folder / "real.duckdb"
    for task in TASKS:
        spec, runner = load_task(task)
        for salt in ("a", "b"):
            submit(
                SubmissionRequest(
                    split="test",
                    predictions=_real_file(folder, task, root, salt),
                    model=f"{task}-{salt}",
                    team="t",
                ),
                spec,
                runner,
                data_root=root,
                db_path=db,
            )
    board = query(db, BOARD)
    assert {r[1] for r in board} == set(TASKS) and len({r[0] for r in board}) == 4
    return db, root, board


def test_the_sequence_that_emptied_boards_keeps_every_row(
    real_store: tuple[Path, Path, list[tuple[object, ...]]], tmp_path: Path
) -> None:
    source, root, board = real_store
    db = _copy(source, tmp_path / "store.duckdb")
    boards_before = query(db, "SELECT count(*) FROM current_tasks")
    # 1. the data root at the bundled samples: refused before anything runs, naming both data roots
    for task in TASKS:
        refused = _run("rescore", task, "--db", str(db), "--data-dir", str(SAMPLE_DATA_ROOT))
        assert refused.returncode == 4, refused.stderr
        assert "the real data" in refused.stderr and "the bundled sample data" in refused.stderr
        assert str(root) in refused.stderr and str(SAMPLE_DATA_ROOT.resolve()) in refused.stderr
        assert (
            "nothing was re-scored or stored" in refused.stderr
            and "Traceback" not in refused.stderr
        )
    assert query(db, BOARD) == board
    # 2. the real data again: nothing to do, nothing added (no new boards either)
    for task in TASKS:
        again = _run("rescore", task, "--db", str(db), "--data-dir", str(root))
        assert again.returncode == 0, again.stderr
        assert "re-scored 0, already current 2, failed 0" in again.stdout
    assert (
        query(db, BOARD) == board
        and query(db, "SELECT count(*) FROM current_tasks") == boards_before
    )
    # 3. a new real submission is stored and shown beside every earlier row
    new = _real_file(tmp_path, "openpi", root, "c")
    stored = _run(
        "submit",
        "openpi",
        "--split",
        "test",
        "--predictions",
        str(new),
        "--model",
        "new",
        "--team",
        "t",
        "--db",
        str(db),
        "--data-dir",
        str(root),
    )
    assert stored.returncode == 0 and stored.stdout.startswith("stored:"), stored.stderr
    after = query(db, BOARD)
    assert set(board) <= set(after) and {r[0] for r in after} - {r[0] for r in board} == {
        stored.stdout.split()[2]
    }
    _consistent(db)


def test_the_sequence_even_where_the_store_cannot_tell_sample_from_real(
    real_store: tuple[Path, Path, list[tuple[object, ...]]], tmp_path: Path
) -> None:
    """A store registered before data kinds were recorded ('unknown'): the up-front refusal cannot apply, the all-or-nothing rule holds."""
    source, root, board = real_store
    db = _copy(source, tmp_path / "old.duckdb")
    con = duckdb.connect(str(db))
    con.execute("UPDATE tasks SET data_kind = 'unknown'")
    con.close()
    failed = _run("rescore", "openpi", "--db", str(db), "--data-dir", str(SAMPLE_DATA_ROOT))
    assert failed.returncode == 6, failed.stderr
    assert (
        "the board was not moved" in failed.stdout and "board kept: openpi / test" in failed.stderr
    )
    assert "procbench-raw-" not in failed.stderr  # names the stored file, never its scratch copy
    assert query(db, BOARD) == board
    again = _run("rescore", "openpi", "--db", str(db), "--data-dir", str(root))
    assert again.returncode == 0 and "already current 2" in again.stdout, again.stderr
    assert query(db, BOARD) == board
    _consistent(db)


REAL_STEPS = {
    "samples": (("rescore", "openpi", "--data-dir", "{samples}"), ("rescore.planned",)),
    "real": (("rescore", "openpi", "--data-dir", "{root}"), ("rescore.planned",)),
    "submit": (
        (
            "submit",
            "openpi",
            "--split",
            "test",
            "--predictions",
            "{file}",
            "--model",
            "new",
            "--team",
            "t",
            "--data-dir",
            "{root}",
        ),
        (
            "intake.before_store",
            "store.between_inserts",
            "store.before_commit",
            "store.after_commit",
        ),
    ),
}


@pytest.mark.parametrize(
    "step,point", [(step, point) for step, (_, points) in REAL_STEPS.items() for point in points]
)
def test_a_sigkill_at_each_step_leaves_the_store_consistent_and_the_board_rows(
    real_store: tuple[Path, Path, list[tuple[object, ...]]], tmp_path: Path, step: str, point: str
) -> None:
    source, root, board = real_store
    db = _copy(source, tmp_path / "store.duckdb")
    new = _real_file(tmp_path, "openpi", root, "killed")
    args = [a.format(samples=SAMPLE_DATA_ROOT, root=root, file=new) for a in REAL_STEPS[step][0]]
    killed = _run(*args, "--db", str(db), crash_at=point)
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr)
    _consistent(db, killed=True)
    after = query(db, BOARD)
    assert set(board) <= set(after)  # every row still there
    extra = {r[0] for r in after} - {r[0] for r in board}
    assert (
        extra == set() if point != "store.after_commit" else len(extra) == 1
    )  # the killed submission: all of it or nothing


# -- re-scoring after a spec change (bundled samples: runs everywhere) ----------------------------------


@pytest.fixture()
def sample_store(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "board.duckdb"
    submit_openpi(db, STRONG, model="strong")
    submit_openpi(db, TEMPLATE, model="template")
    changed = openpi_spec_variant(
        tmp_path / "specs", old="params { dedup = false", new="params { dedup = true", name="openpi"
    )
    return db, changed


def _fingerprints(db: Path) -> list[tuple[object, ...]]:
    return query(db, "SELECT split, fingerprint FROM current_tasks ORDER BY ALL")


@pytest.mark.parametrize(
    "point",
    [
        "rescore.before_jobs",
        "rescore.after_jobs",
        "rescore.before_commit",
        "rescore.after_commit",
        "rescore.before_move",
    ],
)
def test_a_rescore_killed_anywhere_keeps_the_board_and_the_next_run_moves_it(
    sample_store: tuple[Path, Path], point: str
) -> None:
    db, changed = sample_store
    board, shown = query(db, BOARD), _fingerprints(db)
    killed = _run(
        "rescore",
        str(changed),
        "--db",
        str(db),
        "--data-dir",
        str(SAMPLE_DATA_ROOT),
        crash_at=point,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    _consistent(db, killed=True)
    assert query(db, BOARD) == board and _fingerprints(db) == shown
    done = _run("rescore", str(changed), "--db", str(db), "--data-dir", str(SAMPLE_DATA_ROOT))
    assert done.returncode == 0, done.stderr
    assert "openpi / test: the board now shows fingerprint" in done.stdout
    (moved,) = [fp for split, fp in _fingerprints(db) if split == "test"]
    _, runner = load_task(changed)
    assert moved == runner.gold(SAMPLE_DATA_ROOT, "test")[1]
    assert sorted(
        r[0]
        for r in query(
            db,
            "SELECT model FROM board WHERE NOT is_reference AND slice = '' AND metric = 'rouge_f1'",
        )
    ) == ["strong", "template"]
    _consistent(db)


def test_a_rescore_that_adds_nothing_adds_no_board(sample_store: tuple[Path, Path]) -> None:
    db, _ = sample_store
    tables = "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM board_moves), (SELECT count(*) FROM current_tasks), (SELECT count(*) FROM submissions)"
    before = query(db, tables)
    report = rescore(db, "openpi", data_root=SAMPLE_DATA_ROOT)
    assert (
        report.rescored == []
        and report.failed == []
        and report.moved == {}
        and set(report.fingerprints) == {"test"}
    )
    assert (
        query(db, tables) == before
    )  # the dev split has data, but no board: none is registered for it


def test_admin_board_point_moves_and_undoes_logged(sample_store: tuple[Path, Path]) -> None:
    db, _ = sample_store
    stricter = openpi_spec_variant(
        db.parent / "strict",
        old="schema { id = str  answers = list(str) }",
        new="schema { id = str  answers = list(str)  confidence = float }",
        name="openpi",
    )
    old_fp = _fingerprints(db)[0][1]
    board = query(db, BOARD)
    report = rescore(db, stricter, data_root=SAMPLE_DATA_ROOT, actor="op")
    assert len(report.failed) == 2 and report.moved == {} and "test" in report.kept
    assert query(db, BOARD) == board and check_boards(db) == []
    new_fp = report.fingerprints["test"]
    # the operator's word: show the new fingerprint anyway (by prefix), then undo
    point = _run(
        "admin",
        "board",
        "point",
        "openpi",
        "test",
        new_fp[:10],
        "--reason",
        "the new schema is right",
        "--db",
        str(db),
    )
    assert (
        point.returncode == 0 and f"now shows {new_fp[:12]} (was {str(old_fp)[:12]}" in point.stdout
    ), point.stderr
    assert query(db, "SELECT count(*) FROM board WHERE NOT is_reference") == [
        (0,)
    ]  # the new fingerprint has no rows
    assert any(
        "shows fingerprint" in p and "which has no rows" in p for p in check_boards(db)
    )  # admin check reports it
    checked = _run("admin", "check", "--db", str(db))
    assert checked.returncode == 1 and "which has no rows" in checked.stdout
    undo = _run(
        "admin", "board", "undo", "openpi", "test", "--reason", "rows first", "--db", str(db)
    )
    assert undo.returncode == 0, undo.stderr
    assert query(db, BOARD) == board and check_boards(db) == [] and check_consistency(db) == []
    log = query(
        db,
        "SELECT seq, from_fingerprint, to_fingerprint, how, reason, actor <> '' FROM board_moves WHERE task = 'openpi' AND split = 'test' ORDER BY seq",
    )
    assert [(r[1], r[2], r[3]) for r in log] == [
        ("", old_fp, "first"),
        (old_fp, new_fp, "point"),
        (new_fp, old_fp, "point"),
    ]
    assert (
        log[1][4] == "the new schema is right"
        and log[2][4].startswith("undo of move 2")
        and log[1][5]
        and log[2][5]
    )
    shown = _run("admin", "board", "log", "openpi", "--db", str(db))
    assert shown.returncode == 0 and len(shown.stdout.strip().splitlines()) == 3


def test_admin_board_point_refuses_what_is_not_registered(sample_store: tuple[Path, Path]) -> None:
    db, _ = sample_store
    before = query(db, "SELECT count(*) FROM board_moves")
    for args in (
        ("openpi", "test", "0" * 64),
        ("openpi", "nope", "abcdef"),
        ("nope", "test", "abcdef"),
    ):
        refused = _run("admin", "board", "point", *args, "--db", str(db))
        assert (
            refused.returncode == 5
            and refused.stderr.startswith("error: ")
            and "Traceback" not in refused.stderr
        )
    assert query(db, "SELECT count(*) FROM board_moves") == before
    with pytest.raises(LookupError, match="no move to undo"):
        undo_board(db, "openpi", "test")
    assert (
        point_board(db, "openpi", "test", _fingerprints(db)[0][1]) is None
    )  # already shown: nothing logged
    assert query(db, "SELECT count(*) FROM board_moves") == before


def test_a_submission_under_another_fingerprint_never_moves_the_board(
    sample_store: tuple[Path, Path],
) -> None:
    db, changed = sample_store
    board, shown = query(db, BOARD), _fingerprints(db)
    stored = submit_openpi(
        db, STRONG, spec_file=changed, model="strong-new"
    )  # registers the changed spec's fingerprint
    assert stored.created and _fingerprints(db) == shown and query(db, BOARD) == board


def test_rescoring_real_rows_on_samples_is_refused_in_the_api_too(
    real_store: tuple[Path, Path, list[tuple[object, ...]]], tmp_path: Path
) -> None:
    source, root, board = real_store
    db = _copy(source, tmp_path / "store.duckdb")
    before = query(
        db,
        "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM status_history), (SELECT count(*) FROM board_moves)",
    )
    with pytest.raises(DataKindMismatch, match="data root") as refused:
        rescore(db, "paradise-tip", data_root=SAMPLE_DATA_ROOT)
    assert "paradise-tip / test" in str(refused.value)
    after = query(
        db,
        "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM status_history), (SELECT count(*) FROM board_moves)",
    )
    assert after == before and query(db, BOARD) == board


def test_a_board_an_earlier_version_emptied_is_reported_and_a_real_rescore_restores_it(
    real_store: tuple[Path, Path, list[tuple[object, ...]]], tmp_path: Path
) -> None:
    """What stores damaged before 006 look like: the board on a sample fingerprint (registered by a failed re-scoring, paper rows only)."""
    from procbench.submissions.intake import load_reported

    source, root, board = real_store
    db = _copy(source, tmp_path / "damaged.duckdb")
    spec, runner = load_task("openpi")
    load_reported(
        spec, runner, data_root=SAMPLE_DATA_ROOT, db_path=db
    )  # registers the sample fingerprint, as the failed re-scoring did
    sample_fp = runner.gold(SAMPLE_DATA_ROOT, "test")[1]
    con = duckdb.connect(
        str(db)
    )  # the old board followed the latest registration: put this board where it was left
    con.execute(
        "INSERT INTO board_moves SELECT task, split, max(seq) + 1, arg_max(to_fingerprint, seq), ?, 'migration', 'as an earlier version left it', '', now()"
        " FROM board_moves WHERE task = 'openpi' AND split = 'test' GROUP BY task, split",
        [sample_fp],
    )
    con.close()
    assert not [r for r in query(db, BOARD) if r[1] == "openpi"]
    checked = _run("admin", "check", "--db", str(db))
    assert (
        checked.returncode == 1
        and "board openpi / test shows fingerprint" in checked.stdout
        and "which has no rows, while" in checked.stdout
    )
    repaired = _run(
        "rescore", "openpi", "--db", str(db), "--data-dir", str(root)
    )  # the board shows no rows: nothing to refuse
    assert (
        repaired.returncode == 0
        and "openpi / test: the board now shows fingerprint" in repaired.stdout
    ), repaired.stderr
    after = query(db, BOARD)
    assert set(board) <= set(
        after
    )  # every row back; the papers' rows of the real split come with the move
    added = {r[0] for r in after} - {r[0] for r in board}
    assert added and query(
        db,
        "SELECT DISTINCT is_reference FROM submissions WHERE list_contains(?, submission_id)",
        [sorted(added)],
    ) == [(True,)]
    _consistent(db)

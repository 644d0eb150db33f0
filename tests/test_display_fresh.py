"""Issue #32.4: display fresh, scoring frozen.

A copy of the shipped PAGED spec renames its primary metric (``display``) and turns its direction round
(``higher_is_better = false``). Neither is fingerprinted (docs/language.md, "Fingerprints"; docs/submissions.md,
"Display settings follow the spec"), so the copy scores under the shipped spec's fingerprint; one more file
submitted through the real intake (``procbench submit``) refreshes the stored spec of that fingerprint, and the
board, the Hub dataset and the EEE export read the new name and the new order from it, with the numbers the
rows were stored with.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from procbench.cli import app
from procbench.dsl.tasks import load_task
from procbench.export.eee import export_eee
from procbench.export.hub_dataset import write_dataset
from procbench.leaderboard import boardview
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from tests.site_app import info_of

SAMPLES = SAMPLE_SUBMISSIONS_DIR / "paged"
SHIPPED_BLOCK = '  metric action {\n    display     = "Action F1"\n'
NEW_NAME = "Action F1, renamed"
CHANGED_BLOCK = (
    f'  metric action {{\n    display     = "{NEW_NAME}"\n    higher_is_better = false\n'
)


def _submit(spec: Path, predictions: Path, model: str, db: Path) -> None:
    args = ["submit", str(spec), "--split", "dev", "--predictions", str(predictions)]
    args += ["--data-dir", str(SAMPLE_DATA_ROOT), "--model", model, "--team", "demo"]
    result = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert result.exit_code == 0, result.output


def _ranks(db: Path, column: str) -> tuple[dict[str, int], dict[str, float]]:
    """The full rows' ranks and values on the board of paged/dev, as the site builds it."""
    table = boardview.build(db, info_of(db, "paged", "dev"), interval_rows=0).table
    assert column in table.columns, table.columns
    rows = [r for r in table.iter_rows(named=True) if r["Model"] in ("careful", "chain")]
    return {r["Model"]: r["Rank"] for r in rows}, {r["Model"]: r[column] for r in rows}


def _stored_action(db: Path) -> tuple[int, dict[str, object]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT spec_json FROM tasks WHERE task = 'paged' AND split = 'dev'"
        ).fetchall()
    metrics = json.loads(rows[-1][0])["metrics"]
    return len(rows), next(x for x in metrics if x["name"] == "action")


def test_a_renamed_and_reversed_metric_keeps_the_fingerprint_and_the_board_follows_it(
    tmp_path: Path,
) -> None:
    shipped = Path(load_task("paged")[0].path)
    db = tmp_path / "board.duckdb"
    _submit(shipped, SAMPLES / "careful-extractor.jsonl", "careful", db)
    _submit(shipped, SAMPLES / "activity-chain.jsonl", "chain", db)
    ranks, values = _ranks(db, "Action F1")
    assert values["careful"] != values["chain"]
    best = max(values, key=values.__getitem__)
    worst = min(values, key=values.__getitem__)
    assert (ranks[best], ranks[worst]) == (1, 2)  # higher is better, as shipped

    text = shipped.read_text(encoding="utf-8")
    assert text.count(SHIPPED_BLOCK) == 1
    copy = tmp_path / "spec" / "paged.spec"
    copy.parent.mkdir()
    copy.write_text(text.replace(SHIPPED_BLOCK, CHANGED_BLOCK), encoding="utf-8")
    shutil.copy(shipped.with_suffix(".lock"), copy.with_suffix(".lock"))
    spec, runner = load_task(copy)
    action = spec.metric("action")
    assert action is not None and (action.display, action.higher_is_better) == (NEW_NAME, False)
    # neither a display name nor a direction is fingerprinted: the copy scores under the shipped fingerprint
    assert runner.spec_digest == load_task("paged")[1].spec_digest

    again = (
        tmp_path / "careful-again.jsonl"
    )  # a file of its own: a stored file is refused as a duplicate
    lines = (SAMPLES / "careful-extractor.jsonl").read_text(encoding="utf-8").splitlines(True)
    again.write_text("".join(lines[:-1]), encoding="utf-8")
    _submit(copy, again, "again", db)

    count, stored = _stored_action(db)
    assert count == 1  # no second fingerprint: the one task row now holds the copy's spec
    assert (stored["display"], stored["higher_is_better"]) == (NEW_NAME, False)
    info = info_of(db, "paged", "dev")
    assert (info.primary_metric.display, info.primary_metric.higher_is_better) == (NEW_NAME, False)

    ranks_after, values_after = _ranks(db, NEW_NAME)
    assert values_after == values  # the stored numbers, unchanged
    assert (ranks_after[worst], ranks_after[best]) == (1, 2)  # lower is better now

    hub = write_dataset(db, tmp_path / "hub")
    readme = (hub.root / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("| `action` (primary) |"))
    assert NEW_NAME in line and "| no |" in line

    eee = export_eee(db, tmp_path / "eee", task="paged")
    configs = [
        r["metric_config"]
        for path in eee.records
        for r in json.loads(path.read_text(encoding="utf-8"))["evaluation_results"]
        if r["metric_config"]["metric_id"] == "paged.action"
    ]
    assert configs and all(
        (c["metric_name"], c["lower_is_better"]) == (NEW_NAME, True) for c in configs
    )

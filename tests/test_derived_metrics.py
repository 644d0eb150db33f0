"""Metrics computed from other metrics (`from = ...`): ProPara's official aggregation declared, and the checker's refusals."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.api import load_task
from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.propara.leaderboard import aggregate_leaderboard


@pytest.mark.parametrize(
    "submission", sorted((SAMPLE_SUBMISSIONS_DIR / "propara").glob("*.tsv")), ids=lambda p: p.stem
)
def test_the_declared_propara_aggregation_equals_the_official_one_on_any_subset(
    submission: Path,
) -> None:
    # aggregate_leaderboard is the aggregation the parity tests pin to the official evaluator's numbers
    _, runner = load_task("propara")
    gold, _ = runner.gold(SAMPLE_DATA_ROOT, "test")
    records, _ = runner.validate(submission, gold)
    items = runner.score(gold, records, {})
    rnd = random.Random(15)
    subsets = [items, []] + [rnd.sample(items, rnd.randint(1, len(items))) for _ in range(40)]
    for subset in subsets:
        official = aggregate_leaderboard(subset)
        declared = runner.aggregate(subset)
        assert {
            k: declared[k] for k in official
        } == official  # exactly: same rounding, same order of additions


SPEC = """
task quiz {
  title   = "quiz"
  version = "1"
  primary = both

  data {
    splits = [test]

    source q { format = "jsonl"  path = "quiz/{split}.jsonl" }

    id     = q.id

    fields { answer: int = q.answer }
  }

  predictions {
    format = "jsonl"

    schema { id = str  choice = int }
  }

  score {
    measure accuracy { metric = accuracy()  gold = answer  prediction = choice }
    METRICS
  }
}
"""


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        ("measure both { from = f1(accuracy, acuracy) }", "unknown metric in from 'acuracy'"),
        (
            "measure both { from = harmonic(accuracy, accuracy) }",
            "unknown function in from 'harmonic'",
        ),
        ("measure both { from = f1(accuracy) }", "f1() takes 2 argument(s), got 1"),
        ("measure both { from = round(accuracy, 2.5) }", "digits is a whole number"),
        (
            "measure both { from = mean(accuracy, other) }\n    measure other { from = mean(both) }",
            "metrics computed from each other: both -> other -> both",
        ),
        (
            'measure both { from = accuracy  aggregate = "sum" }',
            "`from = ...` computes it from other metrics",
        ),
    ],
)
def test_formula_mistakes_are_refused(tmp_path: Path, metrics: str, message: str) -> None:
    spec = tmp_path / "quiz.spec"
    spec.write_text(SPEC.replace("METRICS", metrics))
    result = CliRunner().invoke(app, ["check", str(spec)])
    assert result.exit_code == 3, result.output
    assert message in result.output
    assert result.output.count(": error: ") == 1, result.output


def test_a_formula_is_evaluated_on_every_slice_and_shown_by_explain(tmp_path: Path) -> None:
    import json

    (tmp_path / "data" / "quiz").mkdir(parents=True)
    (tmp_path / "data" / "quiz" / "test.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "answer": i % 2}) + "\n" for i in range(8))
    )
    (tmp_path / "p.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "choice": 1 if i < 3 else 0}) + "\n" for i in range(8))
    )
    spec = tmp_path / "quiz.spec"
    spec.write_text(SPEC.replace("METRICS", "measure both { from = round(f1(accuracy, 0.5), 4) }"))
    result = CliRunner().invoke(
        app,
        [
            "score",
            str(spec),
            "--split",
            "test",
            "--predictions",
            str(tmp_path / "p.jsonl"),
            "--data-dir",
            str(tmp_path / "data"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["metrics"]
    accuracy = sum((1 if i < 3 else 0) == i % 2 for i in range(8)) / 8
    assert metrics["accuracy"] == accuracy
    assert metrics["both"] == round(2 * accuracy * 0.5 / (accuracy + 0.5), 4)
    from procbench.dsl.checker import check_file
    from procbench.dsl.compiler import explain

    # explain() is what `compile --explain` prints (the CLI would also write a schema into schema/)
    assert "both = round(f1(accuracy, 0.5), 4)" in explain(check_file(spec).spec)

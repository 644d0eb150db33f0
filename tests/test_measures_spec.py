"""Measure blocks in a spec: a scorer's per-item values aggregated as declared (value, where, scale), and the checker's refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app

ROWS = [
    ("a", 0, 0, "kitchen"),
    ("b", 1, 2, "kitchen"),
    ("c", 2, 2, "kitchen"),
    ("d", 3, 3, "garden"),
    ("e", 0, 1, "garden"),
]

SPEC = """
task quiz {
  title   = "quiz"
  version = "1"
  primary = hits

  data {
    splits = [test]

    source q { format = "jsonl"  path = "quiz/{split}.jsonl" }

    id     = q.id

    fields { answer: int = q.answer }
    labels { domain = map(q.domain, { kitchen = "kitchen", garden = "garden" }, default = "other") }
  }

  predictions {
    format = "jsonl"

    schema { id = str  choice = int }
  }

  score {
    scorer = field_match(gold_field = answer, prediction_field = choice)

    MEASURES
  }
}
"""

MEASURES = """measure hits { value = correct  aggregate = "sum" }
    measure kitchen { value = correct  where = { domain = "kitchen" } }
    measure garden_tenths { value = correct  where = { domain = "garden" }  aggregate = "sum"  divide_by = 10 }
    measure accuracy { metric = accuracy()  gold = answer  prediction = choice  round = 2 }"""


@pytest.fixture()
def quiz(tmp_path: Path) -> Path:
    (tmp_path / "data" / "quiz").mkdir(parents=True)
    (tmp_path / "data" / "quiz" / "test.jsonl").write_text(
        "".join(json.dumps({"id": i, "answer": a, "domain": d}) + "\n" for i, a, _, d in ROWS)
    )
    (tmp_path / "pred.jsonl").write_text(
        "".join(json.dumps({"id": i, "choice": c}) + "\n" for i, _, c, _ in ROWS)
    )
    return tmp_path


def _write(root: Path, measures: str) -> Path:
    spec = root / "quiz.spec"
    spec.write_text(SPEC.replace("MEASURES", measures))
    return spec


def test_value_measures_sum_filter_and_scale_a_scorers_values(quiz: Path) -> None:
    spec = _write(quiz, MEASURES)
    result = CliRunner().invoke(
        app,
        [
            "score",
            str(spec),
            "--split",
            "test",
            "--predictions",
            str(quiz / "pred.jsonl"),
            "--data-dir",
            str(quiz / "data"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["metrics"]
    hits = [gold == chosen for _, gold, chosen, _ in ROWS]
    kitchen = [h for h, row in zip(hits, ROWS) if row[3] == "kitchen"]
    garden = [h for h, row in zip(hits, ROWS) if row[3] == "garden"]
    assert metrics == pytest.approx(
        {
            "hits": sum(hits),
            "kitchen": sum(kitchen) / len(kitchen),
            "garden_tenths": sum(garden) / 10,
            "accuracy": round(sum(hits) / len(hits), 2),
        }
    )
    assert "correct" not in metrics  # the scorer's values are aggregated only as measures say


@pytest.mark.parametrize(
    ("measures", "message"),
    [
        ('measure hits { value = corect  aggregate = "sum" }', "unknown per item value 'corect'"),
        (
            'measure hits { value = correct  aggregate = "macro" }',
            'a per-item value aggregates as "mean" or "sum", not \'macro\'',
        ),
        (
            'measure hits { value = correct  where = { domian = "kitchen" } }',
            "unknown item label in where 'domian'",
        ),
        (
            'measure hits { value = correct  where = { domain = "kitchn" } }',
            "unknown value of label 'domain' in where 'kitchn'",
        ),
        (
            "measure hits { value = correct  metric = accuracy() }",
            "takes the scorer's per-item value as it is",
        ),
        ("measure hits { metric = accuracy()  gold = answer }", "measure 'hits' needs prediction"),
        ('measure hits { value = correct  scale = "x" }', "scale is a number"),
    ],
)
def test_measure_mistakes_are_refused_at_their_place(
    quiz: Path, measures: str, message: str
) -> None:
    spec = _write(quiz, measures)
    result = CliRunner().invoke(app, ["check", str(spec)])
    assert result.exit_code == 3, result.output
    assert message in result.output
    assert result.output.startswith(
        f"{spec}:27:"
    )  # the measure's line, and no second error after it
    assert result.output.count(": error: ") == 1

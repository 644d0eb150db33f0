"""Declarative data features on real files: row-index ids, CSV sources and membership slices.

PARADISE's explicit/implicit analysis sets are other CSVs listing test row indices; a spec states
that with ``membership(...)`` and the sizes must be those of docs/metrics.md §3.4.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procbench.dsl import check_text, compile_spec

SPEC = """
task paradise-tip-declarative {
  title = "PARADISE tip inference (declarative reader)"
  version = "1"
  primary = correct
  data {
    splits = [test]
    source gold { format = "csv"  path = "paradise/src/data/tip_{split}.csv" }
    id = row_index()
    fields { label: enum("0", "1", "2", "3") = gold.label  goal: str = gold.sent2 }
    labels {
      explicitness = membership([
        { path = "paradise/src/data/rq_variations/rq3/tip_test0.75.csv", column = "Unnamed: 0", label = "explicit (>0.75)" },
        { path = "paradise/src/data/rq_variations/rq3/tip_test0.5.csv", column = "Unnamed: 0", label = "explicit (>0.5)" },
      ], default = "implicit", splits = [test])
    }
  }
  predictions {
    format = "jsonl"
    schema { id = int  label = enum(0, 1, 2, 3) }
  }
  score {
    scorer = field_match(gold_field = label, prediction_field = label)
    aggregate = mean()
  }
  metric correct { display = "Accuracy" }
  slice explicitness { label = explicitness }
}
"""


def test_membership_slices_have_the_documented_sizes(data_root: Path, tmp_path: Path) -> None:
    spec = check_text(SPEC, "paradise-tip-declarative.spec").spec
    runner = compile_spec(spec)
    gold, _ = runner.gold(data_root, "test")
    assert list(gold.items)[:3] == ["0", "1", "2"] and len(gold.items) == 500
    predictions = tmp_path / "constant3.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "label": 3}) + "\n" for i in range(500)))
    evaluation = runner.evaluate(data_root, "test", predictions)
    sizes = {value: result.n_items for value, result in evaluation.slices["explicitness"].items()}
    assert sizes == {"explicit (>0.75)": 52, "explicit (>0.5)": 382 - 52, "implicit": 118}
    assert evaluation.metrics["correct"] == pytest.approx(
        0.26
    )  # docs/metrics.md §3.2: constant 3 on tip_test


def test_membership_explain_lists_the_files() -> None:
    from procbench.dsl import explain

    text = explain(check_text(SPEC, "x.spec").spec)
    assert (
        "'explicit (>0.75)' if listed in paradise/src/data/rq_variations/rq3/tip_test0.75.csv['Unnamed: 0']"
        in text
    )


def test_membership_entry_shape_is_checked() -> None:
    from procbench.dsl import SpecError

    bad = SPEC.replace(
        'column = "Unnamed: 0", label = "explicit (>0.75)"', 'label = "explicit (>0.75)"'
    )
    with pytest.raises(SpecError, match="each membership entry is"):
        check_text(bad, "x.spec")

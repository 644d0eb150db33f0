"""docs/pure-spec-tasks.md, the data-reading kinds: multiple choice from CSV with integer answers, and
classification over a cross product of two lists with a lookup and a default.

The oracles read the guide's own files with the csv and json modules, expand the records in plain
Python (following the guide's prose, not the reader's code) and score with scikit-learn; every
number ``procbench score`` prints must equal them to 1e-9.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from sklearn import metrics as skm

from tests import catalogue

PREDICTIONS = {"pickstep": "pickstep.csv", "stephazard": "stephazard.jsonl"}
CLASSES = ["high", "low", "none"]


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> catalogue.Guide:
    return catalogue.extracted(tmp_path_factory, "catalogue-data")


def _score(root: Path, task: str, predictions: Path | None = None) -> tuple[int, str]:
    return catalogue.score(root, task, predictions or root / "predictions" / PREDICTIONS[task])


def _scored(root: Path, task: str) -> dict:
    return catalogue.scored(root, task, root / "predictions" / PREDICTIONS[task])


@pytest.mark.parametrize("task", sorted(PREDICTIONS))
def test_each_spec_checks_against_its_data_and_is_formatted(
    guide: catalogue.Guide, task: str
) -> None:
    catalogue.assert_checks_and_is_formatted(guide[0], task)


def test_multiple_choice_from_csv_equals_scikit_learn_overall_and_per_source(
    guide: catalogue.Guide,
) -> None:
    root, expected = guide
    with (root / "data" / "pickstep" / "test.csv").open(newline="") as handle:
        gold = list(csv.DictReader(handle))
    with (root / "predictions" / "pickstep.csv").open(newline="") as handle:
        chosen = {row["id"]: int(row["choice"]) for row in csv.DictReader(handle)}
    got = _scored(root, "pickstep")
    want = skm.accuracy_score([int(g["answer"]) for g in gold], [chosen[g["id"]] for g in gold])
    assert got["metrics"]["accuracy"] == pytest.approx(want, abs=1e-9)
    sources = sorted({g["source"] for g in gold})
    assert sorted(got["slices"]["source"]) == sources
    for source in sources:
        part = [g for g in gold if g["source"] == source]
        want_part = skm.accuracy_score(
            [int(g["answer"]) for g in part], [chosen[g["id"]] for g in part]
        )
        assert got["slices"]["source"][source]["metrics"]["accuracy"] == pytest.approx(
            want_part, abs=1e-9
        )
    shown = json.loads(expected["pickstep"])
    assert got["metrics"]["accuracy"] == pytest.approx(shown["accuracy"], abs=1e-6)
    assert {
        k: v["metrics"]["accuracy"] for k, v in got["slices"]["source"].items()
    } == pytest.approx(shown["slices"]["source"], abs=1e-6)


def test_an_answer_cell_outside_the_enum_is_reported_at_its_line(
    guide: catalogue.Guide, tmp_path: Path
) -> None:
    root, _ = guide
    lines = (root / "predictions" / "pickstep.csv").read_text().splitlines()
    lines[2] = lines[2].rsplit(",", 1)[0] + ",4"
    lines[5] = lines[5].rsplit(",", 1)[0] + ",1.0"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    code, out = _score(root, "pickstep", bad)
    assert code != 0
    assert "bad.csv:3: column 'choice'" in out and "got '4'" in out
    assert "bad.csv:6: column 'choice'" in out and "got '1.0'" in out


def _expand(path: Path) -> list[dict]:
    """The items of the hazard guide, expanded as its prose says: steps (not notes) x confirmed hazards (each once)."""
    items = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        hazards: list[str] = []
        for hazard in record["hazards"]:
            if hazard["confirmed"] and hazard["name"] not in hazards:
                hazards.append(hazard["name"])
        reviewed = all(r["reviewed"] for r in record["risks"])
        for step in record["steps"]:
            if step["kind"] == "note":
                continue
            for hazard in hazards:
                rated = [
                    r["risk"]
                    for r in record["risks"]
                    if r["step"] == step["sid"] and r["hazard"] == hazard
                ]
                items.append(
                    {
                        "id": f"{record['id']}/{step['sid']}/{hazard}",
                        "risk": rated[0] if rated else "none",
                        "risky_step": str(
                            any(
                                r["step"] == step["sid"] and r["risk"] == "high"
                                for r in record["risks"]
                            )
                        ),
                        "reviewed": str(reviewed),
                    }
                )
    return items


def _f1s(gold: list[str], predicted: list[str]) -> dict[str, float]:
    per_class = skm.f1_score(gold, predicted, labels=CLASSES, average=None, zero_division=0)
    return {
        "macro_f1": skm.f1_score(gold, predicted, labels=CLASSES, average="macro", zero_division=0),
        **{f"f1_{c}": value for c, value in zip(CLASSES, per_class)},
    }


def test_cross_product_classification_equals_scikit_learn_overall_and_per_slice(
    guide: catalogue.Guide,
) -> None:
    root, expected = guide
    items = _expand(root / "data" / "stephazard" / "test.jsonl")
    predicted = {
        r["id"]: r["risk"]
        for r in map(
            json.loads, (root / "predictions" / "stephazard.jsonl").read_text().splitlines()
        )
    }
    assert sorted(predicted) == sorted(
        i["id"] for i in items
    )  # the guide's predictions answer exactly the expanded items
    got = _scored(root, "stephazard")
    assert got["n_items"] == len(items)
    want = _f1s([i["risk"] for i in items], [predicted[i["id"]] for i in items])
    assert got["metrics"] == pytest.approx(want, abs=1e-9)
    for label in ("risky_step", "reviewed"):
        values = sorted({i[label] for i in items})
        assert sorted(got["slices"][label]) == values
        for value in values:
            part = [i for i in items if i[label] == value]
            want_part = _f1s([i["risk"] for i in part], [predicted[i["id"]] for i in part])
            assert got["slices"][label][value]["metrics"] == pytest.approx(want_part, abs=1e-9)
    shown = json.loads(expected["stephazard"])
    assert {k: got["metrics"][k] for k in shown} == pytest.approx(shown, abs=1e-6)

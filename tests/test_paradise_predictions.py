"""PARADISE prediction files and scoring: validation with line numbers and metric properties."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.runtime._types import GoldSet, InvalidPredictions
from procbench.runners.paradise.data import ParadiseItem
from procbench.runners.paradise.metrics import aggregate_accuracy, score_choices
from procbench.runners.paradise.predictions import read_labels

ENDINGS = ("a", "b", "c", "d")
gold_labels = st.lists(st.integers(0, 3), min_size=1, max_size=30)


def _gold(labels: list[int]) -> GoldSet:
    return GoldSet(
        {str(i): ParadiseItem(f"goal {i}", ENDINGS, label) for i, label in enumerate(labels)}
    )


def _write_jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _scores(gold: GoldSet, path: Path) -> dict[str, float]:
    return aggregate_accuracy(score_choices(gold, read_labels(path, gold)))


@given(labels=gold_labels, data=st.data())
def test_accuracy_and_weighted_scores_lie_in_unit_interval(
    tmp_path_factory: pytest.TempPathFactory, labels: list[int], data: st.DataObject
) -> None:
    predicted = data.draw(st.lists(st.integers(0, 3), min_size=len(labels), max_size=len(labels)))
    path = _write_jsonl(
        tmp_path_factory.mktemp("p") / "p.jsonl",
        [{"id": i, "label": p} for i, p in enumerate(predicted)],
    )
    metrics = _scores(_gold(labels), path)
    assert all(0.0 <= value <= 1.0 for value in metrics.values())
    assert metrics["accuracy"] == pytest.approx(
        sum(p == g for p, g in zip(predicted, labels)) / len(labels)
    )
    assert metrics["weighted_r"] == pytest.approx(
        metrics["accuracy"]
    )  # weighted recall = accuracy (3.2)


@given(labels=gold_labels)
def test_gold_as_prediction_scores_one(
    tmp_path_factory: pytest.TempPathFactory, labels: list[int]
) -> None:
    path = _write_jsonl(
        tmp_path_factory.mktemp("p") / "p.jsonl",
        [{"id": i, "label": g} for i, g in enumerate(labels)],
    )
    assert _scores(_gold(labels), path) == {
        "accuracy": 1.0,
        "weighted_p": 1.0,
        "weighted_r": 1.0,
        "weighted_f1": 1.0,
    }


@given(labels=gold_labels, data=st.data())
def test_line_order_does_not_matter(
    tmp_path_factory: pytest.TempPathFactory, labels: list[int], data: st.DataObject
) -> None:
    predicted = data.draw(st.lists(st.integers(0, 3), min_size=len(labels), max_size=len(labels)))
    records = [{"id": i, "label": p} for i, p in enumerate(predicted)]
    shuffled = data.draw(st.permutations(records))
    folder = tmp_path_factory.mktemp("p")
    gold = _gold(labels)
    assert _scores(gold, _write_jsonl(folder / "a.jsonl", records)) == _scores(
        gold, _write_jsonl(folder / "b.jsonl", list(shuffled))
    )


BAD_RECORDS = st.one_of(
    st.just("{not json"),
    st.just("[1, 2]"),
    st.just('{"id": 0}'),
    st.builds(
        lambda v: json.dumps({"id": 0, "label": v}),
        st.one_of(
            st.integers(4, 99),
            st.integers(-99, -1),
            st.just("2"),
            st.just(1.0),
            st.just(True),
            st.none(),
        ),
    ),
    st.builds(
        lambda v: json.dumps({"id": v, "label": 0}),
        st.one_of(st.just("0"), st.just(0.0), st.just(False), st.none()),
    ),
    st.builds(lambda v: json.dumps({"id": v, "label": 0}), st.integers(1000, 10**6)),
)


@given(labels=gold_labels, bad=BAD_RECORDS, data=st.data())
def test_an_invalid_line_is_rejected_with_its_line_number(
    tmp_path_factory: pytest.TempPathFactory, labels: list[int], bad: str, data: st.DataObject
) -> None:
    lines = [json.dumps({"id": i, "label": g}) for i, g in enumerate(labels)]
    position = data.draw(st.integers(0, len(lines)))
    lines.insert(position, bad)
    path = tmp_path_factory.mktemp("p") / "p.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidPredictions) as caught:
        read_labels(path, _gold(labels))
    assert [p.line for p in caught.value.problems] == [position + 1]
    assert f"p.jsonl:{position + 1}:" in str(caught.value)


def test_every_problem_is_listed_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"id": 0, "label": 1}\n{"id": 0, "label": 2}\n{"id": 7, "label": 1}\n{"id": 1, "label": 9}\n\n{"id": 2 "label": 1}\n'
    )
    with pytest.raises(InvalidPredictions) as caught:
        read_labels(path, _gold([1, 2, 3, 0]))
    problems = caught.value.problems
    assert [p.line for p in problems] == [2, 3, 4, 6, None]
    assert "first given on line 1" in problems[0].message
    assert "unknown id 7" in problems[1].message
    assert "0-3" in problems[2].message
    assert "not valid JSON" in problems[3].message
    assert problems[4].message.endswith(
        "ids 2, 3"
    )  # id 1 had a bad label, so it is not also "missing"


def test_csv_is_read_and_checked_by_header_and_line(tmp_path: Path) -> None:
    gold = _gold([1, 2, 3])
    good = tmp_path / "p.csv"
    good.write_text("id,label\n2,3\n0,1\n1,0\n")
    assert read_labels(good, gold) == {"2": 3, "0": 1, "1": 0}
    bad = tmp_path / "bad.csv"
    bad.write_text("id,label\n0,1\n1,x\n2\n")
    with pytest.raises(InvalidPredictions) as caught:
        read_labels(bad, gold)
    assert [p.line for p in caught.value.problems] == [3, 4, None]
    header = tmp_path / "header.csv"
    header.write_text("item,prediction\n0,1\n")
    with pytest.raises(InvalidPredictions, match="header"):
        read_labels(header, gold)


def test_format_is_sniffed_without_a_known_extension(tmp_path: Path) -> None:
    gold = _gold([0, 1])
    as_json = tmp_path / "predictions.txt"
    as_json.write_text('{"id": 0, "label": 0}\n{"id": 1, "label": 3}\n')
    as_csv = tmp_path / "predictions"
    as_csv.write_text("id,label\n0,0\n1,3\n")
    assert read_labels(as_json, gold) == read_labels(as_csv, gold) == {"0": 0, "1": 3}


def test_empty_subset_aggregates_to_zeros() -> None:
    assert aggregate_accuracy([]) == {
        "accuracy": 0.0,
        "weighted_p": 0.0,
        "weighted_r": 0.0,
        "weighted_f1": 0.0,
    }

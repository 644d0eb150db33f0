"""A metric declares what it requires of the spec where it is registered, and the checker reads only that (issue #32.5).

Defect D4: an ``mcc()`` metric over a class set, registered by a plugin, passed ``procbench check --data`` (the
checker supplied a class set only to class aggregations and to the metric *named* ``confusion``) and stopped at
``score`` on its first item.  Here such a metric is registered in the test, declaring ``requires = ("class_set",)``:
``check`` refuses a spec that gives it no class set at the measure's file:line:col, in the words it uses for
``confusion()``; ``check --data`` finds gold values outside its classes; and given a class set it scores what
scikit-learn's ``matthews_corrcoef`` computes on the same rows (the oracle: no procbench code computes the
expected value).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import matthews_corrcoef
from typer.testing import CliRunner

from procbench.cli import app
from procbench.dsl.checker import check_text
from procbench.dsl.errors import SpecError
from procbench.runners.runtime import registry
from procbench.runners.metrics import Metric
from procbench.runners.metrics._base import Stats, library_metric
from procbench.runners.metrics._classification import _OverClasses, class_counts

ROWS = [  # id, gold, predicted
    ("a", "yes", "yes"),
    ("b", "yes", "no"),
    ("c", "no", "no"),
    ("d", "no", "no"),
    ("e", "maybe", "yes"),
    ("f", "maybe", "maybe"),
    ("g", "yes", "yes"),
    ("h", "no", "maybe"),
]

SPEC = """task poll {
  title   = "poll"
  version = "1"
  primary = agreement

  data {
    splits = [test]

    source q { format = "jsonl"  path = "poll/{split}.jsonl" }

    id     = q.id

    fields { answer: GOLD_TYPE = q.answer }
  }

  predictions {
    format = "jsonl"

    schema { id = str  answer = str }
  }

  score {
    measure agreement { metric = METRIC  gold = answer  prediction = answer  aggregate = "AGGREGATE" }
  }
}
"""


class Mcc(_OverClasses):
    """Matthews' correlation over the declared classes, from the items' (gold, predicted) class indices."""

    aggregations = ("corpus",)
    library = "scikit-learn matthews_corrcoef"
    value_range = (-1.0, 1.0)

    def reduce(self, rows: Sequence[Stats], aggregate: str) -> tuple[float, ...]:
        correct, predicted, true = class_counts(len(self.labels), rows)
        n = len(rows)
        covariance = sum(correct) * n - sum(p * t for p, t in zip(predicted, true))
        spread = (n * n - sum(p * p for p in predicted)) * (n * n - sum(t * t for t in true))
        return (covariance / math.sqrt(spread) if spread else 0.0,)


class MccMacro(Mcc):
    """The same coefficient, offered under a class aggregation (and so given the classes without declaring them)."""

    aggregations = ("macro",)


@pytest.fixture(autouse=True)
def mcc_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``mcc()`` (declaring the class set) and ``mcc_macro()`` (declaring nothing, aggregating as "macro") for one test."""
    monkeypatch.setenv("PROCBENCH_CACHE_DIR", "off")  # every command really checks the spec
    registry.all_components()
    saved = dict(registry._REGISTRY)

    @library_metric("mcc", requires=("class_set",))
    def mcc(*, labels: list[str | int] = []) -> Metric:  # noqa: B006 - a spec parameter's default
        """Matthews' correlation coefficient over the classes; aggregate = corpus."""
        return Mcc(labels)

    @library_metric("mcc_macro")
    def mcc_macro(*, labels: list[str | int] = []) -> Metric:  # noqa: B006
        """The same over a class aggregation, its need not declared."""
        return MccMacro(labels)

    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def _spec(metric: str, gold_type: str = "str", aggregate: str = "corpus") -> str:
    return (
        SPEC.replace("GOLD_TYPE", gold_type)
        .replace("METRIC", metric)
        .replace("AGGREGATE", aggregate)
    )


def _root(tmp_path: Path, spec: str, rows: Sequence[tuple[str, str, str]] = ROWS) -> Path:
    (tmp_path / "data" / "poll").mkdir(parents=True)
    (tmp_path / "data" / "poll" / "test.jsonl").write_text(
        "".join(json.dumps({"id": i, "answer": g}) + "\n" for i, g, _ in rows)
    )
    (tmp_path / "pred.jsonl").write_text(
        "".join(json.dumps({"id": i, "answer": p}) + "\n" for i, _, p in rows)
    )
    (tmp_path / "poll.spec").write_text(spec)
    return tmp_path


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _stdout(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.output


def _check_data(root: Path) -> tuple[int, str]:
    return _cli("check", str(root / "poll.spec"), "--data", "--data-dir", str(root / "data"))


def _score(root: Path) -> dict[str, Any]:
    code, stdout, out = _stdout(
        "score",
        str(root / "poll.spec"),
        "--split",
        "test",
        "--predictions",
        str(root / "pred.jsonl"),
        "--data-dir",
        str(root / "data"),
        "--json",
    )
    assert code == 0, out
    return dict(json.loads(stdout)["metrics"])


def _position(spec: str, text: str) -> tuple[int, int]:
    """1-based line and column of ``text`` in the spec, found independently of the checker."""
    for number, line in enumerate(spec.splitlines(), 1):
        if text in line:
            return number, line.index(text) + 1
    raise AssertionError(text)


@pytest.mark.parametrize("metric", ["mcc()", "confusion()", "mcc_macro()"])
def test_a_declared_or_class_aggregated_need_without_a_class_set_is_refused_at_the_metric(
    tmp_path: Path, metric: str
) -> None:
    aggregate = {"mcc()": "corpus", "confusion()": "sum", "mcc_macro()": "macro"}[metric]
    spec = _spec(metric, aggregate=aggregate)
    root = _root(tmp_path, spec)
    code, out = _check_data(root)
    line, column = _position(spec, metric)
    assert code == 3, out
    assert (
        f"poll.spec:{line}:{column}: error: measure 'agreement': {metric} needs the class set"
        in out
    ), out
    assert (
        f'give labels = ["a", "b", ...] to {metric}, or type the gold field \'answer\' as enum(a, b, ...)'
        in out
    )
    with pytest.raises(SpecError) as refused:  # the checker's API says the same, with the position
        check_text(spec, "poll.spec")
    assert [
        (d.span.line, d.span.column)
        for d in refused.value.diagnostics
        if "needs the class set" in d.message
    ] == [
        (line, column)
    ]  # confusion()'s outputs are named by class: without classes the primary is unknown too


def test_with_a_class_set_from_the_enum_mcc_checks_and_scores_as_scikit_learn(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path, _spec("mcc()", gold_type="enum(yes, no, maybe)"))
    code, out = _check_data(root)
    assert code == 0, out
    want = matthews_corrcoef([g for _, g, _ in ROWS], [p for _, _, p in ROWS])
    assert _score(root)["agreement"] == pytest.approx(want, abs=1e-12)


def test_with_labels_mcc_scores_as_scikit_learn_and_check_data_finds_a_gold_value_outside_them(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path, _spec('mcc(labels = ["yes", "no", "maybe"])'))
    assert _check_data(root)[0] == 0
    want = matthews_corrcoef([g for _, g, _ in ROWS], [p for _, _, p in ROWS])
    assert _score(root)["agreement"] == pytest.approx(want, abs=1e-12)

    spec = _spec('mcc(labels = ["yes", "no"])')
    (root / "poll.spec").write_text(spec)
    code, out = _check_data(root)
    line, column = _position(spec, "mcc(")
    assert code == 3, out
    assert re.search(
        rf"poll\.spec:{line}:{column}: error: measure 'agreement': gold value 'maybe' \(.*\) is not one of its classes \(yes, no\)",
        out,
    ), out


def test_a_requirement_is_declared_by_a_name_the_checker_knows_and_reaches_the_metric() -> None:
    with pytest.raises(
        ValueError, match="unknown requirement 'orderings'; a metric may require class_set"
    ):
        library_metric("mcc_ordered", requires=("orderings",))
    with pytest.raises(ValueError, match="requires the class set but takes no labels parameter"):

        @library_metric("mcc_unlabelled", requires=("class_set",))
        def mcc_unlabelled() -> Metric:
            return Mcc(())

    with pytest.raises(ValueError, match="only a metric declares what it requires"):
        registry.component("similarity", "needy", requires=("class_set",))(lambda: None)
    assert registry.get("metric", "confusion").contract.requires == ("class_set",)
    assert registry.get("metric", "mcc").contract.requires == ("class_set",)
    assert registry.get("metric", "accuracy").contract.requires == ()


def test_the_checker_names_no_metric_whose_registration_it_reads() -> None:
    """What a metric requires, and the hint of its aggregation refusal, are read from its registration: no such
    metric's name is spelled in the checker's modules (``confusion`` once was)."""
    dsl = Path(__file__).resolve().parents[1] / "dsl"
    declaring = [
        c.name
        for c in registry.all_components()
        if c.kind == "metric"
        and (c.contract.requires or c.contract.aggregation_hint)
        and c.name != "prf"  # also a word of the language: a metrics block's `family = prf`
    ]
    assert {"confusion", "f1", "corpus_bleu", "chrf", "ter"} <= set(declaring)
    for module in sorted(dsl.glob("check*.py")):
        text = module.read_text(encoding="utf-8")
        spelled = [n for n in declaring if f'"{n}"' in text or f"'{n}'" in text]
        assert not spelled, f"{module.name} names metric(s) {spelled}"

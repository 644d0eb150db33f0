"""Every generated metric name can be written: per-class names of any class text, in rank_by, metric blocks and the
checker's own suggestions; two classes that become one name are refused at the measure (docs/language.md, "Generated names")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from procbench.dsl import SpecError, check_text

# The rule as docs/language.md states it, transcribed independently of runners/runtime/names.py.
OUTSIDE_A_NAME = re.compile(r"[^A-Za-z0-9_-]+")
GRAMMAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def _part(text: str) -> str:
    return OUTSIDE_A_NAME.sub("_", text)


def _spec(
    classes: list[str],
    *,
    rank_by: str = "",
    metric_block: str = "",
    aggregate: str = "per_class",
    measure: str = "f1",
) -> str:
    labels = ", ".join(json.dumps(c, ensure_ascii=False) for c in classes)
    metric = "confusion" if aggregate == "sum" else "f1"
    return f"""task cls {{
  title   = "classes"
  version = "1.0"
  primary = accuracy
  {f"rank_by = [{rank_by}]" if rank_by else ""}

  data {{
    splits = [test]
    source gold {{ format = "jsonl"  path = "cls/{{split}}.jsonl" }}
    id     = gold.id
    fields {{ label: str = gold.label }}
  }}

  predictions {{
    format = "jsonl"
    schema {{ id = str  label = str }}
  }}

  score {{
    measure accuracy {{ metric = accuracy()  gold = label  prediction = label }}
    measure {measure} {{ metric = {metric}(labels = [{labels}])  gold = label  prediction = label  aggregate = "{aggregate}" }}
  }}
  {metric_block}
}}
"""


def _check(text: str, tmp_path: Path) -> object:
    path = tmp_path / "cls.spec"
    path.write_text(text, encoding="utf-8")
    return check_text(text, path=str(path), search=[tmp_path]).spec


CLASS_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list(" -_.,:;!?()/'\"#{}[]=+*é中0123456789")),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    min_size=1,
    max_size=12,
)
# two classes that stay two names (the collisions are their own test)
TWO_CLASSES = st.tuples(CLASS_TEXT, CLASS_TEXT).filter(lambda ab: _part(ab[0]) != _part(ab[1]))
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(TWO_CLASSES)
def test_a_per_class_name_of_any_class_text_is_written_in_rank_by_and_a_metric_block(
    tmp_path: Path, classes: tuple[str, str]
) -> None:
    name = f"f1_{_part(classes[0])}"
    assert GRAMMAR_NAME.fullmatch(name)
    spec = _check(
        _spec(
            list(classes),
            rank_by=name,
            metric_block=f'metric {name} {{ display = "F1 of one class" }}',
        ),
        tmp_path,
    )
    names = [mt.name for mt in spec.metrics]  # type: ignore[attr-defined]
    assert name in names and f"f1_{_part(classes[1])}" in names
    assert all(GRAMMAR_NAME.fullmatch(n) for n in names)
    assert spec.rank_by == (name,)  # type: ignore[attr-defined]


@SETTINGS
@given(TWO_CLASSES)
def test_the_checkers_suggestion_is_a_name_that_check_accepts(
    tmp_path: Path, classes: tuple[str, str]
) -> None:
    wanted = f"f1_{_part(classes[0])}"
    with pytest.raises(SpecError) as caught:
        _check(_spec(list(classes), rank_by=wanted + "x"), tmp_path)
    (error,) = caught.value.diagnostics
    found = re.fullmatch(r"did you mean '([^']*)'\?", error.hint)
    assert found, error.hint
    suggestion = found.group(1)
    assert suggestion in (wanted, f"f1_{_part(classes[1])}")
    assert _check(_spec(list(classes), rank_by=suggestion), tmp_path).rank_by == (suggestion,)  # type: ignore[attr-defined]


@SETTINGS
@given(TWO_CLASSES)
def test_confusion_names_of_any_class_text_are_written_in_rank_by(
    tmp_path: Path, classes: tuple[str, str]
) -> None:
    name = f"cm_{_part(classes[1])}_{_part(classes[0])}"
    try:
        spec = _check(_spec(list(classes), rank_by=name, aggregate="sum", measure="cm"), tmp_path)
    except SpecError as exc:  # "a_b" + "c" and "a" + "b_c" make one confusion name: refused, never two numbers under one name
        (error,) = exc.diagnostics
        assert "generated twice" in error.message or "both become" in error.message
        return
    assert spec.rank_by == (name,)  # type: ignore[attr-defined]


@SETTINGS
@given(
    CLASS_TEXT,
    st.lists(
        st.sampled_from([" ", "  ", ".", "é", "!?", "中文", "\t"]),
        min_size=2,
        max_size=2,
        unique=True,
    ),
)
def test_two_classes_that_become_one_name_are_refused_at_the_measure(
    tmp_path: Path, text: str, runs: list[str]
) -> None:
    first, second = (
        text + runs[0] + "x",
        text + runs[1] + "x",
    )  # two texts, one run apart: one name part
    assert first != second and _part(first) == _part(second)
    source = _spec([first, second])
    with pytest.raises(SpecError) as caught:
        _check(source, tmp_path)
    (error,) = caught.value.diagnostics  # one mistake, one error
    line = source.splitlines()[error.span.line - 1]
    assert line.lstrip().startswith("measure f1 ") and line[error.span.column - 1 :].startswith(
        "f1(labels"
    )
    assert (
        "both become" in error.message
        and repr(first) in error.message
        and repr(second) in error.message
    )


def test_a_measure_named_like_another_measures_generated_name_is_refused(tmp_path: Path) -> None:
    source = _spec(["p", "q"]).replace(
        "  }\n  \n}",
        '    measure f1_p { metric = precision(labels = ["p", "q"])  gold = label  prediction = label  aggregate = "macro" }\n  }\n  \n}',
    )
    assert "measure f1_p" in source
    with pytest.raises(SpecError) as caught:
        _check(source, tmp_path)
    (error,) = caught.value.diagnostics
    assert "measure 'f1_p' produces the metric 'f1_p', which measure 'f1'" in error.message


def test_names_reach_the_score_the_store_and_the_export_as_written(tmp_path: Path) -> None:
    import procbench
    from procbench.submissions.export import board_frame

    classes = ["more likely", "less likely", "équal"]
    gold = ["more likely", "less likely", "équal", "more likely", "équal", "less likely"]
    pred = ["more likely", "more likely", "équal", "less likely", "équal", "less likely"]
    root = tmp_path / "data"
    (root / "cls").mkdir(parents=True)
    (root / "cls" / "test.jsonl").write_text(
        "".join(json.dumps({"id": f"i{n}", "label": g}) + "\n" for n, g in enumerate(gold)),
        encoding="utf-8",
    )
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(json.dumps({"id": f"i{n}", "label": p}) + "\n" for n, p in enumerate(pred)),
        encoding="utf-8",
    )
    spec_path = tmp_path / "cls.spec"
    spec_path.write_text(
        _spec(
            classes,
            rank_by="f1_more_likely",
            metric_block='metric f1_more_likely { display = "F1 (more likely)" }',
        ),
        encoding="utf-8",
    )
    result = procbench.score(spec_path, preds, split="test", data_dir=root)
    expected = f1_score(gold, pred, labels=classes, average=None, zero_division=0)
    names = ["f1_more_likely", "f1_less_likely", "f1__qual"]  # "équal": é is outside a name
    assert {n: result.metrics[n] for n in names} == pytest.approx(
        dict(zip(names, expected)), abs=1e-12
    )
    db = tmp_path / "board.duckdb"
    procbench.submit(spec_path, preds, split="test", model="m", team="t", db=db, data_dir=root)
    exported = set(board_frame(db, "cls")["metric"].to_list())
    assert set(names) <= exported

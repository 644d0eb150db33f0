"""Declared conventions for missing and invalid predictions (issue #28), and coverage.

docs/pure-spec-tasks.md's "Missing predictions counted as a class" and "An ordering whose invalid
predictions score -1" tasks are extracted and scored; every number is compared with scikit-learn
(scipy) called here on the answers filled in as the official scorer would (an absent answer is
"equally likely"; an absent or non-permutation ordering is tau = rho = -1).  ``check`` refusals are asserted at their line and
column; Hypothesis checks each convention of the runtime against the oracle on generated items (an
invalid prediction made by a metric subclass defined here, since no shipped metric has one); the
board's Coverage column is read back from a store through Streamlit's AppTest.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from sklearn.metrics import accuracy_score, f1_score
from typer.testing import CliRunner

import procbench
from procbench.cli import app
from procbench.exit_codes import EXIT_INVALID_PREDICTIONS
from procbench.paths import PROJECT_ROOT
from procbench.runners.runtime import registry
from procbench.runners.runtime._types import GoldSet, InvalidPredictions
from procbench.runners.metrics._base import Metric
from procbench.runners.metrics._measure import MeasureStage, Measures
from procbench.runners.runtime.predictions import FieldType, PredictionRecords
from procbench.submissions.export import board_frame
from tests.doc_files import extract
from tests.site_app import page

DOC = PROJECT_ROOT / "docs" / "pure-spec-tasks.md"
CLASSES = ["more likely", "less likely", "equally likely"]
OFFICIAL_FILL = "equally likely"  # what the official scorer counts an absent answer as (written here, not read from the spec)
NOTHING = "<no answer>"  # a value outside the classes: what an unanswered item is to scikit-learn with labels = CLASSES


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("catalogue-missing")
    return root, extract(DOC, root)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _score(root: Path, spec: Path, predictions: Path | None = None) -> tuple[int, str, str]:
    predictions = predictions or root / "predictions" / "effects.jsonl"
    args = [
        "score",
        str(spec),
        "--split",
        "test",
        "--predictions",
        str(predictions),
        "--data-dir",
        str(root / "data"),
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


def _variant(root: Path, name: str, edit: tuple[str, str]) -> Path:
    """The guide's spec with one edit, in a folder of its own (a task is named after its file)."""
    text = (root / "specs" / "effects.spec").read_text()
    assert text.count(edit[0]) == 1
    folder = root / name
    folder.mkdir(exist_ok=True)
    path = folder / "effects.spec"
    path.write_text(text.replace(*edit))
    return path


def test_missing_counted_as_a_class_equals_scikit_learn_on_the_filled_in_answers(
    guide: tuple[Path, dict[str, str]],
) -> None:
    root, expected = guide
    code, out, err = _score(root, root / "specs" / "effects.spec")
    assert code == 0, err
    got = json.loads(out)
    gold = _rows(root / "data" / "effects" / "test.jsonl")
    answered = {r["id"]: r["answer"] for r in _rows(root / "predictions" / "effects.jsonl")}
    truth = [g["answer"] for g in gold]
    filled = [answered.get(g["id"], OFFICIAL_FILL) for g in gold]
    empty = [answered.get(g["id"], NOTHING) for g in gold]
    assert len(answered) < len(gold)  # the guide's point: some answers are missing
    assert got["metrics"]["accuracy"] == pytest.approx(accuracy_score(truth, filled), abs=1e-9)
    assert got["metrics"]["macro_f1"] == pytest.approx(
        f1_score(truth, filled, labels=CLASSES, average="macro"), abs=1e-9
    )
    assert got["metrics"]["answered_accuracy"] == pytest.approx(
        accuracy_score(truth, empty), abs=1e-9
    )
    assert got["coverage"] == {
        "answered": len(answered),
        "total": len(gold),
        "fraction": len(answered) / len(gold),
    }
    shown = json.loads(expected["effects"])
    assert {
        k: got["metrics"][k] for k in ("accuracy", "macro_f1", "answered_accuracy")
    } == pytest.approx(
        {k: shown[k] for k in ("accuracy", "macro_f1", "answered_accuracy")}, abs=1e-6
    )
    assert shown["coverage"] == got["coverage"]
    assert (
        "count as the measures' missing = ... declares" in err
    )  # declared: said so, never "score as empty"


def test_the_default_scores_missing_as_empty_and_the_warning_names_the_option(
    guide: tuple[Path, dict[str, str]],
) -> None:
    root, _ = guide
    spec = _variant(root, "default", ('    missing = predict("equally likely")\n', ""))
    code, out, err = _score(root, spec)
    assert code == 0, err
    gold = _rows(root / "data" / "effects" / "test.jsonl")
    answered = {r["id"]: r["answer"] for r in _rows(root / "predictions" / "effects.jsonl")}
    truth, empty = [g["answer"] for g in gold], [answered.get(g["id"], NOTHING) for g in gold]
    got = json.loads(out)["metrics"]
    assert got["accuracy"] == pytest.approx(accuracy_score(truth, empty), abs=1e-9)
    assert got["macro_f1"] == pytest.approx(
        f1_score(truth, empty, labels=CLASSES, average="macro", zero_division=0), abs=1e-9
    )
    assert (
        f"{len(gold) - len(answered)} of {len(gold)} items have no prediction and score as empty (the default; a measure's missing = ..."
        in err
    )


def test_missing_refuse_lists_every_unanswered_item_and_stores_nothing(
    guide: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, _ = guide
    spec = _variant(root, "refuse", ('missing = predict("equally likely")', 'missing = "refuse"'))
    code, _, err = _score(root, spec)
    gold_ids = [g["id"] for g in _rows(root / "data" / "effects" / "test.jsonl")]
    answered = {r["id"] for r in _rows(root / "predictions" / "effects.jsonl")}
    unanswered = [i for i in gold_ids if i not in answered]
    assert code == EXIT_INVALID_PREDICTIONS, err  # the refusal the guide documents (exit 8)
    assert f"{len(unanswered)} problems in effects.jsonl" in err
    for item_id in unanswered:  # once each, though two measures refuse it
        assert err.count(f"item {item_id!r} has no prediction; measure") == 1
    db = tmp_path / "store.duckdb"
    with pytest.raises(InvalidPredictions):
        procbench.submit(
            spec,
            root / "predictions" / "effects.jsonl",
            split="test",
            model="m",
            db=db,
            data_dir=root / "data",
        )
    if db.exists():
        with duckdb.connect(str(db), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM submissions").fetchone() == (0,)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ('missing = predict("equally likely")', 'missing = predict("maybe")'),
            "prediction field 'answer' is enum(\"more likely\"",
        ),
        (
            ('missing = predict("equally likely")', "missing = score(-1)"),
            "missing = score(...) sets an item's per-item score, but f1() with aggregate",
        ),
        (
            ('missing = predict("equally likely")', 'missing = "emty"'),
            "unknown value for score.missing 'emty'",
        ),
        (
            ('missing    = "empty"', "invalid    = predict(1)"),
            "invalid = predict(1): prediction field 'answer' is enum(",
        ),
    ],
)
def test_check_refuses_a_convention_that_does_not_fit_at_its_line(
    guide: tuple[Path, dict[str, str]], edit: tuple[str, str], message: str
) -> None:
    root, _ = guide
    spec = _variant(root, "bad-" + re.sub(r"\W+", "-", edit[1]).strip("-"), edit)
    lines = spec.read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(lines) if edit[1] in text)
    col = 1 + lines[line - 1].index(edit[1].split("=")[1].strip()[:5])
    result = CliRunner().invoke(app, ["check", str(spec)])
    assert result.exit_code == 3, result.output
    errors = [ln for ln in result.output.splitlines() if ": error: " in ln]
    assert len(errors) == 1, (
        result.output
    )  # one mistake, one error (a task-wide convention is not reported per measure)
    assert errors[0].startswith(f"{spec}:{line}:") and message in errors[0], result.output
    assert int(errors[0].split(":")[2]) in (col, col + len("predict(")), (
        result.output
    )  # the value, or the argument it refuses
    assert "hint:" in result.output


def test_a_convention_on_a_measure_without_a_prediction_field_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "formula.spec"
    spec.write_text(
        """task formula {
  title   = "formula"
  version = "1"
  primary = acc

  data {
    splits = [test]

    source rows { format = "jsonl"  path = "f/{split}.jsonl" }

    id     = rows.id

    fields { answer: int = rows.answer }
  }

  predictions { format = "jsonl"  schema { id = str  answer = int } }

  score {
    measure acc { metric = accuracy()  gold = answer  prediction = answer }
    measure half { from = round(acc, 2)  missing = "empty" }
  }
}
"""
    )
    result = CliRunner().invoke(app, ["check", str(spec)])
    col = 1 + spec.read_text().splitlines()[19].index('"empty"')
    assert (
        result.exit_code == 3
        and f"{spec}:20:{col}: error: measure 'half': missing = ... says how a prediction counts"
        in result.output
    ), result.output


def test_declaring_the_defaults_keeps_the_fingerprint(guide: tuple[Path, dict[str, str]]) -> None:
    root, _ = guide
    plain = _variant(root, "plain", ('    missing = predict("equally likely")\n', ""))
    spelled = _variant(
        root,
        "spelled",
        (
            '    missing = predict("equally likely")\n',
            '    missing = "empty"\n    invalid = "refuse"\n',
        ),
    )
    declared = root / "specs" / "effects.spec"
    prints = {}
    for name, spec in (("plain", plain), ("spelled", spelled), ("declared", declared)):
        code, out, err = _score(root, spec)
        assert code == 0, err
        prints[name] = json.loads(out)["fingerprint"]
    assert prints["plain"] == prints["spelled"] != prints["declared"]


# -- the runtime under each convention, against the oracle ---------------------------------------------

BAD = 9  # the prediction the test metric below finds invalid


def _picky(name: str, **kwargs: object) -> Metric:
    """A library metric whose predictions equal to BAD are invalid (no shipped metric has invalid predictions)."""
    picky = copy.copy(registry.get("metric", name).build(**kwargs))
    base = type(picky)
    picky.__class__ = type(
        f"Picky{base.__name__}",
        (base,),
        {"invalid": lambda self, gold, prediction: "not a class" if prediction == BAD else None},
    )
    return picky


CONVENTIONS = st.sampled_from(
    [("empty",), ("predict", 0), ("predict", 2), ("score", -1.0), ("score", 0.5)]
)
ITEMS = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from([None, 0, 1, 2, BAD])), min_size=1, max_size=40
)


def _run(stage: MeasureStage, items: list[tuple[int, int | None]]) -> dict[str, dict[str, float]]:
    gold = GoldSet({str(i): {"answer": g} for i, (g, _) in enumerate(items)})
    records = PredictionRecords("p.jsonl")
    for i, (_, p) in enumerate(items):
        if p is not None:
            records[str(i)] = {"answer": p}
            records.lines[str(i)] = i + 1
    return Measures((stage,)).score(gold, records)


def _filled(items: list[tuple[int, int | None]], missing: tuple, invalid: tuple) -> list[object]:
    """Each item's prediction as the convention says ("empty": nothing; a score: the tag itself)."""
    out: list[object] = []
    for _, p in items:
        convention = missing if p is None else invalid if p == BAD else None
        if convention is None:
            out.append(p)
        elif convention[0] == "predict":
            out.append(convention[1])
        elif convention[0] == "score":
            out.append(convention)
        else:
            out.append(None)
    return out


@settings(max_examples=150, deadline=None)
@given(items=ITEMS, missing=CONVENTIONS, invalid=CONVENTIONS)
def test_accuracy_under_each_convention_equals_the_oracle(
    items: list[tuple[int, int | None]], missing: tuple, invalid: tuple
) -> None:
    ints = (FieldType("int"),)
    stage = MeasureStage(
        "acc",
        _picky("accuracy"),
        "mean",
        "answer",
        "answer",
        ints,
        ints,
        missing=missing,
        invalid=invalid,
    )
    rows = _run(stage, items)
    got = stage.metric.reduce(
        [tuple(rows[str(i)][k] for k in stage.keys) for i in range(len(items))], "mean"
    )[0]
    per_item = [
        p[1] if isinstance(p, tuple) else float(p == g)
        for (g, _), p in zip(items, _filled(items, missing, invalid))
    ]
    assert got == pytest.approx(math.fsum(per_item) / len(per_item), abs=1e-9)
    if not any(
        isinstance(p, tuple) for p in _filled(items, missing, invalid)
    ):  # no score(x): scikit-learn's own accuracy
        filled = [
            -1 if p is None else p for p in _filled(items, missing, invalid)
        ]  # -1: no class (the ints' NOTHING)
        assert got == pytest.approx(accuracy_score([g for g, _ in items], filled), abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(
    items=ITEMS,
    missing=CONVENTIONS.filter(lambda c: c[0] != "score"),
    invalid=CONVENTIONS.filter(lambda c: c[0] != "score"),
)
def test_macro_f1_under_each_convention_equals_scikit_learn(
    items: list[tuple[int, int | None]], missing: tuple, invalid: tuple
) -> None:
    ints = (FieldType("int"),)
    stage = MeasureStage(
        "f1",
        _picky("f1", labels=[0, 1, 2]),
        "macro",
        "answer",
        "answer",
        ints,
        ints,
        missing=missing,
        invalid=invalid,
    )
    rows = _run(stage, items)
    got = stage.metric.reduce(
        [tuple(rows[str(i)][k] for k in stage.keys) for i in range(len(items))], "macro"
    )[0]
    filled = [-1 if p is None else p for p in _filled(items, missing, invalid)]
    assert got == pytest.approx(
        f1_score([g for g, _ in items], filled, labels=[0, 1, 2], average="macro", zero_division=0),
        abs=1e-9,
    )


@settings(max_examples=60, deadline=None)
@given(items=ITEMS)
def test_refuse_lists_every_invalid_prediction_with_its_line(
    items: list[tuple[int, int | None]],
) -> None:
    ints = (FieldType("int"),)
    stage = MeasureStage(
        "acc",
        _picky("accuracy"),
        "mean",
        "answer",
        "answer",
        ints,
        ints,
        missing=("refuse",),
        invalid=("refuse",),
    )
    bad = [i for i, (_, p) in enumerate(items) if p == BAD]
    unanswered = [i for i, (_, p) in enumerate(items) if p is None]
    if not bad and not unanswered:
        _run(stage, items)
        return
    with pytest.raises(InvalidPredictions) as caught:
        _run(stage, items)
    listed = [(p.line, p.item_id) for p in caught.value.problems]
    assert sorted(listed, key=lambda x: int(x[1])) == sorted(
        [(i + 1, str(i)) for i in bad] + [(None, str(i)) for i in unanswered],
        key=lambda x: int(x[1]),
    )
    assert caught.value.source == "p.jsonl" and caught.value.count == len(bad) + len(unanswered)


# -- the board ------------------------------------------------------------------------------------------


def test_the_board_shows_coverage_on_every_row(
    guide: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = guide
    db = tmp_path / "board.duckdb"
    spec = root / "specs" / "effects.spec"
    gold = _rows(root / "data" / "effects" / "test.jsonl")
    full = tmp_path / "full.jsonl"
    full.write_text(
        "".join(json.dumps({"id": g["id"], "answer": g["answer"]}) + "\n" for g in gold)
    )
    files = {"partial-model": root / "predictions" / "effects.jsonl", "full-model": full}
    for model, path in files.items():
        result = procbench.submit(
            spec, path, split="test", model=model, db=db, data_dir=root / "data"
        )
        assert result.score.to_dict()["coverage"]["answered"] == len(_rows(path))
    table = page(db, monkeypatch, "board", task="effects", split="test").dataframe[0].value
    shown = dict(zip(table["Model"], table["Coverage"]))
    marks = {
        model: " · partial" if len(_rows(path)) < len(gold) else "" for model, path in files.items()
    }  # issue #33
    assert shown == {
        model: f"{len(_rows(path))} / {len(gold)}{marks[model]}" for model, path in files.items()
    }
    assert marks["partial-model"] and not marks["full-model"]
    exported = board_frame(
        db, "effects"
    )  # procbench export board: the same numbers on every long row
    assert {
        (r["model"], r["n_answered"], r["n_items"]) for r in exported.iter_rows(named=True)
    } == {(model, len(_rows(path)), len(gold)) for model, path in files.items()}


def test_compile_explain_says_how_each_measure_counts_missing_and_invalid_predictions(
    guide: tuple[Path, dict[str, str]],
) -> None:
    root, _ = guide
    out_dir = root / "compiled"  # compile writes its JSON Schema there, never into the checkout
    result = CliRunner().invoke(
        app,
        ["compile", str(root / "specs" / "effects.spec"), "--explain", "--out-dir", str(out_dir)],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    said = {
        lines[i].split(":")[0].split()[-1]: lines[i + 1].strip()
        for i, line in enumerate(lines)
        if line.startswith("   measure ")
    }
    default_invalid = "an invalid prediction: the file is refused (the default; declare invalid = ... to change it)"
    assert said == {
        "accuracy": f'no prediction: counted as the prediction "equally likely"; {default_invalid}',
        "macro_f1": f'no prediction: counted as the prediction "equally likely"; {default_invalid}',
        "answered_accuracy": f"no prediction: scored as unanswered; {default_invalid}",
    }


def test_coverage_per_slice_value_and_in_the_python_api(
    guide: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The guide's multiple-choice task (sliced by domain) with every third answer left out."""
    root, _ = guide
    gold = _rows(root / "data" / "nextstep" / "test.jsonl")
    kept = [r for i, r in enumerate(_rows(root / "predictions" / "nextstep.jsonl")) if i % 3 != 1]
    predictions = tmp_path / "nextstep.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in kept))
    answered = {r["id"] for r in kept}
    result = procbench.score(
        root / "specs" / "nextstep.spec", predictions, split="test", data_dir=root / "data"
    )
    assert result.answered == len(answered) and result.n_items == len(gold)
    as_dict = result.to_dict()
    assert as_dict["coverage"] == {
        "answered": len(answered),
        "total": len(gold),
        "fraction": len(answered) / len(gold),
    }
    for domain, got in as_dict["slices"]["domain"].items():
        ids = [g["id"] for g in gold if g["domain"] == domain]
        hit = sum(i in answered for i in ids)
        assert got["coverage"] == {"answered": hit, "total": len(ids), "fraction": hit / len(ids)}


def _is_permutation(gold: list[str], predicted: list[str]) -> bool:
    return (
        len(predicted) == len(gold)
        and set(predicted) == set(gold)
        and len(set(predicted)) == len(predicted)
    )


def test_ordering_with_invalid_predictions_scored_minus_one_equals_scipy(
    guide: tuple[Path, dict[str, str]],
) -> None:
    root, expected = guide
    code, out, err = _score(
        root, root / "specs" / "stepsort.spec", root / "predictions" / "stepsort.jsonl"
    )
    assert code == 0, err
    got = json.loads(out)
    gold = {g["id"]: g["order"] for g in _rows(root / "data" / "stepsort" / "test.jsonl")}
    predicted = {r["id"]: r["order"] for r in _rows(root / "predictions" / "stepsort.jsonl")}
    tau, rho, exact = [], [], []
    for item_id, order in gold.items():
        guess = predicted.get(item_id)
        if guess is None or not _is_permutation(
            order, guess
        ):  # the official rule: -1 (0 for exact order)
            tau.append(-1.0)
            rho.append(-1.0)
            exact.append(0.0)
            continue
        ranks = [guess.index(step) for step in order]
        tau.append(scipy_stats.kendalltau(range(len(order)), ranks).statistic)
        rho.append(scipy_stats.spearmanr(range(len(order)), ranks).statistic)
        exact.append(float(guess == order))
    assert (
        sum(1 for i in gold if i in predicted and not _is_permutation(gold[i], predicted[i])) == 2
    )  # the guide's point
    assert got["metrics"]["kendall"] == pytest.approx(sum(tau) / len(tau), abs=1e-9)
    assert got["metrics"]["spearman"] == pytest.approx(sum(rho) / len(rho), abs=1e-9)
    assert got["metrics"]["exact"] == pytest.approx(sum(exact) / len(exact), abs=1e-9)
    shown = json.loads(expected["stepsort"])
    assert {k: got["metrics"][k] for k in ("kendall", "spearman", "exact")} == pytest.approx(
        {k: shown[k] for k in ("kendall", "spearman", "exact")}, abs=1e-6
    )
    assert got["coverage"] == pytest.approx(shown["coverage"], abs=1e-6)


def test_an_invalid_ordering_refused_by_default_is_named_at_its_line(
    guide: tuple[Path, dict[str, str]],
) -> None:
    root, _ = guide
    text = (root / "specs" / "stepsort.spec").read_text()
    folder = root / "stepsort-refuse"
    folder.mkdir(exist_ok=True)
    spec = folder / "stepsort.spec"
    spec.write_text(text.replace("    invalid = score(-1)\n", ""))
    code, _, err = _score(root, spec, root / "predictions" / "stepsort.jsonl")
    assert code == EXIT_INVALID_PREDICTIONS, err  # the refusal the guide documents (exit 8)
    gold = {g["id"]: g["order"] for g in _rows(root / "data" / "stepsort" / "test.jsonl")}
    lines = (root / "predictions" / "stepsort.jsonl").read_text().splitlines()
    invalid = [
        (n, r["id"])
        for n, r in enumerate(map(json.loads, lines), start=1)
        if not _is_permutation(gold[r["id"]], r["order"])
    ]
    assert f"{len(invalid)} problems in stepsort.jsonl" in err
    for line, item_id in invalid:  # once each, though kendall and spearman both refuse it
        assert (
            err.count(
                f"stepsort.jsonl:{line}: item {item_id!r}: measure 'kendall': not a permutation of the gold's items"
            )
            == 1
        )


def test_check_refuses_a_declared_prediction_for_a_metric_that_checks_predictions_against_the_gold(
    guide: tuple[Path, dict[str, str]],
) -> None:
    root, _ = guide
    text = (root / "specs" / "stepsort.spec").read_text()
    folder = root / "stepsort-predict"
    folder.mkdir(exist_ok=True)
    spec = folder / "stepsort.spec"
    spec.write_text(text.replace("invalid = score(-1)", 'invalid = predict(["fill the kettle"])'))
    line = 1 + spec.read_text().splitlines().index('    invalid = predict(["fill the kettle"])')
    result = CliRunner().invoke(app, ["check", str(spec)])
    errors = [ln for ln in result.output.splitlines() if ": error: " in ln]
    assert result.exit_code == 3 and len(errors) == 1, result.output
    assert errors[0].startswith(
        f"{spec}:{line}:15: error: measure 'kendall': invalid = predict(...): kendall_tau() checks each prediction"
    ), result.output
    assert 'hint: use score(<number>) (e.g. score(-1)), "empty" or "refuse"' in result.output


# -- the convention's parser and type check, on generated values -------------------------------------

_SPEC = """task gen {{
  title   = "gen"
  version = "1"
  primary = acc

  data {{
    splits = [test]

    source rows {{ format = "jsonl"  path = "g/{{split}}.jsonl" }}

    id     = rows.id

    fields {{ answer: {ftype} = rows.answer }}
  }}

  predictions {{ format = "jsonl"  schema {{ id = str  answer = {ftype} }} }}

  score {{
    measure acc {{ metric = accuracy()  gold = answer  prediction = answer  {part} = {value} }}
  }}
}}
"""
VALUES = st.one_of(
    st.sampled_from(["a", "b", "c", "z"]),
    st.integers(-3, 3),
    st.sampled_from([0.5, -1.5]),
    st.booleans(),
)
TYPES = st.sampled_from(
    [
        ('enum("a", "b", "c")', lambda v: v in ("a", "b", "c") and isinstance(v, str)),
        ("int", lambda v: type(v) is int),
        ("str", lambda v: isinstance(v, str)),
    ]
)


@settings(max_examples=60, deadline=None)
@given(
    form=st.sampled_from(["predict", "score"]),
    value=VALUES,
    typed=TYPES,
    part=st.sampled_from(["missing", "invalid"]),
)
def test_a_generated_convention_is_accepted_exactly_when_it_fits(
    form: str, value: str | int | float | bool, typed: tuple, part: str
) -> None:
    from procbench.dsl.checker import check_text
    from procbench.dsl.errors import SpecError

    ftype, fits = typed
    written = json.dumps(value)
    spec = _SPEC.format(ftype=ftype, part=part, value=f"{form}({written})")
    # the oracle: predict(v) needs a value of the field's type; score(x) a number (accuracy keeps one per-item value)
    ok = (
        fits(value)
        if form == "predict"
        else (isinstance(value, (int, float)) and not isinstance(value, bool))
    )
    try:
        checked = check_text(spec, "gen.spec").spec
    except SpecError as exc:
        assert not ok, [d.message for d in exc.diagnostics]
        assert len(exc.diagnostics) == 1 and exc.diagnostics[0].span.line == 19, [
            d.message for d in exc.diagnostics
        ]
        return
    assert ok
    (measure,) = checked.score.measures
    assert getattr(measure, part) == (
        (form, float(value)) if form == "score" and not isinstance(value, str) else (form, value)
    )

"""Per-item values computed in the spec (``value name { from = ... }``, ``flags = {...}``): PM-LLM's score.

``specs/pm-llm-benchmark.spec`` reads only the grade from each verdict (``pmllm.verdicts()``, extraction)
and declares upstream's normalisation and chain-of-thought penalty as formulas. Checked here: the
declared score of every question equals the Python API's (``score_answers``, which the parity tests hold
to upstream) for all fifteen staged models, with and without the penalty; the formulas equal
``normalise`` / ``cot_penalty`` bit for bit on every grade of a fine grid and on random grades
(hypothesis); the checker's refusals.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.dsl import SpecError, check_file
from procbench.api import load_task
from procbench.paths import SPECS_DIR
from procbench.runners.metrics._derived import ItemFormulas, evaluate, flag_values
from procbench.runners.pmllm.answers import read_submission
from procbench.runners.pmllm.grading import cot_penalty, normalise
from procbench.runners.pmllm.naming import parse_result_file_name
from procbench.runners.pmllm.questions import read_questions
from procbench.runners.pmllm.scoring import read_verdicts, score_answers

BENCH = "pm-llm-benchmark"


def _formulas() -> ItemFormulas:
    """The spec's value formulas around the extraction scorer, as the checker read them."""
    spec = check_file(SPECS_DIR / "pm-llm-benchmark.spec").spec
    return ItemFormulas(read_verdicts, tuple((v.name, v.formula) for v in spec.score.values), {})


def _values(grade: float, cot: bool) -> dict[str, float]:
    spec = check_file(SPECS_DIR / "pm-llm-benchmark.spec").spec
    seen = {"grade": grade, "judged": 1.0, "cot": 1.0 if cot else 0.0}
    for value in spec.score.values:
        seen[value.name] = evaluate(value.formula, seen)
    return seen


@pytest.mark.parametrize("cot", [False, True])
def test_the_declared_formulas_equal_upstreams_normalisation_and_penalty_on_a_fine_grid(
    cot: bool,
) -> None:
    for tenth in range(0, 101):
        grade = tenth / 10
        expected = cot_penalty(normalise(grade)) if cot else normalise(grade)
        assert _values(grade, cot)["score"] == expected, (
            grade
        )  # ==: the same float operations in the same order


@settings(max_examples=300, deadline=None)
@given(grade=st.floats(0, 10, allow_nan=False), cot=st.booleans())
def test_the_declared_formulas_equal_upstreams_on_random_grades(grade: float, cot: bool) -> None:
    expected = cot_penalty(normalise(grade)) if cot else normalise(grade)
    assert _values(grade, cot)["score"] == expected


def test_flags_read_the_submission_metadata() -> None:
    assert flag_values((("cot", "cot"),), {"cot": True}) == {"cot": 1.0}
    assert flag_values((("cot", "cot"),), {"cot": "true"}) == {"cot": 1.0}
    assert flag_values((("cot", "cot"),), {"cot": "false"}) == {
        "cot": 0.0
    }  # text other than true is not a yes
    assert flag_values((("cot", "cot"),), {}) == {"cot": 0.0}


def _staged(data_root: Path) -> list[str]:
    folder = data_root / BENCH / "evaluation-gpt-5.4"  # the judge's verdicts of the staged models
    return sorted({parse_result_file_name(p.name).model for p in folder.iterdir()})  # type: ignore[union-attr]


def test_the_spec_scores_every_staged_model_as_the_python_api(data_root: Path) -> None:
    gold = read_questions(data_root, "main")
    _, runner = load_task("pm-llm-benchmark")
    models = _staged(data_root)
    assert len(models) >= 10
    for model in models:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # text-only models miss the image questions
            answers = read_submission(
                data_root / BENCH / "answers", list(gold.items), model=model, judge="gpt-5.4"
            )
        for cot in (False, True):
            expected = {i.item_id: i.values for i in score_answers(gold, answers, cot_penalty=cot)}
            scorer = ItemFormulas(
                read_verdicts, _formulas().formulas, flag_values((("cot", "cot"),), {"cot": cot})
            )
            for item in scorer(gold, answers):
                assert {k: item.values[k] for k in ("grade", "score", "judged")} == expected[
                    item.item_id
                ], (model, cot, item.item_id)
    assert runner.metric_names[:2] == ("score", "total")


def _error(tmp_path: Path, old: str, new: str) -> str:
    text = (SPECS_DIR / "pm-llm-benchmark.spec").read_text(encoding="utf-8")
    assert old in text, old
    for beside in SPECS_DIR.glob("pm-llm-benchmark.*"):
        if beside.suffix != ".spec":
            shutil.copy(beside, tmp_path / beside.name)
    path = tmp_path / "pm-llm-benchmark.spec"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        check_file(path)
    return str(raised.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "mul(judged, pick(cot, penalised, normalised))",
            "mul(judgd, pick(cot, penalised, normalised))",
            "'judgd'",
        ),
        (
            "mul(judged, pick(cot, penalised, normalised))",
            "mul(judged, pick(cot, penalised))",
            "pick() takes 3 argument(s), got 2",
        ),
        ("value penalised {", "value grade {", "value 'grade' is already a per-item value"),
        ("value penalised {", "value cot {", "value 'cot' is already a per-item value or flag"),
        (
            'flags  = { cot = "cot" }',
            'flags  = { judged = "cot" }',
            "flag 'judged' has the name of a per-item value",
        ),
        (
            "mul(judged, pick(cot, penalised, normalised))",
            "mul(judged, pick(cot, penalised, score))",
            "'score'",
        ),
    ],
    ids=[
        "unknown name",
        "arity",
        "taken name",
        "name of a flag",
        "flag clash",
        "value used before it is computed",
    ],
)
def test_each_mistake_in_a_value_block_is_an_error_at_its_place(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    report = _error(tmp_path, old, new)
    assert message in report, report
    assert "pm-llm-benchmark.spec:" in report and "^" in report, report


def test_a_spec_without_flags_reads_no_metadata() -> None:
    assert flag_values((), {"cot": True}) == {}

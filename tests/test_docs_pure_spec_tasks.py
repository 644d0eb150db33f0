"""docs/pure-spec-tasks.md runs: three tasks in spec alone, their numbers equal to the libraries'.

The expected values are computed here with scikit-learn, sacrebleu and rouge-score called on the
guide's own data files (never by procbench's metric code), then compared with what
``procbench score`` prints and with the numbers the guide shows.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest
import sacrebleu
from rouge_score import rouge_scorer
from sklearn import metrics as skm
from typer.testing import CliRunner

from procbench.cli import app
from tests import catalogue

TASKS = ("nextstep", "tipgen", "statechange")


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> catalogue.Guide:
    return catalogue.extracted(tmp_path_factory, "guide")


_rows = catalogue.rows
_score = catalogue.scored


@pytest.mark.parametrize("task", TASKS)
def test_each_guide_spec_checks_against_its_data_and_is_formatted(
    guide: catalogue.Guide, task: str
) -> None:
    catalogue.assert_checks_and_is_formatted(guide[0], task)


def test_multiple_choice_accuracy_and_its_slice_equal_scikit_learn(guide: catalogue.Guide) -> None:
    root, expected = guide
    gold = _rows(root / "data" / "nextstep" / "test.jsonl")
    chosen = {r["id"]: r["choice"] for r in _rows(root / "predictions" / "nextstep.jsonl")}
    got = _score(root, "nextstep")
    assert got["metrics"]["accuracy"] == pytest.approx(
        skm.accuracy_score([g["answer"] for g in gold], [chosen[g["id"]] for g in gold]), abs=1e-12
    )
    for domain in {g["domain"] for g in gold}:
        part = [g for g in gold if g["domain"] == domain]
        want = skm.accuracy_score([g["answer"] for g in part], [chosen[g["id"]] for g in part])
        assert got["slices"]["domain"][domain]["metrics"]["accuracy"] == pytest.approx(
            want, abs=1e-12
        )
    shown = json.loads(expected["nextstep"])
    assert got["metrics"]["accuracy"] == pytest.approx(shown["accuracy"], abs=1e-6)
    assert {
        v: s["metrics"]["accuracy"] for v, s in got["slices"]["domain"].items()
    } == pytest.approx({v: s["accuracy"] for v, s in shown["slices"]["domain"].items()}, abs=1e-6)


def _loose(text: str) -> str:
    """The guide's `loose` normaliser, written independently: strip, lowercase, delete . , ! ?, squeeze spaces."""
    text = text.strip().lower().translate(str.maketrans("", "", ".,!?"))
    return " ".join(text.split())


def test_generation_scores_equal_sacrebleu_and_rouge_score(guide: catalogue.Guide) -> None:
    root, expected = guide
    gold = _rows(root / "data" / "tipgen" / "test.jsonl")
    predicted = {r["id"]: r["tip"] for r in _rows(root / "predictions" / "tipgen.jsonl")}
    refs, hyps = [g["tip"] for g in gold], [predicted[g["id"]] for g in gold]
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    want = {
        "bleu": sacrebleu.corpus_bleu(hyps, [refs]).score / 100,
        "rouge_l": sum(scorer.score(r, h)["rougeL"].fmeasure for r, h in zip(refs, hyps))
        / len(refs),
        "exact": sum(_loose(r) == _loose(h) for r, h in zip(refs, hyps)) / len(refs),
    }
    got = _score(root, "tipgen")["metrics"]
    assert got == pytest.approx(want, abs=1e-12)
    assert got == pytest.approx(json.loads(expected["tipgen"]), abs=1e-6)
    assert set(string.punctuation) >= set(
        ".,!?"
    )  # the normaliser's characters are punctuation only


def test_expanded_three_way_classification_equals_scikit_learn(guide: catalogue.Guide) -> None:
    root, expected = guide
    classes = ["created", "destroyed", "unchanged"]
    gold = {
        f"{record['id']}/{i}": q["answer"]
        for record in _rows(root / "data" / "statechange" / "test.jsonl")
        for i, q in enumerate(record["questions"])
    }
    predicted = {r["id"]: r["answer"] for r in _rows(root / "predictions" / "statechange.jsonl")}
    ids = list(gold)
    y_true, y_pred = [gold[i] for i in ids], [predicted[i] for i in ids]
    per_class = skm.f1_score(y_true, y_pred, labels=classes, average=None)
    want = {
        "macro_f1": skm.f1_score(y_true, y_pred, labels=classes, average="macro"),
        **{f"f1_{c}": v for c, v in zip(classes, per_class)},
        "accuracy": skm.accuracy_score(y_true, y_pred),
    }
    result = _score(root, "statechange")
    assert result["n_items"] == len(gold) == 10
    assert result["metrics"] == pytest.approx(want, abs=1e-12)
    assert result["metrics"] == pytest.approx(json.loads(expected["statechange"]), abs=1e-6)
    for process in ("candle", "omelette", "campfire"):
        part = [i for i in ids if i.startswith(process + "/")]
        want_macro = skm.f1_score(
            [gold[i] for i in part],
            [predicted[i] for i in part],
            labels=classes,
            average="macro",
            zero_division=0,
        )
        assert result["slices"]["process"][process]["metrics"]["macro_f1"] == pytest.approx(
            want_macro, abs=1e-12
        )


# -- what check refuses (the guide's last section) ---------------------------------------------------------


def _check_variant(root: Path, task: str, old: str, new: str) -> tuple[int, str]:
    spec = root / "specs" / f"{task}.spec"
    text = spec.read_text()
    assert old in text
    bad = root / "specs" / f"{task}.spec"
    variant = bad.with_name(f"{task}-variant.spec")
    variant.write_text(text.replace(old, new).replace(f"task {task} {{", f"task {task}-variant {{"))
    result = CliRunner().invoke(app, ["check", str(variant)])
    return result.exit_code, result.output


def test_corpus_bleu_averaged_per_item_is_refused(guide: catalogue.Guide) -> None:
    code, out = _check_variant(
        guide[0],
        "tipgen",
        "metric = corpus_bleu()  gold = tip  prediction = tip",
        'metric = corpus_bleu()  gold = tip  prediction = tip  aggregate = "mean"',
    )
    assert code == 3
    assert re.search(
        r"tipgen-variant\.spec:\d+:\d+: error: measure 'bleu': corpus_bleu\(\) cannot aggregate as 'mean'",
        out,
    ), out
    assert "sentence_bleu()" in out


def test_a_metric_over_a_field_of_the_wrong_type_is_refused(guide: catalogue.Guide) -> None:
    code, out = _check_variant(
        guide[0],
        "nextstep",
        "measure accuracy { metric = accuracy()",
        "measure rouge { metric = rouge()  gold = answer  prediction = choice }\n    measure accuracy { metric = accuracy()",
    )
    assert code == 3
    assert re.search(
        r"nextstep-variant\.spec:\d+:\d+: error: measure 'rouge': gold field 'answer' is int, but rouge\(\)",
        out,
    ), out


def test_a_class_average_over_classes_the_data_does_not_have_is_refused(
    guide: catalogue.Guide,
) -> None:
    code, out = _check_variant(
        guide[0],
        "statechange",
        'metric = f1()  gold = answer  prediction = answer  aggregate = "macro"',
        'metric = f1(labels = ["created", "gone"])  gold = answer  prediction = answer  aggregate = "macro"',
    )
    assert code == 3
    assert "class 'gone' is not a value of gold field 'answer'" in out


def test_a_class_average_without_a_class_set_is_refused(guide: catalogue.Guide) -> None:
    code, out = _check_variant(
        guide[0],
        "statechange",
        "answer: enum(created, destroyed, unchanged) = question.answer",
        "answer: str = question.answer",
    )
    assert code == 3
    assert "f1() needs the class set" in out


def test_check_data_finds_classes_the_data_does_not_have_and_values_outside_the_classes(
    guide: catalogue.Guide,
) -> None:
    root = guide[0]
    spec = root / "specs" / "statechange.spec"
    text = spec.read_text().replace(
        "answer: enum(created, destroyed, unchanged) = question.answer",
        "answer: str = question.answer",
    )
    text = text.replace(
        "schema { id = str  answer = enum(created, destroyed, unchanged) }",
        "schema { id = str  answer = str }",
    )
    text = text.replace(
        'metric = f1()  gold = answer  prediction = answer  aggregate = "macro"',
        'metric = f1(labels = ["created", "destroyed", "gone"])  gold = answer  prediction = answer  aggregate = "macro"',
    )
    text = text.replace(
        'measure f1 { metric = f1()  gold = answer  prediction = answer  aggregate = "per_class" }\n',
        "",
    )
    variant = spec.with_name("statechange-classes.spec")
    variant.write_text(text.replace("task statechange {", "task statechange-classes {"))
    assert (
        CliRunner().invoke(app, ["check", str(variant)]).exit_code == 0
    )  # statically fine: a str field has any value
    result = CliRunner().invoke(
        app, ["check", str(variant), "--data", "--data-dir", str(root / "data")]
    )
    assert result.exit_code == 3, result.output
    assert re.search(
        r"statechange-classes\.spec:\d+:\d+: error: measure 'macro_f1': gold value 'unchanged' \(statechange/test\.jsonl:1\) is not one of its classes",
        result.output,
    ), result.output
    assert "no item of split(s) test has class 'gone'" in result.output


def test_the_sacrebleu_settings_are_in_the_fingerprint_and_display_text_is_not(
    guide: catalogue.Guide,
) -> None:
    from procbench.dsl.checker import check_file
    from procbench.dsl.compiler import spec_digest

    root = guide[0]
    text = (root / "specs" / "tipgen.spec").read_text()

    def digest(old: str, new: str) -> str:
        variant = root / "specs" / "tipgen-fp" / "tipgen.spec"
        variant.parent.mkdir(exist_ok=True)
        assert old in text
        variant.write_text(text.replace(old, new))
        return spec_digest(check_file(variant).spec)

    base = digest("", "")
    assert digest("metric = corpus_bleu()", 'metric = corpus_bleu(tokenize = "intl")') != base
    assert digest("metric = corpus_bleu()", 'metric = corpus_bleu(smooth_method = "floor")') != base
    assert (
        digest(
            'metric bleu { display = "BLEU (sacrebleu, corpus)" }',
            'metric bleu { display = "BLEU"  group = "Overlap" }',
        )
        == base
    )

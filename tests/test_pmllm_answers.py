"""PM-LLM-Benchmark submissions: validation of both layouts, scoring and sums on any subset."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.runtime._types import InvalidPredictions, ItemScore, PredictionWarning
from procbench.runners.pmllm.answers import Answer, read_answers
from procbench.runners.pmllm.questions import read_questions
from procbench.runners.pmllm.scoring import MissingVerdicts, aggregate_sums, score_answers

GOLD = read_questions(SAMPLE_DATA_ROOT, "main")
IDS = list(GOLD.items)


def _jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reader_labels_cover_categories_and_modalities() -> None:
    assert {v["category"] for v in GOLD.labels.values()} == {f"cat0{c}" for c in range(1, 9)}
    assert {v["modality"] for v in GOLD.labels.values()} == {"text", "vision"}
    image = next(q for q in GOLD.items.values() if q.modality == "vision")
    assert image.image is not None and image.image.read_bytes().startswith(b"\x89PNG")
    assert image.answering_prompt == "Can you describe the provided visualization?"
    with pytest.raises(ValueError, match="main"):
        read_questions(SAMPLE_DATA_ROOT, "test")


def test_jsonl_problems_are_all_listed_with_line_numbers(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "a.jsonl", [
        json.dumps({"id": IDS[0], "answer": "x", "verdict": "8.0/10"}),
        json.dumps({"id": IDS[0], "answer": "y"}),
        json.dumps({"id": "cat09_01_nope", "answer": "z"}),
        json.dumps({"id": IDS[1], "answer": 3}),
        "{broken",
        json.dumps({"id": IDS[2], "answer": "ok", "verdict": 7}),
        json.dumps([IDS[3]]),
        json.dumps({"id": 5, "answer": "a"}),
    ])  # fmt: skip
    with pytest.raises(InvalidPredictions) as caught:
        read_answers(path, GOLD)
    assert [p.line for p in caught.value.problems] == [2, 3, 4, 5, 6, 7, 8]
    messages = [p.message for p in caught.value.problems]
    assert (
        "duplicate" in messages[0]
        and "unknown question id" in messages[1]
        and "answer must be a string" in messages[2]
    )


def test_missing_questions_are_allowed_with_a_warning(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "a.jsonl", [json.dumps({"id": IDS[0], "answer": "x", "verdict": "9.0/10"})]
    )
    with pytest.warns(
        PredictionWarning, match=f"{len(IDS) - 1} of {len(IDS)} questions have no answer"
    ):
        answers = read_answers(path, GOLD)
    metrics = aggregate_sums(score_answers(GOLD, answers))
    assert metrics["total"] == pytest.approx(0.8) and metrics["verdicts"] == 1.0


def test_unjudged_answers_are_refused_with_a_pointer_to_the_judge(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "a.jsonl", [json.dumps({"id": q, "answer": "an answer"}) for q in IDS])
    answers = read_answers(path, GOLD)
    with pytest.raises(MissingVerdicts, match="run the judge"):
        score_answers(GOLD, answers)
    empty = {q: Answer(q, "  ") for q in IDS}  # empty answers are never judged: they score nothing
    assert all(i.values["judged"] == 0.0 for i in score_answers(GOLD, empty))


def test_folder_layout_reads_answers_and_the_verdict_folder_beside_them(tmp_path: Path) -> None:
    source = SAMPLE_DATA_ROOT / "pm-llm-benchmark"
    with pytest.raises(InvalidPredictions, match="choose one with the parameter model"):
        read_answers(source / "answers", GOLD)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PredictionWarning)
        answers = read_answers(source / "answers", GOLD, model="acme-tiny")
        from_root = read_answers(source, GOLD, model="acme-tiny", judge="gpt-5.4")
    assert answers == from_root and all(a.verdict for a in answers.values())
    copy = tmp_path / "answers"
    copy.mkdir()
    for file in (source / "answers").glob("acme-large_*"):
        shutil.copy(file, copy)
    (copy / "notes.md").write_text("stray file")
    (copy / "acme-large_cat42_01_unknown.txt").write_text("?")
    with pytest.raises(InvalidPredictions) as caught:
        read_answers(copy, GOLD)
    assert sorted(p.message.split(":")[0] for p in caught.value.problems) == [
        "acme-large_cat42_01_unknown.txt",
        "notes.md",
    ]
    (copy / "notes.md").unlink()
    (copy / "acme-large_cat42_01_unknown.txt").unlink()
    assert all(
        a.verdict is None for a in read_answers(copy, GOLD).values()
    )  # no evaluation-* folder beside


scores = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


@given(st.lists(st.tuples(st.sampled_from(IDS), scores), unique_by=lambda t: t[0]), st.randoms())
def test_sums_are_order_free_bounded_and_consistent(pairs: list[tuple[str, float]], rng) -> None:
    items = [ItemScore(q, {"grade": s, "score": s, "judged": 1.0}) for q, s in pairs]
    shuffled = items[:]
    rng.shuffle(shuffled)
    metrics = aggregate_sums(items)
    assert metrics == aggregate_sums(shuffled)
    assert metrics["score"] <= metrics["total"] <= len(items)
    assert metrics["total"] == pytest.approx(sum(metrics[f"c{c}"] for c in range(1, 9)))
    assert metrics["score"] == pytest.approx(metrics["total"] - metrics["c7"])


def test_empty_subset_gives_zeros() -> None:
    assert set(aggregate_sums([]).values()) == {0.0}


@given(st.text(max_size=60))
def test_any_verdict_scores_between_one_and_ten(verdict: str) -> None:
    answers = {IDS[0]: Answer(IDS[0], "a", verdict)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cot in (False, True):
            item = score_answers(GOLD, answers, cot_penalty=cot)[0]
            assert 1.0 <= item.values["grade"] <= 10.0 and 1.0 <= item.values["score"] <= 10.0

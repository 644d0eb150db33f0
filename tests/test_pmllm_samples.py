"""The shipped PM-LLM-Benchmark samples load, validate, score and rank as intended, in both layouts."""

from __future__ import annotations

import json
import warnings

import pytest

from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.pmllm.answers import read_answers
from procbench.runners.pmllm.leaderboard import ModelSums, rank
from procbench.runners.pmllm.models import cot_penalised, model_size_class
from procbench.runners.pmllm.questions import read_questions
from procbench.runners.pmllm.scoring import aggregate_sums, score_answers

GOLD = read_questions(SAMPLE_DATA_ROOT, "main")
MODELS = ("acme-large", "acme-think-small", "acme-tiny")


def _sums(model: str, path) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        answers = (
            read_answers(path, GOLD, model=model) if path.is_dir() else read_answers(path, GOLD)
        )
    return aggregate_sums(
        score_answers(GOLD, answers, cot_penalty=cot_penalised(model, SAMPLE_DATA_ROOT))
    )


@pytest.mark.parametrize("model", MODELS)
def test_jsonl_submission_and_upstream_folder_score_the_same(model: str) -> None:
    from_jsonl = _sums(model, SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / f"{model}.jsonl")
    assert from_jsonl == _sums(model, SAMPLE_DATA_ROOT / "pm-llm-benchmark" / "answers")
    assert from_jsonl["verdicts"] >= 7


def test_samples_rank_large_then_think_small_then_tiny() -> None:
    sums = [
        ModelSums.from_metrics(
            m, _sums(m, SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / f"{m}.jsonl")
        )
        for m in MODELS
    ]
    assert [s.model for s in sorted(sums, key=lambda s: s.score, reverse=True)] == list(MODELS)
    assert (
        rank(sums) == []
    )  # 9 sample questions: below the 44 verdicts the real leaderboard requires
    assert sums[0].categories[6] > 0 and sums[1].categories[6] == sums[2].categories[6] == 0.0


def test_sample_models_cover_cot_and_size_classes() -> None:
    assert [cot_penalised(m, SAMPLE_DATA_ROOT) for m in MODELS] == [False, True, False]
    # what the demo passes on as submission metadata: the CoT flag and the size class the rules derive
    metas = [
        json.loads((SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / f"{m}.meta.json").read_text())
        for m in MODELS
    ]
    assert [meta.get("cot", False) for meta in metas] == [False, True, False]
    sizes = [model_size_class(m, SAMPLE_DATA_ROOT) for m in MODELS]
    assert sizes == ["commercial", "small (<=8 GB)", "tiny (<=4 GB)"]
    assert [meta["size_class"] for meta in metas] == sizes

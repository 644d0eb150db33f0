"""The shipped ProPara samples load, validate, score, cover every slice and element type, and rank."""

from __future__ import annotations

import warnings

import pytest

from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.propara import summaries
from procbench.runners.propara.leaderboard import (
    aggregate_leaderboard,
    read_answers,
    read_predictions,
    score_leaderboard,
)
from procbench.runners.propara.naacl18 import (
    aggregate_naacl18,
    read_naacl18,
    read_naacl18_grid,
    score_naacl18,
)
from procbench.runners.propara.naacl18_gold import align_parts, read_inventory

LEADERBOARD_RANKING = ("gold-copy", "noisy-tracker", "nothing-changes")  # best first
NAACL18_RANKING = ("gold-grid", "noisy-grid", "all-unknown")
EVAL_DIR = SAMPLE_DATA_ROOT / "propara" / "propara" / "tests" / "fixtures" / "eval"


def _strict(fn, *args):
    """Samples must validate without a single warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def test_submission_folders_hold_exactly_the_three_samples() -> None:
    assert {p.stem for p in (SAMPLE_SUBMISSIONS_DIR / "propara").iterdir()} == set(
        LEADERBOARD_RANKING
    )
    assert {p.stem for p in (SAMPLE_SUBMISSIONS_DIR / "propara-naacl18").iterdir()} == set(
        NAACL18_RANKING
    )


def test_leaderboard_samples_rank_as_intended() -> None:
    gold = _strict(read_answers, SAMPLE_DATA_ROOT, "test")
    scores = []
    for model in LEADERBOARD_RANKING:
        predictions = _strict(
            read_predictions, SAMPLE_SUBMISSIONS_DIR / "propara" / f"{model}.tsv", gold
        )
        scores.append(aggregate_leaderboard(score_leaderboard(gold, predictions)))
    assert scores[0]["f1"] == 1.0
    assert scores[0]["f1"] > scores[1]["f1"] > scores[2]["f1"]


def test_naacl18_samples_rank_as_intended() -> None:
    gold = _strict(read_naacl18, SAMPLE_DATA_ROOT, "test")
    scores = []
    for model in NAACL18_RANKING:
        predictions = _strict(
            read_naacl18_grid, SAMPLE_SUBMISSIONS_DIR / "propara-naacl18" / f"{model}.tsv", gold
        )
        scores.append(aggregate_naacl18(score_naacl18(gold, predictions)))
    for metric in ("cat1", "cat2", "cat3", "macro", "micro"):
        assert scores[0][metric] > scores[1][metric] > scores[2][metric], metric


@pytest.mark.parametrize("reader", [read_answers, read_naacl18])
def test_prompt_slice_has_every_value_including_unknown(reader) -> None:
    gold = reader(SAMPLE_DATA_ROOT, "test")
    prompts = [labels["prompt"] for labels in gold.labels.values()]
    assert "unknown" in prompts and len(set(prompts)) >= 3
    assert any(prompts.count(p) > 1 for p in prompts)  # a prompt shared by several processes


def test_leaderboard_sample_covers_every_element_type() -> None:
    gold = read_answers(SAMPLE_DATA_ROOT, "test")
    actions = {
        a for process in gold.items.values() for t in process.participants for a in t.actions
    }
    assert actions == {"NONE", "CREATE", "MOVE", "DESTROY"}
    assert any(
        ";" in t.participant for process in gold.items.values() for t in process.participants
    )
    assert all(
        summaries.inputs(p) and summaries.outputs(p) and summaries.moves(p)
        for p in gold.items.values()
    )
    conversions = [c for p in gold.items.values() for c in summaries.conversions(p)]
    assert any(
        " AND " in c.locations for c in conversions
    )  # rule (b): a destruction followed by a creation


def test_naacl18_sample_covers_every_alignment_kind_and_label_type() -> None:
    inventory = read_inventory(EVAL_DIR / "gold_labels.test.tsv")
    kinds, saw_unknown_sid = set(), False
    for line in (EVAL_DIR / "all-moves.full-grid.tsv").read_text().splitlines()[1:]:
        fields = line.rstrip().split("\t")
        if len(fields) == 11:
            saw_unknown_sid |= fields[1] == "?"
            if fields[1] != "?":
                kinds |= {how for how, _ in align_parts(fields[3], inventory[int(fields[0])])}
    assert kinds == {"exact", "fuzzy", "manual", "dropped"} and saw_unknown_sid
    gold = read_naacl18(SAMPLE_DATA_ROOT, "test")
    labels = [label for p in gold.items.values() for s in p.annotator_sets for label in s]
    assert {label.kind for label in labels} == {"create", "destroy", "move"}
    assert {"unk", "null"} <= {label.from_location for label in labels} | {
        label.to_location for label in labels
    }

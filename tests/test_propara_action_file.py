"""Reading, validating and summarising leaderboard action files (docs/metrics.md §2A.2–2A.4).

Uses the real test answers: each test edits the gold file into a prediction and checks what the
predictions component says about it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from procbench.runners import GoldSet, InvalidPredictions, PredictionWarning
from procbench.runners.propara import summaries
from procbench.runners.propara.action_file import NULL, UNK, build_tracks, parse_action_lines
from procbench.runners.propara.leaderboard import (
    aggregate_leaderboard,
    read_answers,
    read_predictions,
    score_leaderboard,
)
from procbench.runners.runtime.registry import get


@pytest.fixture(scope="module")
def gold(data_root: Path) -> GoldSet:
    return read_answers(data_root, "test")


@pytest.fixture(scope="module")
def gold_lines(data_root: Path) -> list[str]:
    path = (
        data_root / "propara" / "aristo-leaderboard" / "propara" / "data" / "test" / "answers.tsv"
    )
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _problems(tmp_path: Path, lines: list[str], gold: GoldSet) -> list[tuple[int | None, str]]:
    path = tmp_path / "predictions.tsv"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InvalidPredictions) as caught:
        read_predictions(path, gold)
    return [(p.line, p.message) for p in caught.value.problems]


def test_components_are_registered() -> None:
    assert get("reader", "propara.answers").fn is read_answers
    assert get("predictions", "propara.action_file").fn is read_predictions
    assert get("scorer", "propara.leaderboard").fn is score_leaderboard
    assert get("aggregator", "propara.leaderboard").fn is aggregate_leaderboard


def test_reader_orders_processes_by_ascending_id(gold: GoldSet) -> None:
    ids = [int(i) for i in gold.items]
    assert ids == sorted(ids)


def test_reader_rejects_unknown_split_and_missing_file(data_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown ProPara split"):
        read_answers(data_root, "validation")
    with pytest.raises(FileNotFoundError):
        read_answers(tmp_path, "test")


def test_missing_grids_file_only_drops_the_prompt_label(data_root: Path) -> None:
    with pytest.warns(UserWarning, match="prompt slice is not available"):
        gold = read_answers(data_root, "dev", prompts="nowhere/{split}.tsv")
    assert gold.items and all(labels == {} for labels in gold.labels.values())


def test_every_bad_line_is_reported_not_only_the_first(
    tmp_path: Path, gold: GoldSet, gold_lines: list[str]
) -> None:
    lines = list(gold_lines)
    pid, sentence, name = lines[0].split("\t")[:3]
    lines[0] = "ProcessID\tSentence\tParticipant\tAction\tBefore\tAfter\n"
    lines[3] = f"{pid}\t0\t{name}\tNONE\t?\t?\n"
    lines[5] = f"{pid}\t{sentence}\t{name}\tNONE\n"
    lines.append("\n")
    problems = _problems(tmp_path, lines, gold)
    assert [line for line, _ in problems] == [1, 1, 4, 6, len(lines)]
    assert "invalid literal for int() with base 10: 'ProcessID'" in problems[0][1]
    assert problems[2][1] == "sentence number must be 1 or more, got 0"
    assert problems[3][1] == "not enough values to unpack (expected 6, got 4)"
    assert problems[4][1].startswith("blank line")


def test_participant_diff_names_missing_and_unexpected(
    tmp_path: Path, gold: GoldSet, gold_lines: list[str]
) -> None:
    first_pid = gold_lines[0].split("\t")[0]
    name = gold_lines[0].split("\t")[2]
    renamed = [
        line.replace(f"\t{name}\t", "\tsomething else\t", 1)
        if line.split("\t")[0::2][:2] == [first_pid, name]
        else line
        for line in gold_lines
    ]
    renamed = [line for line in renamed if line.split("\t")[0] != list(gold.items)[-1]]
    problems = _problems(tmp_path, renamed, gold)
    first_renamed = next(i for i, line in enumerate(renamed, start=1) if "something else" in line)
    assert problems == [
        (None, f'Process {first_pid}: participant "{name}" is missing'),
        (first_renamed, f'Process {first_pid}: participant "something else" is unexpected'),
        (None, f"Process {list(gold.items)[-1]} missing in predictions"),
    ]


def test_extra_processes_and_missing_rows_are_warned_and_scored(
    tmp_path: Path, gold: GoldSet, gold_lines: list[str]
) -> None:
    pid, _, name = gold_lines[0].split("\t")[:3]
    lines = [gold_lines[0].replace(f"{pid}\t", "999999\t", 1), *gold_lines[1:]]
    lines.append(
        gold_lines[0]
    )  # the removed row of the real process comes back last (order does not matter)
    assert "\tMOVE\t" in lines[3]
    lines = [
        line for i, line in enumerate(lines) if i != 3
    ]  # drop a MOVE row: its sentence falls back to NONE/unk
    path = tmp_path / "predictions.tsv"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.warns(PredictionWarning) as caught:
        predictions = read_predictions(path, gold)
    messages = " | ".join(str(w.message) for w in caught)
    assert "999999" in messages and "lack rows" in messages
    assert "999999" not in predictions
    scores = aggregate_leaderboard(score_leaderboard(gold, predictions))
    assert scores["moves_r"] < 1.0 and scores["inputs_f1"] == 1.0


def test_crlf_files_are_read_like_lf(tmp_path: Path, gold: GoldSet, gold_lines: list[str]) -> None:
    path = tmp_path / "predictions.tsv"
    path.write_bytes("".join(gold_lines).replace("\n", "\r\n").encode())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        predictions = read_predictions(path, gold)
    assert aggregate_leaderboard(score_leaderboard(gold, predictions))["f1"] == 1.0


def test_case_3_tracks_and_summaries_from_metrics_walkthrough(parity_dir: Path) -> None:
    """docs/metrics.md §2A.10 walk-through of case-3 (gold and prediction of process 1167)."""
    case = parity_dir / "propara" / "leaderboard" / "case-3"
    answer = build_tracks(
        parse_action_lines(case.joinpath("answers.tsv").read_text().splitlines(True)).rows
    )[1167]
    predicted = build_tracks(
        parse_action_lines(case.joinpath("predictions.tsv").read_text().splitlines(True)).rows
    )[1167]
    tracks = {t.participant: t.locations for t in answer.participants}
    assert tracks["atoms of hydrogen"] == ("sun", "sun", "sun", NULL, NULL, NULL)
    assert tracks["sunlight; light"] == (NULL, NULL, NULL, NULL, "sun", "earth")
    assert summaries.conversions(answer) == [
        summaries.Conversion("atoms of hydrogen", "sunlight OR light", "sun", 3)
    ]
    assert "atoms of hydrogen" in summaries.inputs(predicted)
    assert summaries.conversions(predicted) == []
    light_moves = [m for m in summaries.moves(predicted) if m.participant == "sunlight OR light"]
    assert light_moves == [summaries.Move("sunlight OR light", "star", "soil", 5)]
    assert UNK not in tracks["atoms of hydrogen"]


def test_undecodable_bytes_are_reported_on_their_line(
    tmp_path: Path, gold: GoldSet, gold_lines: list[str]
) -> None:
    path = tmp_path / "predictions.tsv"
    path.write_bytes("".join(gold_lines[:2]).encode() + b"37\t3\tbones\tNONE\t\xff\t\xff\n")
    with pytest.raises(InvalidPredictions) as caught:
        read_predictions(path, gold)
    assert [(p.line, p.message.startswith("not valid UTF-8")) for p in caught.value.problems] == [
        (3, True)
    ]

"""Property tests of the leaderboard task on generated action files (docs/metrics.md §2A.2–2A.7)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.runners import GoldSet, InvalidPredictions
from procbench.runners.propara.action_file import build_tracks, parse_action_lines
from procbench.runners.propara.leaderboard import (
    aggregate_leaderboard,
    read_predictions,
    score_leaderboard,
)

# Distinct words with distinct Porter stems and no leading article, so that every pair similarity
# stays within [0, 1] (repeated alternatives are what make upstream's similarity leave that range).
LOCATIONS = ("soil", "sky", "leaf", "root", "cloud", "sea", "rock")
NAMES = ("water", "vapor", "sugar", "oxygen", "light", "magma", "rain", "ice", "seed", "stem")
STATES = st.sampled_from(("-", "?", *LOCATIONS))

Tracks = dict[int, dict[str, list[str]]]


def _action(before: str, after: str) -> str:
    if before == "-" and after != "-":
        return "CREATE"
    if before != "-" and after == "-":
        return "DESTROY"
    return "MOVE" if before != after else "NONE"


def action_file_text(tracks: Tracks) -> str:
    """Rows ``pid sentence participant action before after`` whose actions follow the tracks."""
    return "".join(
        f"{pid}\t{s}\t{name}\t{_action(loc[s - 1], loc[s])}\t{loc[s - 1]}\t{loc[s]}\n"
        for pid, participants in tracks.items()
        for name, loc in participants.items()
        for s in range(1, len(loc))
    )


@st.composite
def participant_sets(draw) -> dict[int, list[str]]:
    pids = draw(st.lists(st.integers(1, 9999), min_size=1, max_size=3, unique=True))
    sets = {}
    for pid in pids:
        words = draw(st.permutations(NAMES))
        count = draw(st.integers(1, 4))
        sizes = draw(st.lists(st.integers(1, 2), min_size=count, max_size=count))
        names, start = [], 0
        for size in sizes:
            names.append("; ".join(words[start : start + size]))
            start += size
        sets[pid] = names
    return sets


@st.composite
def tracks_for(
    draw, participants: dict[int, list[str]], sentences: dict[int, int] | None = None
) -> Tracks:
    tracks: Tracks = {}
    for pid, names in participants.items():
        n = sentences[pid] if sentences else draw(st.integers(1, 6))
        tracks[pid] = {
            name: draw(st.lists(STATES, min_size=n + 1, max_size=n + 1)) for name in names
        }
    return tracks


@st.composite
def gold_and_prediction(draw) -> tuple[Tracks, Tracks]:
    participants = draw(participant_sets())
    gold = draw(tracks_for(participants))
    # a prediction row beyond the gold process's sentences is refused at its line (tested in test_untrusted_predictions)
    sentences = {pid: len(next(iter(track.values()))) - 1 for pid, track in gold.items()}
    return gold, draw(tracks_for(participants, sentences))


def _gold(tracks: Tracks) -> GoldSet:
    parsed = parse_action_lines(action_file_text(tracks).splitlines(keepends=True))
    assert not parsed.problems
    return GoldSet(items={str(pid): t for pid, t in build_tracks(parsed.rows).items()})


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "predictions.tsv"
    path.write_text(text, encoding="utf-8")
    return path


@given(gold_and_prediction())
def test_any_valid_prediction_scores_within_bounds(
    tmp_path_factory: pytest.TempPathFactory, pair
) -> None:
    gold_tracks, predicted_tracks = pair
    gold = _gold(gold_tracks)
    path = _write(tmp_path_factory.mktemp("p"), action_file_text(predicted_tracks))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items = score_leaderboard(gold, read_predictions(path, gold))
    assert [i.item_id for i in items] == list(gold.items)
    for item in items:
        assert all(0.0 <= v <= 1.0 for v in item.values.values()), item
    assert all(0.0 <= v <= 1.0 for v in aggregate_leaderboard(items).values())


@given(gold_and_prediction())
def test_gold_as_prediction_scores_one_everywhere(
    tmp_path_factory: pytest.TempPathFactory, pair
) -> None:
    gold_tracks, _ = pair
    gold = _gold(gold_tracks)
    path = _write(tmp_path_factory.mktemp("p"), action_file_text(gold_tracks))
    items = score_leaderboard(gold, read_predictions(path, gold))
    assert all(v == 1.0 for item in items for v in item.values.values())
    assert set(aggregate_leaderboard(items).values()) == {1.0}


# Invalid rows with the upstream message each must produce (docs/metrics.md §2A.2 table).
INVALID_ROWS = st.one_of(
    st.sampled_from(("?", "", *LOCATIONS)).map(
        lambda b: ("CREATE", b, "soil", f"Invalid CREATE before_location: {b}")
    ),
    st.sampled_from(("", "-")).map(
        lambda a: ("CREATE", "-", a, f"Invalid CREATE after_location: {a}")
    ),
    st.sampled_from(("", "-")).map(
        lambda b: ("DESTROY", b, "-", f"Invalid DESTROY before_location: {b}")
    ),
    st.sampled_from(("?", "", *LOCATIONS)).map(
        lambda a: ("DESTROY", "soil", a, f"Invalid DESTROY after_location: {a}")
    ),
    st.sampled_from(("", "-")).map(
        lambda b: ("MOVE", b, "sky", f"Invalid MOVE before_location: {b}")
    ),
    st.sampled_from(("", "-")).map(
        lambda a: ("MOVE", "sky", a, f"Invalid MOVE after_location: {a}")
    ),
    st.tuples(STATES, STATES)
    .filter(lambda t: t[0] != t[1])
    .map(lambda t: ("NONE", *t, f"Unequal NONE locations: {t[0]} -- {t[1]}")),
    st.sampled_from(("none", "VIBRATE", "create", "")).map(
        lambda x: (x, "-", "-", f"Invalid action: {x}")
    ),
)


@given(gold_and_prediction(), st.data())
def test_invalid_rows_are_all_rejected_with_their_line_numbers(
    tmp_path_factory: pytest.TempPathFactory, pair, data
) -> None:
    gold_tracks, predicted_tracks = pair
    lines = action_file_text(predicted_tracks).splitlines(keepends=True)
    targets = data.draw(
        st.lists(st.integers(0, len(lines) - 1), min_size=1, max_size=3, unique=True)
    )
    expected = []
    for index in sorted(targets):
        action, before, after, message = data.draw(INVALID_ROWS)
        pid, sentence, name = lines[index].split("\t")[:3]
        lines[index] = f"{pid}\t{sentence}\t{name}\t{action}\t{before}\t{after}\n"
        expected.append((index + 1, message))
    gold = _gold(gold_tracks)
    with pytest.raises(InvalidPredictions) as caught:
        read_predictions(_write(tmp_path_factory.mktemp("p"), "".join(lines)), gold)
    assert [(p.line, p.message) for p in caught.value.problems] == expected


@given(gold_and_prediction(), st.data())
def test_blank_lines_are_rejected_with_their_line_numbers(
    tmp_path_factory: pytest.TempPathFactory, pair, data
) -> None:
    gold_tracks, predicted_tracks = pair
    lines = action_file_text(predicted_tracks).splitlines(keepends=True)
    position = data.draw(st.integers(0, len(lines)))
    lines.insert(position, data.draw(st.sampled_from(("\n", "  \n", "\t\n"))))
    with pytest.raises(InvalidPredictions) as caught:
        read_predictions(_write(tmp_path_factory.mktemp("p"), "".join(lines)), _gold(gold_tracks))
    assert [p.line for p in caught.value.problems] == [position + 1]

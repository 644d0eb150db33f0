"""The four summaries of a process that the leaderboard asks about (docs/metrics.md §2A.4).

Inputs and outputs read the action tracks only; conversions read the location tracks only; moves
read both. Upstream quirks kept on purpose: the ``s < n - 1`` bound of conversion rules (b)/(c) and
the raw, case-sensitive location comparison of moves.
"""

from __future__ import annotations

from dataclasses import dataclass

from procbench.runners.propara.action_file import NULL, ParticipantTrack, ProcessTracks
from procbench.runners.registry import component


@dataclass(frozen=True)
class Conversion:
    destroyed: str  # participant labels joined with " AND "
    created: str
    locations: str  # distinct locations joined with " AND "
    step: int


@dataclass(frozen=True)
class Move:
    participant: str
    before: str
    after: str
    step: int


def inputs(process: ProcessTracks) -> list[str]:
    """Labels destroyed at some step with no creation before and no creation or move after."""
    return [t.label for t in process.participants if _is_input(t.actions)]


def outputs(process: ProcessTracks) -> list[str]:
    """Labels created at some step with no destruction or move before and no destruction after."""
    return [t.label for t in process.participants if _is_output(t.actions)]


def _is_input(acts: tuple[str, ...]) -> bool:
    return any(
        act == "DESTROY"
        and "CREATE" not in acts[:i]
        and not {"CREATE", "MOVE"} & set(acts[i + 1 :])
        for i, act in enumerate(acts)
    )


def _is_output(acts: tuple[str, ...]) -> bool:
    return any(
        act == "CREATE"
        and not {"DESTROY", "MOVE"} & set(acts[:i])
        and "DESTROY" not in acts[i + 1 :]
        for i, act in enumerate(acts)
    )


def _joined_set(locations: list[str]) -> str:
    # Upstream joins a Python set (arbitrary order); sorting makes equal sets give equal strings, so
    # the raw-equality shortcut of the similarity (2A.5) is deterministic.
    return " AND ".join(sorted(set(locations)))


def _created_at(process: ProcessTracks, step: int) -> list[tuple[ParticipantTrack, str]]:
    tracks = process.participants
    return [
        (t, t.locations[step])
        for t in tracks
        if t.locations[step - 1] == NULL and t.locations[step] != NULL
    ]


def _destroyed_at(process: ProcessTracks, step: int) -> list[tuple[ParticipantTrack, str]]:
    tracks = process.participants
    return [
        (t, t.locations[step - 1])
        for t in tracks
        if t.locations[step - 1] != NULL and t.locations[step] == NULL
    ]


def conversions(process: ProcessTracks) -> list[Conversion]:
    """Steps where some participants disappear and others appear (rules a, b, c of 2A.4)."""
    n = process.num_sentences
    found: list[Conversion] = []
    # each step's creations and destructions, once (rules b and c also look at the next step)
    none: list[tuple[ParticipantTrack, str]] = []
    created_at = [none, *(_created_at(process, s) for s in range(1, n + 1)), none]
    destroyed_at = [none, *(_destroyed_at(process, s) for s in range(1, n + 1)), none]
    for s in range(1, n + 1):
        created, destroyed = created_at[s], destroyed_at[s]
        if created and destroyed:
            found.append(
                Conversion(
                    _labels(destroyed),
                    _labels(created),
                    _joined_set([loc for _, loc in destroyed + created]),
                    s,
                )
            )
        elif destroyed and s < n - 1:  # upstream off-by-one: step n-1 is never paired with step n
            next_created, next_destroyed = created_at[s + 1], destroyed_at[s + 1]
            gone = {t.label for t, _ in destroyed}
            remainder = [(t, loc) for t, loc in next_created if t.label not in gone]
            if not next_destroyed and remainder:
                locations = [loc for _, loc in next_created] + [loc for _, loc in destroyed]
                found.append(
                    Conversion(_labels(destroyed), _labels(remainder), _joined_set(locations), s)
                )
        elif created and s < n - 1:
            next_created, next_destroyed = created_at[s + 1], destroyed_at[s + 1]
            made = {t.label for t, _ in created}
            remainder = [(t, loc) for t, loc in next_destroyed if t.label not in made]
            if not next_created and remainder:
                locations = [loc for _, loc in created] + [loc for _, loc in next_destroyed]
                found.append(
                    Conversion(_labels(remainder), _labels(created), _joined_set(locations), s)
                )
    return found


def _labels(tracks: list[tuple[ParticipantTrack, str]]) -> str:
    return " AND ".join(t.label for t, _ in tracks)


def moves(process: ProcessTracks) -> list[Move]:
    """A MOVE action, or an existing participant whose raw location string changes."""
    found: list[Move] = []
    steps = range(1, process.num_sentences + 1)
    for t in process.participants:
        locations, actions, label = t.locations, t.actions, None
        for s in steps:
            before, after = locations[s - 1], locations[s]
            if actions[s - 1] == "MOVE" or (before != NULL and after != NULL and before != after):
                if label is None:
                    label = t.label
                found.append(Move(label, before, after, s))
    return found


# The deriver's contract: what it reads of a process's tracks and the typed fields it gives.
SUMMARY_FIELDS = {
    "inputs": "list(str)",
    "outputs": "list(str)",
    "conversions": "list(record(destroyed: str, created: str, locations: str, step: int))",
    "moves": "list(record(participant: str, before: str, after: str, step: int))",
}


@component(
    "deriver",
    "propara.summaries",
    needs={"num_sentences": "int", "participants": "list(any)"},
    fields=SUMMARY_FIELDS,
)
def derive_summaries(
    process: ProcessTracks, gold: object = None
) -> dict[str, list[str] | list[Conversion] | list[Move]]:
    """The four things the leaderboard asks about a process, from its action grid (docs/metrics.md §2A.4).

    Participants and locations are phrases (``a OR b AND c``); the spec's match blocks compare them.
    Gold and predicted grids are summarised alike: ``gold`` (the item's gold grid) is not read.
    """
    return {
        "inputs": inputs(process),
        "outputs": outputs(process),
        "conversions": conversions(process),
        "moves": moves(process),
    }

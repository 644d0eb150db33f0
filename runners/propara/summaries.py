"""The four summaries of a process that the leaderboard asks about (docs/metrics.md §2A.4).

Inputs and outputs read the action tracks only; conversions read the location tracks only; moves
read both. Upstream quirks kept on purpose: the ``s < n - 1`` bound of conversion rules (b)/(c) and
the raw, case-sensitive location comparison of moves.
"""

from __future__ import annotations

from procbench.runners.propara.action_file import NULL, ParticipantTrack, ProcessTracks
from procbench.runners.runtime.records import Record
from procbench.runners.runtime.registry import component


class Conversion(Record):
    """Participants destroyed as others are created at one step, with their locations."""

    __slots__ = ("destroyed", "created", "locations", "step")
    destroyed: str  # participant labels joined with " AND "
    created: str
    locations: str  # distinct locations joined with " AND "
    step: int

    def __init__(self, destroyed: str, created: str, locations: str, step: int) -> None:
        object.__setattr__(self, "destroyed", destroyed)
        object.__setattr__(self, "created", created)
        object.__setattr__(self, "locations", locations)
        object.__setattr__(self, "step", step)

    # Equality and hashing written out, as the dataclass generated them: matching keys its dicts by
    # answers (each hashed a dozen times or more), and Record's general ones walk the field names.
    def __eq__(self, other: object) -> bool:
        if type(other) is not Conversion:
            return NotImplemented
        return (self.destroyed, self.created, self.locations, self.step) == (
            other.destroyed,
            other.created,
            other.locations,
            other.step,
        )

    def __hash__(self) -> int:
        return hash((self.destroyed, self.created, self.locations, self.step))


class Move(Record):
    """A participant's location change at one step."""

    __slots__ = ("participant", "before", "after", "step")
    participant: str
    before: str
    after: str
    step: int

    def __init__(self, participant: str, before: str, after: str, step: int) -> None:
        object.__setattr__(self, "participant", participant)
        object.__setattr__(self, "before", before)
        object.__setattr__(self, "after", after)
        object.__setattr__(self, "step", step)

    def __eq__(self, other: object) -> bool:  # written out, as Conversion's
        if type(other) is not Move:
            return NotImplemented
        return (self.participant, self.before, self.after, self.step) == (
            other.participant,
            other.before,
            other.after,
            other.step,
        )

    def __hash__(self) -> int:
        return hash((self.participant, self.before, self.after, self.step))


def inputs(process: ProcessTracks) -> list[str]:
    """Labels destroyed at some step with no creation before and no creation or move after."""
    return [t.label for t in process.participants if _is_input(t.actions)]


def outputs(process: ProcessTracks) -> list[str]:
    """Labels created at some step with no destruction or move before and no destruction after."""
    return [t.label for t in process.participants if _is_output(t.actions)]


def _is_input(acts: tuple[str, ...]) -> bool:
    if "DESTROY" not in acts:  # most participants: nothing to look for
        return False
    return any(
        act == "DESTROY"
        and "CREATE" not in acts[:i]
        and not {"CREATE", "MOVE"} & set(acts[i + 1 :])
        for i, act in enumerate(acts)
    )


def _is_output(acts: tuple[str, ...]) -> bool:
    if "CREATE" not in acts:
        return False
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


def conversions(process: ProcessTracks) -> list[Conversion]:
    """Steps where some participants disappear and others appear (rules a, b, c of 2A.4)."""
    n = process.num_sentences
    found: list[Conversion] = []
    # each step's creations and destructions, participants in order (as _created_at and _destroyed_at
    # give them), found in one pass over the tracks; a track that is never null has none
    created_at: list[list[tuple[ParticipantTrack, str]]] = [[] for _ in range(n + 2)]
    destroyed_at: list[list[tuple[ParticipantTrack, str]]] = [[] for _ in range(n + 2)]
    for t in process.participants:
        track = t.locations
        if NULL not in track[: n + 1]:
            continue
        for s in range(1, n + 1):
            before, after = track[s - 1], track[s]
            if before == NULL:
                if after != NULL:
                    created_at[s].append((t, after))
            elif after == NULL:
                destroyed_at[s].append((t, before))
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

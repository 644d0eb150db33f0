"""Reading and validating ProPara leaderboard action files (docs/metrics.md §2A.1–2A.3).

An action file is a header-less TSV of ``process  sentence  participant  action  before  after``.
Upstream reads it in two passes and aborts on the first bad line; here every line is checked and
every problem is returned (with its 1-based line number and the upstream message text), so that a
researcher sees all of them at once. The same parser serves the gold answers (where any problem is a
broken data file) and the predictions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import count, repeat
from pathlib import Path
from typing import NamedTuple

from procbench.runners.runtime._types import Problem, ProblemList
from procbench.runners.runtime.records import Record
from procbench.runners.propara.lines import decode_text, split_lines

NULL = "null"  # internal value of "-": the participant does not exist
UNK = "unk"  # internal value of "?": it exists, location unknown
ACTIONS = ("NONE", "CREATE", "MOVE", "DESTROY")


class ActionRow(NamedTuple):
    """One valid line of an action file, as written (locations not yet mapped to null/unk).

    A named tuple, not a dataclass: a 100x split has hundreds of thousands of rows (issue #31).
    """

    line: int
    process_id: int
    sentence: int
    participant: str
    action: str
    before: str
    after: str


class Mention(NamedTuple):
    """A (process, participant) named on some line, valid or not (for the participant diff)."""

    line: int
    process_id: int
    participant: str


class ActionFile(Record):
    """Every valid row of a file plus the problems found (the first MAX_PROBLEMS, then one
    :class:`~procbench.runners.runtime._types.MoreProblems` counting the rest); ``n_lines`` counts all lines read.

    ``mentions`` also covers lines that failed validation but name a process and participant, so
    that a bad line does not additionally show up as a missing participant.  In a file without
    problems every line is a row, and the rows are the mentions (a row has ``line``, ``process_id``
    and ``participant`` too).
    """

    __slots__ = ("rows", "problems", "n_lines", "mentions")
    rows: tuple[ActionRow, ...]
    problems: tuple[Problem, ...]
    n_lines: int
    mentions: tuple[Mention | ActionRow, ...]

    def __init__(
        self,
        rows: tuple[ActionRow, ...],
        problems: tuple[Problem, ...],
        n_lines: int,
        mentions: tuple[Mention | ActionRow, ...] = (),
    ) -> None:
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "problems", problems)
        object.__setattr__(self, "n_lines", n_lines)
        object.__setattr__(self, "mentions", mentions)


class _LabelSlot:
    """Where :attr:`ParticipantTrack.label` is kept once asked for: a slot of its own, outside the
    record's fields (so never compared, hashed, shown, pickled or fingerprinted, as the
    ``cached_property`` of the dataclass it was). None until then; unset in a copy or an unpickled
    track, which are built without ``__init__``."""

    __slots__ = ("_label",)
    _label: str | None


class ParticipantTrack(Record, _LabelSlot):
    """Location and action tracks of one participant string (2A.3).

    ``locations[s]`` is the location after sentence s (``locations[0]`` before the first sentence);
    ``actions[s - 1]`` is the action of sentence s.
    """

    __slots__ = ("participant", "locations", "actions")
    participant: str
    locations: tuple[str, ...]
    actions: tuple[str, ...]

    def __init__(
        self, participant: str, locations: tuple[str, ...], actions: tuple[str, ...]
    ) -> None:
        object.__setattr__(self, "participant", participant)
        object.__setattr__(self, "locations", locations)
        object.__setattr__(self, "actions", actions)
        object.__setattr__(self, "_label", None)

    @property  # asked for by each summary of each process (kept beside the fields, never one of them)
    def label(self) -> str:
        """Alternatives split on ``;``, stripped and joined with `` OR `` ("gas;fuel" -> "gas OR fuel")."""
        try:
            label = self._label
        except AttributeError:  # a copy: built without __init__
            label = None
        if label is None:
            label = " OR ".join([part.strip() for part in self.participant.split(";")])
            object.__setattr__(self, "_label", label)
        return label


class ProcessTracks(Record):
    """All participants of one process in one file, in first-seen order."""

    __slots__ = ("process_id", "num_sentences", "participants")
    process_id: int
    num_sentences: int
    participants: tuple[ParticipantTrack, ...]

    def __init__(
        self, process_id: int, num_sentences: int, participants: tuple[ParticipantTrack, ...]
    ) -> None:
        object.__setattr__(self, "process_id", process_id)
        object.__setattr__(self, "num_sentences", num_sentences)
        object.__setattr__(self, "participants", participants)

    def participant_names(self) -> tuple[str, ...]:
        return tuple(track.participant for track in self.participants)


def read_action_file(path: Path) -> ActionFile:
    """Parse ``path``; an undecodable file yields a single problem at the offending line."""
    text, problem = decode_text(path)
    if problem is not None:
        return ActionFile((), (problem,), problem.line or 0)
    return parse_action_text(text)


def parse_action_text(text: str) -> ActionFile:
    """:func:`parse_action_lines` of the file's text: a clean file (the usual case) in one pass over
    the whole text, anything else line by line with every problem reported (issue #31)."""
    clean = clean_rows(text)
    if clean is not None:
        return ActionFile(clean, (), len(clean), clean)
    return parse_action_lines(split_lines(text))


# A line every rule of the clean path accepts: integer ids in ASCII digits, at least six TAB fields.
# Only LF ends a line here; a text with CR (CRLF, or a lone CR) is left to the line-by-line path.
_CLEAN_LINE = re.compile(
    r"^([0-9]{1,18})\t([0-9]{1,18})\t([^\t\n]*)\t([^\t\n]*)\t([^\t\n]*)\t([^\t\n]*)(?:\t[^\n]*)?$",
    re.MULTILINE,
)


def clean_rows(text: str) -> tuple[ActionRow, ...] | None:
    """The rows of a file in which every line is valid, or None when any is not (or may not be).

    None sends the file to :func:`parse_action_lines`, which finds and words every problem; a
    tuple is exactly the rows that path would return for the same text, with no problem.
    Builds no :class:`~procbench.runners.runtime._types.Problem` and no per-line check result.
    """
    if not text or "\r" in text:
        return None
    found = _CLEAN_LINE.findall(text)
    lines = text.count("\n") + (not text.endswith("\n"))
    if len(found) != lines:  # a blank line, a short line, an id that is not plain digits, ...
        return None
    # column by column, in C loops: ids repeat, so each distinct one is converted once
    pids, sentences, participants, actions, befores, afters = zip(*found)
    number = {text: int(text) for text in {*pids, *sentences}}.__getitem__
    sentence_numbers = list(map(number, sentences))
    if min(sentence_numbers) < 1 or any(map(action_problem, actions, befores, afters)):
        return None
    columns = zip(
        count(1), map(number, pids), sentence_numbers, participants, actions, befores, afters
    )
    return tuple(map(tuple.__new__, repeat(ActionRow), columns))


def parse_action_lines(lines: Iterable[str]) -> ActionFile:
    """Check every line by the official rules (2A.2) and keep the valid ones."""
    rows: list[ActionRow] = []
    problems = ProblemList()  # the first MAX_PROBLEMS kept, the rest counted
    mentions: list[Mention] = []
    n_lines = 0
    for n_lines, line in enumerate(lines, start=1):
        row, line_problems = _parse_line(n_lines, line)
        problems.extend(line_problems)
        if row is not None and not line_problems:
            rows.append(row)
        mention = _mention(n_lines, line)
        if mention is not None:
            mentions.append(mention)
    if n_lines == 0:
        problems.append(Problem(None, "empty action file (upstream: no lines to iterate)"))
    return ActionFile(tuple(rows), tuple(problems.listed()), n_lines, tuple(mentions))


def _mention(number: int, line: str) -> Mention | None:
    fields = line.rstrip("\r\n").split("\t")
    try:
        return Mention(number, int(fields[0]), fields[2]) if len(fields) >= 3 else None
    except ValueError:
        return None


def _parse_line(number: int, line: str) -> tuple[ActionRow | None, list[Problem]]:
    row = _valid_row(number, line)
    if row is not None:
        return row, []
    # Upstream pass 1: whole line stripped, first two TAB fields must be present and integers.
    head = line.strip().split("\t")
    if len(head) < 2:
        what = "blank line" if not line.strip() else "line has no TAB"
        return None, [Problem(number, f"{what}: not enough values to unpack (expected 2, got 1)")]
    # Upstream pass 2: only CR/LF removed, first six TAB fields kept.
    fields = line.rstrip("\r\n").split("\t")
    problems = _id_problems(number, head[0], head[1])
    if problems:
        return None, problems
    if len(fields) < 6:
        return None, [
            Problem(number, f"not enough values to unpack (expected 6, got {len(fields)})")
        ]
    pid_text, sentence_text, participant, action, before, after = fields[:6]
    problems = _id_problems(number, pid_text, sentence_text)
    if problems:
        return None, problems
    process_id, sentence = int(pid_text), int(sentence_text)
    if sentence < 1:
        # Upstream silently indexes its tracks from the end; 2A.3 says to treat this as invalid.
        problems.append(Problem(number, f"sentence number must be 1 or more, got {sentence}"))
    message = action_problem(action, before, after)
    if message:
        problems.append(Problem(number, message))
    row = ActionRow(number, process_id, sentence, participant, action, before, after)
    return row, problems


def _valid_row(number: int, line: str) -> ActionRow | None:
    """The row of a line every rule accepts, read in one pass; None for any other line (checked rule by rule).

    A line that does not start with white space strips to the same first two fields as it splits, so
    upstream's two passes agree on them (issue #19: most lines of a file are valid).
    """
    if not line or line[0].isspace():
        return None
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) < 6:
        return None
    try:
        process_id, sentence = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    participant, action, before, after = fields[2:6]
    if sentence < 1 or action_problem(action, before, after) is not None:
        return None
    return ActionRow(number, process_id, sentence, participant, action, before, after)


def _id_problems(number: int, pid_text: str, sentence_text: str) -> list[Problem]:
    found = (
        _int_problem(number, "process id", pid_text),
        _int_problem(number, "sentence number", sentence_text),
    )
    return [p for p in found if p is not None]


def _int_problem(number: int, what: str, text: str) -> Problem | None:
    try:
        int(text)
    except ValueError:
        return Problem(
            number, f"{what} is not an integer: invalid literal for int() with base 10: {text!r}"
        )
    return None


def action_problem(action: str, before: str, after: str) -> str | None:
    """The upstream validation message for one row, or None when the row is valid (2A.2 table)."""
    if action == "NONE":
        return None if before == after else f"Unequal NONE locations: {before} -- {after}"
    if action == "CREATE":
        if before != "-":
            return f"Invalid CREATE before_location: {before}"
        return f"Invalid CREATE after_location: {after}" if after in ("", "-") else None
    if action == "DESTROY":
        if before in ("", "-"):
            return f"Invalid DESTROY before_location: {before}"
        return None if after == "-" else f"Invalid DESTROY after_location: {after}"
    if action == "MOVE":
        if before in ("", "-"):
            return f"Invalid MOVE before_location: {before}"
        return f"Invalid MOVE after_location: {after}" if after in ("", "-") else None
    return f"Invalid action: {action}"


def internal_location(written: str) -> str:
    """``-`` -> null, ``?`` -> unk, anything else (including "") as written."""
    return NULL if written == "-" else UNK if written == "?" else written


_INTERNAL = {"-": NULL, "?": UNK}


def build_tracks(rows: Sequence[ActionRow]) -> dict[int, ProcessTracks]:
    """Tracks per process (ascending process id), from valid rows in file order (2A.3)."""
    num_sentences: dict[int, int] = {}
    for row in rows:
        if row.sentence > num_sentences.get(row.process_id, 0):
            num_sentences[row.process_id] = row.sentence
    locations: dict[int, dict[str, list[str]]] = {}
    actions: dict[int, dict[str, list[str]]] = {}
    internal = _INTERNAL.get  # internal_location, as one lookup
    for _, pid, sentence, participant, action, before, after in rows:
        process_locations = locations.get(pid)
        if process_locations is None:
            process_locations = locations[pid] = {}
            actions[pid] = {}
        locs = process_locations.get(participant)
        if locs is None:
            n = num_sentences[pid]
            locs = process_locations[participant] = [UNK] * (n + 1)
            acts = actions[pid][participant] = ["NONE"] * n
        else:
            acts = actions[pid][participant]
        if sentence == 1:
            locs[0] = NULL if action == "CREATE" else internal(before, before)
        locs[sentence] = internal(after, after)
        acts[sentence - 1] = action
    return {
        pid: ProcessTracks(
            pid,
            num_sentences[pid],
            tuple(
                ParticipantTrack(name, tuple(locs), tuple(actions[pid][name]))
                for name, locs in locations[pid].items()
            ),
        )
        for pid in sorted(locations)
    }

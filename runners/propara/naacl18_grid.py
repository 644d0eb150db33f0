"""NAACL'18 prediction grids: ``pid  sid  participant  from  to`` rows (docs/metrics.md §2B.1, 2B.7).

Upstream crashes on the first unreadable line or on the first missing participant/row it needs;
here every such problem is collected: line problems with their line number, missing paragraphs,
participants and rows with the paragraph (and participant) they concern.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from procbench.runners.runtime._types import Problem, ProblemList
from procbench.runners.propara.lines import read_lines
from procbench.runners.propara.naacl18_gold import NULL, UNK, Paragraph


@dataclass(frozen=True)
class GridRow:
    source: str  # from_location: null / unk / a location
    target: str  # to_location


@dataclass(frozen=True)
class ParagraphGrid:
    """One paragraph's predicted rows: participant -> sid -> row (later duplicates overwrite).

    ``n_steps`` is the number of distinct sids of the paragraph's first participant (file order):
    the K of Q8, which upstream takes from an arbitrary participant.
    """

    pid: int
    rows: Mapping[str, Mapping[int, GridRow]]
    n_steps: int


@dataclass(frozen=True)
class GridFile:
    grids: dict[int, ParagraphGrid]
    problems: tuple[Problem, ...]
    n_lines: int


def read_grid_file(path: Path, sentences: Mapping[int, int] | None = None) -> GridFile:
    """Parse ``path``; an undecodable file yields a single problem at the offending line."""
    lines, problem = read_lines(path)
    if problem is not None:
        return GridFile({}, (problem,), problem.line or 0)
    return parse_grid_lines(lines, sentences)


def parse_grid_lines(lines: list[str], sentences: Mapping[int, int] | None = None) -> GridFile:
    """Rows by paragraph and participant, plus every unreadable line (2B.1).

    ``sentences`` (pid -> the gold's number of sentences, where known) refuses a row whose sentence
    id lies outside 1..n of its paragraph, at its line. Problems: the first MAX_PROBLEMS, the rest counted.
    """
    rows: dict[int, dict[str, dict[int, GridRow]]] = {}
    problems = ProblemList()
    for number, line in enumerate(lines, start=1):
        fields = line.rstrip().split(
            "\t"
        )  # right-stripped like upstream: an empty last column vanishes
        line_problems: list[Problem] = []
        if not line.strip():
            problems.append(
                Problem(number, "blank line (upstream crashes: invalid literal for int())")
            )
            continue
        for what, text in (
            ("paragraph id", fields[0]),
            ("sentence id", fields[1] if len(fields) > 1 else None),
        ):
            if text is not None and not _is_int(text):
                line_problems.append(Problem(number, f"{what} is not an integer: {text!r}"))
        if len(fields) < 5:
            line_problems.append(
                Problem(
                    number,
                    f"expected 5 TAB-separated fields (pid sid participant from to), got {len(fields)}",
                )
            )
        problems.extend(line_problems)
        if line_problems:
            continue
        pid, sid, participant, source, target = (
            int(fields[0]),
            int(fields[1]),
            fields[2],
            fields[3],
            fields[4],
        )
        last = (sentences or {}).get(pid, 0)
        if last and not 1 <= sid <= last:
            problems.append(
                Problem(
                    number,
                    f"sentence id {sid} is outside paragraph {pid}'s sentences 1-{last}",
                    str(pid),
                )
            )
            continue
        rows.setdefault(pid, {}).setdefault(participant, {})[sid] = GridRow(source, target)
    grids = {
        pid: ParagraphGrid(pid, participants, len(next(iter(participants.values()))))
        for pid, participants in rows.items()
    }
    return GridFile(grids, tuple(problems.listed()), len(lines))


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def needed_rows(paragraph: Paragraph) -> dict[tuple[str, int], set[str]]:
    """(participant, sid) -> the questions that read that predicted row (Q3, Q6, Q9, Q10)."""
    needed: dict[tuple[str, int], set[str]] = {}
    for labels in paragraph.annotator_sets:
        for label in labels:
            if label.kind == "create" and label.to_location != UNK:
                needed.setdefault((label.participant, label.sid), set()).add("Q3")
            elif label.kind == "destroy" and label.from_location != UNK:
                needed.setdefault((label.participant, label.sid), set()).add("Q6")
            elif label.kind == "move":
                if label.from_location != UNK:
                    needed.setdefault((label.participant, label.sid), set()).add("Q9")
                if label.to_location != UNK:
                    needed.setdefault((label.participant, label.sid), set()).add("Q10")
    return needed


def missing_predictions(paragraph: Paragraph, grid: ParagraphGrid | None) -> list[Problem]:
    """Everything the scoring of ``paragraph`` would read but the predictions lack (upstream KeyError)."""
    item = str(paragraph.pid)
    labelled = sorted(paragraph.labelled_participants())
    if not labelled:
        return []
    if grid is None:
        return [
            Problem(
                None,
                f"paragraph {paragraph.pid} has no prediction rows (needed for {', '.join(labelled)})",
                item,
            )
        ]
    problems = [
        Problem(
            None, f"paragraph {paragraph.pid}: participant {name!r} has no prediction rows", item
        )
        for name in labelled
        if name not in grid.rows
    ]
    for (name, sid), questions in sorted(needed_rows(paragraph).items()):
        if name in grid.rows and sid not in grid.rows[name]:
            asked = ", ".join(sorted(questions, key=lambda q: int(q[1:])))
            message = f"paragraph {paragraph.pid}: participant {name!r} has no row for sentence {sid} (needed by {asked})"
            problems.append(Problem(None, message, item))
    return problems


def is_location(value: str) -> bool:
    return value not in (NULL, UNK)

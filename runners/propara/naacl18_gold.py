"""Gold side of the NAACL'18 sentence-level evaluation (docs/metrics.md §2B.1–2B.3).

Three files: the selected paragraph ids, the gold label file (used only for each paragraph's
inventory of participant names) and the per-annotator label file, whose rows are aligned to that
inventory (exact, then Levenshtein < 3, then a hard-coded manual map) and grouped into one label
set per annotator.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


NULL, UNK = "null", "unk"
LEVENSHTEIN_BELOW = 3

# Upstream's hand-made aliases for annotator names that neither match nor fuzzy-match (2B.3).
MANUAL_MAP: Mapping[str, str] = {
    "alternating current": "alternate current",
    "fixed nitrogen": "nitrogen",
    "living things": "live thing",
    "red giant star": "star",
    "refrigerent liquid": "liquid",
    "remains of living things": "remains of live thing",
    "retina's rods and cones": "retina 's rod and cone",
}


@dataclass(frozen=True)
class Label:
    """One annotator label after alignment and expansion over `;`-alternatives."""

    sid: int
    participant: str
    kind: str  # create | destroy | move
    from_location: str  # null / unk / a location
    to_location: str


@dataclass(frozen=True)
class Paragraph:
    """Gold record of one paragraph: its participant inventory and its annotators' label sets."""

    pid: int
    inventory: frozenset[str]
    annotator_sets: tuple[tuple[Label, ...], ...]
    # The paragraph's last sentence id in the gold label file (0: unknown); prediction rows beyond it are refused.
    num_sentences: int = 0

    def labelled_participants(self) -> frozenset[str]:
        """S of 2B.5: participants that some annotator labelled."""
        return frozenset(label.participant for labels in self.annotator_sets for label in labels)


def read_para_ids(path: Path) -> list[int]:
    """One integer per line (upstream crashes on anything else, blank lines included)."""
    ids: list[int] = []
    for number, line in enumerate(_lines(path), start=1):
        try:
            ids.append(int(line))
        except ValueError:
            raise ValueError(f"{path}:{number}: paragraph id is not an integer: {line!r}") from None
    return list(dict.fromkeys(ids))


def read_inventory(path: Path) -> dict[int, frozenset[str]]:
    """pid -> participant names of the gold label file (``pid sid participant before|after ...``)."""
    return _inventory(path, _lines(path))


def _inventory(path: Path, lines: list[str]) -> dict[int, frozenset[str]]:
    names: dict[int, set[str]] = {}
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) < 4 or fields[3] not in ("before", "after"):
            raise ValueError(
                f"{path}:{number}: expected 'before' or 'after' in column 4 (upstream prints Error and exits)"
            )
        try:
            pid = int(fields[0])
        except ValueError:
            raise ValueError(
                f"{path}:{number}: paragraph id is not an integer: {fields[0]!r}"
            ) from None
        names.setdefault(pid, set()).add(fields[2])
    return {pid: frozenset(values) for pid, values in names.items()}


def read_sentence_counts(path: Path) -> dict[int, int]:
    """pid -> the largest sentence id of the gold label file (``pid sid participant before|after ...``)."""
    return _sentence_counts(_lines(path))


def _sentence_counts(lines: list[str]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for line in lines:
        fields = line.split("\t")
        try:
            pid, sid = int(fields[0]), int(fields[1])
        except (ValueError, IndexError):
            continue  # read_inventory reports a malformed gold line
        counts[pid] = max(counts.get(pid, 0), sid)
    return counts


def align_participant(cell: str, inventory: frozenset[str]) -> list[str]:
    """Inventory names for a `;`-separated annotator participant cell (2B.3; unmatched parts vanish)."""
    return [name for _, names in align_parts(cell, inventory) for name in names]


@lru_cache(maxsize=65536)
def _aligned(cell: str, inventory: frozenset[str]) -> tuple[str, ...]:
    """align_participant, remembered: annotators repeat a cell on every row of a paragraph."""
    return tuple(align_participant(cell, inventory))


def align_parts(cell: str, inventory: frozenset[str]) -> list[tuple[str, list[str]]]:
    """Per `;`-part: how it was aligned (exact, fuzzy, manual, dropped) and the names it became."""
    aligned: list[tuple[str, list[str]]] = []
    fuzzy_found = False  # per row, so an earlier fuzzy hit blocks the manual map for later parts
    for part in (p.strip() for p in cell.split(";")):
        lowered = part.lower()
        if lowered in inventory:
            aligned.append(("exact", [lowered]))
            continue
        close = [
            name for name in sorted(inventory) if _levenshtein(lowered, name) < LEVENSHTEIN_BELOW
        ]
        if close:
            aligned.append(("fuzzy", close))
            fuzzy_found = True
        elif not fuzzy_found and lowered in MANUAL_MAP:
            aligned.append(("manual", [MANUAL_MAP[lowered]]))
        else:
            aligned.append(("dropped", []))
    return aligned


@lru_cache(maxsize=65536)
def _levenshtein(a: str, b: str) -> int:
    from procbench.runners.library.edit_distance import (
        edit_distance,
    )  # NLTK's edit_distance without NLTK's package init

    return edit_distance(a, b)  # unit-cost edit distance, as upstream's pylev


def _location_parts(cell: str) -> list[str]:
    return [
        NULL if p == "-" else UNK if p == "?" else p
        for p in (part.strip() for part in cell.split(";"))
    ]


def read_annotator_sets(
    path: Path, inventory: Mapping[int, frozenset[str]], selected: frozenset[int]
) -> dict[int, list[tuple[Label, ...]]]:
    """pid -> annotator label sets, for the selected pids (2B.2).

    A one-field line (blank or all TABs) closes the running set and files it under the pid of the
    last data row; data rows with SID ``?`` are skipped; the header line is skipped.
    """
    sets: dict[int, list[tuple[Label, ...]]] = {}
    # Rows of the running set, kept as fields: they become labels only when the set is filed under a
    # selected pid (a split selects a few paragraphs of a file holding all of them).  A set can hold rows
    # of several paragraphs when no separator line parts them; those rows keep their unaligned names.
    # Every line is still checked as upstream checks it (field count, integer PID and SID), but only its
    # first two fields are split off: the whole row is split when its set is filed.
    running: list[tuple[int, int, str]] = []
    expanded: dict[
        tuple[str, frozenset[str] | None], tuple[Label, ...]
    ] = {}  # a row's labels, by its text after the PID
    last_pid: int | None = None
    for number, line in enumerate(_lines(path), start=1):
        if number == 1:
            continue
        line = line.rstrip()
        tabs = line.count("\t")  # fields - 1 of line.split("\t")
        if tabs == 0:
            if last_pid in selected:
                sets.setdefault(last_pid, []).append(
                    _labels(running, inventory, selected, expanded)
                )
            running = []
            continue
        if tabs != 10:
            raise ValueError(
                f"{path}:{number}: the number of fields in this line is irregular ({tabs + 1}, expected 11)"
            )
        pid_text, sid_text, _ = line.split("\t", 2)
        if sid_text == "?":
            continue
        try:
            pid, sid = int(pid_text), int(sid_text)
        except ValueError:
            raise ValueError(f"{path}:{number}: PID and SID must be integers") from None
        last_pid = pid
        if pid in selected and pid not in inventory:
            raise ValueError(
                f"{path}:{number}: paragraph {pid} has no rows in the gold label file (upstream KeyError)"
            )
        running.append((pid, sid, line))
    return sets


def _labels(
    rows: list[tuple[int, int, str]],
    inventory: Mapping[int, frozenset[str]],
    selected: frozenset[int],
    expanded: dict[tuple[str, frozenset[str] | None], tuple[Label, ...]],
) -> tuple[Label, ...]:
    """The labels of one annotator set: each row's participants (aligned for selected paragraphs) x from x to.

    A label does not hold its PID, so rows equal after the PID (and aligned against the same inventory)
    expand to the same labels, which are immutable and shared through ``expanded``.
    """
    labels: list[Label] = []
    for pid, sid, line in rows:
        names = inventory[pid] if pid in selected else None
        key = (line.partition("\t")[2], names)
        row_labels = expanded.get(key)
        if row_labels is None:
            fields = line.split("\t")
            participants = (
                _aligned(fields[3], names)
                if names is not None
                else [p.strip() for p in fields[3].split(";")]
            )
            row_labels = expanded[key] = tuple(
                Label(sid, who, fields[4], source, target)
                for who, source, target in itertools.product(
                    participants, _location_parts(fields[5]), _location_parts(fields[6])
                )
            )
        labels.extend(row_labels)
    return tuple(labels)


def read_paragraphs(
    para_ids: Path, gold_labels: Path, annotator_labels: Path
) -> dict[int, Paragraph]:
    """Selected paragraphs in para-id file order."""
    for path in (para_ids, gold_labels, annotator_labels):
        if not path.is_file():
            raise FileNotFoundError(path)
    ids = read_para_ids(para_ids)
    gold_lines = _lines(gold_labels)  # read once for both
    inventory = _inventory(gold_labels, gold_lines)
    sentences = _sentence_counts(gold_lines)
    sets = read_annotator_sets(annotator_labels, inventory, frozenset(ids))
    return {
        pid: Paragraph(
            pid, inventory.get(pid, frozenset()), tuple(sets.get(pid, ())), sentences.get(pid, 0)
        )
        for pid in ids
    }


def _lines(path: Path) -> list[str]:
    """The file's lines without their endings, split as ``split_lines`` (universal newlines) splits them.

    Translating CRLF and CR to LF and splitting on LF gives the same lines in one pass of C code
    (``io.StringIO`` iteration costs seconds on the 100x gold); tests/test_propara_naacl18_gold_fast.py
    checks the two agree.
    """
    text = path.read_text(encoding="utf-8")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":  # the text ended with a line ending (or was empty): no line after it
        lines.pop()
    return lines

"""Gold side of the NAACL'18 sentence-level evaluation (metrics.md 2B.1–2B.3).

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

from runners.propara.lines import split_lines

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
    names: dict[int, set[str]] = {}
    for number, line in enumerate(_lines(path), start=1):
        fields = line.split("\t")
        if len(fields) < 4 or fields[3] not in ("before", "after"):
            raise ValueError(f"{path}:{number}: expected 'before' or 'after' in column 4 (upstream prints Error and exits)")
        try:
            pid = int(fields[0])
        except ValueError:
            raise ValueError(f"{path}:{number}: paragraph id is not an integer: {fields[0]!r}") from None
        names.setdefault(pid, set()).add(fields[2])
    return {pid: frozenset(values) for pid, values in names.items()}


def read_sentence_counts(path: Path) -> dict[int, int]:
    """pid -> the largest sentence id of the gold label file (``pid sid participant before|after ...``)."""
    counts: dict[int, int] = {}
    for line in _lines(path):
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


def align_parts(cell: str, inventory: frozenset[str]) -> list[tuple[str, list[str]]]:
    """Per `;`-part: how it was aligned (exact, fuzzy, manual, dropped) and the names it became."""
    aligned: list[tuple[str, list[str]]] = []
    fuzzy_found = False  # per row, so an earlier fuzzy hit blocks the manual map for later parts
    for part in (p.strip() for p in cell.split(";")):
        lowered = part.lower()
        if lowered in inventory:
            aligned.append(("exact", [lowered]))
            continue
        close = [name for name in sorted(inventory) if _levenshtein(lowered, name) < LEVENSHTEIN_BELOW]
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
    from nltk.metrics.distance import edit_distance  # here, not at import: NLTK's import costs about a second

    return edit_distance(a, b)  # unit-cost edit distance, as upstream's pylev


def _location_parts(cell: str) -> list[str]:
    return [NULL if p == "-" else UNK if p == "?" else p for p in (part.strip() for part in cell.split(";"))]


def read_annotator_sets(
    path: Path, inventory: Mapping[int, frozenset[str]], selected: frozenset[int]
) -> dict[int, list[tuple[Label, ...]]]:
    """pid -> annotator label sets, for the selected pids (2B.2).

    A one-field line (blank or all TABs) closes the running set and files it under the pid of the
    last data row; data rows with SID ``?`` are skipped; the header line is skipped.
    """
    sets: dict[int, list[tuple[Label, ...]]] = {}
    running: list[Label] = []
    last_pid: int | None = None
    for number, line in enumerate(_lines(path), start=1):
        if number == 1:
            continue
        fields = line.rstrip().split("\t")
        if len(fields) == 1:
            if last_pid in selected:
                sets.setdefault(last_pid, []).append(tuple(running))
            running = []
            continue
        if len(fields) != 11:
            raise ValueError(f"{path}:{number}: the number of fields in this line is irregular ({len(fields)}, expected 11)")
        if fields[1] == "?":
            continue
        try:
            pid, sid = int(fields[0]), int(fields[1])
        except ValueError:
            raise ValueError(f"{path}:{number}: PID and SID must be integers") from None
        last_pid = pid
        participants = [p.strip() for p in fields[3].split(";")]
        if pid in selected:
            if pid not in inventory:
                raise ValueError(f"{path}:{number}: paragraph {pid} has no rows in the gold label file (upstream KeyError)")
            participants = align_participant(fields[3], inventory[pid])
        for who, source, target in itertools.product(participants, _location_parts(fields[5]), _location_parts(fields[6])):
            running.append(Label(sid, who, fields[4], source, target))
    return sets


def read_paragraphs(para_ids: Path, gold_labels: Path, annotator_labels: Path) -> dict[int, Paragraph]:
    """Selected paragraphs in para-id file order."""
    for path in (para_ids, gold_labels, annotator_labels):
        if not path.is_file():
            raise FileNotFoundError(path)
    ids = read_para_ids(para_ids)
    inventory = read_inventory(gold_labels)
    sentences = read_sentence_counts(gold_labels)
    sets = read_annotator_sets(annotator_labels, inventory, frozenset(ids))
    return {pid: Paragraph(pid, inventory.get(pid, frozenset()), tuple(sets.get(pid, ())), sentences.get(pid, 0)) for pid in ids}


def _lines(path: Path) -> list[str]:
    return [line.rstrip("\r\n") for line in split_lines(path.read_text(encoding="utf-8"))]

"""Checks a compiled spec against the data when the data is present (``procbench check --data``).

Static checking cannot know whether ``meta.question_metadata.topic`` exists in the files, or
whether any item carries the label a slice names; this reads each split's gold and says so, at the
position of the statement in the spec.
"""

from __future__ import annotations

from pathlib import Path

from dsl import syntax as s
from dsl.errors import Diagnostic
from dsl.model import TaskSpec
from dsl.parser import parse_file
from runners.runner import TaskRunner


def _find(tree: s.SpecFile, block_type: str, label: str | None = None, attribute: str | None = None) -> s.Span:
    def walk(body: tuple[s.Attribute | s.Block, ...]) -> s.Span | None:
        for stmt in body:
            if isinstance(stmt, s.Block):
                if stmt.type == block_type and (label is None or stmt.labels[:1] == (label,)):
                    if attribute is None:
                        return stmt.span
                    attr = stmt.attribute(attribute)
                    return attr.span if attr else stmt.span
                found = walk(stmt.body)
                if found:
                    return found
        return None

    return walk(tree.body) or s.Span(1, 1, 1, 1)


def check_against_data(spec: TaskSpec, runner: TaskRunner, data_root: Path) -> tuple[list[Diagnostic], list[str]]:
    """(diagnostics, splits checked).  A split whose files are absent is skipped with a warning."""
    tree = parse_file(spec.path)
    out: list[Diagnostic] = []
    checked: list[str] = []
    unlabelled: dict[str, list[str]] = {}  # slice -> splits where no item carries its label
    labelled: set[str] = set()
    for split in spec.data.splits:
        try:
            gold, _ = runner.gold(data_root, split)
        except FileNotFoundError as exc:
            out.append(Diagnostic(spec.path, _find(tree, "data"), f"split {split!r}: data not present ({exc})", "fetch it with `procbench data fetch`", "warning"))
            continue
        except (ValueError, KeyError) as exc:
            out.append(Diagnostic(spec.path, _find(tree, "data"), f"split {split!r}: the data does not fit the spec ({exc})"))
            continue
        checked.append(split)
        records = list(gold.items.values())
        if not records:
            out.append(Diagnostic(spec.path, _find(tree, "data"), f"split {split!r} has no items"))
            continue
        for name, path in spec.data.fields:
            if all(isinstance(r, dict) and r.get(name) is None for r in records):
                out.append(Diagnostic(spec.path, _find(tree, "fields", attribute=name), f"field {name!r} <- {'.'.join(path)} is missing in every record of split {split!r}", "check the source name and the path of keys"))
        for sl in spec.slices:
            if sl.kind == "label":
                rule = next((r for r in spec.data.labels if r.name == sl.key), None)
                if rule is not None and rule.splits and split not in rule.splits:
                    continue
                values = {labels.get(sl.key) for labels in gold.labels.values()} - {None}
                if not values:
                    unlabelled.setdefault(sl.name, []).append(split)
                    continue
                labelled.add(sl.name)
                if values == {"unknown"}:
                    out.append(Diagnostic(spec.path, _find(tree, "slice", sl.name), f"slice {sl.name!r}: every item of split {split!r} has label {sl.key!r} = 'unknown'", "the label's field path probably does not exist", "warning"))
            elif not gold.answer_views.get(sl.key):
                out.append(Diagnostic(spec.path, _find(tree, "slice", sl.name), f"slice {sl.name!r}: no answer of split {split!r} carries the label {sl.key!r}", severity="warning"))
    for name, splits in unlabelled.items():
        key = next(sl.key for sl in spec.slices if sl.name == name)
        if name in labelled:  # a label some splits lack by design (e.g. analysis sets of test only)
            message, severity = f"slice {name!r} is empty on split(s) {', '.join(splits)}: no item carries the label {key!r} there", "warning"
        else:
            message, severity = f"slice {name!r}: no item of any split carries the label {key!r}", "error"
        out.append(Diagnostic(spec.path, _find(tree, "slice", name), message, "labels come from the data block's labels or the reader component", severity))
    return out, checked

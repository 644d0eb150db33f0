"""``procbench check --data``: the checked spec against the files, each finding at its place in the spec.

Static checking cannot know whether ``meta.question_metadata.topic`` exists in the files, whether a
``map()`` key occurs in the data, or whether a field declared ``list(str)`` holds lists of text on
every line.  This reads each split's gold exactly as scoring does (the readers are strict: a
missing field or a wrong type is a :class:`runners.GoldDataError` naming file, line and item) and
reports what it finds at the spec statement responsible.  A split whose files are absent is an
error too: ``check --data`` passes only when every split can be scored.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.errors import Diagnostic, SpecError
from procbench.dsl.model import TaskSpec
from procbench.runners.runtime._types import GoldDataError, GoldSet
from procbench.runners.runtime.runner import TaskRunner

MAX_PER_SPLIT = 10  # data problems shown per split (the reader keeps a capped list and a count)
MAX_PLACES = 10  # file:line places listed after a finding's first problem


def _where(spec: TaskSpec, message: str) -> m.Where | None:
    """The spec statement a data problem is about: the field or label it names, else the data block."""
    explode = spec.data.explode
    if explode is not None and message.startswith(f"explode {explode.name!r}:"):
        # the items path when the list itself is wrong, a where/skip condition that cannot be told, else the id
        said = message[len(f"explode {explode.name!r}:") :].lstrip()
        part = next((p for p in ("items", "where", "skip") if said.startswith(f"{p} <- ")), "id")
        return {"": m.span_of(explode), "path": m.span_of(explode, part)}
    if spec.data.id_path[:1] == ("#key",) and "needs the file to be a JSON object" in message:
        return {"": m.span_of(spec.data, "id_path")}
    for src in (
        spec.data.sources
    ):  # a join key that records lack, or items with no row under it: the source's key
        if message.startswith(
            (f"record of source {src.name!r} has no key field", f"source {src.name!r} (")
        ):
            return {"": m.span_of(src, "key")}
    if message.startswith("record has ") and " at " in message:  # no usable item id at the id path
        return {"": m.span_of(spec.data, "id_path")}
    for binding in spec.data.fields:
        if f"field {binding.name!r}" in message:
            return binding.at
    for rule in spec.data.labels:
        if f"label {rule.name!r}" in message:
            return rule.at
    for answer_rule in spec.data.answer_labels:
        if (
            f"answer label {answer_rule.name!r}" in message
            or f"answer_label {answer_rule.name!r}" in message
        ):
            return answer_rule.at
    return None


def check_against_data(
    spec: TaskSpec,
    runner: TaskRunner,
    data_root: Path,
    splits: tuple[str, ...] | None = None,
    *,
    partial: bool = False,
) -> tuple[list[Diagnostic], list[str]]:
    """(diagnostics, splits read).  ``splits`` limits the check (default: every split of the task).

    ``partial``: the root is known to hold only some splits (the bundled samples), so a split whose
    files are absent is a warning there; everywhere else it is an error.
    """
    return _check(spec, runner, data_root, tuple(splits or spec.data.splits), partial=partial)


class DataRefused(SpecError, ValueError):
    """What ``check --data`` refuses about the split being scored: ``score`` and ``submit`` stop on it, with its diagnostics."""


def refuse_unfit_data(
    spec: TaskSpec, runner: TaskRunner, data_root: Path, split: str, *, force: bool = False
) -> None:
    """Raise DataRefused with :func:`scoring_refusals`' errors, rendered as ``check --data`` renders them; else nothing."""
    from procbench.dsl.cache import cache_dir, code_signature
    from procbench.runners.runtime.data_findings import passed_mark, remember_passed
    from procbench.runners.runtime.paths import SAMPLE_DATA_ROOT

    mark = None if force else passed_mark(runner, data_root, split, cache_dir(), code_signature())
    if mark is not None and mark.is_file():
        return  # checked across splits already, with these files and this checker
    found = scoring_refusals(
        spec, runner, data_root, split, partial=Path(data_root) == SAMPLE_DATA_ROOT, force=force
    )
    if found:
        source = (
            Path(spec.path).read_text(encoding="utf-8")
            if spec.path and Path(spec.path).is_file()
            else None
        )
        raise DataRefused(found, source)
    remember_passed(mark)


def scoring_refusals(
    spec: TaskSpec,
    runner: TaskRunner,
    data_root: Path,
    split: str,
    *,
    partial: bool = False,
    force: bool = False,
) -> list[Diagnostic]:
    """The errors ``check --data`` reports that concern scoring ``split``: ``score`` and ``submit`` refuse them, in the same words.

    The split's own problems (read with the runner's cache, so scoring reads nothing twice), and the
    findings across splits (a ``map()`` key or a slice label that no item has) where this split
    lacks it: only then are the other splits read, to tell a typo from a value that occurs
    elsewhere (when one is absent or unreadable this cannot be told, and is ``check --data``'s to report).  Paper
    rows are display text, not scoring: not refused here.  ``force``: check across splits anyway
    (scoring stopped on the data, and the reason is wanted in the spec's terms).
    """
    from procbench.runners.runtime.data_findings import lacks_something

    try:
        gold, _ = runner.gold(data_root, split)
    except GoldDataError as exc:
        return read_problems(spec, {split: exc})
    if not force and not lacks_something(runner, gold):
        return []
    found, _ = _check(
        spec,
        runner,
        data_root,
        tuple(spec.data.splits),
        partial=partial,
        only=split,
        paper_rows=False,
    )
    return [d for d in found if d.severity == "error"]


def _check(
    spec: TaskSpec,
    runner: TaskRunner,
    data_root: Path,
    splits: tuple[str, ...],
    *,
    partial: bool,
    only: str | None = None,
    paper_rows: bool = True,
) -> tuple[list[Diagnostic], list[str]]:
    """``only``: only that split's reading is reported; the others are read where they can be, and where one cannot
    (absent, unreadable) nothing across splits is reported either."""
    out: list[Diagnostic] = []
    checked: list[str] = []
    failed: dict[str, GoldDataError] = {}
    unread: list[
        str
    ] = []  # besides ``only``: splits absent or unreadable, so what holds across splits cannot be told
    data_span = m.span_of(spec.data)
    fetch_hint = f"fetch it with `procbench data fetch {spec.name}` or point --data-dir at a copy"
    seen_labels: dict[str, set[str]] = {}
    seen_answer_labels: dict[str, set[str]] = {}
    for split in splits:
        try:
            gold, _ = runner.gold(data_root, split)
        except (FileNotFoundError, ValueError) as exc:
            if only is not None and split != only:
                unread.append(split)
                continue
            if isinstance(exc, GoldDataError):
                failed[split] = exc
            elif isinstance(exc, ValueError):
                out.append(
                    Diagnostic(
                        spec.path,
                        data_span,
                        f"split {split!r}: the data does not fit the spec ({exc})",
                    )
                )
            elif partial:
                out.append(
                    Diagnostic(
                        spec.path,
                        data_span,
                        f"split {split!r} is not in this data root ({exc}); not checked",
                        fetch_hint,
                        "warning",
                    )
                )
            elif spec.fetch and not any(not f.splits or split in f.splits for f in spec.fetch):
                # no fetch block publishes this split (e.g. a test set kept by its authors): nothing to check
                out.append(
                    Diagnostic(
                        spec.path,
                        data_span,
                        f"split {split!r} has no published data (no fetch block covers it); not checked",
                        severity="warning",
                    )
                )
            else:
                out.append(
                    Diagnostic(
                        spec.path,
                        data_span,
                        f"split {split!r}: a data file is missing ({exc})",
                        fetch_hint,
                    )
                )
            continue
        checked.append(split)
        if not gold.items:
            out.append(Diagnostic(spec.path, data_span, f"split {split!r} has no items"))
            continue
        for labels in gold.labels.values():
            for name, value in labels.items():
                seen_labels.setdefault(name, set()).add(value)
        for name, views in gold.answer_views.items():
            seen_answer_labels.setdefault(name, set()).update(views)
    out += read_problems(spec, failed)
    if (
        not checked or failed or unread
    ):  # what holds across splits is unknown while a split cannot be read: its fix comes first
        return out, checked
    out += _map_keys(spec, [runner.gold(data_root, split)[0] for split in checked], checked)
    for sl in spec.slices:
        if sl.kind == "label":
            rule = next((r for r in spec.data.labels if r.name == sl.key), None)
            if rule is not None and rule.splits and not set(rule.splits) & set(checked):
                continue
            if not seen_labels.get(sl.key):
                out.append(
                    Diagnostic(
                        spec.path,
                        m.span_of(sl, "label"),
                        f"slice {sl.name!r}: no item of split(s) {', '.join(checked)} carries the label {sl.key!r}",
                        "labels come from the data block's labels or the reader component",
                    )
                )
        else:
            for split in checked:
                gold, _ = runner.gold(data_root, split)
                if not gold.answer_views.get(sl.key):
                    out.append(
                        Diagnostic(
                            spec.path,
                            m.span_of(sl, "answer_label"),
                            f"slice {sl.name!r}: no answer of split {split!r} carries the label {sl.key!r}",
                        )
                    )
    if paper_rows:
        out += _reported_slice_values(spec, checked, seen_labels, seen_answer_labels, partial)
    out += _class_sets(spec, runner, data_root, checked, partial)
    return out, checked


def read_problems(spec: TaskSpec, failed: Mapping[str, GoldDataError]) -> list[Diagnostic]:
    """The reader's problems of each split, one finding per spec statement across splits.

    A wrong path fails on every item of every split, and that is one mistake: one error, at the
    statement, naming the first problem and where the others are.
    """
    data_span = m.span_of(spec.data)
    grouped: dict[
        tuple[int, int], list[tuple[str, str, str]]
    ] = {}  # statement -> (split, problem, file:line)
    spans = {}
    alone: dict[
        tuple[int, int], int
    ] = {}  # problems the readers counted but did not keep, where one statement is all a split got wrong
    for split, exc in failed.items():
        keys = set()
        for problem in exc.problems:
            at = _where(spec, problem.message)
            span = ((at.get("path") or at.get("")) if at else None) or data_span
            key = (span.line, span.column)
            spans[key] = span
            keys.add(key)
            grouped.setdefault(key, []).append((split, problem.render(), problem.where()))
        if len(keys) == 1 and exc.more:
            alone[next(iter(keys))] = alone.get(next(iter(keys)), 0) + exc.more
    out = []
    for key, found in list(grouped.items())[:MAX_PER_SPLIT]:
        split, first, _ = found[0]
        more = len(found) - 1 + alone.get(key, 0)
        places = list(dict.fromkeys(p for _, _, p in found[1:] if p))
        others = ", ".join(places[:MAX_PLACES])
        listed = (
            f": {others}{', ...' if alone.get(key) or len(places) > MAX_PLACES else ''}"
            if others
            else ""
        )
        tail = f" (and {more} more like it{listed})" if more else ""
        out.append(
            Diagnostic(
                spec.path, spans[key], f"split {split!r}: {first}{tail}", _hint(spec, spans[key])
            )
        )
    return out


def _hint(spec: TaskSpec, span: s.Span) -> str:
    """What the statement a read problem is at expects of the data."""
    if span == m.span_of(spec.data, "id_path"):
        return "id = <source>.<field> is the path to each record's item id (or row_index(), key(<source>))"
    if any(src.key is not None and span == m.span_of(src, "key") for src in spec.data.sources):
        return (
            "key names the field of each of the source's records that holds the item id it joins on"
        )
    return "the spec's path or type does not fit the data"


def _map_keys(spec: TaskSpec, golds: Sequence[GoldSet], checked: Sequence[str]) -> list[Diagnostic]:
    """``map()`` keys that no item of the splits read matched, each at the key: a typo, or a value the data lacks.

    The reader records which keys matched nothing (``GoldSet.unmatched_map_keys``); a key is a finding
    when it matched nothing in any split read (the samples too: a typo there is a typo everywhere).
    """
    out = []
    for rule in spec.data.labels:
        if not rule.mapping:
            continue
        unmatched = set(dict(rule.mapping))
        for gold in golds:
            unmatched &= set(gold.unmatched_map_keys.get(rule.name, ()))
        for key, _ in rule.mapping:
            if key in unmatched:
                span = (
                    m.span_of(rule, f"map_key:{key}")
                    if f"map_key:{key}" in rule.at
                    else m.span_of(rule, "mapping")
                )
                message = f"map() key {key!r} of label {rule.name!r} matches no item of split(s) {', '.join(checked)}"
                out.append(
                    Diagnostic(
                        spec.path,
                        span,
                        message,
                        "map keys are values found at the label's path in the data",
                    )
                )
    return out


def _class_sets(
    spec: TaskSpec, runner: TaskRunner, data_root: Path, checked: list[str], partial: bool
) -> list[Diagnostic]:
    """Measures over a class set (macro-F1, per class, confusion) against the gold values the data has.

    A gold value outside the classes would stop scoring; a class no item has would enter a macro
    average as a 0 (scikit-learn's zero_division=0), so both are findings (a class absent from a
    root holding part of the data, the samples, is a warning).
    """
    from procbench.runners.runtime.contracts import MISSING, field_value
    from procbench.runners.metrics._classification import label_text

    out = []
    for ms in spec.score.measures:
        classes = dict(ms.metric.kwargs).get("labels") if ms.metric is not None else None
        if not classes or ms.gold is None:  # (no gold field: no gold value to compare)
            continue
        gold_field = ms.gold
        declared = [label_text(c) for c in classes]
        seen: dict[str, str] = {}  # gold value -> where it was first seen
        for split in checked:
            gold, _ = runner.gold(data_root, split)
            for item_id, record in gold.items.items():
                value = field_value(record, gold_field)
                if value is not MISSING and value is not None:
                    seen.setdefault(
                        label_text(value),
                        gold.origins.get(item_id) or f"item {item_id!r} of split {split!r}",
                    )
        span = m.span_of(ms, "metric")
        for value, origin in seen.items():
            if value not in declared:
                out.append(
                    Diagnostic(
                        spec.path,
                        span,
                        f"measure {ms.name!r}: gold value {value!r} ({origin}) is not one of its classes ({', '.join(declared)})",
                        "add it to labels = [...] or fix the data",
                    )
                )
        for cls in declared:
            if seen and cls not in seen:
                severity = "warning" if partial else "error"
                out.append(
                    Diagnostic(
                        spec.path,
                        span,
                        f"measure {ms.name!r}: no item of split(s) {', '.join(checked)} has class {cls!r}; its precision, recall and F1 would be 0 in every "
                        "average over the classes",
                        "the class set must be classes the data has",
                        severity,
                    )
                )
    return out


def _reported_slice_values(
    spec: TaskSpec,
    checked: list[str],
    seen_labels: dict[str, set[str]],
    seen_answers: dict[str, set[str]],
    partial: bool,
) -> list[Diagnostic]:
    """Reported rows on a slice whose values only the data knows (answer labels, label paths): each value must occur.

    Values the spec fixes (``map()`` with a default, membership, a reader's declared labels) are
    checked by ``check`` already.  On a root holding part of the data (the samples) a value may be
    merely absent, so there it is a warning.
    """
    out = []
    static = {r.name for r in spec.data.labels if r.values() is not None}
    for row in spec.reported:
        if row.slice is None:
            continue
        slice_name, value = row.slice
        sl = next((x for x in spec.slices if x.name == slice_name), None)
        if sl is None or row.split not in checked or (sl.kind == "label" and sl.key in static):
            continue
        seen = (seen_answers if sl.kind == "answer_label" else seen_labels).get(sl.key)
        if not seen or value in seen:
            continue
        close = difflib.get_close_matches(value, sorted(seen), n=1)
        hint = (
            f"did you mean {close[0]!r}? " if close else ""
        ) + f"the data has: {', '.join(sorted(seen)[:12])}"
        path = row.path or spec.path
        text = (
            Path(path).read_text(encoding="utf-8")
            if path != spec.path and Path(path).is_file()
            else None
        )
        where = "answer label" if sl.kind == "answer_label" else "label"
        message = f"reported row {row.system!r}: no item of split(s) {', '.join(checked)} has the {where} {sl.key!r} = {value!r} (slice {sl.name!r})"
        out.append(
            Diagnostic(
                path,
                m.span_of(row, "value"),
                message,
                hint,
                "warning" if partial else "error",
                file_text=text,
            )
        )
    return out

"""The bound spec checked as a whole: every name resolved against what the spec declares and its components promise."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from procbench.dsl import checker_conventions
from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.checker_fields import (
    check_aligns,
    check_derive,
    check_field_match,
    check_flow,
    check_item_values,
    check_templates,
    with_defaults,
)
from procbench.dsl.checker_measures import check_measures
from procbench.dsl.checker_state import CheckerState
from procbench.dsl.names import check_generated_names
from procbench.runners.runtime import registry
from procbench.runners.metrics._derived import formula_names
from procbench.runners.runtime.predictions import FieldType

# ---------------------------------------------------------------------------------------------
# resolution: every name against what the spec declares and its components promise


@dataclass(frozen=True)
class _Fields:
    """What the spec's blocks declare: the gold and prediction fields, the item labels and their values, and the
    fields the match and measure blocks compare (the records', or those a deriver gives)."""

    gold: dict[str, FieldType]
    labels: dict[str, tuple[str, ...] | None]
    pred: dict[str, FieldType]
    score_gold: Mapping[str, FieldType]
    score_pred: Mapping[str, FieldType]


@dataclass(frozen=True)
class _Scored:
    """The score block checked: its expanded form, what its scorer emits per item, and what it produces."""

    score: m.ScoreSpec
    scorer_emits: tuple[str, ...]
    aggregate: registry.Contract | None
    produced: tuple[str, ...]
    measures: tuple[m.MeasureSpec, ...]
    measured: list[tuple[m.MeasureSpec, Any]]


def resolve(
    spec: m.TaskSpec,
    ck: CheckerState,
    side: tuple[CheckerState, tuple[m.ReportedRow, ...]] | None = None,
) -> m.TaskSpec | None:
    """The bound spec checked as a whole; ``side``: the checker and rows of its reported file."""
    _check_data_block(ck, spec.data)
    _check_data_id(ck, spec.data)
    _check_predictions_block(ck, spec.predictions)
    _check_score_block(ck, spec.score)
    if ck.errors:
        return None
    fields = _declared_fields(ck, spec)
    scored = _check_score(ck, spec.score, fields)
    slices = _check_slices(ck, spec.slices, fields.labels)
    metrics = (*spec.metrics, *_implied_metrics(spec.metrics, scored.measured))
    files = [(ck, spec.reported)] + (
        [side] if side is not None else []
    )  # the spec, and its reported file
    _check_references(files, _name_tables(spec, fields, scored, metrics))
    score = scored.score
    if score.scorer is not None and score.scorer.name == "field_match":
        check_field_match(ck, score.scorer, fields.gold, fields.pred)
    _warn_unused(ck, spec)
    _check_metric_blocks(ck, spec, metrics, scored)
    _check_reported_slices(files, slices, fields.labels)
    check_templates(spec, ck)  # syntax only: rendering happens in a sandbox
    _check_imports(ck, spec.imports)
    if ck.errors:
        return None
    if side is not None and side[0].errors:
        return None
    params = tuple(sorted((k, v) for k, v in ck.params_literal().items()))
    reported = spec.reported + (
        side[1] if side is not None else ()
    )  # the spec's rows, then its reported file's
    return replace(
        spec, score=score, slices=tuple(slices), params=params, metrics=metrics, reported=reported
    )


# -- the blocks' own shape ----------------------------------------------------------------------


def _check_data_block(ck: CheckerState, data: m.DataSpec) -> None:
    """A reader component or sources (never both), and paths that stay under the data root."""
    if data.reader is None and not data.sources:
        ck.error(
            m.span_of(data),
            "the data block needs either `reader = component(...)` or at least one source block",
            'e.g. source gold { format = "jsonl"  path = "bench/{split}.jsonl" }',
        )
    if data.reader is not None and (
        data.sources or data.fields or data.labels or data.id_path or data.explode
    ):
        ck.error(
            m.span_of(data, "reader"),
            "a data block with a reader component declares no sources, id, fields or labels",
            "the reader's contract says what it provides (procbench components)",
        )
    from procbench.dsl.lock import data_path_problems

    for src in data.sources:  # a spec is untrusted input: what it reads stays under the data root
        for problem in data_path_problems(f"source {src.name!r}: path", src.path):
            ck.error(
                m.span_of(src, "path"),
                problem,
                "data paths are relative to the data root, with '/' and no '..'",
            )
    for rule in data.labels:
        for path, _, _ in rule.members:
            for problem in data_path_problems(f"label {rule.name!r}: membership path", path):
                ck.error(
                    m.span_of(rule),
                    problem,
                    "data paths are relative to the data root, with '/' and no '..'",
                )


def _check_data_id(ck: CheckerState, data: m.DataSpec) -> None:
    """The items' id: from the primary source (which takes no key), a path or the keys of its JSON object."""
    if data.sources and data.sources[0].key is not None:
        ck.error(
            m.span_of(data.sources[0], "key"),
            "the first source is the primary one and takes no `key`",
            "list the source that defines the items first",
        )
    if data.reader is None and data.sources and not data.id_path:
        ck.error(
            m.span_of(data),
            "the data block needs `id = <source>.<field>` to identify items",
            "e.g. id = gold.id",
        )
    if (
        data.id_path[:1] == ("#key",) and data.sources
    ):  # key(<source>): the keys of the primary JSON object
        primary = data.sources[0]
        if data.id_path[1] != primary.name and data.id_path[1] in {
            src.name for src in data.sources
        }:
            ck.error(
                m.span_of(data, "id_path"),
                f"key({data.id_path[1]}) names a joined source; the id comes from the primary one",
                f"key({primary.name})",
            )
        elif data.id_path[1] == primary.name and primary.format != "json":
            ck.error(
                m.span_of(data, "id_path"),
                f"key({primary.name}) needs a json source whose top level is an object {{id: record}}; {primary.name!r} is {primary.format}",
                "use a path into the record (e.g. gold.id) or row_index()",
            )


def _check_predictions_block(ck: CheckerState, pred: m.PredictionSpec) -> None:
    """A schema or a reader component, not both."""
    if pred.reader is None:
        if pred.format == "custom":
            ck.error(m.span_of(pred, "format"), 'format = "custom" needs `reader = component(...)`')
        if not pred.fields:
            ck.error(
                m.span_of(pred),
                "the predictions block needs a schema block (or a reader component)",
                "e.g. schema { id = str  answers = list(str) }",
            )
    elif pred.fields:
        ck.error(
            m.span_of(pred, "fields"),
            "a predictions block with a reader component has no schema",
            "the component's contract is its schema (procbench components)",
        )


def _check_score_block(ck: CheckerState, score: m.ScoreSpec) -> None:
    """What the score block scores with (a scorer, match blocks, align blocks, measures) and how they combine."""
    if score.scorer is None and not score.matches and not score.measures:
        ck.error(
            m.span_of(score),
            "the score block needs `scorer = component(...)`, match blocks or measure blocks",
        )
    if (
        score.aggregate is None
        and (score.scorer is not None or score.matches)
        and not score.measures
    ):
        ck.error(
            m.span_of(score),
            "the score block needs `aggregate = component(...)` for its "
            + ("scorer's" if score.scorer else "match blocks'")
            + " per-item values",
            'e.g. aggregate = mean(), or measure blocks over its values: measure total { value = score  aggregate = "sum" }',
        )
    if score.scorer is not None and score.matches:
        ck.error(
            m.span_of(score, "scorer"),
            "a score block uses either a scorer component or match blocks, not both",
        )
    _check_aligns_and_derive(ck, score)
    _check_metadata_params(ck, score)


def _check_aligns_and_derive(ck: CheckerState, score: m.ScoreSpec) -> None:
    if score.aligns and (score.scorer is not None or score.matches):
        ck.error(
            m.span_of(score, "aligns"),
            "a score block with align blocks has no scorer component or match blocks",
            "count with align blocks, report with measures",
        )
    if score.aligns and not score.measures:
        ck.error(
            m.span_of(score, "aligns"),
            "an align block's counts are reported by measure blocks",
            "e.g. measure exclusive { counts = [node.XOR]  stats = [p_correct, p_total, r_correct, r_total] }",
        )
    if score.derive is not None and score.scorer is not None:
        ck.error(
            m.span_of(score, "derive"),
            "derive gives the fields of match and measure blocks; a scorer component reads the records itself",
            "remove `derive`, or compare its fields with match blocks",
        )


def _check_metadata_params(ck: CheckerState, score: m.ScoreSpec) -> None:
    """Metadata keys are scorer parameters, filled from the submission."""
    if score.scorer is not None:
        params = [p.name for p in registry.get("scorer", score.scorer.name).params]
        for param, _ in score.metadata_params:
            if param not in params:
                ck.unknown(
                    m.span_of(score, "metadata_params"),
                    f"parameter of {score.scorer.name}() in metadata",
                    param,
                    params,
                )
    elif score.metadata_params:
        ck.error(
            m.span_of(score, "metadata_params"),
            "metadata fills scorer parameters: it needs `scorer = component(...)`",
        )


# -- what the blocks declare and produce ----------------------------------------------------------


def _declared_fields(ck: CheckerState, spec: m.TaskSpec) -> _Fields:
    data, pred, score = spec.data, spec.predictions, spec.score
    reader = registry.get("reader", data.reader.name).contract if data.reader else None
    gold_fields = dict(reader.fields) if reader else data.field_types()
    label_values: dict[str, tuple[str, ...] | None] = (
        {k: (v or None) for k, v in reader.labels.items()}
        if reader
        else {r.name: r.values() for r in data.labels}
    )
    pred_fields = (
        dict(registry.get("predictions", pred.reader.name).contract.fields)
        if pred.reader
        else dict(pred.fields)
    )
    # what the match and measure blocks compare: the records' fields, or those the deriver gives
    score_gold: Mapping[str, FieldType] = gold_fields
    score_pred: Mapping[str, FieldType] = pred_fields
    if score.derive is not None:
        score_gold = score_pred = check_derive(
            ck, score.derive, m.span_of(score, "derive"), gold_fields, pred_fields
        )
    return _Fields(gold_fields, label_values, pred_fields, score_gold, score_pred)


def _check_score(ck: CheckerState, score: m.ScoreSpec, fields: _Fields) -> _Scored:
    """Matches (default outputs, types along the pipeline), aligns, the scorer's values, the aggregator, measures."""
    matches = []
    for match in score.matches:
        outputs = match.outputs or (f"{match.name}_p", f"{match.name}_r", f"{match.name}_f1")
        matches.append(replace(match, outputs=outputs))
        check_flow(ck, match, fields.score_gold, fields.score_pred)
    scorer_emits: tuple[str, ...] = tuple(o for mt in matches for o in mt.outputs)
    aligns, walked, unsettled = check_aligns(ck, score.aligns, fields.score_gold, fields.score_pred)
    scorer_emits += walked
    if score.scorer is not None:
        scorer_emits = registry.get("scorer", score.scorer.name).contract.emitted(
            with_defaults(score.scorer)
        )
    scorer_emits += check_item_values(ck, score, scorer_emits)
    aggregate = (
        registry.get("aggregator", score.aggregate.name).contract if score.aggregate else None
    )
    produced = (
        aggregate.emitted(with_defaults(score.aggregate), scorer_emits)
        if aggregate and score.aggregate
        else ()
    )
    measures, measured = check_measures(
        ck,
        score.measures,
        fields.score_gold,
        fields.score_pred,
        fields.labels,
        scorer_emits,
        unsettled,
    )
    checker_conventions.check(ck, score, measures, measured, fields.score_pred)
    check_generated_names(
        ck, measured
    )  # two outputs under one name (docs/language.md, "Generated names")
    score = replace(score, matches=tuple(matches), measures=measures, aligns=aligns)
    produced = (*produced, *(name for ms, _ in measured for name in ms.outputs))
    return _Scored(score, scorer_emits, aggregate, produced, measures, measured)


def _check_slices(
    ck: CheckerState,
    slices: tuple[m.SliceSpec, ...],
    label_values: Mapping[str, tuple[str, ...] | None],
) -> list[m.SliceSpec]:
    """Each slice on exactly one item label or answer label, its kind and key filled in."""
    out = []
    for sl in slices:
        if (sl.label is None) == (sl.answer_label is None):
            ck.error(
                m.span_of(sl),
                f"slice {sl.name!r} needs exactly one of `label = <item label>` or `answer_label = <answer label>`",
            )
            continue
        out.append(
            replace(
                sl,
                kind="label" if sl.label else "answer_label",
                key=sl.label or sl.answer_label or "",
            )
        )
        _check_value_labels(ck, sl, label_values.get(sl.label) if sl.label else None)
    return out


def _implied_metrics(
    declared_metrics: tuple[m.MetricSpec, ...], measured: list[tuple[m.MeasureSpec, Any]]
) -> list[m.MetricSpec]:
    """A metric for each measure output that no metric block declares (a measure's outputs need none of their own)."""
    declared = {mt.name for mt in declared_metrics}
    return [
        m.MetricSpec(
            name, name, ms.name, "", metric.higher_is_better, metric.percent, {"": m.span_of(ms)}
        )
        for ms, metric in measured
        for name in ms.outputs
        if name not in declared
    ]


# -- names ----------------------------------------------------------------------------------------


def _name_tables(
    spec: m.TaskSpec, fields: _Fields, scored: _Scored, metrics: tuple[m.MetricSpec, ...]
) -> dict[str, Sequence[str] | None]:
    """Per namespace of a reference, the names the spec declares there."""
    data = spec.data
    metric_names = [mt.name for mt in metrics]
    produced = scored.produced
    return {
        "split": list(data.splits),
        "source": [src.name for src in data.sources],
        "path_root": [src.name for src in data.sources]
        + ([data.explode.name] if data.explode else []),
        "field": list(fields.gold),
        "score_field": list(fields.score_gold),
        "gold_field": list(fields.gold),
        "prediction_field": list(fields.score_pred),
        "schema_field": list(
            fields.pred
        ),  # the file's own fields (the id), before a deriver turns records into score fields
        "label": list(fields.labels),
        "answer_label": [r.name for r in data.answer_labels],
        # a metric block naming nothing produced is the one error of a misspelt declaration: what it meant to declare stays known
        "metric": metric_names
        + (
            [n for n in produced if n not in metric_names]
            if any(mt.name not in produced for mt in spec.metrics)
            else []
        ),
        "slice": [sl.name for sl in spec.slices],
        "per_item_value": list(scored.scorer_emits),
    }


def _check_references(
    files: list[tuple[CheckerState, tuple[m.ReportedRow, ...]]],
    tables: Mapping[str, Sequence[str] | None],
) -> None:
    """Every name each file refers to, in the namespace it refers to it in: one misspelt name, one error."""
    for checker, _ in files:
        reported_names: set[tuple[str, str]] = set()
        for ref in checker.references:
            known = tables.get(ref.namespace)
            # the outputs of one match block (inputs_p, inputs_r) unknown together are one misspelt block name
            stem = (
                ("per_item_stem", ref.name.rpartition("_")[0])
                if ref.namespace == "per_item_value" and "_" in ref.name
                else None
            )
            if (
                known is not None
                and ref.name not in known
                and (ref.namespace, ref.name) not in reported_names
                and stem not in reported_names
            ):
                reported_names.add(
                    (ref.namespace, ref.name)
                )  # one misspelt name used in several places: one error
                if stem is not None:
                    reported_names.add(stem)
                checker.unknown(ref.span, ref.what, ref.name, list(known))


def _warn_unused(ck: CheckerState, spec: m.TaskSpec) -> None:
    """Sources, normaliser blocks and similarity blocks declared but never used."""
    used_sources = {ref.name for ref in ck.references if ref.namespace in ("source", "path_root")}
    for src in spec.data.sources:
        if src.name not in used_sources:
            ck.warn(
                m.span_of(src),
                f"source {src.name!r} is never used",
                "bind one of its fields in fields/labels or remove it",
            )
    for nb in spec.normalisers:
        if nb.name not in ck.used_normalisers:
            ck.warn(
                m.span_of(nb),
                f"normaliser {nb.name!r} is never used",
                "refer to it from a match block or remove it",
            )
    for sb in spec.similarities:
        if sb.name not in ck.used_similarities:
            ck.warn(
                m.span_of(sb),
                f"similarity {sb.name!r} is never used",
                "refer to it from a match block (similarity = name) or remove it",
            )


# -- metric blocks --------------------------------------------------------------------------------


def _check_metric_blocks(
    ck: CheckerState, spec: m.TaskSpec, metrics: tuple[m.MetricSpec, ...], scored: _Scored
) -> None:
    """A metric at all, each declared once and produced; what the aggregator produces besides, noted."""
    if not metrics:
        ck.error(
            m.span_of(spec),
            "the task declares no metric",
            'add `metric name { display = "..." }` for each number the aggregator returns',
        )
    _check_formula_cycles(ck, scored.measures)
    seen: dict[str, m.MetricSpec] = {}
    unproduced_stems: set[str] = set()
    for mt in spec.metrics:
        if mt.name in seen:
            ck.error(
                m.span_of(mt, "<label>"),
                f"metric {mt.name!r} is declared twice",
                f"first on line {m.span_of(seen[mt.name], '<label>').line}",
            )
        seen[mt.name] = mt
        if mt.name not in scored.produced:
            _unproduced(ck, mt, scored, unproduced_stems)
    score, aggregate = scored.score, scored.aggregate
    undeclared = [name for name in scored.produced if name not in seen]
    if (
        undeclared
        and spec.metrics
        and aggregate is not None
        and aggregate.emits == registry.SAME_AS_SCORER
        and score.aggregate is not None
    ):  # a component's extras are its own design
        ck.warn(
            m.span_of(spec.metrics[0], "<label>"),
            f"{score.aggregate.name}() also produces {', '.join(undeclared)}, which no metric block declares",
            "they are computed but not shown or stored",
        )


def _unproduced(
    ck: CheckerState, mt: m.MetricSpec, scored: _Scored, unproduced_stems: set[str]
) -> None:
    """A metric block that nothing produces, reported with what could have produced it."""
    score, aggregate = scored.score, scored.aggregate
    producers = []
    if score.aggregate is not None and aggregate is not None:
        producers.append(
            f"{score.aggregate.name}()"
            + (
                f" over the scorer's values ({', '.join(scored.scorer_emits)})"
                if aggregate.emits == registry.SAME_AS_SCORER
                else ""
            )
        )
    if scored.measures:
        producers.append("a measure")
    who = " or ".join(producers)
    stem = re.sub(
        r"_(p|r|f1)$", "", mt.name
    )  # a measure's _p/_r/_f1 blocks name one misspelt measure: one error
    if stem not in unproduced_stems:
        unproduced_stems.add(stem)
        ck.unknown(
            m.span_of(mt, "<label>"),
            f"metric (not produced by {who or 'anything'})",
            mt.name,
            list(scored.produced),
        )


# -- reported rows and imports --------------------------------------------------------------------


def _check_reported_slices(
    files: list[tuple[CheckerState, tuple[m.ReportedRow, ...]]],
    slices: list[m.SliceSpec],
    label_values: Mapping[str, tuple[str, ...] | None],
) -> None:
    """Reported rows on slices: the value must be one the slice can have."""
    # a value the slice's value labels already name wrongly (a map label misspelt): reported there, once
    mislabelled = {
        (x.name, v)
        for x in slices
        if x.kind == "label"
        for v, _ in x.values
        if v not in (label_values.get(x.key) or (v,))
    }
    for checker, rows in files:
        for row in rows:
            if row.slice is None:
                continue
            sl = next((x for x in slices if x.name == row.slice[0]), None)
            if sl is None or sl.kind != "label":
                continue
            values = label_values.get(sl.key)
            if (
                values is not None
                and row.slice[1] not in values
                and (sl.name, row.slice[1]) not in mislabelled
            ):
                checker.unknown(
                    m.span_of(row, "value"),
                    f"value of slice {sl.name!r}",
                    row.slice[1],
                    list(values),
                )


def _check_imports(ck: CheckerState, imports: tuple[m.ImportSpec, ...]) -> None:
    for imp in imports:
        if imp.kind == "choice" and imp.choices < 2:
            ck.error(
                m.span_of(imp), f'import {imp.name!r}: kind = "choice" needs `choices = N` (N >= 2)'
            )
        if imp.kind == "text_list" and not imp.separator:
            ck.error(
                m.span_of(imp), f'import {imp.name!r}: kind = "text_list" needs `separator = "..."`'
            )


def _check_value_labels(ck: CheckerState, sl: m.SliceSpec, values: tuple[str, ...] | None) -> None:
    """A slice's value labels name values the slice can have, when the spec or the reader fixes them (a map with a default,
    membership(), a reader's declared labels); a label read from a path or an answer label is checked by `check --data`."""
    if not sl.values or values is None:
        return
    block = m.span_of(sl, "values")
    inside = [(span, value) for span, value in ck.value_label_spans if _within(span, block)]
    for value, _ in sl.values:
        if value in values:
            continue
        span = next((sp for sp, v in inside if v == value), block)
        close = difflib.get_close_matches(value, list(values), n=1, cutoff=0.6)
        hint = (
            (f"did you mean {close[0]!r}? " if close else "")
            + f"label {sl.label!r} has the values "
            + ", ".join(repr(v) for v in values)
        )
        ck.error(
            span,
            f"slice {sl.name!r} labels the value {value!r}, which its label {sl.label!r} never has",
            hint,
        )


def _within(inner: s.Span, outer: s.Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def _check_formula_cycles(ck: CheckerState, measures: tuple[m.MeasureSpec, ...]) -> None:
    """A metric computed from itself, directly or through others, is one error at the first measure of the cycle."""
    formulas: dict[str, tuple[Any, ...]] = {
        ms.name: ms.formula for ms in measures if ms.formula is not None
    }
    state: dict[str, int] = {}  # 1 = on the path, 2 = done

    def visit(name: str, path: tuple[str, ...]) -> bool:
        if state.get(name) == 2 or name not in formulas:
            return False
        if state.get(name) == 1:
            cycle = path[path.index(name) :] + (name,)
            where = next(ms for ms in measures if ms.name == cycle[0])
            ck.error(
                m.span_of(where, "formula"),
                f"metrics computed from each other: {' -> '.join(cycle)}",
                "a measure's from may use only metrics computed without it",
            )
            return True
        state[name] = 1
        found = any(visit(dep, (*path, name)) for dep in formula_names(formulas[name]))
        state[name] = 2
        return found

    for name in formulas:
        if visit(name, ()):
            return

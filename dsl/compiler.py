"""Checked spec → :class:`runners.runner.TaskRunner`, plus ``--explain`` (the plan, stage by stage).

Runtime modules that only some specs need (match stages, table readers, reader contracts) are imported
by the step that builds them, so scoring a task imports what its plan runs (issue #19).  The versions
of the scoring libraries in a fingerprint come from the spec cache's per-environment memo (dsl/cache.py)
when it is on: reading installed distributions' metadata costs more than compiling a spec.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dsl import model as m
from runners import registry
from runners.runner import SliceDef, TaskRunner

if TYPE_CHECKING:
    from runners.text import Pipeline

# Library versions that can change numbers; part of every fingerprint.
_VERSIONED_LIBRARIES = ("nltk", "sacrebleu", "rouge-score", "spacy")


def _call(call: m.ComponentCall) -> Any:
    return registry.get(call.kind, call.name).build(**{k: _argument(v) for k, v in call.kwargs})


def build_component(call: m.ComponentCall) -> Any:
    """The runtime object of a checked component call (a similarity, matcher, normaliser step...)."""
    return _call(call)


def _argument(value: Any) -> Any:
    """A spec argument as the component takes it: nested calls built (a normaliser's steps as one pipeline), literals thawed."""
    if isinstance(value, m.ComponentCall):
        return _call(value)
    if isinstance(value, tuple) and value and all(isinstance(v, m.ComponentCall) and v.kind == "normaliser" for v in value):
        return _pipeline(value)
    if isinstance(value, tuple) and value[:1] != ("__object__",):
        return [_argument(v) for v in value]
    return m.thaw(value)


def _nested_calls(call: m.ComponentCall) -> list[m.ComponentCall]:
    """``call`` and every call written inside its arguments (a record similarity's parts, a normaliser's steps)."""
    found = [call]
    stack = [v for _, v in call.kwargs]
    while stack:
        value = stack.pop()
        if isinstance(value, m.ComponentCall):
            found += _nested_calls(value)
        elif isinstance(value, tuple):
            stack.extend(value)
    return found


def _bound(call: m.ComponentCall) -> Any:
    return registry.get(call.kind, call.name).bind(**call.kwargs_dict())


def _pipeline(steps: tuple[m.ComponentCall, ...]) -> Pipeline:
    from runners.text import Pipeline

    return Pipeline.of([_call(s) for s in steps], [s.name for s in steps])


def _gold_reader(data: m.DataSpec) -> Any:
    if data.reader is not None:
        return _contract_checked(data.reader)
    from runners.tables import AnswerLabel, Explode, ItemLabel, Membership, TableReader, TableSource

    return TableReader(
        sources=tuple(TableSource(s.name, s.format, s.path, s.key, s.splits, s.optional) for s in data.sources),
        id_path=data.id_path,
        fields=tuple((f.name, f.path, f.type) for f in data.fields),
        labels=tuple(
            ItemLabel(r.name, r.path, dict(r.mapping) if r.mapping else None, r.default, tuple(Membership(*mm) for mm in r.members), r.splits)
            for r in data.labels
        ),
        answer_labels=tuple(AnswerLabel(r.name, r.field, r.items, r.text, r.label) for r in data.answer_labels),
        explode=Explode(data.explode.name, data.explode.items, data.explode.id, data.explode.separator) if data.explode else None,
    )


def _contract_checked(call: m.ComponentCall) -> Any:
    """A reader component whose gold is checked against its declared contract before anyone scores it."""
    from runners.contracts import check_gold_against_contract

    comp = registry.get("reader", call.name)
    read = comp.bind(**call.kwargs_dict())
    source = f"reader {call.name}"

    def reader(data_root: Any, split: str) -> Any:
        gold = read(data_root, split)
        check_gold_against_contract(gold, comp.contract.fields, comp.contract.labels, source)
        return gold

    return reader


def _prediction_reader(pred: m.PredictionSpec) -> Any:
    if pred.reader is not None:
        return _bound(pred.reader)
    from runners.predictions import SchemaReader

    return SchemaReader(pred.format, pred.id_field, pred.fields)


def _walk(align: m.AlignSpec) -> Any:
    """An align block as the runtime walk (runners/alignment.py), its similarities built from their calls."""
    from runners.alignment import AlignedWalk, Entities, Stat, Tally

    entities = tuple(Entities(e.name, e.places, e.same, _call(e.identity), e.at_least, _call(e.until)) for e in align.entities)
    tallies = tuple(
        Tally(
            c.name, c.of or "", c.by, c.kinds, tuple(Stat(name, source, None if sim is None else _call(sim)) for name, (source, sim) in c.stats), c.where or ""
        )
        for c in align.counts
    )
    similarity = _call(align.similarity)
    symmetric = bool(getattr(similarity, "symmetric", False))
    return AlignedWalk(align.name, align.gold, align.prediction, align.on, similarity, align.threshold, align.where or "", entities, tallies, symmetric)


def _scorer_factory(score: m.ScoreSpec) -> Any:
    if score.aligns:
        from runners.alignment import WalkScorer

        walker = WalkScorer(tuple(_walk(a) for a in score.aligns))
        return lambda metadata: walker
    if score.scorer is not None:
        comp = registry.get("scorer", score.scorer.name)
        fixed = score.scorer.kwargs_dict()

        def from_metadata(metadata: Mapping[str, Any]) -> Any:
            extra = {param: metadata[key] for param, key in score.metadata_params if key in metadata}
            return comp.bind(**{**fixed, **extra})

        return from_metadata
    from dataclasses import replace

    from runners.generic import MatchScorer, MatchStage
    from runners.matching import PairScorer

    pipelines: dict[tuple[m.ComponentCall, ...], Pipeline] = {}  # equal normalisers share one memo

    def pipeline(steps: tuple[m.ComponentCall, ...]) -> Pipeline:
        if steps not in pipelines:
            pipelines[steps] = _pipeline(steps)
        return pipelines[steps]

    derived = dict(registry.get("deriver", score.derive.name).contract.fields) if score.derive is not None else {}
    stages = []
    for match in score.matches:
        similarity = _call(match.similarity)
        # a similarity that scores empty text itself (phrases, records) gets no empty-answer guard
        pairs = PairScorer(
            similarity, pipeline(match.normaliser), pipeline(match.similarity_normaliser), guard_empty=not getattr(similarity, "scores_empty_text", False)
        )
        answers = derived.get(match.gold)
        stage = MatchStage(match.gold, match.prediction, tuple(_call(f) for f in match.filters), pairs, _call(match.matcher), match.outputs)
        stages.append(replace(stage, answers=answers) if answers is not None else stage)
    scorer = MatchScorer(tuple(stages))
    return lambda metadata: scorer


def components_used(spec: m.TaskSpec) -> list[m.ComponentCall]:
    calls: list[m.ComponentCall] = [c for c in (spec.data.reader, spec.predictions.reader, spec.score.scorer, spec.score.aggregate) if c]
    if spec.score.derive is not None:
        calls.append(spec.score.derive)
    for match in spec.score.matches:
        calls += [*_nested_calls(match.similarity), match.matcher, *match.filters, *match.normaliser, *match.similarity_normaliser]
    for measure in spec.score.measures:
        calls += [c for c in (measure.metric, *measure.normaliser) if c is not None]
    for align in spec.score.aligns:
        written = [align.similarity, *(c for e in align.entities for c in (e.identity, e.until))]
        written += [sim for count in align.counts for _, (_, sim) in count.stats if sim is not None]
        calls += [nested for call in written for nested in _nested_calls(call)]
    return calls


def _measure_stage(measure: m.MeasureSpec, gold: Mapping[str, Any], pred: Mapping[str, Any], bare: bool) -> Any:
    from runners.metrics import MeasureStage
    from runners.metrics._base import Value

    if measure.value is not None:
        return MeasureStage(
            measure.name, Value(), measure.aggregate, "", "", (), (), None, measure.round, False, measure.value, measure.where, measure.scale, measure.divide_by
        )
    if measure.stats:
        from runners.metrics._counts import MicroCounts

        counted = MicroCounts(measure.counts, measure.stats)
        return MeasureStage(
            measure.name, counted, "micro", "", "", (), (), None, measure.round, reads=counted.reads, scale=measure.scale, divide_by=measure.divide_by
        )
    assert measure.metric is not None and measure.gold is not None and measure.prediction is not None  # the checker saw to it
    metric = _call(measure.metric)
    gold_types, pred_types = metric.accepts(measure.aggregate)
    # a field typed in the spec narrows what the metric accepts (an enum, optional values), so the runtime check is the spec's
    gold_types = (gold[measure.gold],) if measure.gold in gold else gold_types
    pred_types = (pred[measure.prediction],) if measure.prediction in pred else pred_types
    normalise = _pipeline(measure.normaliser) if measure.normaliser else None
    return MeasureStage(
        measure.name,
        metric,
        measure.aggregate,
        measure.gold,
        measure.prediction,
        gold_types,
        pred_types,
        normalise,
        measure.round,
        bare,
        None,
        measure.where,
        measure.scale,
        measure.divide_by,
    )


def _scoring(spec: m.TaskSpec) -> tuple[Any, Any]:
    """The scorer factory and the aggregator: the score block's own, joined with its measures when it has any."""
    score = spec.score
    own_scorer = _scorer_factory(score) if score.scorer is not None or score.matches or score.aligns else None
    own_aggregate = _bound(score.aggregate) if score.aggregate is not None else None
    if not score.measures:
        return _derived(score, own_scorer), own_aggregate
    from runners.metrics import Measures, combined

    reader = registry.get("reader", spec.data.reader.name).contract if spec.data.reader else None
    gold = dict(reader.fields) if reader else spec.data.field_types()
    pred = dict(registry.get("predictions", spec.predictions.reader.name).contract.fields) if spec.predictions.reader else dict(spec.predictions.fields)
    # a predictions component with one declared field may give that field's value bare (PARADISE's ending index)
    bare = spec.predictions.reader is not None and len(pred) == 1
    if score.derive is not None:  # measures read the fields the deriver gives
        gold = pred = dict(registry.get("deriver", score.derive.name).contract.fields)
        bare = False
    measures = Measures(tuple(_measure_stage(ms, gold, pred, bare) for ms in score.measures if ms.formula is None))  # formulas: compile_spec
    make, aggregate = combined(measures, own_scorer, own_aggregate)
    return _derived(score, make), aggregate


def _derived(score: m.ScoreSpec, make: Any) -> Any:
    """The scorer factory, seeing every record through the score block's deriver when it has one."""
    if score.derive is None or make is None:
        return make
    from runners.generic import Derived

    derive = _bound(score.derive)
    return lambda metadata: Derived(derive, make(metadata))


def _signatures(spec: m.TaskSpec) -> dict[str, str]:
    """Library signatures of the measures' metrics (sacrebleu's, rouge-score's settings): they can change numbers."""
    out = {}
    for measure in spec.score.measures:
        if measure.metric is None:
            continue
        signature = _call(measure.metric).signature()
        if signature:
            out[measure.name] = signature
    return out


# What a fingerprint leaves out: text shown to people, where files come from (the gold content is
# fingerprinted itself), harness import notes, and the names the spec gives its own normalisers
# and similarity blocks (match blocks carry their steps and parts inlined).  Everything else can change a number and is kept.
_NOT_SCORED = {
    "title",
    "description",
    "citation",
    "url",
    "license",
    "benchmark",
    "display",
    "group",
    "higher_is_better",
    "percent",
    "reported",
    "imports",
    "fetch",
    "extends",
    "normalisers",
    "similarities",
}
# Collections whose order means nothing (declared by name); sorted so that reordering a spec keeps its fingerprint.
_UNORDERED = {"metrics", "slices", "labels", "fields", "matches", "measures", "templates", "answer_labels", "params", "kwargs"}


def semantic_form(spec: m.TaskSpec) -> dict[str, Any]:
    """The checked spec as the numbers see it: display text dropped, declaration order normalised."""

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items() if k not in _NOT_SCORED}
        if isinstance(value, list):
            items = [walk(v) for v in value]
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str)) if key in _UNORDERED else items
        return value

    plain = spec.to_dict()
    for sl in plain["slices"]:  # a slice's value labels are display text (its `values` key, unlike an enum type's values)
        sl.pop("values", None)
    form = walk(plain)
    if form["data"].get("explode", 0) is None:  # specs without one keep the fingerprints they had before explode existed
        del form["data"]["explode"]
    if form["score"].get("derive", 0) is None:  # likewise derive
        del form["score"]["derive"]
    sources = form["data"]["sources"]  # the first source defines the items; the others are joined by key
    form["data"]["sources"] = sources[:1] + sorted(sources[1:], key=lambda v: json.dumps(v, sort_keys=True))
    return form


def spec_digest(spec: m.TaskSpec) -> str:
    """sha256 over the spec's semantic form, the versions of the components it uses and of scoring libraries."""
    versions = {f"{c.kind}:{c.name}": registry.get(c.kind, c.name).version for c in components_used(spec)}
    from dsl.cache import per_environment

    libraries = per_environment("library-versions", _library_versions)
    payload = json.dumps(
        {"spec": semantic_form(spec), "components": versions, "libraries": libraries, "signatures": _signatures(spec)}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def _library_versions() -> dict[str, str]:
    """The installed versions of the scoring libraries that can change numbers (those installed)."""
    import importlib.metadata

    libraries = {}
    for lib in _VERSIONED_LIBRARIES:
        try:
            libraries[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            continue
    return libraries


def compile_spec(spec: m.TaskSpec) -> TaskRunner:
    make_scorer, aggregate = _scoring(spec)
    formulas = {ms.name: ms.formula for ms in spec.score.measures if ms.formula is not None}
    if formulas:
        from runners.metrics import with_derived

        aggregate = with_derived(aggregate, formulas)
    return TaskRunner(
        name=spec.name,
        splits=spec.data.splits,
        hidden_splits=spec.data.hidden,
        metric_names=tuple(mt.name for mt in spec.metrics),
        primary=spec.primary,
        read_gold=_gold_reader(spec.data),
        read_predictions=_prediction_reader(spec.predictions),
        make_scorer=make_scorer,
        aggregate=aggregate,
        slices=tuple(SliceDef(s.name, s.kind, s.key) for s in spec.slices),
        spec_digest=spec_digest(spec),
    )


def _render_formula(formula: tuple[Any, ...]) -> str:
    if formula[0] == "call":
        return f"{formula[1]}({', '.join(_render_formula(a) for a in formula[2])})"
    return f"{formula[1]:g}" if formula[0] == "number" else str(formula[1])


def _render_call(call: m.ComponentCall) -> str:
    args = ", ".join(f"{k}={_render_value(v)}" for k, v in call.kwargs)
    return f"{call.name}({args})"


def _render_value(value: Any) -> str:
    if isinstance(value, m.ComponentCall):
        return _render_call(value)
    if isinstance(value, tuple) and value[:1] != ("__object__",) and any(isinstance(v, (m.ComponentCall, tuple)) for v in value):
        return "[" + ", ".join(_render_value(v) for v in value) + "]"
    return json.dumps(m.thaw(value))


def explain(spec: m.TaskSpec) -> str:
    """The runner's plan, stage by stage, as text for ``procbench compile --explain``."""
    lines = [f"task {spec.name} v{spec.version}: {spec.title}", f"fingerprint (spec part): {spec_digest(spec)[:16]}", ""]
    data = spec.data
    lines.append("1. read gold")
    lines.append(f"   splits: {', '.join(data.splits)}" + (f" (hidden: {', '.join(data.hidden)})" if data.hidden else ""))
    if data.reader:
        lines.append(f"   reader component: {_render_call(data.reader)}")
    for src in data.sources:
        lines.append(f"   source {src.name}: {src.format} {src.path}" + (f" joined on {src.key}" if src.key else " (primary)"))
    if data.id_path:
        shown = f"key({data.id_path[1]})" if data.id_path[0] == "#key" else "row_index()" if data.id_path == ("#row",) else ".".join(data.id_path)
        lines.append(f"   item id: {shown}")
    if data.explode:
        ex = data.explode
        element = {"#index": "its 0-based position", "#key": "its mapping key"}.get(ex.id[0], ".".join(ex.id))
        lines.append(f"   explode {ex.name}: one item per element of {'.'.join(ex.items)}, id = <item id>{ex.separator}<{element}>")
    for binding in data.fields:
        lines.append(f"   field {binding.name}: {binding.type.spelling()} <- {'.'.join(binding.path)}")
    for rule in data.labels:
        if rule.members:
            listed = "; ".join(f"{label!r} if listed in {path}[{column!r}]" for path, column, label in rule.members)
            lines.append(f"   label {rule.name}: {listed}; else {rule.default!r}" + (f" (splits {', '.join(rule.splits)})" if rule.splits else ""))
            continue
        mapped = f" mapped {dict(rule.mapping)} else {rule.default!r}" if rule.mapping else ""
        lines.append(f"   label {rule.name} <- {'.'.join(rule.path)}{mapped}")
    for rule in data.answer_labels:
        lines.append(f"   answer label {rule.name}: {rule.field} restricted by {'.'.join(rule.items)}[].{rule.label}")
    pred = spec.predictions
    lines += ["", "2. validate predictions"]
    if pred.reader:
        lines.append(f"   reader component: {_render_call(pred.reader)}")
    else:
        lines.append(f"   {pred.format} records keyed by {pred.id_field!r}: " + ", ".join(f"{n}: {t.render()}" for n, t in pred.fields))
        lines.append("   every problem reported with its line number; missing ids score as empty (warning)")
    lines += ["", "3. normalise + 4. match"]
    if spec.score.derive:
        gives = registry.get("deriver", spec.score.derive.name).contract.fields
        lines.append(f"   derive: {_render_call(spec.score.derive)} -> " + ", ".join(f"{k}: {t.spelling()}" for k, t in gives.items()))
    if spec.score.scorer:
        lines.append(f"   scorer component: {_render_call(spec.score.scorer)}")
        for param, key in spec.score.metadata_params:
            lines.append(f"   parameter {param} <- submission metadata {key!r}")
    for match in spec.score.matches:
        lines.append(f"   match {match.name}: gold.{match.gold} vs prediction.{match.prediction}")
        if match.filters:
            lines.append(f"     filters: {' | '.join(_render_call(f) for f in match.filters)}")
        if match.normaliser:
            lines.append(f"     normalise: {' | '.join(_render_call(s) for s in match.normaliser)}")
        lines.append(
            f"     similarity: {_render_call(match.similarity)}"
            + (f" after {' | '.join(_render_call(s) for s in match.similarity_normaliser)}" if match.similarity_normaliser else "")
        )
        lines.append(f"     matcher: {_render_call(match.matcher)} -> {', '.join(match.outputs)}")
    for measure in (ms for ms in spec.score.measures if ms.formula is None):
        normalised = f" after {' | '.join(_render_call(s) for s in measure.normaliser)}" if measure.normaliser else ""
        what = (
            f"the scorer's {measure.value}"
            if measure.metric is None
            else f"{_render_call(measure.metric)} of gold.{measure.gold} vs prediction.{measure.prediction}{normalised}"
        )
        only = " on items with " + ", ".join(f"{k} = {v!r}" for k, v in measure.where) if measure.where else ""
        lines.append(f"   measure {measure.name}: {what}{only}")
    lines += ["", "5. aggregate"]
    if spec.score.aggregate is not None:
        lines.append(f"   {_render_call(spec.score.aggregate)} over the scorer's per-item values")
    for measure in (ms for ms in spec.score.measures if ms.formula is None):
        rounded = (
            (f", times {measure.scale:g}" if measure.scale is not None else "")
            + (f", divided by {measure.divide_by:g}" if measure.divide_by is not None else "")
            + (f", rounded to {measure.round} digits" if measure.round is not None else "")
        )
        lines.append(f"   {measure.name}: aggregate = {measure.aggregate}{rounded} -> {', '.join(measure.outputs)}")
    for measure in spec.score.measures:
        if measure.formula is not None:
            lines.append(f"   {measure.name} = {_render_formula(measure.formula)}")
    lines += [f"   metrics: {', '.join(mt.name for mt in spec.metrics)}", f"   primary: {spec.primary}"]
    lines += ["", "6. slice"]
    for sl in spec.slices:
        how = "items grouped by label" if sl.kind == "label" else "gold answers restricted by answer label, all items re-scored"
        lines.append(f"   {sl.name}: {how} {sl.key!r}")
    if not spec.slices:
        lines.append("   (none)")
    return "\n".join(lines)

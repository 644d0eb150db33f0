"""Checked spec -> runner *plan* (dsl/plan.py), the fingerprint, and ``--explain`` (the plan, stage by stage).

:func:`plan_of` writes down, as plain data, every component a spec wires and its arguments; :func:`compile_spec`
is ``procbench.dsl.plan.build(plan_of(spec, spec_digest(spec)))``, so a runner rebuilt from a cached plan (``procbench
score`` with the spec cache warm, dsl/tasks.py) is built by the same code as a compiled one.  Runtime modules
that only some specs need (match stages, table readers, reader contracts) are imported by the step of
``build`` that needs them, so scoring a task imports what its plan runs (issue #19).  The versions of the
scoring libraries in a fingerprint come from the spec cache's per-environment memo (dsl/cache.py) when it is
on: reading installed distributions' metadata costs more than compiling a spec.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from procbench.dsl import model as m
from procbench.dsl import board_spec, plan
from procbench.runners.runtime import registry
from procbench.runners.runtime.runner import TaskRunner

# Library versions that can change numbers; part of every fingerprint.
_VERSIONED_LIBRARIES = ("nltk", "sacrebleu", "rouge-score", "spacy")


def build_component(call: m.ComponentCall) -> Any:
    """The runtime object of a checked component call (a similarity, matcher, normaliser step...)."""
    return plan.build_node(_call(call))


# -- spec -> plan ------------------------------------------------------------------------------------
def _call(call: m.ComponentCall) -> plan.Node:
    """A component built from its spec arguments (``Component.build``), nested calls and pipelines included."""
    return plan.call_node(call.kind, call.name, [(k, _argument(v)) for k, v in call.kwargs])


def _argument(value: Any) -> plan.Node:
    """A spec argument as the component takes it: nested calls built (a normaliser's steps as one pipeline), literals thawed."""
    if isinstance(value, m.ComponentCall):
        return _call(value)
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, m.ComponentCall) and v.kind == "normaliser" for v in value)
    ):
        return _pipeline(value)
    if isinstance(value, tuple) and value[:1] != ("__object__",):
        return ("list", tuple(_argument(v) for v in value))
    return ("value", m.thaw(value))


def _pipeline(steps: tuple[m.ComponentCall, ...]) -> plan.Node:
    return ("pipeline", tuple(_call(s) for s in steps), tuple(s.name for s in steps))


def _bound(call: m.ComponentCall) -> plan.Bound:
    """A component bound to its spec arguments (``Component.bind``): the arguments thawed, nothing built."""
    return (call.kind, call.name, call.kwargs_dict())


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


def plan_of(spec: m.TaskSpec, digest: str) -> dict[str, Any]:
    """The plan of the checked ``spec`` whose fingerprint is ``digest`` (plain data: ``procbench.dsl.plan.is_plain``)."""
    score = spec.score
    return {
        "format": plan.FORMAT,
        "name": spec.name,
        "splits": spec.data.splits,
        "hidden": spec.data.hidden,
        "metric_names": tuple(mt.name for mt in spec.metrics),
        "primary": spec.primary,
        "slices": tuple((s.name, s.kind, s.key) for s in spec.slices),
        "digest": digest,
        "gold": ("reader", _bound(spec.data.reader))
        if spec.data.reader is not None
        else ("table", _table(spec.data)),
        "predictions": _predictions(spec.predictions, _missing_declared(score)),
        "scorer": _scorer(score)
        if score.scorer is not None or score.matches or score.aligns
        else None,
        "values": tuple(
            (v.name, v.formula) for v in score.values
        ),  # per-item values computed from the scorer's, in order
        "flags": score.flags,
        "aggregate": _bound(score.aggregate) if score.aggregate is not None else None,
        "derive": _bound(score.derive) if score.derive is not None else None,
        "measures": _measures(spec)
        if score.measures
        else None,  # formulas: below, applied after the aggregator
        "formulas": {ms.name: ms.formula for ms in score.measures if ms.formula is not None},
        board_spec.PLAN_KEY: board_spec.plan_fields(
            spec
        ),  # what intake stores of the spec (dsl/board_spec.py)
    }


def _table(data: m.DataSpec) -> dict[str, Any]:
    """A reader of declared sources, fields and labels (procbench.runners.runtime.tables.TableReader)."""
    return {
        "sources": tuple(
            (s.name, s.format, s.path, s.key, s.splits, s.optional) for s in data.sources
        ),
        "id_path": data.id_path,
        "fields": tuple((f.name, f.path, plan.type_node(f.type)) for f in data.fields),
        "labels": tuple(
            (r.name, r.path, dict(r.mapping) if r.mapping else None, r.default, r.members, r.splits)
            for r in data.labels
        ),
        "answer_labels": tuple(
            (r.name, r.field, r.items, r.text, r.label) for r in data.answer_labels
        ),
        "explode": (
            data.explode.name,
            data.explode.items,
            data.explode.id,
            data.explode.separator,
            data.explode.where,
            data.explode.skip,
        )
        if data.explode
        else None,
    }


def _predictions(pred: m.PredictionSpec, missing_declared: bool = False) -> plan.Node:
    if pred.reader is not None:
        return ("component", _bound(pred.reader))
    node = (
        "schema",
        pred.format,
        pred.id_field,
        tuple((name, plan.type_node(t)) for name, t in pred.fields),
    )
    return (
        (*node, True) if missing_declared else node
    )  # the plans of tasks that declare nothing stay as they were


def _missing_declared(score: m.ScoreSpec) -> bool:
    """Whether every prediction the task compares is counted by a declared missing = ... (only measure blocks compare, and each declares one)."""
    compared = [ms for ms in score.measures if ms.metric is not None]
    own = score.scorer is not None or score.matches or score.aligns
    return (
        bool(compared)
        and not own
        and all(ms.missing is not None or score.missing is not None for ms in compared)
    )


def _scorer(score: m.ScoreSpec) -> plan.Node:
    """The score block's own scorer: its align blocks, else its scorer component, else its match blocks."""
    if score.aligns:
        return ("aligns", tuple(_walk(a) for a in score.aligns))
    if score.scorer is not None:
        return ("component", _bound(score.scorer), score.metadata_params)
    pipelines: list[plan.Node] = []
    index: dict[tuple[m.ComponentCall, ...], int] = {}  # equal normalisers share one memo

    def pipeline(steps: tuple[m.ComponentCall, ...]) -> int:
        if steps not in index:
            index[steps] = len(pipelines)
            pipelines.append(_pipeline(steps))
        return index[steps]

    derived = (
        dict(registry.get("deriver", score.derive.name).contract.fields)
        if score.derive is not None
        else {}
    )
    matches = [
        {
            "gold": match.gold,
            "prediction": match.prediction,
            "similarity": _call(match.similarity),
            "normaliser": pipeline(match.normaliser),
            "similarity_normaliser": pipeline(match.similarity_normaliser),
            "filters": tuple(_call(f) for f in match.filters),
            "matcher": _call(match.matcher),
            "outputs": match.outputs,
            "answers": plan.type_node(derived[match.gold]) if match.gold in derived else None,
        }
        for match in score.matches
    ]
    return ("matches", tuple(pipelines), tuple(matches))


def _walk(align: m.AlignSpec) -> dict[str, Any]:
    """An align block (procbench.runners.library.alignment.AlignedWalk)."""
    return {
        "name": align.name,
        "gold": align.gold,
        "prediction": align.prediction,
        "on": align.on,
        "similarity": _call(align.similarity),
        "threshold": align.threshold,
        "where": align.where or "",
        "entities": tuple(
            (e.name, e.places, e.same, _call(e.identity), e.at_least, _call(e.until))
            for e in align.entities
        ),
        "tallies": tuple(
            (
                c.name,
                c.of or "",
                c.by,
                c.kinds,
                tuple(
                    (name, source, None if sim is None else _call(sim))
                    for name, (source, sim) in c.stats
                ),
                c.where or "",
            )
            for c in align.counts
        ),
    }


def _measures(spec: m.TaskSpec) -> list[dict[str, Any]]:
    """The measure blocks other than formulas, with the field types their metrics' values are checked against."""
    score = spec.score
    reader = registry.get("reader", spec.data.reader.name).contract if spec.data.reader else None
    gold = dict(reader.fields) if reader else spec.data.field_types()
    pred = (
        dict(registry.get("predictions", spec.predictions.reader.name).contract.fields)
        if spec.predictions.reader
        else dict(spec.predictions.fields)
    )
    # a predictions component with one declared field may give that field's value bare (PARADISE's ending index)
    bare = spec.predictions.reader is not None and len(pred) == 1
    if score.derive is not None:  # measures read the fields the deriver gives
        gold = pred = dict(registry.get("deriver", score.derive.name).contract.fields)
        bare = False
    return [_measure(ms, gold, pred, bare, score) for ms in score.measures if ms.formula is None]


def _measure(
    measure: m.MeasureSpec,
    gold: dict[str, Any],
    pred: dict[str, Any],
    bare: bool,
    score: m.ScoreSpec,
) -> dict[str, Any]:
    common = {
        "name": measure.name,
        "round": measure.round,
        "scale": measure.scale,
        "divide_by": measure.divide_by,
    }
    if measure.value is not None:
        return {
            "kind": "value",
            **common,
            "aggregate": measure.aggregate,
            "value": measure.value,
            "where": measure.where,
        }
    if measure.stats:
        return {"kind": "counts", **common, "counts": measure.counts, "stats": measure.stats}
    assert (
        measure.metric is not None and measure.gold is not None and measure.prediction is not None
    )  # the checker saw to it
    return {
        "kind": "metric",
        **common,
        "metric": _call(measure.metric),
        "aggregate": measure.aggregate,
        "gold": measure.gold,
        "prediction": measure.prediction,
        # a field typed in the spec narrows what the metric accepts (an enum, optional values), so the runtime check is the spec's
        "gold_type": plan.type_node(gold[measure.gold]) if measure.gold in gold else None,
        "prediction_type": plan.type_node(pred[measure.prediction])
        if measure.prediction in pred
        else None,
        "normaliser": _pipeline(measure.normaliser) if measure.normaliser else None,
        "bare": bare,
        "where": measure.where,
        # what an item without a prediction, or with one the metric cannot measure, counts as (declared, else the default)
        **{
            part: getattr(measure, part) or getattr(score, part) or m.DEFAULT_CONVENTIONS[part]
            for part in ("missing", "invalid")
        },
    }


def compile_spec(spec: m.TaskSpec) -> TaskRunner:
    """The runner of a checked spec: its plan (:func:`plan_of`), built (``procbench.dsl.plan.build``)."""
    return plan.build(plan_of(spec, spec_digest(spec)))


def components_used(spec: m.TaskSpec) -> list[m.ComponentCall]:
    calls: list[m.ComponentCall] = [
        c
        for c in (
            spec.data.reader,
            spec.predictions.reader,
            spec.score.scorer,
            spec.score.aggregate,
        )
        if c
    ]
    if spec.score.derive is not None:
        calls.append(spec.score.derive)
    for match in spec.score.matches:
        calls += [
            *_nested_calls(match.similarity),
            match.matcher,
            *match.filters,
            *match.normaliser,
            *match.similarity_normaliser,
        ]
    for measure in spec.score.measures:
        calls += [c for c in (measure.metric, *measure.normaliser) if c is not None]
    for align in spec.score.aligns:
        written = [align.similarity, *(c for e in align.entities for c in (e.identity, e.until))]
        written += [sim for count in align.counts for _, (_, sim) in count.stats if sim is not None]
        calls += [nested for call in written for nested in _nested_calls(call)]
    return calls


def _signatures(spec: m.TaskSpec) -> dict[str, str]:
    """Library signatures of the measures' metrics (sacrebleu's, rouge-score's settings): they can change numbers."""
    out: dict[str, str] = {}
    for measure in spec.score.measures:
        if measure.metric is None:
            continue
        signature = build_component(measure.metric).signature()
        if signature:
            out[measure.name] = signature
    return out


# What a fingerprint leaves out follows from each attribute's role (dsl/model.py, ROLES): text shown to
# people (display), how rows are ordered (ranking), where parts come from (origin: fetch origins, harness
# imports, the names of normaliser and similarity blocks, inlined where used).  Scored and identity
# attributes are kept: everything that can change a number, and what says which board this is.
# Collections whose order means nothing (declared by name); sorted so that reordering a spec keeps its fingerprint.
_UNORDERED = {
    "metrics",
    "slices",
    "labels",
    "fields",
    "matches",
    "measures",
    "templates",
    "answer_labels",
    "params",
    "kwargs",
}


def semantic_form(spec: m.TaskSpec) -> dict[str, Any]:
    """The checked spec as the numbers see it: only its scored and identity attributes (their roles,
    dsl/model.py), declaration order normalised."""

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            items = [walk(v) for v in value]
            return (
                sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
                if key in _UNORDERED
                else items
            )
        return value

    plain = m.fingerprinted(spec)
    for key in (
        "missing",
        "invalid",
    ):  # missing/invalid: each measure's effective convention, kept only where it is not the default
        task_wide = plain["score"].pop(
            key, None
        )  # (before ordering, so that writing out a default changes nothing)
        for measure in plain["score"]["measures"]:
            effective = measure.pop(key, None) or task_wide
            if (
                measure["metric"] is not None
                and effective is not None
                and list(effective) != list(m.DEFAULT_CONVENTIONS[key])
            ):
                measure[key] = effective
    form = walk(plain)
    if (
        form["data"].get("explode", 0) is None
    ):  # specs without one keep the fingerprints they had before explode existed
        del form["data"]["explode"]
    else:  # and an explode without where/skip the one it had before they existed
        for key in ("where", "skip"):
            if form["data"]["explode"].get(key, 0) == []:
                del form["data"]["explode"][key]
    if form["score"].get("derive", 0) is None:  # likewise derive
        del form["score"]["derive"]
    for key in ("values", "flags"):  # and per-item values and flags
        if form["score"].get(key, 0) == []:
            del form["score"][key]
    sources = form["data"][
        "sources"
    ]  # the first source defines the items; the others are joined by key
    form["data"]["sources"] = sources[:1] + sorted(
        sources[1:], key=lambda v: json.dumps(v, sort_keys=True)
    )
    return form


def spec_digest(spec: m.TaskSpec) -> str:
    """sha256 over the spec's semantic form, the versions of the components it uses and of scoring libraries."""
    versions = {
        f"{c.kind}:{c.name}": registry.get(c.kind, c.name).version for c in components_used(spec)
    }
    from procbench.dsl.cache import per_environment

    libraries = per_environment("library-versions", _library_versions)
    payload = json.dumps(
        {
            "spec": semantic_form(spec),
            "components": versions,
            "libraries": libraries,
            "signatures": _signatures(spec),
        },
        sort_keys=True,
        default=str,
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


def _render_convention(measure: m.MeasureSpec, score: m.ScoreSpec, part: str) -> str:
    """How a measure counts an item without a prediction (``missing``) or with one it cannot measure (``invalid``), for --explain."""
    declared = getattr(measure, part) or getattr(score, part)
    form, *value = declared or m.DEFAULT_CONVENTIONS[part]
    what = {"missing": "no prediction", "invalid": "an invalid prediction"}[part]
    if form == "predict":
        how = f"counted as the prediction {json.dumps(m.thaw(value[0]))}"
    elif form == "score":
        how = f"a per-item score of {float(value[0]):g}"
    else:
        how = "scored as unanswered" if form == "empty" else "the file is refused"
    return f"{what}: {how}" + (
        "" if declared else f" (the default; declare {part} = ... to change it)"
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
    if (
        isinstance(value, tuple)
        and value[:1] != ("__object__",)
        and any(isinstance(v, (m.ComponentCall, tuple)) for v in value)
    ):
        return "[" + ", ".join(_render_value(v) for v in value) + "]"
    return json.dumps(m.thaw(value))


def _explain_value(node: tuple[Any, ...]) -> str:
    """A field or label's path, or its computed value with what it means (runners/runtime/data_exprs.py)."""
    from procbench.runners.runtime.data_exprs import is_computed, render

    if not is_computed(node):
        return ".".join(node)
    head = node[0]

    def members(match: tuple[tuple[str, Any], ...]) -> str:
        return " and ".join(
            f"{member or 'the element'} = {render(value)}" for member, value in match
        )

    if head == "#lookup":
        _, items, match, read, has_default, default = node
        found = f"its {'.'.join(read)}" if read else "that element"
        otherwise = f"else {json.dumps(default)}" if has_default else "else an error (no default)"
        return f"{render(node)}: the first element of {render(items)} with {members(match)}, {found}; {otherwise}"
    if head in ("#any", "#all"):
        quantity = "some element" if head == "#any" else "every element (true for an empty list)"
        return f"{render(node)}: true where {quantity} of {render(node[1])} has {members(node[2])}, else false"
    if head == "#distinct":
        _, items, member, match = node
        of = f"the {'.'.join(member)} of " if member else ""
        kept = f" with {members(match)}" if match else ""
        return f"{render(node)}: {of}the elements of {render(items)}{kept}, each value once, in first-seen order"
    if head == "#equals":
        return f"{render(node)}: true where {render(node[1])} is {json.dumps(node[2])} (a missing value is not), else false"
    return render(node)


def _explain_explode(ex: m.ExplodeSpec) -> list[str]:
    from procbench.runners.runtime.data_exprs import is_computed, render

    if ex.id[0] == "#join":
        element = ex.separator.join(".".join(path) for path in ex.id[1:])
    elif is_computed(ex.items) and ex.id[0] == "#index":
        element = "the positions in each list, joined by the separator"
    else:
        element = {"#index": "its 0-based position", "#key": "its mapping key"}.get(
            ex.id[0], ".".join(ex.id)
        )
    if is_computed(ex.items) and ex.items[0] == "#product":
        over = " x ".join(render(part) for _, part in ex.items[1])
        named = ", ".join(name for name, _ in ex.items[1])
        what = f"combination of one element of each of {over} (the element is a record of {named})"
    else:
        what = f"each element of {_explain_value(ex.items) if is_computed(ex.items) else render(ex.items)}"
    lines = [f"   explode {ex.name}: one item per {what}, id = <item id>{ex.separator}<{element}>"]
    lines += [f"     only where {_explain_value(c)}" for c in ex.where]
    lines += [f"     skipped where {_explain_value(c)}" for c in ex.skip]
    return lines


def explain(spec: m.TaskSpec) -> str:
    """The runner's plan, stage by stage, as text for ``procbench compile --explain``."""
    lines = [
        f"task {spec.name} v{spec.version}: {spec.title}",
        f"fingerprint (spec part): {spec_digest(spec)[:16]}",
        "",
    ]
    data = spec.data
    lines.append("1. read gold")
    lines.append(
        f"   splits: {', '.join(data.splits)}"
        + (f" (hidden: {', '.join(data.hidden)})" if data.hidden else "")
    )
    if data.reader:
        lines.append(f"   reader component: {_render_call(data.reader)}")
    for src in data.sources:
        lines.append(
            f"   source {src.name}: {src.format} {src.path}"
            + (f" joined on {src.key}" if src.key else " (primary)")
        )
    if data.id_path:
        shown = (
            f"key({data.id_path[1]})"
            if data.id_path[0] == "#key"
            else "row_index()"
            if data.id_path == ("#row",)
            else ".".join(data.id_path)
        )
        lines.append(f"   item id: {shown}")
    if data.explode:
        ex = data.explode
        lines += _explain_explode(ex)
    for binding in data.fields:
        delimited = next(
            (
                src.format
                for src in data.sources
                if src.name == binding.path[0] and src.format in ("csv", "tsv")
            ),
            None,
        )
        cast = (
            f" ({delimited.upper()} cells read as {binding.type.spelling()})"
            if delimited and binding.type.kind not in ("str", "any")
            else ""
        )
        lines.append(
            f"   field {binding.name}: {binding.type.spelling()} <- {_explain_value(binding.path)}{cast}"
        )
    for rule in data.labels:
        if rule.members:
            listed = "; ".join(
                f"{label!r} if listed in {path}[{column!r}]" for path, column, label in rule.members
            )
            lines.append(
                f"   label {rule.name}: {listed}; else {rule.default!r}"
                + (f" (splits {', '.join(rule.splits)})" if rule.splits else "")
            )
            continue
        # map()'s rule (docs/language.md): a value that is no key gets the default, else it is a data error
        otherwise = (
            f"any other value -> {rule.default!r}"
            if rule.default is not None
            else "any other value is an error (no default)"
        )
        mapped = f" mapped {dict(rule.mapping)}; {otherwise}" if rule.mapping else ""
        lines.append(f"   label {rule.name} <- {_explain_value(rule.path)}{mapped}")
    for answer_rule in data.answer_labels:
        lines.append(
            f"   answer label {answer_rule.name}: {answer_rule.field} restricted by {'.'.join(answer_rule.items)}[].{answer_rule.label}"
        )
    pred = spec.predictions
    lines += ["", "2. validate predictions"]
    if pred.reader:
        lines.append(f"   reader component: {_render_call(pred.reader)}")
    else:
        lines.append(
            f"   {pred.format} records keyed by {pred.id_field!r}: "
            + ", ".join(f"{n}: {t.render()}" for n, t in pred.fields)
        )
        lines.append(
            "   every problem reported with its line number; missing ids score as empty (warning), unless a measure declares missing = ... (below)"
        )
    lines += ["", "3. normalise + 4. match"]
    if spec.score.derive:
        gives = registry.get("deriver", spec.score.derive.name).contract.fields
        lines.append(
            f"   derive: {_render_call(spec.score.derive)} -> "
            + ", ".join(f"{k}: {t.spelling()}" for k, t in gives.items())
        )
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
            + (
                f" after {' | '.join(_render_call(s) for s in match.similarity_normaliser)}"
                if match.similarity_normaliser
                else ""
            )
        )
        lines.append(f"     matcher: {_render_call(match.matcher)} -> {', '.join(match.outputs)}")
    for name, key in spec.score.flags:
        lines.append(f"   flag {name} <- submission metadata {key!r} (1 where true, else 0)")
    for value in spec.score.values:
        lines.append(f"   value {value.name} = {_render_formula(value.formula)} (per item)")
    for measure in (ms for ms in spec.score.measures if ms.formula is None):
        normalised = (
            f" after {' | '.join(_render_call(s) for s in measure.normaliser)}"
            if measure.normaliser
            else ""
        )
        what = (
            f"the scorer's {measure.value}"
            if measure.metric is None
            else f"{_render_call(measure.metric)} of gold.{measure.gold} vs prediction.{measure.prediction}{normalised}"
        )
        only = (
            " on items with " + ", ".join(f"{k} = {v!r}" for k, v in measure.where)
            if measure.where
            else ""
        )
        lines.append(f"   measure {measure.name}: {what}{only}")
        if measure.metric is not None:
            lines.append(
                "     "
                + "; ".join(
                    _render_convention(measure, spec.score, part) for part in ("missing", "invalid")
                )
            )
    lines += ["", "5. aggregate"]
    if spec.score.aggregate is not None:
        lines.append(f"   {_render_call(spec.score.aggregate)} over the scorer's per-item values")
    for measure in (ms for ms in spec.score.measures if ms.formula is None):
        rounded = (
            (f", times {measure.scale:g}" if measure.scale is not None else "")
            + (f", divided by {measure.divide_by:g}" if measure.divide_by is not None else "")
            + (f", rounded to {measure.round} digits" if measure.round is not None else "")
        )
        lines.append(
            f"   {measure.name}: aggregate = {measure.aggregate}{rounded} -> {', '.join(measure.outputs)}"
        )
    for measure in spec.score.measures:
        if measure.formula is not None:
            lines.append(f"   {measure.name} = {_render_formula(measure.formula)}")
    lines += [
        f"   metrics: {', '.join(mt.name for mt in spec.metrics)}",
        f"   primary: {spec.primary}",
    ]
    lines += ["", "6. slice"]
    for sl in spec.slices:
        how = (
            "items grouped by label"
            if sl.kind == "label"
            else "gold answers restricted by answer label, all items re-scored"
        )
        lines.append(f"   {sl.name}: {how} {sl.key!r}")
    if not spec.slices:
        lines.append("   (none)")
    return "\n".join(lines)

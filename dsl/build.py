"""Builds the typed :class:`dsl.model.TaskSpec` from a structurally checked task block.

Cross-references are resolved here (fields used by matches, normalisers by name, slices against
labels, reported values against metrics), each failure recorded on the checker with its span.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import jinja2

from dsl import model as m
from dsl import syntax as s
from runners.predictions import FieldType

if TYPE_CHECKING:
    from dsl.checker import _SpecChecker


def _str(block: s.Block, name: str, default: str = "") -> str:
    attr = block.attribute(name)
    return attr.value.value if attr is not None and isinstance(attr.value, s.Str) else default  # type: ignore[return-value]


def _text(block: s.Block, name: str) -> str:
    """Long strings are trimmed and dedented (``inspect.cleandoc``) for display."""
    return inspect.cleandoc(_str(block, name)) if block.attribute(name) else ""


def _strs(block: s.Block, name: str) -> tuple[str, ...]:
    attr = block.attribute(name)
    if attr is None or not isinstance(attr.value, s.ListExpr):
        return ()
    return tuple(i.value for i in attr.value.items if isinstance(i, s.Str))  # type: ignore[misc]


def _one(block: s.Block, type_: str) -> s.Block | None:
    found = block.blocks(type_)
    return found[0] if found else None


def build_model(task: s.Block, ck: _SpecChecker, params: dict[str, Any], path: str) -> m.TaskSpec | None:

    data_block = _one(task, "data")
    pred_block = _one(task, "predictions")
    score_block = _one(task, "score")
    assert data_block and pred_block and score_block  # structure check guarantees these

    data = _data(data_block, ck)
    predictions = _predictions(pred_block, ck)
    normalisers = _normalisers(task, ck)
    used_normalisers: set[str] = set()
    score = _score(score_block, ck, data, normalisers, used_normalisers)
    for name, (span, _) in normalisers.items():
        if name not in used_normalisers:
            ck.warn(span, f"normaliser {name!r} is never used", "refer to it from a match block or remove it")

    metrics = tuple(
        m.MetricSpec(
            name=b.labels[0] if b.labels else "?",
            display=_str(b, "display", b.labels[0] if b.labels else "?"),
            group=_str(b, "group"),
            description=_text(b, "description"),
            higher_is_better=_bool(b, "higher_is_better", True),
            percent=_bool(b, "percent", True),
        )
        for b in task.blocks("metric")
    )
    metric_names = [mt.name for mt in metrics]
    if not metrics:
        ck.error(task.span, "the task declares no metric", 'add `metric "name" { display = "..." }` for each number the aggregator returns')
    primary_attr = task.attribute("primary")
    primary = _str(task, "primary")
    if primary_attr is not None and primary not in metric_names:
        ck.unknown(primary_attr.value.span, "primary metric", primary, metric_names)
    rank_attr = task.attribute("rank_by")
    rank_by = _strs(task, "rank_by")
    for name in rank_by:
        if name not in metric_names:
            ck.unknown(rank_attr.value.span, "metric in rank_by", name, metric_names)  # type: ignore[union-attr]
    match_blocks = score_block.blocks("match")
    if match_blocks:
        # every declared output counts, also of a match block that failed to check (no cascades)
        produced = [o for b in match_blocks for o in _strs(b, "outputs")]
        for b in task.blocks("metric"):
            if b.labels and b.labels[0] not in produced and score.aggregate.name in ("mean", "sum"):
                ck.unknown(b.span, "metric (no match block outputs it)", b.labels[0], produced)

    slices = []
    label_names = [r.name for r in data.labels]
    answer_label_names = [r.name for r in data.answer_labels]
    for b in task.blocks("slice"):
        name = b.labels[0] if b.labels else "?"
        label_attr, answer_attr = b.attribute("label"), b.attribute("answer_label")
        if (label_attr is None) == (answer_attr is None):
            ck.error(b.span, f"slice {name!r} needs exactly one of `label = \"...\"` or `answer_label = \"...\"`")
            continue
        if label_attr is not None:
            key = _str(b, "label")
            if data.reader is None and key not in label_names:
                ck.unknown(label_attr.value.span, "item label", key, label_names)
            slices.append(m.SliceSpec(name, "label", key, _str(b, "display")))
        else:
            key = _str(b, "answer_label")
            if key not in answer_label_names:
                ck.unknown(answer_attr.value.span, "answer label", key, answer_label_names)  # type: ignore[union-attr]
            slices.append(m.SliceSpec(name, "answer_label", key, _str(b, "display")))

    reported = []
    for b in task.blocks("reported"):
        values_attr = b.attribute("values")
        values: list[tuple[str, float]] = []
        if values_attr is not None and isinstance(values_attr.value, s.ObjectExpr):
            for pair in values_attr.value.pairs:
                if pair.key not in metric_names:
                    ck.unknown(pair.span, "metric in reported values", pair.key, metric_names)
                elif not isinstance(pair.value, s.Num):
                    ck.error(pair.value.span, f"reported value of {pair.key!r} must be a number (a fraction, like the metric)")
                else:
                    values.append((pair.key, float(pair.value.value)))
        split = _str(b, "split")
        if split and split not in data.splits:
            ck.unknown(b.attribute("split").value.span, "split", split, list(data.splits))  # type: ignore[union-attr]
        slice_ref = _strs(b, "slice")
        if b.attribute("slice") is not None and (len(slice_ref) != 2 or slice_ref[0] not in [sl.name for sl in slices]):
            ck.error(b.attribute("slice").value.span, "slice of a reported row is [\"<slice name>\", \"<value>\"] naming a declared slice")  # type: ignore[union-attr]
        reported.append(m.ReportedRow(b.labels[0] if b.labels else "?", split, _str(b, "source"), tuple(values), tuple(slice_ref) if len(slice_ref) == 2 else None, _str(b, "note")))  # type: ignore[arg-type]

    templates = []
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    for b in task.blocks("template"):
        attr = b.attribute("text")
        text = _str(b, "text")
        try:
            env.parse(text)
        except jinja2.TemplateSyntaxError as exc:
            span = attr.value.span if attr else b.span
            line = span.line + (exc.lineno or 1) - 1
            ck.error(s.Span(line, 1 if line != span.line else span.column, line, 2), f"template {b.labels[0]!r}: {exc.message}", "Jinja2 syntax: {{ variable }}, {% if ... %}...{% endif %}")
        templates.append(m.TemplateSpec(b.labels[0] if b.labels else "?", text))

    fetch = []
    for b in task.blocks("fetch"):
        name = b.labels[0] if b.labels else "?"
        has_url, has_hub = b.attribute("url") is not None, b.attribute("hub_repo") is not None
        if has_url == has_hub:
            ck.error(b.span, f"fetch {name!r} needs exactly one origin: `url = \"...\"` or `hub_repo = \"...\"` with `hub_file`")
        if has_hub and b.attribute("hub_file") is None:
            ck.error(b.span, f"fetch {name!r} names a Hub repository but no `hub_file`")
        digest = _str(b, "sha256")
        if b.attribute("sha256") is not None and (len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest)):
            ck.error(b.attribute("sha256").value.span, "sha256 must be 64 lower-case hex digits")  # type: ignore[union-attr]
        size_attr = b.attribute("size")
        size = size_attr.value.value if size_attr is not None and isinstance(size_attr.value, s.Num) else 0
        fetch.append(m.FetchSpec(name, _str(b, "path"), digest, int(size), _str(b, "url"), _str(b, "hub_repo"), _str(b, "hub_file"), _str(b, "revision"), _str(b, "repo_type", "dataset"), _strs(b, "splits")))

    imports = []
    for b in task.blocks("import"):
        name = b.labels[0] if b.labels else "?"
        kind, field_name = _str(b, "kind"), _str(b, "field")
        known_fields = [f for f, _ in predictions.fields]
        if predictions.reader is None and field_name and field_name not in known_fields:
            ck.unknown(b.attribute("field").value.span, "prediction field", field_name, known_fields)  # type: ignore[union-attr]
        choices_attr = b.attribute("choices")
        choices = int(choices_attr.value.value) if choices_attr is not None and isinstance(choices_attr.value, s.Num) else 0
        if kind == "choice" and choices < 2:
            ck.error(b.span, f"import {name!r}: kind = \"choice\" needs `choices = N` (N >= 2)")
        if kind == "text_list" and b.attribute("separator") is None:
            ck.error(b.span, f"import {name!r}: kind = \"text_list\" needs `separator = \"...\"`")
        check_attr = b.attribute("check")
        check = ck.component(check_attr.value, "import_check") if check_attr is not None and isinstance(check_attr.value, s.Call) else None
        imports.append(m.ImportSpec(name, kind, field_name, _strs(b, "id"), _str(b, "id_type", "str"), choices, _str(b, "separator"), check, _text(b, "notes")))

    if ck.errors:
        return None
    return m.TaskSpec(
        name=task.labels[0],
        title=_str(task, "title"),
        version=_str(task, "version"),
        description=_text(task, "description"),
        citation=_text(task, "citation"),
        url=_str(task, "url"),
        license=_str(task, "license"),
        benchmark=_str(task, "benchmark"),
        extends=_str(task, "extends") or None,
        params=tuple(sorted(params.items())),
        data=data,
        predictions=predictions,
        score=score,
        metrics=metrics,
        primary=primary,
        rank_by=rank_by,
        slices=tuple(slices),
        reported=tuple(reported),
        templates=tuple(templates),
        fetch=tuple(fetch),
        imports=tuple(imports),
        path=path,
    )


def _bool(block: s.Block, name: str, default: bool) -> bool:
    attr = block.attribute(name)
    return attr.value.value if attr is not None and isinstance(attr.value, s.Bool) else default  # type: ignore[return-value]


def _data(block: s.Block, ck: _SpecChecker) -> m.DataSpec:
    splits = _strs(block, "splits")
    hidden = _strs(block, "hidden")
    for h in hidden:
        if h not in splits:
            ck.unknown(block.attribute("hidden").value.span, "hidden split", h, list(splits))  # type: ignore[union-attr]
    reader_attr = block.attribute("reader")
    reader = ck.component(reader_attr.value, "reader") if reader_attr and isinstance(reader_attr.value, s.Call) else None
    sources = tuple(
        m.Source(b.labels[0] if b.labels else "?", _str(b, "format"), _str(b, "path"), _str(b, "key") or None, _strs(b, "splits")) for b in block.blocks("source")
    )
    source_names = [src.name for src in sources]
    if reader_attr is None and not sources:
        ck.error(block.span, "the data block needs either `reader = component(...)` or at least one source block", 'e.g. source "gold" { format = "jsonl"  path = "bench/{split}.jsonl" }')
    if sources and sources[0].key is not None:
        ck.error(block.blocks("source")[0].span, "the first source is the primary one and takes no `key`", "list the source that defines the items first")
    used_sources: set[str] = set()

    def path_of(ref: s.Ref, what: str) -> tuple[str, ...]:
        if reader_attr is None and ref.parts[0] not in source_names:
            ck.unknown(ref.span, f"source in {what}", ref.parts[0], source_names)
        used_sources.add(ref.parts[0])
        return ref.parts

    id_attr = block.attribute("id")
    id_path: tuple[str, ...] = ()
    if id_attr is not None and isinstance(id_attr.value, s.Ref):
        id_path = path_of(id_attr.value, "id")
    elif id_attr is not None and isinstance(id_attr.value, s.Call) and id_attr.value.callee.dotted == "row_index" and not id_attr.value.args:
        id_path = ("#row",)  # runners.tables.ROW_INDEX
    elif id_attr is not None:
        ck.error(id_attr.value.span, "id must be a field path (e.g. gold.id) or row_index()", "row_index() numbers the primary source's records from 0")
    if reader_attr is None and not id_path:
        ck.error(block.span, "the data block needs `id = <source>.<field>` to identify items", "e.g. id = gold.id")
    fields_block = _one(block, "fields")
    fields = tuple((a.name, path_of(a.value, f"field {a.name!r}")) for a in (fields_block.attributes() if fields_block else []) if isinstance(a.value, s.Ref))
    labels = []
    labels_block = _one(block, "labels")
    for a in labels_block.attributes() if labels_block else []:
        if isinstance(a.value, s.Ref):
            labels.append(m.LabelRule(a.name, path_of(a.value, f"label {a.name!r}")))
        elif isinstance(a.value, s.Call):
            rule = _map_label(a, ck, path_of)
            if rule:
                labels.append(rule)
    answer_labels = []
    field_names = [f for f, _ in fields]
    for b in block.blocks("answer_label"):
        items_attr = b.attribute("items")
        items = path_of(items_attr.value, "answer_label items") if items_attr and isinstance(items_attr.value, s.Ref) else ()
        field_name = _str(b, "field")
        if field_name not in field_names:
            ck.unknown(b.attribute("field").value.span, "gold field", field_name, field_names)  # type: ignore[union-attr]
        answer_labels.append(m.AnswerLabelRule(b.labels[0] if b.labels else "?", field_name, items, _str(b, "text"), _str(b, "label")))
    for src in block.blocks("source"):
        if src.labels and src.labels[0] not in used_sources:
            ck.warn(src.span, f"source {src.labels[0]!r} is never used", "bind one of its fields in fields/labels or remove it")
    return m.DataSpec(splits, hidden, sources, id_path, fields, tuple(labels), tuple(answer_labels), reader)


def _map_label(attr: s.Attribute, ck: _SpecChecker, path_of: Any) -> m.LabelRule | None:
    call = attr.value
    assert isinstance(call, s.Call)
    if call.callee.dotted == "membership":
        return _membership_label(attr, call, ck)
    if call.callee.dotted != "map":
        ck.unknown(call.callee.span, "label function", call.callee.dotted, ["map", "membership"])
        return None
    if len(call.args) != 2 or not isinstance(call.args[0], s.Ref) or not isinstance(call.args[1], s.ObjectExpr):
        ck.error(call.span, "map() takes a field path and an object of value = label pairs", 'e.g. map(meta.topic, { Health = "unseen" }, default = "seen")')
        return None
    mapping = []
    for pair in call.args[1].pairs:
        if not isinstance(pair.value, s.Str):
            ck.error(pair.value.span, "map() labels must be strings")
            return None
        mapping.append((pair.key, pair.value.value))
    default = None
    for kw in call.kwargs:
        if kw.name != "default" or not isinstance(kw.value, s.Str):
            ck.error(kw.span, "map() takes only `default = \"label\"`")
            return None
        default = kw.value.value
    return m.LabelRule(attr.name, path_of(call.args[0], f"label {attr.name!r}"), tuple(mapping), default)


def _membership_label(attr: s.Attribute, call: s.Call, ck: _SpecChecker) -> m.LabelRule | None:
    usage = 'e.g. membership([{ path = "x/{split}_strong.csv", column = "id", label = "strong" }], default = "other", splits = ["test"])'
    if len(call.args) != 1 or not isinstance(call.args[0], s.ListExpr):
        ck.error(call.span, "membership() takes one list of { path, column, label } objects", usage)
        return None
    members = []
    for entry in call.args[0].items:
        fields = {p.key: p.value for p in entry.pairs} if isinstance(entry, s.ObjectExpr) else {}
        if set(fields) != {"path", "column", "label"} or not all(isinstance(v, s.Str) for v in fields.values()):
            ck.error(entry.span, "each membership entry is { path = \"...\", column = \"...\", label = \"...\" } (strings)", usage)
            return None
        members.append((fields["path"].value, fields["column"].value, fields["label"].value))  # type: ignore[union-attr]
    default, splits = None, ()
    for kw in call.kwargs:
        if kw.name == "default" and isinstance(kw.value, s.Str):
            default = kw.value.value
        elif kw.name == "splits" and isinstance(kw.value, s.ListExpr) and all(isinstance(i, s.Str) for i in kw.value.items):
            splits = tuple(i.value for i in kw.value.items)  # type: ignore[union-attr]
        else:
            ck.error(kw.span, "membership() takes `default = \"label\"` and `splits = [\"...\"]`", usage)
            return None
    return m.LabelRule(attr.name, (), (), default, tuple(members), splits)


def _type(expr: s.Expr, ck: _SpecChecker) -> FieldType | None:
    from dsl.checker import SCALAR_TYPES, literal

    if isinstance(expr, s.Ref) and len(expr.parts) == 1 and expr.parts[0] in SCALAR_TYPES:
        return FieldType(expr.parts[0])
    if isinstance(expr, s.Call) and expr.callee.dotted in ("list", "optional") and len(expr.args) == 1 and not expr.kwargs:
        inner = _type(expr.args[0], ck)
        return FieldType(expr.callee.dotted, inner) if inner else None
    if isinstance(expr, s.Call) and expr.callee.dotted == "enum" and expr.args and all(isinstance(a, (s.Str, s.Num, s.Bool)) for a in expr.args):
        return FieldType("enum", values=tuple(literal(a) for a in expr.args))
    name = expr.callee.dotted if isinstance(expr, s.Call) else expr.dotted if isinstance(expr, s.Ref) else "?"
    ck.unknown(expr.span, "type", name, [*SCALAR_TYPES, "list(T)", "optional(T)", "enum(v1, v2, ...)"])
    return None


def _predictions(block: s.Block, ck: _SpecChecker) -> m.PredictionSpec:
    fmt = _str(block, "format")
    reader_attr = block.attribute("reader")
    reader = ck.component(reader_attr.value, "predictions") if reader_attr and isinstance(reader_attr.value, s.Call) else None
    schema = _one(block, "schema")
    fields = []
    for a in schema.attributes() if schema else []:
        t = _type(a.value, ck)
        if t:
            fields.append((a.name, t))
    id_field = _str(block, "id", "id")
    if reader_attr is None:
        if fmt == "custom":
            ck.error(block.span, 'format = "custom" needs `reader = component(...)`')
        if not fields:
            ck.error(block.span, "the predictions block needs a schema block (or a reader component)", "e.g. schema { id = str  answers = list(str) }")
        elif id_field not in [f for f, _ in fields]:
            ck.unknown(block.attribute("id").value.span if block.attribute("id") else block.span, "id field", id_field, [f for f, _ in fields])  # type: ignore[union-attr]
    return m.PredictionSpec(fmt, id_field, tuple(fields), reader, _strs(block, "extensions"))


def _normalisers(task: s.Block, ck: _SpecChecker) -> dict[str, tuple[s.Span, tuple[m.ComponentCall, ...]]]:
    out: dict[str, tuple[s.Span, tuple[m.ComponentCall, ...]]] = {}
    for b in task.blocks("normaliser"):
        steps_attr = b.attribute("steps")
        steps = []
        if steps_attr and isinstance(steps_attr.value, s.ListExpr):
            for item in steps_attr.value.items:
                if isinstance(item, s.Call):
                    call = ck.component(item, "normaliser")
                    if call:
                        steps.append(call)
        out[b.labels[0] if b.labels else "?"] = (b.span, tuple(steps))
    return out


def _score(block: s.Block, ck: _SpecChecker, data: m.DataSpec, normalisers: dict[str, Any], used: set[str]) -> m.ScoreSpec:
    agg_attr = block.attribute("aggregate")
    aggregate = ck.component(agg_attr.value, "aggregator") if agg_attr and isinstance(agg_attr.value, s.Call) else None
    scorer_attr = block.attribute("scorer")
    scorer = ck.component(scorer_attr.value, "scorer") if scorer_attr and isinstance(scorer_attr.value, s.Call) else None
    metadata: list[tuple[str, str]] = []
    meta_attr = block.attribute("metadata")
    if meta_attr is not None and isinstance(meta_attr.value, s.ObjectExpr):
        for pair in meta_attr.value.pairs:
            if not isinstance(pair.value, s.Str):
                ck.error(pair.value.span, "metadata maps a scorer parameter to a submission metadata key (a string)")
            else:
                metadata.append((pair.key, pair.value.value))
    field_names = [f for f, _ in data.fields]
    matches = []
    for b in block.blocks("match"):
        def ref_name(attr_name: str, known: list[str], what: str) -> str:
            attr = b.attribute(attr_name)
            if attr is None or not isinstance(attr.value, s.Ref):
                return ""
            name = attr.value.dotted
            if known is not None and name not in known:
                ck.unknown(attr.value.span, what, name, known)
            return name

        gold = ref_name("gold", field_names if data.reader is None else None, "gold field")  # type: ignore[arg-type]
        prediction = ref_name("prediction", None, "prediction field")  # type: ignore[arg-type]
        norm = ref_name("normaliser", list(normalisers), "normaliser")
        sim_norm = ref_name("similarity_normaliser", list(normalisers), "normaliser")
        used.update(n for n in (norm, sim_norm) if n)
        sim_attr, matcher_attr, filters_attr = b.attribute("similarity"), b.attribute("matcher"), b.attribute("filters")
        similarity = ck.component(sim_attr.value, "similarity") if sim_attr and isinstance(sim_attr.value, s.Call) else None
        matcher = ck.component(matcher_attr.value, "matcher") if matcher_attr and isinstance(matcher_attr.value, s.Call) else None
        filters = []
        if filters_attr and isinstance(filters_attr.value, s.ListExpr):
            for item in filters_attr.value.items:
                if isinstance(item, s.Call):
                    f = ck.component(item, "filter")
                    if f:
                        filters.append(f)
        outputs = _strs(b, "outputs")
        if b.attribute("outputs") is not None and len(outputs) != 3:
            ck.error(b.attribute("outputs").value.span, "outputs names the three per-item values [precision, recall, f1]", 'e.g. outputs = ["exact_p", "exact_r", "exact_f1"]')  # type: ignore[union-attr]
        if similarity and matcher and len(outputs) == 3:
            matches.append(
                m.MatchSpec(
                    b.labels[0] if b.labels else "?",
                    gold,
                    prediction,
                    similarity,
                    matcher,
                    tuple(filters),
                    normalisers[norm][1] if norm in normalisers else (),
                    normalisers[sim_norm][1] if sim_norm in normalisers else (),
                    outputs,  # type: ignore[arg-type]
                )
            )
    if scorer is None and not block.blocks("match"):
        ck.error(block.span, "the score block needs `scorer = component(...)` or at least one match block")
    if scorer is not None and block.blocks("match"):
        ck.error(block.span, "a score block uses either a scorer component or match blocks, not both")
    if aggregate is None:
        aggregate = m.ComponentCall("aggregator", "mean")
    return m.ScoreSpec(aggregate, scorer, tuple(matches), tuple(metadata))

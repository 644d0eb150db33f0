"""The types that flow from the records into what compares them: match pipelines, records' members, align blocks,
similarities, derivers, field_match, per-item values and templates."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.checker_state import CheckerState
from procbench.runners.runtime import registry
from procbench.runners.metrics._derived import formula_names
from procbench.runners.runtime.predictions import FieldType

LIST_OF_TEXT = FieldType("list", FieldType("str"))
TEXT = FieldType("str")


def with_defaults(call: m.ComponentCall) -> dict[str, Any]:
    comp = registry.get(call.kind, call.name)
    return {**{p.name: p.default for p in comp.params if not p.required}, **call.kwargs_dict()}


def check_flow(
    ck: CheckerState,
    match: m.MatchSpec,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
) -> None:
    """The types along a match block: list fields → filters → normalisers → similarity → matcher."""
    matcher = registry.get("matcher", match.matcher.name).contract
    wanted = matcher.takes or LIST_OF_TEXT
    for side, name, fields, part in (
        ("gold", match.gold, gold, "gold"),
        ("prediction", match.prediction, pred, "prediction"),
    ):
        ftype = fields.get(name)
        if (
            side,
            name,
        ) in ck.flow_reported:  # several match blocks share the field (defaults): one error
            continue
        if ftype is not None and not ftype.fits(wanted):
            ck.flow_reported.add((side, name))
            ck.error(
                m.span_of(match, part),
                f"match {match.name!r}: {side} field {name!r} is {ftype.spelling()}, but {match.matcher.name}() matches {wanted.spelling()}",
                "match blocks compare lists of answers; for a single value use a scorer such as field_match()",
            )
    for f in match.filters:
        takes = registry.get("filter", f.name).contract.takes
        if takes is not None and not LIST_OF_TEXT.fits(takes):
            ck.error(
                m.span_of(f),
                f"filter {f.name}() takes {takes.spelling()}, not the answer list (list(str))",
            )
    for steps, part in (
        (match.normaliser, "normaliser"),
        (match.similarity_normaliser, "similarity_normaliser"),
    ):
        for step in steps:
            contract = registry.get("normaliser", step.name).contract
            if contract.gives is not None and not contract.gives.fits(TEXT):
                ck.error(
                    m.span_of(match, part),
                    f"normaliser step {step.name}() gives {contract.gives.spelling()}, but an answer must stay text",
                    "split_on() belongs in prediction parsing, not in a match normaliser",
                )
    # an unknown gold field is reported where it is named; the answers' type then comes from the other side, or is not
    # guessed at all (one mistake, one error: a guessed str would also fail a record similarity)
    ftype = gold.get(match.gold) or pred.get(match.prediction)
    if ftype is None:
        return
    answer = ftype.item if ftype.kind == "list" and ftype.item is not None else TEXT
    _check_similarity(
        ck, match.similarity, answer, m.span_of(match, "similarity"), f"match {match.name!r}"
    )


def _member_type(record: FieldType, path: str) -> FieldType | None:
    """The type of a dotted member path of a record type (through optional records); None where a step is missing."""
    current: FieldType | None = record
    for name in path.split("."):
        while current is not None and current.kind == "optional" and current.item is not None:
            current = current.item
        if current is None or current.kind != "record":
            return None
        current = current.members().get(name)
    return current


def _unwrapped(ftype: FieldType) -> FieldType:
    while ftype.kind == "optional" and ftype.item is not None:
        ftype = ftype.item
    return ftype


def _check_members(
    ck: CheckerState, record: FieldType, paths: Sequence[str], span: s.Span, where: str
) -> bool:
    ok = True
    for path in paths:
        if _member_type(record, path) is None:
            members = (
                list(_unwrapped(record).members()) if _unwrapped(record).kind == "record" else []
            )
            ck.unknown(span, f"member of the records {where} compares", path, members)
            ok = False
    return ok


def _check_composed(
    ck: CheckerState, call: m.ComponentCall, answer: FieldType, span: s.Span, where: str
) -> bool:
    """Types along a composed similarity (on_field, cases, all_of, at_least, one); False when ``call`` is not one."""
    args = dict(call.kwargs)
    if call.name == "one":
        return True
    own = call.at.get("") if call.at else None
    if (
        own is not None and own != s.NOWHERE
    ):  # written in a similarity block: report there, once, whichever use reached it
        span, where = own, "the similarity written here"
    if call.name == "at_least":
        _check_similarity(ck, args["similarity"], answer, span, where)
        return True
    if call.name not in ("on_field", "cases", "all_of"):
        return False
    if _unwrapped(answer).kind != "record":
        ck.error(
            span,
            f"{where}: a record similarity ({call.name.replace('_', ' ')}) compares records, but the answers are {answer.spelling()}",
            "use a text similarity",
        )
        return True
    if call.name == "on_field":
        member = _member_type(answer, args["field"])
        if member is None:
            _check_members(ck, answer, [args["field"]], span, where)
        else:
            _check_similarity(
                ck,
                args["similarity"],
                _unwrapped(member),
                span,
                f"{where}, member {args['field']!r}",
            )
        return True
    if not _check_members(
        ck, answer, [*args["same"], *([args["field"]] if call.name == "cases" else [])], span, where
    ):
        return True
    if call.name == "cases":
        chooser = _unwrapped(_member_type(answer, args["field"]) or FieldType("any"))
        when_span = call.at.get("when", span) if own is not None and own != s.NOWHERE else span
        for value, part in args["when"]:
            if chooser.kind == "enum" and value not in chooser.values:
                ck.unknown(
                    when_span,
                    f"value of {args['field']!r} in when",
                    value,
                    [str(v) for v in chooser.values],
                )
            _check_similarity(ck, part, answer, span, f"{where}, when {value}")
        _check_similarity(ck, args["otherwise"], answer, span, f"{where}, otherwise")
    else:
        for part in args["parts"]:
            _check_similarity(ck, part, answer, span, where)
    return True


def check_item_values(
    ck: CheckerState, score: m.ScoreSpec, emitted: Sequence[str]
) -> tuple[str, ...]:
    """Per-item formulas read the scorer's values, the flags and values computed before them; they add their names."""
    known = [*emitted]
    flags = [name for name, _ in score.flags]
    if score.values and score.scorer is None and not score.aligns and not score.matches:
        ck.error(
            m.span_of(score, "values"),
            "a value block computes from the per-item values of a scorer, match or align blocks",
        )
    for name in flags:
        if name in emitted:
            ck.error(
                m.span_of(score, "flags"),
                f"flag {name!r} has the name of a per-item value",
                "give the flag another name",
            )
    for value in score.values:
        if (
            value.name in known or value.name in flags
        ):  # a value named like a flag would hide it from later formulas
            ck.error(
                m.span_of(value),
                f"value {value.name!r} is already a per-item value or flag",
                "give it another name",
            )
            continue
        for name in formula_names(value.formula):
            if name not in known and name not in flags:
                ck.unknown(
                    m.span_of(value, "formula"),
                    f"per-item value or flag in value {value.name!r}",
                    name,
                    [*known, *flags],
                )
        known.append(value.name)
    return tuple(v.name for v in score.values)


def check_aligns(
    ck: CheckerState,
    aligns: Sequence[m.AlignSpec],
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
) -> tuple[tuple[m.AlignSpec, ...], tuple[str, ...], frozenset[str]]:
    """Types along each align block, its counts' kinds filled in from the enums, and the per-item values it writes.

    Also the names of the count blocks of an align block with an error: what measures read from them is not
    reported again (one mistake, one error).
    """
    checked: list[m.AlignSpec] = []
    keys: list[str] = []
    unsettled: set[str] = set()
    for align in aligns:
        errors_before, checked_before = len(ck.errors), len(checked)
        _check_align(ck, align, gold, pred, keys, checked)
        if (
            len(ck.errors) > errors_before or len(checked) == checked_before
        ):  # not checked: an unknown field, reported later
            unsettled.update(count.name for count in align.counts)
    return tuple(checked), tuple(keys), frozenset(unsettled)


def _check_align(
    ck: CheckerState,
    align: m.AlignSpec,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
    keys: list[str],
    checked: list[m.AlignSpec],
) -> None:
    """One align block: its checked form appended to ``checked``, the values it writes to ``keys``."""
    where = f"align {align.name!r}"
    line = _align_lines(ck, align, gold, pred, where)
    if line is None:
        return
    _check_members(ck, line, [align.on], m.span_of(align, "on"), where)
    if align.where:
        _check_members(ck, line, [align.where], m.span_of(align, "where"), where)
    on_type = _member_type(line, align.on)
    if on_type is not None:
        _check_similarity(
            ck,
            align.similarity,
            _unwrapped(on_type),
            m.span_of(align, "similarity"),
            f"{where}, aligned on {align.on!r}",
        )
    entity_types = _align_entities(ck, align, line, where)
    counts = []
    for count in align.counts:
        cwhere = f"{where}, count {count.name!r}"
        if count.of is not None and count.of not in entity_types:
            if not any(
                e.name == count.of for e in align.entities
            ):  # else declared, with its error reported there
                ck.unknown(m.span_of(count, "of"), "entities block", count.of, list(entity_types))
            continue
        record = entity_types[count.of] if count.of is not None else line
        kinds = _count_kinds(ck, count, record, cwhere)
        if kinds is None:
            continue
        _check_count_stats(ck, count, record, cwhere)
        written = [
            f"{count.name}.{kind}.{side}_{stat}"
            for side in ("p", "r")
            for kind in kinds
            for stat, _ in count.stats
        ]
        repeated = sorted(set(written) & set(keys))
        if repeated:
            ck.error(
                m.span_of(count),
                f"{cwhere} writes {repeated[0]!r}, which another count block writes too",
                "give it other kinds or stats, or another name",
            )
        keys += written
        counts.append(replace(count, kinds=tuple(kinds)))
    keys += [f"{align.name}.{side}_aligned" for side in ("p", "r")]
    checked.append(replace(align, counts=tuple(counts)))


def _align_lines(
    ck: CheckerState,
    align: m.AlignSpec,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
    where: str,
) -> FieldType | None:
    """The record type of the lines an align block walks: lists of records of one type on both sides."""
    gold_type, pred_type = gold.get(align.gold), pred.get(align.prediction)
    lines = []
    for side, name, ftype in (
        ("gold", align.gold, gold_type),
        ("prediction", align.prediction, pred_type),
    ):
        if ftype is None:
            continue  # an unknown field is reported where it is written
        if ftype.kind != "list" or ftype.item is None or _unwrapped(ftype.item).kind != "record":
            ck.error(
                m.span_of(align, side),
                f"{where}: {side} field {name!r} is {ftype.spelling()}; an align block walks lists of records",
                "a deriver gives lines as list(record(...))",
            )
            continue
        lines.append(ftype.item)
    if len(lines) != 2:
        return None
    if lines[0] != lines[1]:
        ck.error(
            m.span_of(align),
            f"{where}: the gold lines are {lines[0].spelling()} but the predicted ones {lines[1].spelling()}",
        )
        return None
    return lines[0]


def _align_entities(
    ck: CheckerState, align: m.AlignSpec, line: FieldType, where: str
) -> dict[str, FieldType]:
    """Each entities block checked: the record type of its places, by its name."""
    entity_types: dict[str, FieldType] = {}
    for entities in align.entities:
        ewhere = f"{where}, entities {entities.name!r}"
        if not _check_members(ck, line, entities.places, m.span_of(entities, "places"), ewhere):
            continue
        places = {
            _unwrapped(member)
            for member in (_member_type(line, p) for p in entities.places)
            if member is not None
        }
        if len(places) != 1 or next(iter(places)).kind != "record":
            ck.error(
                m.span_of(entities, "places"),
                f"{ewhere}: the places must hold records of one type, got {', '.join(sorted(t.spelling() for t in places))}",
            )
            continue
        entity = next(iter(places))
        entity_types[entities.name] = entity
        _check_members(ck, entity, entities.same, m.span_of(entities, "same"), ewhere)
        _check_similarity(
            ck, entities.identity, entity, m.span_of(entities, "identity"), f"{ewhere}, identity"
        )
        _check_similarity(
            ck, entities.until, entity, m.span_of(entities, "until"), f"{ewhere}, until"
        )
    return entity_types


def _count_kinds(
    ck: CheckerState, count: m.CountSpec, record: FieldType, cwhere: str
) -> tuple[str, ...] | None:
    """The kinds a count block counts: those it names, else the values of its ``by`` member's enum (None: an error)."""
    by_known = _check_members(ck, record, [count.by], m.span_of(count, "by"), cwhere)
    if not (
        by_known
        and (
            not count.where
            or _check_members(ck, record, [count.where], m.span_of(count, "where"), cwhere)
        )
    ):
        return None
    by_type = _unwrapped(_member_type(record, count.by) or FieldType("any"))
    enum_values = tuple(str(v) for v in by_type.values) if by_type.kind == "enum" else ()
    kinds = tuple(count.kinds or enum_values)
    if not kinds:
        ck.error(
            m.span_of(count, "by"),
            f"{cwhere}: {count.by!r} is {by_type.spelling()}; name the kinds counted",
            "kinds = [a, b], or give the member an enum type",
        )
        return None
    for kind in kinds:
        if enum_values and kind not in enum_values:
            ck.unknown(m.span_of(count, "kinds"), f"value of {count.by!r}", kind, list(enum_values))
    return kinds


def _check_count_stats(
    ck: CheckerState, count: m.CountSpec, record: FieldType, cwhere: str
) -> None:
    """A count block counts something; best() only over entities; each stat's similarity fits the record."""
    if not count.stats:
        ck.error(
            m.span_of(count),
            f"{cwhere} counts nothing",
            "stats { total = 1  correct = node_strict }",
        )
    for stat, (source, sim) in count.stats:
        if source == "best" and count.of is None:
            ck.error(
                m.span_of(count, "stats"),
                f"{cwhere}, stat {stat!r}: best() keeps an entity's best score; lines are compared once",
                f"write `{stat} = <similarity>`",
            )
        if sim is not None:
            _check_similarity(
                ck, sim, record, m.span_of(count, "stats"), f"{cwhere}, stat {stat!r}"
            )


def _check_similarity(
    ck: CheckerState, call: m.ComponentCall, answer: FieldType, span: s.Span, where: str
) -> None:
    """The similarity compares what the answers are: text, or records whose fields its parts name."""
    if _check_composed(ck, call, answer, span, where):
        return
    if call.name == "record_mean":
        args = dict(call.kwargs)
        members = answer.members()
        if answer.kind != "record":
            ck.error(
                span,
                f"{where}: a record similarity (same/mean) compares records, but the answers are {answer.spelling()}",
                "use a text similarity",
            )
            return
        for name in (*args.get("same", ()), *(field for field, _ in args.get("parts", ()))):
            if name not in members:
                ck.unknown(span, f"field of the records {where} compares", name, list(members))
        for field, part in args.get("parts", ()):
            if field in members:
                _check_similarity(ck, part, members[field], span, f"{where}, field {field!r}")
        return
    takes = registry.get("similarity", call.name).contract.takes
    if takes is not None and not answer.fits(takes):
        message = f"{where}: similarity {call.name}() compares {takes.spelling()}, but the answers are {answer.spelling()}"
        if (
            (
                "similarity type",
                span,
                message,
            )
            not in ck.similarity_types_reported
        ):  # one mistake, one error: a block is reached from many uses
            ck.similarity_types_reported.add(("similarity type", span, message))
            ck.error(span, message)


def check_derive(
    ck: CheckerState,
    call: m.ComponentCall,
    span: s.Span,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
) -> dict[str, FieldType]:
    """The deriver reads fields of the records (``needs``: both; ``gold_needs`` / ``prediction_needs``: one); it gives what the score block compares."""
    contract = registry.get("deriver", call.name).contract
    for side, fields, own in (
        ("gold", gold, contract.gold_needs),
        ("prediction", pred, contract.prediction_needs),
    ):
        for name, wanted in {**contract.needs, **own}.items():
            have = fields.get(name)
            if have is None:
                ck.error(
                    span,
                    f"{call.name}() reads field {name!r}, which the {side} records do not have",
                    f"the {side} fields: {', '.join(fields) or 'none'}",
                )
            elif not have.fits(wanted):
                ck.error(
                    span,
                    f"{call.name}() reads field {name!r} as {wanted.spelling()}, but the {side} records give {have.spelling()}",
                )
    return dict(contract.fields)


def _comparable(ftype: FieldType) -> FieldType:
    """The type a value is compared as: optional(T) as T, an enum of text as str."""
    if ftype.kind == "optional" and ftype.item is not None:
        return _comparable(ftype.item)
    if ftype.kind == "enum" and all(isinstance(v, str) for v in ftype.values):
        return TEXT
    return ftype


def check_field_match(
    ck: CheckerState,
    call: m.ComponentCall,
    gold: Mapping[str, FieldType],
    pred: Mapping[str, FieldType],
) -> None:
    """field_match() compares the two fields' values as text: fields of different types would never (or wrongly) match."""
    args = with_defaults(call)
    gold_type, pred_type = gold.get(args["gold_field"]), pred.get(args["prediction_field"])
    if gold_type is None or pred_type is None or "any" in (gold_type.kind, pred_type.kind):
        return  # an unknown name is reported where it is written
    g, p = (
        ft.item if ft.kind == "optional" and ft.item is not None else ft
        for ft in (gold_type, pred_type)
    )
    if g.kind == p.kind == "enum" and {str(v) for v in g.values} == {str(v) for v in p.values}:
        return  # two enums whose values read the same as text: enum("0", "1") and enum(0, 1)
    if _comparable(g) == _comparable(p):
        return
    ck.error(
        m.span_of(call),
        f"field_match(): gold field {args['gold_field']!r} is {gold_type.spelling()}, "
        f"prediction field {args['prediction_field']!r} is {pred_type.spelling()}",
        'they are compared as text (1 and "1.0" differ, "03" and 3 too): declare both with one type, or both as enums of the same values',
    )


def check_templates(spec: m.TaskSpec, ck: CheckerState) -> None:
    """Templates are looked up by name at run time (procbench.runners.runtime.templates): the name must be one that is, its variables ones it gets.

    A spec is untrusted: a template is parsed by the sandbox that renders it, and may access attributes or items
    of the variables it is given only (no ``cycler.__init__.__globals__``, no ``_`` names, no include/import).
    """
    import jinja2
    from jinja2 import meta

    from procbench.runners.runtime.template_limits import filter_problems
    from procbench.runners.runtime.templates import KNOWN, access_problems, environment

    env = environment()
    for t in spec.templates:
        use = KNOWN.get(t.name)
        if use is None:
            known = ", ".join(f"{k} ({u.purpose})" for k, u in sorted(KNOWN.items()))
            close = difflib.get_close_matches(t.name, list(KNOWN), n=1)
            ck.error(
                m.span_of(t, "<label>"),
                f"unknown template {t.name!r}: nothing looks up a template of that name",
                (f"did you mean {close[0]!r}? " if close else "") + f"known templates: {known}",
            )
            continue
        try:
            parsed = env.parse(t.text)
        except jinja2.TemplateSyntaxError as exc:
            span = m.span_of(t, "text")
            line = span.line + (exc.lineno or 1) - 1
            ck.error(
                s.Span(line, 1 if line != span.line else span.column, line, 2),
                f"template {t.name!r}: {exc.message}",
                "Jinja2 syntax: {{ variable }}, {% if ... %}...{% endif %}",
            )
            continue
        try:
            undeclared = meta.find_undeclared_variables(parsed)
        except (
            jinja2.TemplateAssertionError
        ):  # an unknown filter or test: filter_problems reports it at its place
            undeclared = set()
        for name in sorted(undeclared - set(use.variables)):
            close = difflib.get_close_matches(name, use.variables, n=1)
            ck.error(
                m.span_of(t, "text"),
                f"template {t.name!r} uses the variable {name!r}, which it is not given",
                (f"did you mean {close[0]!r}? " if close else "")
                + f"{t.name} gets: {', '.join(use.variables)}",
            )
        span = m.span_of(t, "text")
        source_lines = ck.source.splitlines()
        access_hint = "use {{ variable }}, filters and {% if %}/{% for %} over the variables; nothing else is reachable"
        limits_hint = "the sandbox refuses this at render: name attributes, filters and tests as text, within the limits of docs/submissions.md"
        found_problems = [
            (*problem, access_hint) for problem in access_problems(parsed, use.variables)
        ]
        found_problems += [(*problem, limits_hint) for problem in filter_problems(parsed)]
        for lineno, what, message, hint in sorted(found_problems, key=lambda problem: problem[0]):
            line = (
                span.line + lineno - 1
            )  # exact for a """long string""", whose lines are the spec's
            start = span.column - 1 if line == span.line else 0
            found = (
                source_lines[line - 1].find(what, start) if 0 < line <= len(source_lines) else -1
            )
            column = found + 1 if found >= 0 else start + 1
            ck.error(
                s.Span(line, column, line, column + max(len(what), 1)),
                f"template {t.name!r}: {message}",
                hint,
            )

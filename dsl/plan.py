"""A compiled runner's *plan*, and the one place a runner is built: :func:`build` (plan -> runner).

``procbench.dsl.compiler.plan_of`` writes down, as plain data, every runtime component a checked spec wires and
its arguments (readers, match, measure and align stages, the scorer, per-item values and flags, the
deriver, the aggregator, formulas, slices) and ``compile_spec`` is ``build(plan_of(spec, digest))``: there is no other way a spec
becomes a runner.  ``procbench score`` with the spec cache warm needs only the runner, not the spec: it
rebuilds it from the cached plan, importing the component modules the task uses and none of the spec
language (the model's, syntax tree's and errors' dataclasses, the compiler, Lark), which cost a score
from the cache more than reading and scoring ProPara does (issue #19).  This module imports none of it.

A plan holds only tuples, lists, dicts, text, numbers, booleans and None (:func:`is_plain`); dsl/cache.py
stores it beside the checked spec under the same key and reads it back with an unpickler that builds
nothing else, so a damaged or planted plan is a miss, never code that runs.  Its parts:

* a built component (``Component.build``, a similarity, matcher, metric...): :func:`call_node` of its
  kind, name and argument nodes; an argument is ``("value", literal)``, ``("list", nodes)``, a call or
  ``("pipeline", step calls, step names)`` (a normaliser's steps);
* a bound component (``Component.bind``: readers, scorers, aggregators, derivers): ``(kind, name, kwargs)``;
* a value type (:class:`procbench.runners.runtime.predictions.FieldType`): :func:`type_node`;
* formulas (per-item ``value`` blocks, derived metrics): the checker's tuples of names, numbers and calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procbench.runners.runtime.predictions import FieldType
    from procbench.runners.runtime.runner import TaskRunner

FORMAT = 2  # bump when a plan's shape changes: older plans are then a miss
_PLAIN = (str, int, float, bool, type(None))

Node = tuple[Any, ...]
Bound = tuple[str, str, dict[str, Any]]


def is_plain(value: Any) -> bool:
    """Only builtin containers and scalars, nothing a spec value could hide a class in."""
    if isinstance(value, _PLAIN) and type(value) in _PLAIN:
        return True
    if type(value) in (tuple, list):
        return all(is_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and is_plain(v) for k, v in value.items())
    return False


# -- the nodes, written by procbench.dsl.compiler --------------------------------------------------------------
def call_node(kind: str, name: str, arguments: Sequence[tuple[str, Node]]) -> Node:
    """A component built from argument nodes (``Component.build``)."""
    return ("call", kind, name, tuple(arguments))


def type_node(field_type: FieldType) -> Node:
    """A value type as plain data (a record's members and a list's item type nested)."""
    members = (
        tuple((name, type_node(t)) for name, t in field_type.values)
        if field_type.kind == "record"
        else tuple(field_type.values)
    )
    return (
        field_type.kind,
        None if field_type.item is None else type_node(field_type.item),
        members,
    )


# -- the data paths a plan reads (checked like a spec's: a cached plan is untrusted input) -------------
class UnsafePlan(ValueError):
    """A plan that would read data from outside the data root (a planted cache entry: the checker never makes one)."""


def path_problems(plan: Mapping[str, Any]) -> list[str]:
    """Why the data paths of a plan's table reader could leave the data root, as the checker says it of a spec's
    (``procbench.runners.runtime.paths.relative_path_problems``), and any ``{...}`` in them other than ``{split}``; [] for a sound plan."""
    # string.Formatter().parse is this function: the string module (a regular expression compiled for its
    # Template) is not imported by a score for it (issue #31)
    from _string import formatter_parser

    from procbench.runners.runtime.paths import relative_path_problems

    gold = plan.get("gold")
    if not (
        isinstance(gold, (tuple, list))
        and len(gold) == 2
        and gold[0] == "table"
        and isinstance(gold[1], Mapping)
    ):
        return []  # a reader component reads its own files (its code, not the plan, names them)
    table = gold[1]
    named: list[tuple[str, Any]] = []
    for source in table.get("sources") or ():
        named.append((f"source {source[0]!r}: path", source[2]))
    for label in table.get("labels") or ():
        named.extend((f"label {label[0]!r}: membership path", member[0]) for member in label[4])
    problems = []
    for what, value in named:
        if not isinstance(value, str):
            problems.append(f"{what} is {type(value).__name__}, not a path")
            continue
        try:
            fields = {field for _, field, _, _ in formatter_parser(value) if field is not None}
        except ValueError as exc:
            problems.append(f"{what} {value!r}: {exc}")
            continue
        if fields - {"split"}:
            problems.append(f"{what} {value!r} has a placeholder other than {{split}}")
            continue
        problems.extend(relative_path_problems(what, value.replace("{split}", "split")))
    return problems


# -- plan -> runner (on a hit: only the task's component modules are imported) -------------------------
def build(plan: Mapping[str, Any]) -> TaskRunner:
    """The runner of the spec the plan was made of (``procbench.dsl.compiler.compile_spec``); UnsafePlan when a data path of the
    plan could leave the data root (the runtime checks each resolved path again when it opens it)."""
    from procbench.runners.runtime.runner import SliceDef, TaskRunner

    problems = path_problems(plan)
    if problems:
        raise UnsafePlan(
            f"the plan of task {plan.get('name')!r} reads outside the data root: {problems[0]}"
        )

    make_scorer, aggregate = _scoring(plan)
    if plan["formulas"]:
        from procbench.runners.metrics import with_derived

        aggregate = with_derived(aggregate, plan["formulas"])
    return TaskRunner(
        name=plan["name"],
        splits=plan["splits"],
        hidden_splits=plan["hidden"],
        metric_names=plan["metric_names"],
        primary=plan["primary"],
        read_gold=_gold_reader(plan["gold"]),
        read_predictions=_prediction_reader(plan["predictions"]),
        make_scorer=make_scorer,
        aggregate=aggregate,
        slices=tuple(SliceDef(*s) for s in plan["slices"]),
        spec_digest=plan["digest"],
    )


def build_node(node: Node) -> Any:
    """The runtime object of a call node (a similarity, matcher, normaliser step, metric...)."""
    _, kind, name, arguments = node
    return _component(kind, name).build(**{k: _argument(v) for k, v in arguments})


def _component(kind: str, name: str) -> Any:
    from procbench.runners.runtime import registry

    return registry.get(kind, name)


def _bind(bound: Bound) -> Any:
    kind, name, kwargs = bound
    return _component(kind, name).bind(**kwargs)


def _argument(node: Node) -> Any:
    """An argument as the component takes it: nested calls built, a normaliser's steps as one pipeline."""
    if node[0] == "call":
        return build_node(node)
    if node[0] == "pipeline":
        return _pipeline(node)
    if node[0] == "list":
        return [_argument(v) for v in node[1]]
    return node[1]


def _pipeline(node: Node) -> Any:
    from procbench.runners.library.text import Pipeline

    _, steps, names = node
    return Pipeline.of([build_node(s) for s in steps], list(names))


def _field_type(node: Node) -> FieldType:
    from procbench.runners.runtime.predictions import FieldType

    kind, item, members = node
    values = (
        tuple((name, _field_type(t)) for name, t in members) if kind == "record" else tuple(members)
    )
    return FieldType(kind, None if item is None else _field_type(item), values)


# -- reading ----------------------------------------------------------------------------------------
def _gold_reader(gold: Node) -> Any:
    how, what = gold
    return _contract_checked(what) if how == "reader" else _table_reader(what)


def _contract_checked(bound: Bound) -> Any:
    """A reader component whose gold is checked against its declared contract before anyone scores it."""
    from procbench.runners.runtime.contracts import check_gold_against_contract

    _, name, kwargs = bound
    comp = _component("reader", name)
    read = comp.bind(**kwargs)
    source = f"reader {name}"

    def reader(data_root: Any, split: str) -> Any:
        gold = read(data_root, split)
        check_gold_against_contract(gold, comp.contract.fields, comp.contract.labels, source)
        return gold

    return reader


def _table_reader(table: Mapping[str, Any]) -> Any:
    from procbench.runners.runtime.tables import (
        AnswerLabel,
        Explode,
        ItemLabel,
        Membership,
        TableReader,
        TableSource,
    )

    return TableReader(
        sources=tuple(TableSource(*source) for source in table["sources"]),
        id_path=table["id_path"],
        fields=tuple((name, path, _field_type(t)) for name, path, t in table["fields"]),
        labels=tuple(
            ItemLabel(name, path, mapping, default, tuple(Membership(*m) for m in members), splits)
            for name, path, mapping, default, members, splits in table["labels"]
        ),
        answer_labels=tuple(AnswerLabel(*rule) for rule in table["answer_labels"]),
        explode=Explode(*table["explode"]) if table["explode"] is not None else None,
    )


def _prediction_reader(predictions: Node) -> Any:
    if predictions[0] == "component":
        return _bind(predictions[1])
    from procbench.runners.runtime.predictions import SchemaReader

    _, file_format, id_field, fields, *declared = (
        predictions  # declared: (True,) where every measure declares missing = ...
    )
    return SchemaReader(
        file_format,
        id_field,
        tuple((name, _field_type(t)) for name, t in fields),
        missing_declared=bool(declared),
    )


# -- scoring ----------------------------------------------------------------------------------------
def _scoring(plan: Mapping[str, Any]) -> tuple[Any, Any]:
    """The scorer factory and the aggregator: the score block's own, joined with its measures when it has any."""
    own_scorer = _scorer_factory(plan["scorer"]) if plan["scorer"] is not None else None
    if plan["values"] and own_scorer is not None:
        own_scorer = _with_item_values(own_scorer, plan["values"], plan["flags"])
    own_aggregate = _bind(plan["aggregate"]) if plan["aggregate"] is not None else None
    if plan["measures"] is None:
        return _derived(plan, own_scorer), own_aggregate
    from procbench.runners.metrics import Measures, combined

    make, aggregate = combined(
        Measures(tuple(_measure_stage(m) for m in plan["measures"])), own_scorer, own_aggregate
    )
    return _derived(plan, make), aggregate


def _scorer_factory(scorer: Node) -> Any:
    """Submission metadata -> scorer: an aligned walk, a scorer component or match stages."""
    how = scorer[0]
    if how == "aligns":
        from procbench.runners.library.alignment import WalkScorer

        walker = WalkScorer(tuple(_walk(walk) for walk in scorer[1]))
        return lambda metadata: walker
    if how == "component":
        _, (_, name, fixed), metadata_params = scorer
        comp = _component("scorer", name)

        def from_metadata(metadata: Mapping[str, Any]) -> Any:
            extra = {param: metadata[key] for param, key in metadata_params if key in metadata}
            return comp.bind(**{**fixed, **extra})

        return from_metadata
    match_scorer = _match_scorer(scorer[1], scorer[2])
    return lambda metadata: match_scorer


def _with_item_values(
    make: Any, formulas: tuple[tuple[str, Any], ...], flags: tuple[tuple[str, str], ...]
) -> Any:
    """The scorer followed by the score block's ``value`` formulas, its ``flags`` read from the submission's metadata."""
    from procbench.runners.metrics._derived import ItemFormulas, flag_values

    return lambda metadata: ItemFormulas(make(metadata), formulas, flag_values(flags, metadata))


def _match_scorer(pipelines: Sequence[Node], matches: Sequence[Mapping[str, Any]]) -> Any:
    from procbench.runners.library.generic import MatchScorer, MatchStage
    from procbench.runners.library.matching import PairScorer

    built: dict[int, Any] = {}  # equal normalisers share one memo

    def pipeline(index: int) -> Any:
        if index not in built:
            built[index] = _pipeline(pipelines[index])
        return built[index]

    stages = []
    for match in matches:
        similarity = build_node(match["similarity"])
        # a similarity that scores empty text itself (phrases, records) gets no empty-answer guard
        pairs = PairScorer(
            similarity,
            pipeline(match["normaliser"]),
            pipeline(match["similarity_normaliser"]),
            guard_empty=not getattr(similarity, "scores_empty_text", False),
        )
        filters = tuple(build_node(f) for f in match["filters"])
        stage = MatchStage(
            match["gold"],
            match["prediction"],
            filters,
            pairs,
            build_node(match["matcher"]),
            match["outputs"],
        )
        answers = match["answers"]  # the deriver's type of the gold field
        stages.append(stage.replace(answers=_field_type(answers)) if answers is not None else stage)
    return MatchScorer(tuple(stages))


def _walk(walk: Mapping[str, Any]) -> Any:
    """An align block as the runtime walk (runners/library/alignment.py), its similarities built from their calls."""
    from procbench.runners.library.alignment import AlignedWalk, Entities, Stat, Tally

    entities = tuple(
        Entities(name, places, same, build_node(identity), at_least, build_node(until))
        for name, places, same, identity, at_least, until in walk["entities"]
    )
    tallies = tuple(
        Tally(
            name,
            of,
            by,
            kinds,
            tuple(
                Stat(stat, source, None if sim is None else build_node(sim))
                for stat, source, sim in stats
            ),
            where,
        )
        for name, of, by, kinds, stats, where in walk["tallies"]
    )
    similarity = build_node(walk["similarity"])
    symmetric = bool(getattr(similarity, "symmetric", False))
    return AlignedWalk(
        walk["name"],
        walk["gold"],
        walk["prediction"],
        walk["on"],
        similarity,
        walk["threshold"],
        walk["where"],
        entities,
        tallies,
        symmetric,
    )


def _measure_stage(measure: Mapping[str, Any]) -> Any:
    from procbench.runners.metrics import MeasureStage

    common = {
        "round_digits": measure["round"],
        "scale": measure["scale"],
        "divide_by": measure["divide_by"],
    }
    if measure["kind"] == "value":
        from procbench.runners.metrics._base import Value

        return MeasureStage(
            measure["name"],
            Value(),
            measure["aggregate"],
            "",
            "",
            (),
            (),
            value_name=measure["value"],
            where=measure["where"],
            **common,
        )
    if measure["kind"] == "counts":
        from procbench.runners.metrics._counts import MicroCounts

        counted = MicroCounts(measure["counts"], measure["stats"])
        return MeasureStage(
            measure["name"], counted, "micro", "", "", (), (), reads=counted.reads, **common
        )
    metric = build_node(measure["metric"])
    gold_types, prediction_types = metric.accepts(measure["aggregate"])
    # a field typed in the spec or a contract narrows what the metric accepts (an enum, optional values)
    gold_type = _field_type(measure["gold_type"]) if measure["gold_type"] is not None else None
    prediction_type = (
        _field_type(measure["prediction_type"]) if measure["prediction_type"] is not None else None
    )
    if gold_type is not None:
        gold_types = (gold_type,)
    if prediction_type is not None:
        prediction_types = (prediction_type,)
    # what the metric computes is fixed by the declared types (an ordering, a list of numbers), never by the values
    metric = metric.declared(gold_type, prediction_type, measure["aggregate"])
    return MeasureStage(
        measure["name"],
        metric,
        measure["aggregate"],
        measure["gold"],
        measure["prediction"],
        gold_types,
        prediction_types,
        _pipeline(measure["normaliser"]) if measure["normaliser"] is not None else None,
        bare_prediction=measure["bare"],
        where=measure["where"],
        missing=tuple(
            measure.get("missing") or ("empty",)
        ),  # plans cached before conventions existed have none: the defaults
        invalid=tuple(measure.get("invalid") or ("refuse",)),
        **common,
    )


def _derived(plan: Mapping[str, Any], make: Any) -> Any:
    """The scorer factory, seeing every record through the score block's deriver when it has one."""
    if plan["derive"] is None or make is None:
        return make
    from procbench.runners.library.generic import Derived

    derive = _bind(plan["derive"])
    return lambda metadata: Derived(derive, make(metadata))

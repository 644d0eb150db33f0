"""A compiled runner's *plan*: the runtime components of a checked spec and their arguments, as plain data.

``procbench score`` with the spec cache warm needs only the runner, not the spec: rebuilding it from
the plan imports the component modules the task uses and none of the spec language (the model's,
syntax tree's and errors' dataclasses, the compiler), which cost a score from the cache more than
reading and scoring ProPara does (issue #19).

:func:`plan_of` writes down what ``dsl.compiler.compile_spec`` builds, call for call, for the specs whose
every stage it covers (reader and predictions components, match blocks, value measures, formulas,
a deriver, an aggregator); for any other spec it returns None and the caller compiles.  :func:`build`
rebuilds the runner from a plan.  The fingerprint is the compiled runner's, stored in the plan (it
depends only on what the cache key covers).  tests/test_spec_plan.py compares, for every shipped spec,
the rebuilt runner with the compiled one on the same predictions: same numbers, same fingerprint.

A plan holds only tuples, lists, dicts, text, numbers, booleans and None (:func:`_plain`); dsl/cache.py
stores it beside the checked spec under the same key and reads it back with an unpickler that builds
nothing else, so a damaged or planted plan is a miss, never code that runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsl.model import ComponentCall, TaskSpec
    from runners.runner import TaskRunner

FORMAT = 1  # bump when a plan's shape changes: older plans are then a miss
_PLAIN = (str, int, float, bool, type(None))


def _plain(value: Any) -> bool:
    """Only builtin containers and scalars, nothing a spec value could hide a class in."""
    if isinstance(value, _PLAIN) and type(value) in _PLAIN:
        return True
    if type(value) in (tuple, list):
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


class _Unsupported(Exception):
    """A spec with a stage this module does not plan: the caller compiles it."""


# -- spec -> plan (on a miss: the spec language is loaded) ---------------------------------------------
def plan_of(spec: TaskSpec, digest: str) -> dict[str, Any] | None:
    """The plan of ``spec`` (compiled with fingerprint ``digest``), or None when it needs the compiler."""
    try:
        plan = _plan(spec, digest)
    except _Unsupported:
        return None
    return plan if _plain(plan) else None


def _plan(spec: TaskSpec, digest: str) -> dict[str, Any]:
    score = spec.score
    if spec.data.reader is None or spec.predictions.reader is None or score.scorer is not None:
        raise _Unsupported  # table readers, schema predictions and scorer components: the compiler's
    if not score.matches and not score.measures:
        raise _Unsupported
    if any(ms.formula is None and ms.value is None for ms in score.measures):
        raise _Unsupported  # library metrics and counted statistics
    pipelines: list[list[Any]] = []
    pipeline_of: dict[Any, int] = {}

    def pipeline(steps: tuple[ComponentCall, ...]) -> int:  # equal normalisers share one memo, as compiled
        if steps not in pipeline_of:
            pipeline_of[steps] = len(pipelines)
            pipelines.append([_call(s) for s in steps])
        return pipeline_of[steps]

    matches = [
        {
            "gold": match.gold,
            "prediction": match.prediction,
            "similarity": _call(match.similarity),
            "normaliser": pipeline(match.normaliser),
            "similarity_normaliser": pipeline(match.similarity_normaliser),
            "filters": [_call(f) for f in match.filters],
            "matcher": _call(match.matcher),
            "outputs": match.outputs,
        }
        for match in score.matches
    ]
    return {
        "format": FORMAT,
        "name": spec.name,
        "splits": spec.data.splits,
        "hidden": spec.data.hidden,
        "metric_names": tuple(mt.name for mt in spec.metrics),
        "primary": spec.primary,
        "slices": tuple((s.name, s.kind, s.key) for s in spec.slices),
        "digest": digest,
        "reader": _bound(spec.data.reader),
        "predictions": _bound(spec.predictions.reader),
        "derive": _bound(score.derive) if score.derive is not None else None,
        "aggregate": _bound(score.aggregate) if score.aggregate is not None else None,
        "pipelines": pipelines,
        "matches": matches,
        "measures": [
            (ms.name, ms.aggregate, ms.round, ms.value, ms.where, ms.scale, ms.divide_by) for ms in score.measures if ms.formula is None
        ],
        "formulas": {ms.name: ms.formula for ms in score.measures if ms.formula is not None},
    }


def _bound(call: ComponentCall) -> tuple[str, str, dict[str, Any]]:
    """A component bound to its spec arguments (``Component.bind``): the arguments thawed, nothing built."""
    return (call.kind, call.name, call.kwargs_dict())


def _call(call: ComponentCall) -> tuple[str, str, str, tuple[tuple[str, Any], ...]]:
    """A component built from its spec arguments (``Component.build``), nested calls and pipelines included."""
    return ("call", call.kind, call.name, tuple((k, _argument(v)) for k, v in call.kwargs))


def _argument(value: Any) -> Any:
    """As dsl.compiler's ``_argument``: a nested call, a normaliser's steps as one pipeline, a list, or a thawed literal."""
    from dsl import model as m

    if isinstance(value, m.ComponentCall):
        return _call(value)
    if isinstance(value, tuple) and value and all(isinstance(v, m.ComponentCall) and v.kind == "normaliser" for v in value):
        return ("pipeline", tuple(_call(v) for v in value), tuple(v.name for v in value))
    if isinstance(value, tuple) and value[:1] != ("__object__",):
        return ("list", tuple(_argument(v) for v in value))
    return ("value", m.thaw(value))


# -- plan -> runner (on a hit: only the task's component modules are imported) -------------------------
def build(plan: Mapping[str, Any]) -> TaskRunner:
    """The runner ``dsl.compiler.compile_spec`` builds for the spec the plan was made of."""
    from runners.runner import SliceDef, TaskRunner

    make_scorer, aggregate = _scoring(plan)
    if plan["formulas"]:
        from runners.metrics import with_derived

        aggregate = with_derived(aggregate, plan["formulas"])
    return TaskRunner(
        name=plan["name"],
        splits=plan["splits"],
        hidden_splits=plan["hidden"],
        metric_names=plan["metric_names"],
        primary=plan["primary"],
        read_gold=_contract_checked(plan["reader"]),
        read_predictions=_bind(plan["predictions"]),
        make_scorer=make_scorer,
        aggregate=aggregate,
        slices=tuple(SliceDef(*s) for s in plan["slices"]),
        spec_digest=plan["digest"],
    )


def _component(kind: str, name: str) -> Any:
    from runners import registry

    return registry.get(kind, name)


def _bind(bound: tuple[str, str, dict[str, Any]]) -> Any:
    kind, name, kwargs = bound
    return _component(kind, name).bind(**kwargs)


def _build(node: tuple[Any, ...]) -> Any:
    _, kind, name, kwargs = node
    return _component(kind, name).build(**{k: _value(v) for k, v in kwargs})


def _value(node: tuple[Any, ...]) -> Any:
    if node[0] == "call":
        return _build(node)
    if node[0] == "pipeline":
        return _pipeline(node[1], node[2])
    if node[0] == "list":
        return [_value(v) for v in node[1]]
    return node[1]


def _pipeline(steps: Any, names: Any) -> Any:
    from runners.text import Pipeline

    return Pipeline.of([_build(s) for s in steps], list(names))


def _contract_checked(bound: tuple[str, str, dict[str, Any]]) -> Any:
    from runners.contracts import check_gold_against_contract

    _, name, _ = bound
    comp = _component("reader", name)
    read = comp.bind(**bound[2])
    source = f"reader {name}"

    def reader(data_root: Any, split: str) -> Any:
        gold = read(data_root, split)
        check_gold_against_contract(gold, comp.contract.fields, comp.contract.labels, source)
        return gold

    return reader


def _scoring(plan: Mapping[str, Any]) -> tuple[Any, Any]:
    own_scorer = _match_scorer(plan) if plan["matches"] else None
    own_aggregate = _bind(plan["aggregate"]) if plan["aggregate"] is not None else None
    if not plan["measures"] and not plan["formulas"]:
        return _derived(plan, own_scorer), own_aggregate
    from runners.metrics import Measures, MeasureStage, combined
    from runners.metrics._base import Value

    measures = Measures(
        tuple(
            MeasureStage(name, Value(), aggregate, "", "", (), (), None, rounded, False, value, where, scale, divide_by)
            for name, aggregate, rounded, value, where, scale, divide_by in plan["measures"]
        )
    )
    make, aggregate = combined(measures, own_scorer, own_aggregate)
    return _derived(plan, make), aggregate


def _match_scorer(plan: Mapping[str, Any]) -> Any:
    from dataclasses import replace

    from runners.generic import MatchScorer, MatchStage
    from runners.matching import PairScorer

    pipelines: dict[int, Any] = {}

    def pipeline(index: int) -> Any:
        if index not in pipelines:
            steps = plan["pipelines"][index]
            pipelines[index] = _pipeline(steps, [s[2] for s in steps])
        return pipelines[index]

    derived = dict(_component("deriver", plan["derive"][1]).contract.fields) if plan["derive"] is not None else {}
    stages = []
    for match in plan["matches"]:
        similarity = _build(match["similarity"])
        pairs = PairScorer(
            similarity, pipeline(match["normaliser"]), pipeline(match["similarity_normaliser"]), guard_empty=not getattr(similarity, "scores_empty_text", False)
        )
        answers = derived.get(match["gold"])
        stage = MatchStage(
            match["gold"], match["prediction"], tuple(_build(f) for f in match["filters"]), pairs, _build(match["matcher"]), match["outputs"]
        )
        stages.append(replace(stage, answers=answers) if answers is not None else stage)
    scorer = MatchScorer(tuple(stages))
    return lambda metadata: scorer


def _derived(plan: Mapping[str, Any], make: Any) -> Any:
    if plan["derive"] is None or make is None:
        return make
    from runners.generic import Derived

    derive = _bind(plan["derive"])
    return lambda metadata: Derived(derive, make(metadata))

"""Every registered component's declared contract (``procbench.runners.runtime.registry.Contract``) holds in practice.

The checker resolves a spec's names (gold fields, labels, per-item values, metrics) from these
declarations before anything runs, so a declaration that drifts from what a component really
reads, gives or emits would let a wrong spec through or reject a right one.  Each shipped task is
run on the bundled samples (and on the real data when present) and every gold record, label,
prediction record, per-item value and metric name is compared with its declaration; the building
blocks of declarative scorers (normalisers, similarities, filters, matchers) are called on
generated values of their declared ``takes`` type.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import math
import typing
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from procbench.api import all_spec_paths, load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.runtime import registry
from procbench.runners.runtime._types import GoldSet, ItemScore
from procbench.runners.runtime.contracts import PYTHON_COLLECTIONS, checker
from procbench.runners.library.matching import PRF, PairScorer
from procbench.runners.library.record_rules import One, OnField
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.records import Record as RuntimeRecord
from procbench.runners.library.similarity import exact, token_f1
from procbench.runners.library.text import Pipeline, lowercase, strip

TASKS = sorted(p.stem for p in all_spec_paths())
# A task scored on another task's sample submissions (same data, same prediction format).
SUBMISSIONS_OF = {"openpi-head": "openpi"}
# The split the sample submissions answer ("test" unless listed).
SUBMISSION_SPLIT = {"paged": "dev", "pm-llm-benchmark": "main"}


# -- helpers -----------------------------------------------------------------------------------


def _calls(spec: Any) -> dict[str, Any]:
    """The task's component calls by kind (None where the spec declares the stage itself)."""
    return {
        "reader": spec.data.reader,
        "predictions": spec.predictions.reader,
        "scorer": spec.score.scorer,
        "aggregator": spec.score.aggregate,
    }


def _component(spec: Any, kind: str) -> tuple[registry.Component, dict[str, Any]] | None:
    """The registered component of one stage and its arguments with the defaults filled in."""
    call = _calls(spec)[kind]
    if call is None:
        return None
    comp = registry.get(call.kind, call.name)
    params = {p.name: p.default for p in comp.params if not p.required}
    return comp, {**params, **call.kwargs_dict()}


def _attributes(record: Any) -> dict[str, Any] | None:
    """A record's fields: dict keys, record or dataclass attributes; None for a bare value (an int, a str)."""
    if isinstance(record, Mapping):
        return dict(record)
    if isinstance(record, RuntimeRecord):  # ProPara's tracks (issue #31): fields are slots
        names: list[str] = []
        for cls in reversed(type(record).__mro__):
            own = cls.__dict__.get("__slots__", ()) if issubclass(cls, RuntimeRecord) else ()
            names += [own] if isinstance(own, str) else list(own)
        return {name: getattr(record, name) for name in names}
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    return None


def _record_problems(record: Any, declared: Mapping[str, FieldType]) -> list[str]:
    """How a record differs from its declared fields (empty when it fits).

    Types are checked as the run-time gold check does: a ``list(T)`` attribute of a Python-built
    record may be a tuple or a (frozen)set.
    """
    attributes = _attributes(record)
    if attributes is None:  # a bare value is declared as its one field (named as in the file)
        if len(declared) != 1:
            return [
                f"a bare {type(record).__name__} record, but the contract declares {sorted(declared)}"
            ]
        ((name, ftype),) = declared.items()
        return (
            []
            if checker(ftype, PYTHON_COLLECTIONS)(record)
            else [f"value {record!r} is not {ftype.spelling()} (field {name})"]
        )
    problems = []
    if set(attributes) != set(declared):
        problems.append(f"fields {sorted(attributes)} != declared {sorted(declared)}")
    for name, ftype in declared.items():
        if name in attributes and not checker(ftype, PYTHON_COLLECTIONS)(attributes[name]):
            problems.append(
                f"field {name}: {type(attributes[name]).__name__} value is not {ftype.spelling()}"
            )
    return problems


def _gold_splits(runner: Any, root: Path) -> dict[str, GoldSet]:
    """Every split of the task whose gold files exist under ``root``."""
    out = {}
    for split in runner.splits:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[split] = runner.gold(root, split)[0]
        except FileNotFoundError:
            continue
    return out


def _submissions(task: str) -> list[Path]:
    folder = SAMPLE_SUBMISSIONS_DIR / SUBMISSIONS_OF.get(task, task)
    return (
        sorted(p for p in folder.iterdir() if not p.name.endswith(".meta.json"))
        if folder.is_dir()
        else []
    )


def _metadata(path: Path) -> dict[str, Any]:
    meta = path.with_name(path.stem + ".meta.json")
    return json.loads(meta.read_text()) if meta.is_file() else {}


@functools.cache  # three tests read the same scores
def _scored_samples(task: str) -> list[tuple[Path, GoldSet, Mapping[str, Any], list[ItemScore]]]:
    """Each sample submission of the task: validated against its split's gold and scored."""
    spec, runner = load_task(task)
    if not _submissions(
        task
    ):  # a new task need not have them until it ships (procbench check --ship lists them)
        pytest.skip(f"{task} has no sample submissions under {SAMPLE_SUBMISSIONS_DIR}")
    split = SUBMISSION_SPLIT.get(
        task, "test" if "test" in spec.data.splits else spec.data.splits[0]
    )
    gold = runner.gold(SAMPLE_DATA_ROOT, split)[0]
    out = []
    for path in _submissions(task):
        records, _ = runner.validate(path, gold)
        out.append((path, gold, records, runner.score(gold, records, _metadata(path))))
    assert out, f"no sample submissions for {task} under {SAMPLE_SUBMISSIONS_DIR}"
    return out


def _check_reader(task: str, root: Path) -> tuple[int, set[str]]:
    """Reader records and labels of every split present under ``root`` against the contract.

    Returns how many splits were read and the label names they carry.
    """
    spec, runner = load_task(task)
    found = _component(spec, "reader")
    if found is None:
        pytest.skip(f"{task} declares its gold in the spec (no reader component)")
    contract = found[0].contract
    golds = _gold_splits(runner, root)
    seen_labels: set[str] = set()
    for split, gold in golds.items():
        assert gold.items, f"{task}/{split}: no items"
        for item_id, record in gold.items.items():
            problems = _record_problems(record, contract.fields)
            assert not problems, f"{task}/{split} item {item_id}: {problems}"
        for item_id, labels in gold.labels.items():
            unknown = set(labels) - set(contract.labels)
            assert not unknown, (
                f"{task}/{split} item {item_id}: undeclared labels {sorted(unknown)}"
            )
            for name, value in labels.items():
                allowed = contract.labels[name]
                assert not allowed or value in allowed, (
                    f"{task}/{split} item {item_id}: {name} = {value!r} not in {allowed}"
                )
            seen_labels |= set(labels)
        for name in contract.labels:  # a label is given on a split for every item or for none
            carried = sum(name in gold.labels.get(item_id, {}) for item_id in gold.items)
            assert carried in (0, len(gold.items)), (
                f"{task}/{split}: label {name} on {carried} of {len(gold.items)} items"
            )
    return len(golds), seen_labels


# -- shipped tasks -----------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_reader_records_and_labels_match_the_contract_on_the_samples(task: str) -> None:
    assert _check_reader(task, SAMPLE_DATA_ROOT)[0] >= 1


def test_the_samples_show_every_declared_label() -> None:
    """A declared label no split of any task carries is a stale declaration (labels may be split-specific)."""
    seen: dict[str, set[str]] = {}
    for task in TASKS:
        spec, _ = load_task(task)
        if _component(spec, "reader") is not None:
            seen.setdefault(spec.data.reader.name, set()).update(
                _check_reader(task, SAMPLE_DATA_ROOT)[1]
            )
    assert seen, "no task reads its gold with a reader component"
    for name, labels in seen.items():
        declared = set(registry.get("reader", name).contract.labels)
        assert labels == declared, (
            f"reader {name}: labels seen {sorted(labels)}, declared {sorted(declared)}"
        )


@pytest.mark.parametrize("task", TASKS)
def test_reader_records_and_labels_match_the_contract_on_the_real_data(
    task: str, data_root: Path
) -> None:
    if _check_reader(task, data_root)[0] == 0:
        pytest.skip(f"no gold file of {task} under {data_root}")


@pytest.mark.parametrize("task", TASKS)
def test_prediction_records_match_the_contract(task: str) -> None:
    spec, _ = load_task(task)
    found = _component(spec, "predictions")
    if found is None:
        pytest.skip(f"{task} declares its prediction schema in the spec (no predictions component)")
    for path, _gold, records, _items in _scored_samples(task):
        assert records, f"{path.name}: no records"
        for item_id, record in records.items():
            problems = _record_problems(record, found[0].contract.fields)
            assert not problems, f"{path.name} item {item_id}: {problems}"


@pytest.mark.parametrize("task", TASKS)
def test_scorer_emits_exactly_the_declared_values(task: str) -> None:
    spec, _ = load_task(task)
    found = _component(spec, "scorer")
    if found is None:
        pytest.skip(f"{task} scores with match, measure or align blocks (no scorer component)")
    comp, params = found
    declared = set(comp.contract.emitted(params))
    for path, gold, records, _items in _scored_samples(task):
        items = comp.fn(
            gold, records, **params
        )  # the component alone: a spec's measures add their own statistics
        assert [i.item_id for i in items] == list(gold.items)
        for item in items:
            assert set(item.values) == declared, (
                f"{path.name} item {item.item_id}: {sorted(set(item.values) ^ declared)}"
            )


@pytest.mark.parametrize("task", TASKS)
def test_scorer_needs_are_fields_its_reader_declares(task: str) -> None:
    spec, _ = load_task(task)
    scorer, reader = _component(spec, "scorer"), _component(spec, "reader")
    if scorer is None or reader is None:
        pytest.skip(f"{task} has no scorer or no reader component")
    fields = reader[0].contract.fields
    for name, wanted in scorer[0].contract.needs.items():
        assert name in fields, (
            f"{scorer[0].name} needs {name!r}, which {reader[0].name} does not declare"
        )
        assert fields[name].fits(wanted), (
            f"{name}: {fields[name].spelling()} does not fit {wanted.spelling()}"
        )


@pytest.mark.parametrize("task", TASKS)
def test_aggregator_returns_exactly_the_declared_metrics(task: str) -> None:
    spec, runner = load_task(task)
    found = _component(spec, "aggregator")
    if (
        found is None
    ):  # measures only: their outputs are the spec's metrics, on every sample and on an empty slice
        for path, _gold, _records, items in _scored_samples(task):
            assert set(runner.aggregate(items)) == set(runner.metric_names), path.name
            assert set(runner.aggregate([])) == set(runner.metric_names)
        return
    comp, params = found
    flags = [
        p.name for p in comp.params if p.type is bool
    ]  # emits may depend on them: try each value
    variants = [params] + [{**params, flag: not params[flag]} for flag in flags]
    for path, _gold, _records, items in _scored_samples(task):
        scorer_emits = tuple(dict.fromkeys(k for item in items for k in item.values))
        for args in variants:
            declared = set(comp.contract.emitted(args, scorer_emits))
            got = set(comp.fn(items, **args))
            assert got == declared, f"{path.name} with {args}: {sorted(got ^ declared)}"
            if (
                comp.contract.emits != registry.SAME_AS_SCORER
            ):  # an empty slice still has every metric
                assert set(comp.fn([], **args)) == declared
        assert set(runner.metric_names) <= set(comp.contract.emitted(params, scorer_emits)), (
            "a spec metric its aggregator does not emit"
        )


# -- every registered component ------------------------------------------------------------------


def test_every_component_declares_its_contract() -> None:
    required = {
        "reader": ("fields",),
        "predictions": ("fields",),
        "scorer": ("emits",),
        "aggregator": ("emits",),
        "normaliser": ("takes", "gives"),
        "filter": ("takes", "gives"),
        "similarity": ("takes",),
        "matcher": ("takes",),
    }
    missing = [
        f"{c.kind} {c.name}: {part}"
        for c in registry.all_components()
        for part in required.get(c.kind, ())
        if getattr(c.contract, part) in (None, (), {})
    ]
    assert not missing, "components without a contract part: " + "; ".join(missing)
    assert {c.kind for c in registry.all_components()} >= set(required)


def _strategy(t: Any) -> st.SearchStrategy[Any]:
    """Values of a parameter type (positive sizes, so that e.g. ``n`` and ``separator`` are valid)."""
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (list, tuple, Sequence) and args and args[0] is str:
        return st.lists(st.text(max_size=4), max_size=4)
    if args and type(None) in args:
        return st.one_of(st.none(), *(_strategy(a) for a in args if a is not type(None)))
    simple = {
        bool: st.booleans(),
        int: st.integers(1, 4),
        float: st.floats(0.1, 2.0),
        str: st.text(min_size=1, max_size=4),
    }
    if t in simple:
        return simple[t]
    if t is registry.NormaliserName:  # the compiler passes a normaliser block's steps as a pipeline
        return st.sampled_from([Pipeline.of([]), Pipeline.of([lowercase(), strip()])])
    if (
        t is registry.SimilarityParts
    ):  # what a similarity block gives: (field, built similarity) pairs
        return st.lists(
            st.tuples(
                st.sampled_from(["a", "b"]),
                st.sampled_from([exact, token_f1]).map(lambda make: make()),
            ),
            min_size=1,
            max_size=3,
        )
    raise AssertionError(f"no value strategy for parameter type {t!r}: extend _strategy")


def _value_strategy(ftype: FieldType) -> st.SearchStrategy[Any]:
    """Values of a declared contract type."""
    if ftype.kind == "str":
        return st.text(max_size=30)
    if ftype.kind == "list" and ftype.item is not None:
        return st.lists(_value_strategy(ftype.item), max_size=5)
    if ftype.kind == "any":  # text answers (record similarities draw RECORDS instead)
        return st.text(max_size=30)
    raise AssertionError(f"no value strategy for {ftype.spelling()}: extend _value_strategy")


Record = collections.namedtuple(
    "Record", ["a", "b"]
)  # what a deriver gives a record similarity: fields as attributes
RECORDS = st.builds(Record, st.text(max_size=10), st.text(max_size=10))

# Arguments a component accepts but cannot score with (reported; see the xfail test below).
KNOWN_BROKEN = {("similarity", "bleu"): {"smoothing": "method6"}}


def _arguments(data: st.DataObject, comp: registry.Component) -> dict[str, Any]:
    args = {p.name: data.draw(_strategy(p.type), label=p.name) for p in comp.params}
    broken = KNOWN_BROKEN.get((comp.kind, comp.name), {})
    assume(not any(args.get(k) == v for k, v in broken.items()))
    return args


@pytest.mark.parametrize("name", registry.names("normaliser"))
@given(data=st.data())
def test_normalisers_give_their_declared_type(name: str, data: st.DataObject) -> None:
    comp = registry.get("normaliser", name)
    step = comp.build(**_arguments(data, comp))
    value = data.draw(_value_strategy(comp.contract.takes), label="input")
    assert comp.contract.gives.accepts(step(value))  # type: ignore[union-attr]


@pytest.mark.parametrize("name", registry.names("filter"))
@given(data=st.data())
def test_filters_give_their_declared_type(name: str, data: st.DataObject) -> None:
    comp = registry.get("filter", name)
    apply = comp.build(**_arguments(data, comp))
    value = data.draw(_value_strategy(comp.contract.takes), label="input")
    out = apply(value)
    assert comp.contract.gives.accepts(out)  # type: ignore[union-attr]
    assert set(out) <= set(value)  # filters only remove answers


# The similarities a similarity block composes (runners/library/record_rules.py), with parts that compare the records' members.
_MEMBERS = st.sampled_from(["a", "b"])
_TEXT_SIMILARITY = st.sampled_from([exact, token_f1]).map(lambda make: make())
_RECORD_SIMILARITY = st.builds(OnField, _MEMBERS, _TEXT_SIMILARITY) | st.just(One())
COMPOSED: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "on_field": {"field": _MEMBERS, "similarity": _TEXT_SIMILARITY},
    "at_least": {"similarity": _RECORD_SIMILARITY, "threshold": st.floats(0, 1)},
    "cases": {
        "same": st.lists(_MEMBERS, max_size=2),
        "field": _MEMBERS,
        "when": st.lists(st.tuples(st.text(max_size=3), _RECORD_SIMILARITY), max_size=3),
        "otherwise": _RECORD_SIMILARITY,
    },
    "all_of": {
        "same": st.lists(_MEMBERS, max_size=2),
        "parts": st.lists(_RECORD_SIMILARITY, max_size=3),
    },
    "one": {},
}


@pytest.mark.parametrize("name", registry.names("similarity"))
@given(data=st.data())
def test_similarities_compare_two_values_of_their_declared_type(
    name: str, data: st.DataObject
) -> None:
    comp = registry.get("similarity", name)
    if name in COMPOSED:
        similarity = comp.build(
            **{
                param: data.draw(strategy, label=param)
                for param, strategy in COMPOSED[name].items()
            }
        )
    else:
        similarity = comp.build(**_arguments(data, comp))
    values = (
        RECORDS
        if name == "record_mean" or name in COMPOSED
        else _value_strategy(comp.contract.takes)
    )
    gold = data.draw(values, label="gold")
    prediction = data.draw(values, label="prediction")
    raw = similarity.score(similarity.prepare(gold), similarity.prepare(prediction))
    pairs = PairScorer(similarity)  # as a match stage calls it: empty-content guard first
    guarded = pairs.score(pairs.prepare(gold), pairs.prepare(prediction))
    for value in (raw, guarded):
        assert comp.contract.gives is None or comp.contract.gives.accepts(value)
        assert isinstance(value, float) and math.isfinite(value)


@pytest.mark.parametrize("name", registry.names("matcher"))
@given(data=st.data())
def test_matchers_compare_two_values_of_their_declared_type(name: str, data: st.DataObject) -> None:
    comp = registry.get("matcher", name)
    matcher = comp.build(**_arguments(data, comp))
    gold = data.draw(_value_strategy(comp.contract.takes), label="gold")
    predictions = data.draw(_value_strategy(comp.contract.takes), label="predictions")
    similarity = data.draw(st.sampled_from([exact, token_f1]), label="similarity")()
    prf = matcher(gold, predictions, PairScorer(similarity))  # as MatchScorer calls it
    assert isinstance(prf, PRF)
    for value in (prf.precision, prf.recall, prf.f1):
        assert isinstance(value, float) and 0.0 <= value <= 1.0


@pytest.mark.xfail(
    strict=True,
    raises=(IndexError, AssertionError),
    reason="NLTK's method6 smoothing needs n >= 3 and a non-zero trigram precision; bleu() accepts it anyway",
)
def test_bleu_with_method6_smoothing_scores_ordinary_answers() -> None:
    similarity = registry.get("similarity", "bleu").build(n=4, smoothing="method6")
    assert (
        0.0 <= similarity.score(similarity.prepare("a b c d"), similarity.prepare("a b x y")) <= 1.0
    )

"""Generic aggregators and the declarative set-matching scorer built from ``match`` blocks."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import typing
from typing import Any

from procbench.runners.runtime._types import DataProblem, DataProblems, GoldSet, ItemScore
from procbench.runners.runtime.contracts import MISSING, checker, describe, is_str_list, mismatch
from procbench.runners.library.filters import AnswerFilter
from procbench.runners.library.matching import PRF, Matcher, PairBatch, PairScorer
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.records import Record
from procbench.runners.runtime.registry import (
    SAME_AS_SCORER,
    GoldField,
    PredictionField,
    ValueName,
    component,
)


def _rounded(values: dict[str, float], digits: int | None) -> dict[str, float]:
    return values if digits is None else {k: round(v, digits) for k, v in values.items()}


def _value_sums(items: Sequence[ItemScore]) -> dict[str, float] | None:
    """Every value's sum over ``items`` (first-seen order) where ``items`` keeps values in columns
    (runners/runtime/streaming.py ``ScoreRows``: no item rebuilt per pass); None: sum item by item."""
    sums = getattr(items, "value_sums", None)
    return typing.cast("dict[str, float] | None", sums()) if sums is not None else None


@component("aggregator", "mean", emits=SAME_AS_SCORER)
def mean(items: Sequence[ItemScore], *, round_digits: int | None = None) -> dict[str, float]:
    """Plain mean over items of every per-item value (0.0 for no items); optionally Python-rounded."""
    n = len(items)
    sums = _value_sums(items)
    if sums is not None:
        return _rounded({k: (s / n if n else 0.0) for k, s in sums.items()}, round_digits)
    keys = list(dict.fromkeys(k for item in items for k in item.values))
    return _rounded(
        {k: (sum(item.values.get(k, 0.0) for item in items) / n if n else 0.0) for k in keys},
        round_digits,
    )


@component("aggregator", "sum", emits=SAME_AS_SCORER)
def total(items: Sequence[ItemScore], *, round_digits: int | None = None) -> dict[str, float]:
    """Sum over items of every per-item value; optionally Python-rounded."""
    sums = _value_sums(items)
    if sums is not None:
        return _rounded({k: float(s) for k, s in sums.items()}, round_digits)
    keys = list(dict.fromkeys(k for item in items for k in item.values))
    return _rounded(
        {k: float(sum(item.values.get(k, 0.0) for item in items)) for k in keys}, round_digits
    )


@component(
    "aggregator",
    "micro_prf",
    emits=lambda p: (
        f"{p.get('prefix', '')}p",
        f"{p.get('prefix', '')}r",
        f"{p.get('prefix', '')}f1",
    ),
)
def micro_prf(
    items: Sequence[ItemScore],
    *,
    correct: ValueName = ValueName("correct"),
    predicted: ValueName = ValueName("predicted"),
    gold: ValueName = ValueName("gold"),
    prefix: str = "",
    round_digits: int | None = None,
) -> dict[str, float]:
    """Micro-averaged P/R/F1 from summed per-item counts: P = Σcorrect/Σpredicted, R = Σcorrect/Σgold.

    Empty denominators give 0.  Outputs ``<prefix>p``, ``<prefix>r``, ``<prefix>f1``.
    """
    c = sum(item.values.get(correct, 0.0) for item in items)
    p_den = sum(item.values.get(predicted, 0.0) for item in items)
    r_den = sum(item.values.get(gold, 0.0) for item in items)
    p = c / p_den if p_den else 0.0
    r = c / r_den if r_den else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return _rounded({f"{prefix}p": p, f"{prefix}r": r, f"{prefix}f1": f1}, round_digits)


STR_LIST = FieldType.parse("list(str)")


class MatchStage(Record):
    """One ``match`` block: filters, a pair scorer and a matcher, writing three per-item values.

    ``gold_field`` and ``prediction_field`` must hold lists of ``answers`` (text unless the fields
    are typed otherwise, e.g. records a deriver gives); anything else is an error at scoring time
    (see :class:`MatchScorer`).
    """

    __slots__ = (
        "gold_field",
        "prediction_field",
        "filters",
        "pairs",
        "matcher",
        "outputs",
        "answers",
    )
    gold_field: str
    prediction_field: str
    filters: tuple[AnswerFilter, ...]
    pairs: PairScorer
    matcher: Matcher
    outputs: tuple[str, str, str]
    answers: FieldType

    def __init__(
        self,
        gold_field: str,
        prediction_field: str,
        filters: tuple[AnswerFilter, ...],
        pairs: PairScorer,
        matcher: Matcher,
        outputs: tuple[str, str, str],
        answers: FieldType | None = None,
    ) -> None:
        object.__setattr__(self, "gold_field", gold_field)
        object.__setattr__(self, "prediction_field", prediction_field)
        object.__setattr__(self, "filters", filters)
        object.__setattr__(self, "pairs", pairs)
        object.__setattr__(self, "matcher", matcher)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "answers", STR_LIST if answers is None else answers)

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        """The fields by name, as a dataclass's ``__dict__`` gave them: ``MatchStage(**{**vars(stage), ...})``
        copies a stage (tests/parity/test_openpi.py does)."""
        return {name: getattr(self, name) for name in self._fields}


class MatchScorer(Record):
    """Scores every gold item with each match stage; a missing prediction record is an empty answer list.

    Values are taken as they are: a gold field or a prediction field that is missing or not a list
    of strings raises (:class:`GoldDataError` for the gold, naming the item and its line; a
    ``ValueError`` for predictions) instead of being read as ``[]`` or a string's characters.  Only
    an item with no prediction record at all scores as empty, as the official scorers do (the
    prediction reader warns about it).

    Stages run one at a time over all items, so that a matcher with ``score_many`` can score the
    whole split in a few vectorised calls; the per-item values keep the stage order.  Consecutive
    stages that match the same answers with the same matcher and normalisers and differ only in
    their similarity (OpenPI's Exact, BLEU and ROUGE) are scored together: the answers are
    normalised, encoded and laid out once for all of them.
    """

    # Each item's values depend on that item alone: the runtime's streamed scoring (runtime/streaming.py)
    # may score a split a chunk at a time.  A subclass that looks across items must set this False.
    ITEM_WISE = True

    __slots__ = ("stages", "_batches")
    _hidden = frozenset({"_batches"})
    stages: tuple[MatchStage, ...]
    _batches: dict[tuple[int, ...], PairBatch]

    def __init__(
        self,
        stages: tuple[MatchStage, ...],
        _batches: dict[tuple[int, ...], PairBatch] | None = None,
    ) -> None:
        object.__setattr__(self, "stages", stages)
        object.__setattr__(self, "_batches", {} if _batches is None else _batches)

    def __call__(self, gold: GoldSet, predictions: Mapping[str, Any]) -> list[ItemScore]:
        item_ids = list(gold.items)
        predicted = [predictions.get(item_id) for item_id in item_ids]
        gold_lists: dict[
            str, list[list[str]]
        ] = {}  # checked once per field, shared by the stages reading it
        answer_lists: dict[str, list[list[str]]] = {}
        inputs = []
        for stage in self.stages:
            golds = gold_lists.get(stage.gold_field)
            if golds is None:
                golds = gold_lists[stage.gold_field] = _gold_lists(
                    gold, item_ids, stage.gold_field, stage.answers
                )
            raw = answer_lists.get(stage.prediction_field)
            if raw is None:
                raw = answer_lists[stage.prediction_field] = _prediction_lists(
                    item_ids, predicted, stage.prediction_field, stage.answers
                )
            answers = raw
            if stage.filters:
                answers = []
                for listed in raw:
                    listed = list(
                        listed
                    )  # a filter gets its own copy: the records are scored again for slices
                    for f in stage.filters:
                        listed = f(listed)
                    answers.append(listed)
            inputs.append((golds, answers))
        columns: list[list[PRF]] = []
        for group in self._groups(inputs):
            first = self.stages[group[0]]
            golds, answers = inputs[group[0]]
            if len(group) > 1:
                batch = self._batches.get(group)
                if batch is None:
                    batch = self._batches[group] = PairBatch([self.stages[i].pairs for i in group])
                columns.extend(first.matcher.score_shared(golds, answers, batch))  # type: ignore[attr-defined]
            elif hasattr(first.matcher, "score_many"):
                columns.append(first.matcher.score_many(golds, answers, first.pairs))
            else:
                columns.append([first.matcher(g, a, first.pairs) for g, a in zip(golds, answers)])
        out = []
        for position, item_id in enumerate(item_ids):
            values: dict[str, float] = {}
            for stage, column in zip(self.stages, columns):
                prf = column[position]
                p, r, f1 = stage.outputs
                values[p], values[r], values[f1] = prf.precision, prf.recall, prf.f1
            out.append(ItemScore(item_id, values))
        return out

    def _groups(
        self, inputs: list[tuple[list[list[str]], list[list[str]]]]
    ) -> list[tuple[int, ...]]:
        """Runs of consecutive stages that can share one batch (the same answers, matcher and normalisers)."""
        groups: list[tuple[int, ...]] = []
        for i, stage in enumerate(self.stages):
            if (
                groups
                and self._can_join(self.stages[groups[-1][0]], stage)
                and inputs[groups[-1][0]] == inputs[i]
            ):
                groups[-1] = (*groups[-1], i)
            else:
                groups.append((i,))
        return groups

    @staticmethod
    def _can_join(first: MatchStage, stage: MatchStage) -> bool:
        return (
            hasattr(first.matcher, "score_shared")
            and first.matcher == stage.matcher
            and PairBatch.shareable([first.pairs, stage.pairs])
        )


DERIVED_BATCH = 512  # items a Derived scorer derives and scores together


class Derived(Record):
    """A scorer that sees every gold and predicted record through the score block's ``derive`` component.

    The deriver is a format component (ProPara's action grid -> inputs, outputs, conversions,
    moves); the match and measure blocks then compare the typed fields it gives.  Item order,
    labels and origins are the gold's; a missing prediction stays missing.
    """

    __slots__ = ("derive", "scorer", "batch")
    derive: Callable[
        [Any, Any], Mapping[str, Any]
    ]  # (record, its gold record or None for the gold itself)
    scorer: Callable[[GoldSet, Mapping[str, Any]], list[ItemScore]]
    batch: int

    def __init__(
        self,
        derive: Callable[[Any, Any], Mapping[str, Any]],
        scorer: Callable[[GoldSet, Mapping[str, Any]], list[ItemScore]],
        batch: int = DERIVED_BATCH,
    ) -> None:
        object.__setattr__(self, "derive", derive)
        object.__setattr__(self, "scorer", scorer)
        object.__setattr__(self, "batch", batch)

    def __call__(self, gold: GoldSet, predictions: Mapping[str, Any]) -> list[ItemScore]:
        """The scorer's values of every item, ``batch`` items derived and scored at a time.

        Derived records are often many times larger than the records (PAGED: a document's lines, each
        with its nodes), so only one batch of them is alive at once; the scorers behind a deriver score
        each item on its own, so the values are those of the whole split scored at once.  Bad data in
        a batch stops the run there: the error lists that batch's problems.
        """
        ids = list(gold.items)
        if len(ids) <= self.batch:
            return self._scored(gold, predictions, ids)
        out: list[ItemScore] = []
        for start in range(0, len(ids), self.batch):
            out += self._scored(gold, predictions, ids[start : start + self.batch])
        return out

    def _scored(
        self, gold: GoldSet, predictions: Mapping[str, Any], ids: Sequence[str]
    ) -> list[ItemScore]:
        derive, records = self.derive, gold.items
        items = {item_id: derive(records[item_id], None) for item_id in ids}
        derived = {
            item_id: derive(predictions[item_id], records[item_id])
            for item_id in ids
            if predictions.get(item_id) is not None
        }
        return self.scorer(gold.replace(items=items), derived)


def _answer_list_check(wanted: FieldType) -> Callable[[Any], bool]:
    """``wanted.accepts``, compiled once for a column (a record's members without a method call each)."""
    return is_str_list if wanted is STR_LIST else checker(wanted)


def _gold_lists(
    gold: GoldSet, item_ids: Sequence[str], name: str, wanted: FieldType
) -> list[list[Any]]:
    """Each item's gold field ``name``, checked to be a list of ``wanted``'s items (a tuple is accepted from Python-built gold)."""
    spelled = wanted.spelling()
    fits = _answer_list_check(wanted)
    out: list[list[Any]] = []
    problems: DataProblems | None = None
    for item_id in item_ids:
        record = gold.items[item_id]
        value = (
            record.get(name, MISSING)
            if type(record) is dict or isinstance(record, Mapping)
            else MISSING
        )
        if type(value) is tuple:
            value = list(value)
        if fits(value):
            out.append(typing.cast(list[Any], value))
            continue
        problems = problems or DataProblems()
        if not (type(record) is dict or isinstance(record, Mapping)):
            message = f"gold record is {describe(record)}, not a record with fields; a match block needs field {name!r} to be {spelled}"
        elif value is MISSING:
            message = f"gold field {name!r} is missing; a match block needs {spelled}"
        else:
            message = f"gold field {name!r} must be {spelled} for a match block, got {mismatch(wanted, value)}"
        problems.add(DataProblem.at(gold.origins.get(item_id), item_id, message))
        out.append([])
    if problems is not None:
        problems.raise_if_any()
    return out


def _prediction_lists(
    item_ids: Sequence[str], predicted: Sequence[Any], name: str, wanted: FieldType
) -> list[list[Any]]:
    """Each item's prediction field ``name`` (no record: no answers), checked to be a list of ``wanted``'s items."""
    fits = _answer_list_check(wanted)
    out: list[list[Any]] = []
    bad: list[str] = []
    for item_id, record in zip(item_ids, predicted):
        if record is None:
            out.append([])
            continue
        value = (
            record.get(name, MISSING)
            if type(record) is dict or isinstance(record, Mapping)
            else MISSING
        )
        if fits(value):
            out.append(typing.cast(list[Any], value))
            continue
        what = "missing" if value is MISSING else mismatch(wanted, value)
        if not isinstance(record, Mapping):
            what = f"not a record with fields ({describe(record)})"
        bad.append(f"item {item_id!r}: {what}")
    if bad:
        shown = "; ".join(bad[:5]) + (f"; ... and {len(bad) - 5} more" if len(bad) > 5 else "")
        raise ValueError(
            f"prediction field {name!r} must be {wanted.spelling()} for a match block, in {len(bad)} prediction record{'s' if len(bad) != 1 else ''}: {shown}. "
            f"Declare it as {wanted.spelling()} in the spec's predictions schema, so that the prediction file is checked line by line when it is read."
        )
    return out


@component("scorer", "field_match", emits=lambda p: (p.get("output", "correct"),))
def field_match(
    gold: GoldSet,
    predictions: Mapping[str, Any],
    *,
    gold_field: GoldField = GoldField("label"),
    prediction_field: PredictionField = PredictionField("label"),
    output: str = "correct",
) -> list[ItemScore]:
    """1.0 where the prediction's field equals the gold field (compared as text), else 0.0; missing = 0."""
    out = []
    for item_id, record in gold.items.items():
        predicted = (predictions.get(item_id) or {}).get(prediction_field)
        expected = record.get(gold_field) if isinstance(record, Mapping) else None
        hit = (
            predicted is not None
            and expected is not None
            and str(predicted).strip() == str(expected).strip()
        )
        out.append(ItemScore(item_id, {output: 1.0 if hit else 0.0}))
    return out

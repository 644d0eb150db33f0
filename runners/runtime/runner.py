"""The compiled runner of a task: named stages read → validate → score → aggregate → slice.

A :class:`TaskRunner` is built by ``procbench.dsl.compiler`` from a checked spec; it knows nothing of the
spec language.  ``evaluate`` runs the whole pipeline and returns an :class:`Evaluation`.
"""

from __future__ import annotations

import contextlib
import gc
import _thread
import json
from json.encoder import encode_basestring_ascii
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from procbench.runners.runtime import digests
from procbench.runners.runtime._types import GoldSet, ItemScore, PredictionWarning
from procbench.runners.runtime.records import Record

GoldReader = Callable[[Path, str], GoldSet]
PredictionReader = Callable[[Path, GoldSet], Mapping[str, Any]]
Scorer = Callable[[GoldSet, Mapping[str, Any]], list[ItemScore]]
Aggregator = Callable[[Sequence[ItemScore]], dict[str, float]]


def _canonical(value: Any) -> Any:
    """A JSON-ready form that is the same in every process (sets sorted, records and dataclasses as dicts).

    ``json.dumps(default=str)`` is not enough: a frozenset's ``str`` follows hash order, which
    changes between processes, and the fingerprint must not.  Gold is mostly plain dicts, lists
    and strings, so those exact types are handled first; everything else takes the general path.
    """
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return {
            k if type(k) is str else str(k): v if type(v) in _SCALARS else _canonical(v)
            for k, v in value.items()
        }
    if kind is list or kind is tuple:  # scalars (most members) kept without a call each
        return [v if type(v) in _SCALARS else _canonical(v) for v in value]
    return _canonical_general(value)


_SCALARS = frozenset({str, int, float, bool, type(None)})  # what _canonical returns as it is


# The record and dataclass types _canonical_general has met, with their field names: ``dataclasses.fields``
# walks the class on every call, and gold such as ProPara's holds tens of thousands of them (issue #31).
# A record (runners/runtime/records.py) is written as the dataclass it replaced was: ``__type__`` and
# its fields in order, so fingerprints did not move when the warm path's classes stopped being dataclasses.
_DATACLASS_FIELDS: dict[type, tuple[str, ...]] = {}


def _canonical_general(value: Any) -> Any:
    names = _DATACLASS_FIELDS.get(type(value))
    if names is not None:
        return {
            "__type__": type(value).__name__,
            **{name: _canonical(getattr(value, name)) for name in names},
        }
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=_sort_key)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, Record):
        _DATACLASS_FIELDS[type(value)] = type(value)._fields  # record_fields(value), known a record
        return _canonical_general(value)
    if hasattr(type(value), "__dataclass_fields__") and not isinstance(value, type):
        import dataclasses  # only for another benchmark's dataclass: the warm path defines none (issue #31)

        _DATACLASS_FIELDS[type(value)] = tuple(f.name for f in dataclasses.fields(value))
        return _canonical_general(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def hash_json(digest: Any, value: Any, *, depth: int) -> None:
    """``digest.update(json.dumps(value, sort_keys=True).encode())``, written piece by piece.

    Lists and string-keyed dicts down to ``depth`` levels are written member by member, in the text
    ``json.dumps`` gives them (``[a, b]``, ``{"k": v}`` with sorted keys), so the digest is the same
    while the whole text (hundreds of MB for a 100x gold split, twice over as text and bytes) never is.
    """
    kind = type(value)
    if depth <= 0 or not ((kind is list and value) or (kind is dict and value)):
        digest.update(json.dumps(value, sort_keys=True).encode())
        return
    if kind is list:
        digest.update(b"[")
        for index, member in enumerate(value):
            if index:
                digest.update(b", ")
            hash_json(digest, member, depth=depth - 1)
        digest.update(b"]")
        return
    if any(type(key) is not str for key in value):  # json.dumps's own key handling
        digest.update(json.dumps(value, sort_keys=True).encode())
        return
    digest.update(b"{")
    for index, key in enumerate(sorted(value)):
        if index:
            digest.update(b", ")
        digest.update(encode_basestring_ascii(key).encode() + b": ")
        hash_json(digest, value[key], depth=depth - 1)
    digest.update(b"}")


def _sort_key(value: Any) -> str:
    """The order of a set's members: their JSON text (``json.dumps`` of a string, without its call overhead)."""
    return (
        encode_basestring_ascii(value) if type(value) is str else json.dumps(value, sort_keys=True)
    )


_gc_lock = (
    _thread.allocate_lock()
)  # _thread: the threading module's import is not needed for one lock
_gc_depth = 0
_gc_was_enabled = False


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a stage runs (reference counting still frees).

    Reading and scoring a large split allocates millions of small dicts, lists and tuples that all
    stay alive; each automatic collection would walk every one of them again (a 100x OpenPI split
    spends a third of its time there).  Nested and concurrent uses re-enable it once, at the end.
    """
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


class SliceDef(Record):
    """A slice a spec declares: its name, its kind and the label or answer label it groups by."""

    __slots__ = ("name", "kind", "key")
    name: str
    kind: str  # "label" (subset of items) or "answer_label" (gold restricted, all items re-scored)
    key: str

    def __init__(self, name: str, kind: str, key: str) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "key", key)


class SliceResult(Record):
    """One group of a slice: its items, their metrics and how many of them were answered."""

    __slots__ = ("n_items", "metrics", "answered")
    n_items: int
    metrics: dict[str, float]
    answered: int | None  # items of the slice with a prediction record (None: not known)

    def __init__(
        self, n_items: int, metrics: dict[str, float], answered: int | None = None
    ) -> None:
        object.__setattr__(self, "n_items", n_items)
        object.__setattr__(self, "metrics", metrics)
        object.__setattr__(self, "answered", answered)


def coverage(answered: int | None, total: int) -> dict[str, Any] | None:
    """Answered / total as ``score --json`` reports it (docs/submissions.md): None where the count is not known."""
    if answered is None:
        return None
    return {"answered": answered, "total": total, "fraction": answered / total if total else 0.0}


class Evaluation(Record):
    """A scored prediction file: the metrics, the slices and the item scores (``score --json`` writes :meth:`to_json`)."""

    __slots__ = (
        "task",
        "split",
        "fingerprint",
        "n_items",
        "metrics",
        "slices",
        "items",
        "item_labels",
        "warnings",
        "answered",
    )
    task: str
    split: str
    fingerprint: str
    n_items: int
    metrics: dict[str, float]
    slices: dict[str, dict[str, SliceResult]]
    items: list[ItemScore]
    item_labels: Mapping[str, Mapping[str, str]]
    warnings: list[str]
    answered: (
        int | None
    )  # items with a prediction record (the rest were scored by the task's missing convention)

    def __init__(
        self,
        task: str,
        split: str,
        fingerprint: str,
        n_items: int,
        metrics: dict[str, float],
        slices: dict[str, dict[str, SliceResult]],
        items: list[ItemScore],
        item_labels: Mapping[str, Mapping[str, str]] | None = None,
        warnings: list[str] | None = None,
        answered: int | None = None,
    ) -> None:
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "split", split)
        object.__setattr__(self, "fingerprint", fingerprint)
        object.__setattr__(self, "n_items", n_items)
        object.__setattr__(self, "metrics", metrics)
        object.__setattr__(self, "slices", slices)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "item_labels", {} if item_labels is None else item_labels)
        object.__setattr__(self, "warnings", [] if warnings is None else warnings)
        object.__setattr__(self, "answered", answered)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "split": self.split,
            "fingerprint": self.fingerprint,
            "n_items": self.n_items,
            "coverage": coverage(self.answered, self.n_items),
            "metrics": self.metrics,
            "slices": {
                name: {
                    value: {
                        "n_items": r.n_items,
                        "coverage": coverage(r.answered, r.n_items),
                        "metrics": r.metrics,
                    }
                    for value, r in values.items()
                }
                for name, values in self.slices.items()
            },
        }


# (runner, data root, split, compute) -> the gold's fingerprint: compute()'s value, or the one remembered for it
FingerprintMemo = Callable[["TaskRunner", Path, str, Callable[[], str]], str]


class TaskRunner(Record, frozen=False):
    """A compiled task: reads gold and predictions, scores, aggregates and slices (built by procbench.dsl.plan.build)."""

    __slots__ = (
        "name",
        "splits",
        "hidden_splits",
        "metric_names",
        "primary",
        "read_gold",
        "read_predictions",
        "make_scorer",
        "aggregate",
        "slices",
        "spec_digest",
        "_gold_cache",
        "fingerprints",
    )
    _hidden = frozenset({"_gold_cache", "fingerprints"})
    name: str
    splits: tuple[str, ...]
    hidden_splits: tuple[str, ...]
    metric_names: tuple[str, ...]
    primary: str
    read_gold: GoldReader
    read_predictions: PredictionReader
    make_scorer: Callable[[Mapping[str, Any]], Scorer]  # submission metadata -> scorer
    aggregate: Aggregator
    slices: tuple[SliceDef, ...]
    spec_digest: str  # canonical spec + component versions
    _gold_cache: dict[tuple[str, str], tuple[GoldSet, str]]
    # Where gold fingerprints are remembered by the content of the split's files (None: each read
    # computes it): ``fingerprints(runner, data_root, split, compute)`` gives ``compute()``'s value.
    # procbench.dsl.tasks.load_runner sets procbench/dsl/gold_fingerprints.py's.
    fingerprints: FingerprintMemo | None

    def __init__(
        self,
        name: str,
        splits: tuple[str, ...],
        hidden_splits: tuple[str, ...],
        metric_names: tuple[str, ...],
        primary: str,
        read_gold: GoldReader,
        read_predictions: PredictionReader,
        make_scorer: Callable[[Mapping[str, Any]], Scorer],
        aggregate: Aggregator,
        slices: tuple[SliceDef, ...],
        spec_digest: str,
        _gold_cache: dict[tuple[str, str], tuple[GoldSet, str]] | None = None,
        fingerprints: FingerprintMemo | None = None,
    ) -> None:
        self.name = name
        self.splits = splits
        self.hidden_splits = hidden_splits
        self.metric_names = metric_names
        self.primary = primary
        self.read_gold = read_gold
        self.read_predictions = read_predictions
        self.make_scorer = make_scorer
        self.aggregate = aggregate
        self.slices = slices
        self.spec_digest = spec_digest
        self._gold_cache = {} if _gold_cache is None else _gold_cache
        self.fingerprints = fingerprints

    # -- stages --------------------------------------------------------------------------------
    def gold(self, data_root: Path, split: str) -> tuple[GoldSet, str]:
        """Read (and cache) the gold of a split; returns it with the fingerprint of spec + gold."""
        if split not in self.splits:
            raise ValueError(
                f"task {self.name!r} has no split {split!r} (splits: {', '.join(self.splits)})"
            )
        key = (str(data_root), split)
        if key not in self._gold_cache:
            with cyclic_gc_paused():
                gold = self.read_gold(data_root, split)

                def compute() -> str:
                    digest = digests.sha256()
                    digest.update(self.spec_digest.encode())
                    hash_json(
                        digest, _canonical([gold.items, gold.labels, gold.answer_views]), depth=2
                    )
                    return digest.hexdigest()

                fingerprint = (
                    compute()
                    if self.fingerprints is None
                    else self.fingerprints(self, data_root, split, compute)
                )
            self._gold_cache[key] = (gold, fingerprint)
        return self._gold_cache[key]

    def validate(self, path: Path, gold: GoldSet) -> tuple[Mapping[str, Any], list[str]]:
        """Read a prediction file; raises InvalidPredictions, returns warnings as text."""
        with warnings.catch_warnings(record=True) as caught, cyclic_gc_paused():
            warnings.simplefilter("always", PredictionWarning)
            records = self.read_predictions(path, gold)
        return records, [
            str(w.message) for w in caught if issubclass(w.category, PredictionWarning)
        ]

    def score(
        self,
        gold: GoldSet,
        predictions: Mapping[str, Any],
        metadata: Mapping[str, Any] | None = None,
    ) -> list[ItemScore]:
        with cyclic_gc_paused():
            return self.make_scorer(metadata or {})(gold, predictions)

    def slice_results(
        self,
        gold: GoldSet,
        predictions: Mapping[str, Any],
        items: Sequence[ItemScore],
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, dict[str, SliceResult]]:
        with cyclic_gc_paused():
            return self._slice_results(gold, predictions, items, metadata)

    def _slice_results(
        self,
        gold: GoldSet,
        predictions: Mapping[str, Any],
        items: Sequence[ItemScore],
        metadata: Mapping[str, Any] | None,
    ) -> dict[str, dict[str, SliceResult]]:
        out: dict[str, dict[str, SliceResult]] = {}
        by_id = {i.item_id: i for i in items}
        for sl in self.slices:
            if sl.kind == "label":
                groups: dict[str, list[ItemScore]] = {}
                for item_id, labels in gold.labels.items():
                    if sl.key in labels and item_id in by_id:
                        groups.setdefault(labels[sl.key], []).append(by_id[item_id])
                out[sl.name] = {
                    value: SliceResult(
                        len(group),
                        self.aggregate(group),
                        sum(1 for i in group if i.item_id in predictions),
                    )
                    for value, group in sorted(groups.items())
                }
            else:
                views = gold.answer_views.get(sl.key, {})
                results = {}
                for value, view_items in views.items():
                    view = GoldSet(items=view_items, labels=gold.labels)
                    scored = self.score(view, predictions, metadata)
                    results[value] = SliceResult(
                        len(scored),
                        self.aggregate(scored),
                        sum(1 for i in scored if i.item_id in predictions),
                    )
                out[sl.name] = results
        return out

    # -- the whole pipeline --------------------------------------------------------------------
    def evaluate(
        self,
        data_root: Path,
        split: str,
        predictions_path: Path,
        metadata: Mapping[str, Any] | None = None,
    ) -> Evaluation:
        gold, fingerprint = self.gold(data_root, split)
        predictions, notes = self.validate(predictions_path, gold)
        return self.evaluate_records(gold, fingerprint, split, predictions, notes, metadata)

    def evaluate_records(
        self,
        gold: GoldSet,
        fingerprint: str,
        split: str,
        predictions: Mapping[str, Any],
        notes: list[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Evaluation:
        with cyclic_gc_paused():
            return self._evaluation(gold, fingerprint, split, predictions, notes, metadata)

    def _evaluation(
        self,
        gold: GoldSet,
        fingerprint: str,
        split: str,
        predictions: Mapping[str, Any],
        notes: list[str] | None,
        metadata: Mapping[str, Any] | None,
    ) -> Evaluation:
        items = self.score(gold, predictions, metadata)
        return Evaluation(
            task=self.name,
            split=split,
            fingerprint=fingerprint,
            n_items=len(items),
            metrics=self.aggregate(items),
            slices=self.slice_results(gold, predictions, items, metadata),
            items=items,
            item_labels=gold.labels,
            warnings=list(notes or []),
            answered=sum(1 for i in items if i.item_id in predictions),
        )

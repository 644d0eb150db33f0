"""Matchers: compare a gold answer set with a predicted answer set and return (P, R, F1).

``BestMatch.score_many`` scores many items at once when the similarity has a pair kernel: every
(prediction, gold) pair of a chunk of items goes through the kernel in one numpy call, and the
row and column maxima are segmented reductions.  Sums over answers stay Python ``sum`` in the
scalar path's order, so results are identical to scoring item by item.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol


from procbench.runners.runtime.records import Record
from procbench.runners.runtime.registry import component
from procbench.runners.library import protocols
from procbench.runners.library.protocols import PairKernel, Similarity
from procbench.runners.library.text import IDENTITY, Pipeline

if TYPE_CHECKING:
    import numpy as np
else:  # imported on first use: see procbench.runners.runtime.lazy_numpy
    from procbench.runners.runtime.lazy_numpy import np

# Past this many distinct strings a pair scorer forgets what it encoded (bounded memory when one
# process scores many submissions); the next call re-encodes what it needs.
MAX_ENCODED_STRINGS = 2_000_000
# Pairs scored per kernel call: bounds the temporary arrays whatever the size of the split.
PAIRS_PER_CHUNK = 400_000
# Pair values a pair scorer remembers across calls before it starts afresh.
MAX_REMEMBERED_PAIRS = 5_000_000


class PRF(Record):
    """Precision, recall and F1 of one matched pair of answer lists."""

    __slots__ = ("precision", "recall", "f1")
    precision: float
    recall: float
    f1: float

    def __init__(self, precision: float, recall: float, f1: float) -> None:
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "recall", recall)
        object.__setattr__(self, "f1", f1)


def f1_of(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


class PairScorer(Record, frozen=False):
    """Scores raw answer strings: ``content`` normaliser, an empty-string guard, then the similarity.

    The guard is the OpenPI one: two empty contents score 1, exactly one empty content scores 0,
    whatever the similarity would say.  Prepared forms are cached per raw string.
    """

    __slots__ = ("similarity", "content", "similarity_input", "guard_empty", "_prepared", "_batch")
    _hidden = frozenset({"_batch"})
    similarity: Similarity
    content: Pipeline
    similarity_input: Pipeline
    guard_empty: bool
    _prepared: dict[str, tuple[str, Any]]
    _batch: PairBatch | None

    def __init__(
        self,
        similarity: Similarity,
        content: Pipeline = IDENTITY,
        similarity_input: Pipeline = IDENTITY,
        guard_empty: bool = True,
        _prepared: dict[str, tuple[str, Any]] | None = None,
        _batch: PairBatch | None = None,
    ) -> None:
        self.similarity = similarity
        self.content = content
        self.similarity_input = similarity_input
        self.guard_empty = guard_empty
        self._prepared = {} if _prepared is None else _prepared
        self._batch = _batch

    def prepare(self, raw: str) -> tuple[str, Any]:
        hit = self._prepared.get(raw)
        if hit is None:
            if len(self._prepared) >= protocols.PREPARED_LIMIT:
                self._prepared.clear()
            content = self.content(raw)
            hit = (content, self.similarity.prepare(self.similarity_input(content)))
            self._prepared[raw] = hit
        return hit

    def score(self, gold: tuple[str, Any], prediction: tuple[str, Any]) -> float:
        if self.guard_empty and (not gold[0] or not prediction[0]):
            return 1.0 if not gold[0] and not prediction[0] else 0.0
        return self.similarity.score(gold[1], prediction[1])

    @property
    def batchable(self) -> bool:
        return callable(getattr(self.similarity, "kernel", None))

    def batch(self) -> PairBatch:
        """This scorer's own batch encoder (kept, so that later calls reuse what it encoded)."""
        if self._batch is None:
            self._batch = PairBatch((self,))
        return self._batch


class PairBatch:
    """The batch path of one or more pair scorers that share their normalisers.

    Each raw string is normalised and given an index once (the index of its similarity input, so
    equal inputs share one); every scorer's pair kernel encodes the same inputs under the same
    indices and scores index pairs.  Pair values are remembered per scorer (sorted keys
    ``gold << 32 | prediction``), so re-scoring the same pairs, as answer-label slices do, only
    computes the pairs not seen before.
    """

    def __init__(self, scorers: Sequence[PairScorer]):
        if not scorers or not all(s.batchable for s in scorers):
            raise ValueError("every scorer of a batch needs a similarity with a pair kernel")
        first = scorers[0]
        if any(
            s.content is not first.content or s.similarity_input is not first.similarity_input
            for s in scorers
        ):
            raise ValueError("the scorers of a batch must share their normalisers")
        self.scorers = tuple(scorers)
        self._reset()

    @staticmethod
    def shareable(scorers: Sequence[PairScorer]) -> bool:
        first = scorers[0]
        return all(
            s.batchable
            and s.content is first.content
            and s.similarity_input is first.similarity_input
            for s in scorers
        )

    def _reset(self) -> None:
        self.encoded: dict[str, tuple[bool, int]] = {}
        self.inputs: dict[str, int] = {}
        self.kernels: list[PairKernel] = [s.similarity.kernel() for s in self.scorers]  # type: ignore[attr-defined]
        self.memos = [PairMemo() for _ in self.scorers]

    def start(self) -> None:
        """Called before encoding a chunk: forget everything once the cache is full (bounded memory)."""
        if len(self.inputs) > MAX_ENCODED_STRINGS:
            self._reset()

    def encode(self, raws: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """For each raw string: whether its content is empty, and the index of its similarity input."""
        scorer = self.scorers[0]
        encoded, inputs, fresh = self.encoded, self.inputs, []
        for raw in raws:
            if raw not in encoded:
                content = scorer.content(raw)
                text = scorer.similarity_input(content)
                index = inputs.get(text)
                if index is None:
                    index = inputs[text] = len(inputs)
                    fresh.append(text)
                encoded[raw] = (not content, index)
        for kernel in self.kernels:
            kernel.extend(fresh)
        pairs = [encoded[raw] for raw in raws]
        return np.fromiter((e for e, _ in pairs), dtype=bool, count=len(pairs)), np.fromiter(
            (i for _, i in pairs), dtype=np.int64, count=len(pairs)
        )

    def pairs(
        self,
        gold: np.ndarray,
        prediction: np.ndarray,
        gold_empty: np.ndarray,
        prediction_empty: np.ndarray,
    ) -> IndexPairs:
        """The index pairs of a chunk, as their sorted distinct keys: computed once for every scorer."""
        keys, inverse = np.unique((gold << 32) | prediction, return_inverse=True)
        return IndexPairs(keys, inverse, gold_empty, prediction_empty)

    def score(self, k: int, pairs: IndexPairs) -> np.ndarray:
        """Scorer ``k``'s ``score`` of every pair from ``pairs`` (with its empty-content guard).

        Each distinct pair is looked up in the memo or scored once.  The keys are sorted, which
        keeps every binary search cache-friendly and lets the kernel see pairs grouped by gold.
        """
        keys = pairs.keys
        values, found = self.memos[k].lookup(keys)
        missing = np.flatnonzero(~found)
        if len(missing):
            new_keys = keys[missing]
            new_values = self.kernels[k].score_pairs(new_keys >> 32, new_keys & 0xFFFFFFFF)
            values[missing] = new_values
            self.memos[k].add(new_keys, new_values)
        values = values[pairs.inverse]
        if self.scorers[k].guard_empty:
            gold_empty, prediction_empty = pairs.gold_empty, pairs.prediction_empty
            values = np.where(
                gold_empty | prediction_empty,
                np.where(gold_empty & prediction_empty, 1.0, 0.0),
                values,
            )
        return values


class PairMemo:
    """Pair values remembered by key, in one sorted run; past ``MAX_REMEMBERED_PAIRS`` it starts afresh.

    Keys arrive sorted per chunk, so a lookup is a cache-friendly binary search and remembering a
    chunk is one linear merge (``np.insert``).
    """

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.int64)
        self.values = np.zeros(0)

    @property
    def size(self) -> int:
        return len(self.keys)

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(value, found) per key; a value is 0.0 where not found."""
        if not self.size:
            return np.zeros(len(keys)), np.zeros(len(keys), dtype=bool)
        at = np.minimum(np.searchsorted(self.keys, keys), self.size - 1)
        found = self.keys[at] == keys
        return np.where(found, self.values[at], 0.0), found

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Remember the values of sorted keys that are not remembered yet."""
        if self.size + len(keys) > MAX_REMEMBERED_PAIRS:
            self.keys, self.values = self.keys[:0], self.values[:0]
        at = np.searchsorted(self.keys, keys)
        self.keys, self.values = np.insert(self.keys, at, keys), np.insert(self.values, at, values)


class IndexPairs(Record):
    """The (gold, prediction) index pairs of a chunk: distinct keys ``gold << 32 | prediction``
    in ascending order, ``inverse`` mapping each pair to its key, and each side's emptiness."""

    __slots__ = ("keys", "inverse", "gold_empty", "prediction_empty")
    keys: np.ndarray
    inverse: np.ndarray
    gold_empty: np.ndarray
    prediction_empty: np.ndarray

    def __init__(
        self,
        keys: np.ndarray,
        inverse: np.ndarray,
        gold_empty: np.ndarray,
        prediction_empty: np.ndarray,
    ) -> None:
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "inverse", inverse)
        object.__setattr__(self, "gold_empty", gold_empty)
        object.__setattr__(self, "prediction_empty", prediction_empty)


class EmptySides(Record):
    """(P, R, F1) when one side or both are empty, before any similarity is computed."""

    __slots__ = ("both", "gold", "prediction")
    both: tuple[float, float, float]
    gold: tuple[float, float, float]
    prediction: tuple[float, float, float]

    def __init__(
        self,
        both: tuple[float, float, float],
        gold: tuple[float, float, float],
        prediction: tuple[float, float, float],
    ) -> None:
        object.__setattr__(self, "both", both)
        object.__setattr__(self, "gold", gold)
        object.__setattr__(self, "prediction", prediction)

    def of(self, gold: Sequence[str], predictions: Sequence[str]) -> PRF | None:
        if not gold and not predictions:
            return PRF(*self.both)
        if not gold:
            return PRF(*self.gold)
        if not predictions:
            return PRF(*self.prediction)
        return None


# OpenPI's conventions: nothing vs nothing is perfect; predicting nothing keeps precision 1.
OPENPI_EMPTY_SIDES = EmptySides(
    both=(1.0, 1.0, 1.0), gold=(0.0, 1.0, 0.0), prediction=(1.0, 0.0, 0.0)
)


RecallRule = Literal["best", "precision_if_same_size"]


class Matcher(Protocol):
    def __call__(
        self, gold: Sequence[str], predictions: Sequence[str], pairs: PairScorer
    ) -> PRF: ...


class _PairLayout(Record):
    """Every (row, column) pair of a chunk of items, item after item, row-major inside an item.

    ``row_starts`` start each row's segment; ``values[column_major]`` lists the same pairs column
    by column, whose segments start at ``column_starts``.
    """

    __slots__ = ("row_of_pair", "column_of_pair", "row_starts", "column_major", "column_starts")
    row_of_pair: np.ndarray
    column_of_pair: np.ndarray
    row_starts: np.ndarray
    column_major: np.ndarray
    column_starts: np.ndarray

    def __init__(
        self,
        row_of_pair: np.ndarray,
        column_of_pair: np.ndarray,
        row_starts: np.ndarray,
        column_major: np.ndarray,
        column_starts: np.ndarray,
    ) -> None:
        object.__setattr__(self, "row_of_pair", row_of_pair)
        object.__setattr__(self, "column_of_pair", column_of_pair)
        object.__setattr__(self, "row_starts", row_starts)
        object.__setattr__(self, "column_major", column_major)
        object.__setattr__(self, "column_starts", column_starts)

    @classmethod
    def of(cls, rows_per_item: np.ndarray, columns_per_item: np.ndarray) -> _PairLayout:
        items = np.arange(len(rows_per_item), dtype=np.int64)
        block = rows_per_item * columns_per_item
        block_start = np.cumsum(block) - block
        first_row = np.cumsum(rows_per_item) - rows_per_item
        first_column = np.cumsum(columns_per_item) - columns_per_item
        item_of_pair = np.repeat(items, block)
        offset = np.arange(len(item_of_pair), dtype=np.int64) - block_start[item_of_pair]
        rows_here, columns_here = rows_per_item[item_of_pair], columns_per_item[item_of_pair]
        item_of_row = np.repeat(items, rows_per_item)
        item_of_column = np.repeat(items, columns_per_item)
        return cls(
            row_of_pair=first_row[item_of_pair] + offset // columns_here,
            column_of_pair=first_column[item_of_pair] + offset % columns_here,
            row_starts=block_start[item_of_row]
            + (np.arange(len(item_of_row)) - first_row[item_of_row])
            * columns_per_item[item_of_row],
            column_major=block_start[item_of_pair]
            + (offset % rows_here) * columns_here
            + offset // rows_here,
            column_starts=block_start[item_of_column]
            + (np.arange(len(item_of_column)) - first_column[item_of_column])
            * rows_per_item[item_of_column],
        )


class BestMatch(Record):
    """Soft set P/R/F1 without alignment: each prediction takes its best gold score and vice versa.

    ``dedup`` removes repeated predictions by raw string identity before scoring (gold is never
    de-duplicated).  Empty sides follow the OpenPI conventions, configurable per spec.  ``recall =
    "precision_if_same_size"`` is the ProPara evaluator's quirk (docs/metrics.md §2A.6): when there are
    as many predictions as gold answers, recall reuses the precision numerator.
    """

    __slots__ = ("dedup", "empty_sides", "threshold", "recall")
    dedup: bool
    empty_sides: EmptySides
    threshold: float
    recall: RecallRule

    def __init__(
        self,
        dedup: bool = False,
        empty_sides: EmptySides | None = None,
        threshold: float = 0.0,
        recall: RecallRule = "best",
    ) -> None:
        object.__setattr__(self, "dedup", dedup)
        object.__setattr__(
            self, "empty_sides", OPENPI_EMPTY_SIDES if empty_sides is None else empty_sides
        )
        object.__setattr__(self, "threshold", threshold)
        object.__setattr__(self, "recall", recall)

    def __call__(self, gold: Sequence[str], predictions: Sequence[str], pairs: PairScorer) -> PRF:
        empty = self.empty_sides.of(gold, predictions)
        if empty is not None:
            return empty
        if self.dedup:
            predictions = list(dict.fromkeys(predictions))
        prepare, score = pairs.prepare, pairs.score
        gold_prepared = [prepare(g) for g in gold]
        matrix: dict[str, list[float]] = {}
        for p in dict.fromkeys(predictions):  # each distinct prediction, prepared once
            q = prepare(p)
            matrix[p] = [score(g, q) for g in gold_prepared]
        distinct = list(matrix)
        precision_sum = sum(self._best(matrix[p]) for p in predictions)
        if self.recall == "precision_if_same_size" and len(predictions) == len(gold):
            recall_sum = precision_sum
        else:
            recall_sum = sum(self._best([matrix[p][j] for p in distinct]) for j in range(len(gold)))
        precision, recall = precision_sum / len(predictions), recall_sum / len(gold)
        return PRF(precision, recall, f1_of(precision, recall))

    def score_many(
        self,
        golds: Sequence[Sequence[str]],
        predictions: Sequence[Sequence[str]],
        pairs: PairScorer,
    ) -> list[PRF]:
        """``[self(g, p, pairs) for g, p in zip(golds, predictions)]``, vectorised when the similarity allows."""
        if not pairs.batchable:
            return [self(g, p, pairs) for g, p in zip(golds, predictions)]
        return self.score_shared(golds, predictions, pairs.batch())[0]

    def score_shared(
        self, golds: Sequence[Sequence[str]], predictions: Sequence[Sequence[str]], batch: PairBatch
    ) -> list[list[PRF]]:
        """``score_many`` under each scorer of ``batch`` at once: the answers are encoded and laid out once."""
        outs: list[list[PRF | None]] = [[None] * len(golds) for _ in batch.scorers]
        chunk: list[tuple[int, Sequence[str], list[str]]] = []
        budget = 0
        for position, (gold, prediction) in enumerate(zip(golds, predictions)):
            if not gold or not prediction:
                for out, scorer in zip(outs, batch.scorers):
                    out[position] = self(gold, prediction, scorer)
                continue
            prediction = list(dict.fromkeys(prediction)) if self.dedup else list(prediction)
            chunk.append((position, gold, prediction))
            budget += len(gold) * len(prediction)
            if budget >= PAIRS_PER_CHUNK:
                self._score_chunk(chunk, batch, outs)
                chunk, budget = [], 0
        if chunk:
            self._score_chunk(chunk, batch, outs)
        return outs  # type: ignore[return-value]

    def _score_chunk(
        self,
        chunk: Sequence[tuple[int, Sequence[str], list[str]]],
        batch: PairBatch,
        outs: list[list[PRF | None]],
    ) -> None:
        # rows: the distinct predictions of each item; columns: every gold answer of each item
        row_raws: list[str] = []
        column_raws: list[str] = []
        rows_of: list[list[int]] = []
        rows_per_item, columns_per_item = [], []
        for _, gold, prediction in chunk:
            local = {p: len(row_raws) + i for i, p in enumerate(dict.fromkeys(prediction))}
            row_raws.extend(local)
            rows_of.append([local[p] for p in prediction])
            rows_per_item.append(len(local))
            columns_per_item.append(len(gold))
            column_raws.extend(gold)
        batch.start()
        row_empty, row_index = batch.encode(row_raws)
        column_empty, column_index = batch.encode(column_raws)
        layout = _PairLayout.of(
            np.asarray(rows_per_item, dtype=np.int64), np.asarray(columns_per_item, dtype=np.int64)
        )
        rows, columns = layout.row_of_pair, layout.column_of_pair
        gold_index, prediction_index = column_index[columns], row_index[rows]
        pairs = batch.pairs(gold_index, prediction_index, column_empty[columns], row_empty[rows])
        for k, out in enumerate(outs):
            values = batch.score(k, pairs)
            row_list = self._best_of(values, layout.row_starts).tolist()
            column_list = self._best_of(values[layout.column_major], layout.column_starts).tolist()
            column_end = 0
            for (position, gold, prediction), item_rows in zip(chunk, rows_of):
                column_start, column_end = column_end, column_end + len(gold)
                precision_sum = sum(row_list[r] for r in item_rows)
                if self.recall == "precision_if_same_size" and len(prediction) == len(gold):
                    recall_sum = precision_sum
                else:
                    recall_sum = sum(column_list[column_start:column_end])
                precision, recall = precision_sum / len(prediction), recall_sum / len(gold)
                out[position] = PRF(precision, recall, f1_of(precision, recall))

    def _best_of(self, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """``_best`` of each segment: starts at 0.0, only a strictly greater value replaces it (never NaN)."""
        best = np.fmax(np.fmax.reduceat(values, starts), 0.0)
        return np.where(best >= self.threshold, best, 0.0)

    def _best(self, values: Sequence[float]) -> float:
        # from 0.0, only a strictly greater value replaces the best: max's own rule, in C
        best = max(0.0, *values) if values else 0.0
        return best if best >= self.threshold else 0.0


@component("matcher", "best_match", takes="list(any)")
def best_match(
    dedup: bool = False, *, threshold: float = 0.0, recall: RecallRule = "best"
) -> Matcher:
    """Best-match soft P/R/F1 (OpenPI); ``dedup`` drops repeated predictions, ``threshold`` zeroes weak best scores.

    ``recall = "precision_if_same_size"``: ProPara's quirk, recall reuses the precision numerator
    when the two lists have the same length (the default ``"best"`` sums each gold answer's best score).
    """
    return BestMatch(dedup=dedup, threshold=threshold, recall=recall)


class OneToOne(Record):
    """Soft P/R/F1 under a one-to-one alignment that maximises the summed similarity.

    Each gold answer is paired with at most one prediction (Hungarian algorithm, scipy's
    ``linear_sum_assignment``); pairs scoring below ``threshold`` count as unmatched.
    """

    __slots__ = ("threshold", "empty_sides")
    threshold: float
    empty_sides: EmptySides

    def __init__(self, threshold: float = 0.0, empty_sides: EmptySides | None = None) -> None:
        object.__setattr__(self, "threshold", threshold)
        object.__setattr__(
            self, "empty_sides", OPENPI_EMPTY_SIDES if empty_sides is None else empty_sides
        )

    def __call__(self, gold: Sequence[str], predictions: Sequence[str], pairs: PairScorer) -> PRF:
        import numpy as np
        from scipy.optimize import linear_sum_assignment

        empty = self.empty_sides.of(gold, predictions)
        if empty is not None:
            return empty
        gold_prepared = [pairs.prepare(g) for g in gold]
        matrix = np.array(
            [[pairs.score(g, pairs.prepare(p)) for g in gold_prepared] for p in predictions]
        )
        rows, cols = linear_sum_assignment(matrix, maximize=True)
        total = float(sum(v for v in matrix[rows, cols] if v >= self.threshold))
        precision, recall = total / len(predictions), total / len(gold)
        return PRF(precision, recall, f1_of(precision, recall))


@component("matcher", "one_to_one", takes="list(any)")
def one_to_one(threshold: float = 0.0) -> Matcher:
    """One-to-one alignment maximising total similarity (each answer used once); weak pairs below ``threshold`` score 0."""
    return OneToOne(threshold=threshold)

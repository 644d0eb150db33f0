"""Aligned walks: each line of one side with its best partner line on the other, counting what the pairs share.

A spec's ``align`` block (docs/language.md, "Aligned walks") compiles to one :class:`AlignedWalk`. For an
item it runs two passes: the precision pass (side ``p``) walks the predicted lines against the gold lines,
the recall pass (side ``r``) the gold lines against the predicted ones. In a pass:

1. **Alignment.** Each walked line is paired with the line of the other side it scores best with (the
   first of equally good ones); a line whose best partner scores below ``threshold`` is skipped. Lines
   failing ``where`` are aligned (and counted as aligned) but add nothing.
2. **Entities.** An ``entities`` block names places of a line (``[head, tail]``) that hold records; each
   is an occurrence of an entity, compared with the record in the same place of the partner line. The
   first entity registered in this pass with equal ``same`` members and an ``identity`` score of at least
   ``at_least`` is the same entity; else the occurrence registers a new one. An entity is compared at
   each of its occurrences until ``until`` first scores 1 (upstream PAGED's rule; docs/metrics.md §5).
3. **Tallies.** A ``count`` block keeps, per value of its ``by`` member (one of ``kinds``), stats of the
   lines (``of`` empty) or of one entity kind: ``1`` counts each line or each entity once, a similarity
   adds its score at every comparison, ``best(X)`` adds each entity's best score once (raised as better
   ones come, so the sum never counts a node twice).

Per-item values are ``<count>.<kind>.<side>_<stat>`` plus ``<walk>.<side>_aligned``. Additions to every
value happen in walk order, so sums over items then keys reproduce an ordered official loop to the bit.
No library aligns this way; the walk is written once here and declared per task.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from procbench.runners.library.record_rules import member_at, score_pair
from procbench.runners.library.similarity import Similarity  # noqa: TC001

SIDES = ("p", "r")
StatSource = Literal["once", "each", "best"]


@dataclass(frozen=True)
class Stat:
    """One stat of a count block: ``name = 1`` (once), ``name = X`` (each comparison) or ``name = best(X)``."""

    name: str
    source: StatSource
    similarity: Similarity | None = None


@dataclass(frozen=True)
class Tally:
    """A ``count`` block: stats of the lines (``of`` empty) or of an entity kind, per value of ``by``."""

    name: str
    of: str
    by: str
    kinds: tuple[str, ...]
    stats: tuple[Stat, ...]
    where: str = ""  # a member that must be non-empty for the record to be counted

    def keys(self, side: str) -> list[str]:
        return [
            f"{self.name}.{kind}.{side}_{stat.name}" for kind in self.kinds for stat in self.stats
        ]


@dataclass(frozen=True)
class Entities:
    """An ``entities`` block: the places of a line holding one, and when two occurrences are one entity."""

    name: str
    places: tuple[str, ...]
    same: tuple[str, ...]
    identity: Similarity
    at_least: float
    until: Similarity


@dataclass(slots=True)
class _Entity:
    record: Any
    key: tuple[Any, ...]
    prepared: Any  # the identity similarity's preparation of the first occurrence
    settled: bool = False  # `until` scored 1: not compared again
    best: dict[str, float] = field(
        default_factory=dict
    )  # value key -> best score so far (best(X) stats)


@dataclass(frozen=True)
class AlignedWalk:
    """One ``align`` block: the alignment of two lists of line records, its entities and its counts."""

    name: str
    gold: str
    prediction: str
    on: str
    similarity: Similarity
    threshold: float
    where: str
    entities: tuple[Entities, ...]
    tallies: tuple[Tally, ...]
    symmetric: bool = False  # the similarity is symmetric: one matrix serves both passes

    def keys(self) -> tuple[str, ...]:
        """Every value the walk writes, in a fixed order (every item carries them all).

        Built once: every item's values share these key strings (a new set of strings per item would
        cost more than the item's values themselves).
        """
        held: tuple[str, ...] | None = self.__dict__.get("_keys")
        if held is None:
            out: list[str] = []
            for side in SIDES:
                out += [key for tally in self.tallies for key in tally.keys(side)]
                out.append(f"{self.name}.{side}_aligned")
            held = tuple(out)
            object.__setattr__(self, "_keys", held)  # a cache, not a field: equality is unchanged
        return held

    def __call__(
        self, gold_lines: Sequence[Any], predicted_lines: Sequence[Any]
    ) -> dict[str, float]:
        values: dict[str, float] = dict.fromkeys(self.keys(), 0)
        matrix = self._similarities(predicted_lines, gold_lines)
        _Pass(self, "p", values).run(predicted_lines, gold_lines, matrix)
        transposed = (
            [list(column) for column in zip(*matrix)]
            if self.symmetric
            else self._similarities(gold_lines, predicted_lines)
        )
        _Pass(self, "r", values).run(gold_lines, predicted_lines, transposed)
        return values

    def _similarities(self, rows: Sequence[Any], columns: Sequence[Any]) -> list[list[float]]:
        texts_rows = [member_at(line, self.on) for line in rows]
        texts_columns = [member_at(line, self.on) for line in columns]
        matrix = getattr(self.similarity, "matrix", None)
        if matrix is not None and rows and columns:
            return matrix(texts_rows, texts_columns)  # the same values, computed at once
        sim = self.similarity
        prepared_columns = [sim.prepare(text) for text in texts_columns]
        prepared_rows = [sim.prepare(text) for text in texts_rows]
        return [[sim.score(row, column) for column in prepared_columns] for row in prepared_rows]


class _Pass:
    """One pass of a walk: ``these`` lines against ``others``, adding to ``values`` under ``side``."""

    def __init__(self, walk: AlignedWalk, side: str, values: dict[str, float]) -> None:
        self.walk, self.side, self.values = walk, side, values
        self.registries: dict[str, dict[tuple[Any, ...], list[_Entity]]] = {
            e.name: {} for e in walk.entities
        }
        self.resolved: dict[str, dict[tuple[Any, ...], _Entity]] = {
            e.name: {} for e in walk.entities
        }
        self.line_tallies = [t for t in walk.tallies if not t.of]
        self.entity_tallies = {
            e.name: [t for t in walk.tallies if t.of == e.name] for e in walk.entities
        }
        # tally -> kind -> its stats with the value each adds to (the keys are built once, not per record)
        self.stat_keys = {
            id(t): {
                kind: [(f"{t.name}.{kind}.{side}_{stat.name}", stat) for stat in t.stats]
                for kind in t.kinds
            }
            for t in walk.tallies
        }

    _score = staticmethod(score_pair)

    def run(
        self, these: Sequence[Any], others: Sequence[Any], similarities: list[list[float]]
    ) -> None:
        if not others:
            return
        walk, aligned = self.walk, 0
        for line, row in zip(these, similarities):
            best = max(row)
            if best < walk.threshold:
                continue
            aligned += 1
            if walk.where and not member_at(line, walk.where):
                continue
            partner = others[row.index(best)]  # the first of equally good partners
            for entities in walk.entities:
                for place in entities.places:
                    record = member_at(line, place)
                    if record is not None:
                        self._occurrence(entities, record, member_at(partner, place))
            for tally in self.line_tallies:
                self._count_line(tally, line, partner)
        self.values[f"{walk.name}.{self.side}_aligned"] += aligned

    def _counted(self, tally: Tally, record: Any) -> list[tuple[str, Stat]]:
        """The stats the record counts under in this tally, with their value keys ([] where it is not counted)."""
        by_kind = self.stat_keys[id(tally)].get(member_at(record, tally.by))
        if by_kind is None or (tally.where and not member_at(record, tally.where)):
            return []
        return by_kind

    def _count_line(self, tally: Tally, line: Any, partner: Any) -> None:
        values = self.values
        for key, stat in self._counted(tally, line):
            if stat.source == "once":
                values[key] += 1
            else:
                assert stat.similarity is not None  # each: the checker allows no best() on lines
                values[key] += self._score(stat.similarity, line, partner)

    def _occurrence(self, entities: Entities, record: Any, other: Any) -> None:
        entity = self._resolve(entities, record)
        if not entity.settled and other is not None:
            self._compare(entities, entity, record, other)

    def _compare(self, entities: Entities, entity: _Entity, record: Any, other: Any) -> None:
        """One comparison of an entity's occurrence with the partner's record: every count's stats, then `until`."""
        values, until = self.values, entities.until
        settles = self._score(until, record, other) >= 1.0
        for key, stat in self._stats_of(entities, record):
            if stat.source == "once":
                continue
            sim = stat.similarity
            assert sim is not None
            score = self._score(sim, record, other)
            if stat.source == "each":
                values[key] += score
                continue
            best = entity.best.get(key)
            if best is None:
                values[key] += (
                    score  # the first comparison adds what an `each` stat adds: equal sums where none repeats
                )
                entity.best[key] = score
            elif score > best:
                values[key] += score - best
                entity.best[key] = score
        entity.settled = settles

    def _resolve(self, entities: Entities, record: Any) -> _Entity:
        """The entity this occurrence is: found by a memo, by the registry's first identical entry, or new."""
        memo_key = _hashable(record)
        resolved = self.resolved[entities.name]
        found = resolved.get(memo_key) if memo_key is not None else None
        if found is not None:
            return found
        identity = entities.identity
        prepared = identity.prepare(record)
        key = tuple(member_at(record, path) for path in entities.same)
        candidates = self.registries[entities.name].setdefault(key, [])
        found = next(
            (e for e in candidates if identity.score(e.prepared, prepared) >= entities.at_least),
            None,
        )
        if found is None:
            found = _Entity(record, key, prepared)
            candidates.append(found)
            self._count_entity(entities, record)
            if identity.score(prepared, prepared) < entities.at_least:
                return found  # not identical to itself (a text without words): the next occurrence registers again
        if memo_key is not None:
            # the registry only grows at its end, so the first identical entry of this record never changes
            resolved[memo_key] = found
        return found

    def _count_entity(self, entities: Entities, record: Any) -> None:
        for key, stat in self._stats_of(entities, record):
            if stat.source == "once":
                self.values[key] += 1

    def _stats_of(self, entities: Entities, record: Any) -> Iterator[tuple[str, Stat]]:
        """Each stat of this entity kind's counts that count ``record``, with the value it adds to."""
        for tally in self.entity_tallies[entities.name]:
            yield from self._counted(tally, record)


def _hashable(record: Any) -> tuple[Any, ...] | None:
    """A record as a memo key (its members in order), or None where a member cannot be hashed."""
    items = tuple(record.items()) if isinstance(record, Mapping) else None
    if items is None:
        return None
    try:
        hash(items)
    except TypeError:
        return None
    return items


@dataclass(frozen=True)
class WalkScorer:
    """The scorer of a score block's ``align`` blocks: per item, every walk's values (no prediction: no lines)."""

    walks: tuple[AlignedWalk, ...]

    def keys(self) -> tuple[str, ...]:
        return tuple(key for walk in self.walks for key in walk.keys())

    def __call__(self, gold: Any, predictions: Mapping[str, Any]) -> list[Any]:
        from procbench.runners.runtime._types import ItemScore

        out = []
        for item_id, record in gold.items.items():
            predicted = predictions.get(item_id)
            values: dict[str, float] = {}
            for walk in self.walks:
                lines = member_at(predicted, walk.prediction) if predicted is not None else None
                values.update(walk(member_at(record, walk.gold) or [], lines or []))
            out.append(ItemScore(item_id, values))
        return out

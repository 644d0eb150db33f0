"""Typed values that cross the runner boundary.

Every benchmark kernel speaks in these types, so the compiler, the intake and the store never need
to know which benchmark they are handling.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from procbench.runners.runtime.records import Record


MAX_PROBLEMS = 200  # problems kept and listed for one prediction file; the rest are only counted
MAX_PROBLEM_CHARS = (
    500  # one problem's message is cut to this length (it may quote the user's text)
)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, saying how much was cut (user text in messages and logs)."""
    if len(text) <= limit:
        return text
    note = f" ... [{len(text) - limit} more characters]"
    return text[: max(0, limit - len(note))] + note


class Problem(Record):
    """One problem found in a user-supplied file (a prediction file, usually).

    ``line`` is 1-based within the file; ``None`` when the problem concerns the file as a whole
    (e.g. "participants missing for process 5").  The message is cut to :data:`MAX_PROBLEM_CHARS`.
    """

    __slots__ = ("line", "message", "item_id")
    line: int | None
    message: str
    item_id: str | None

    def __init__(self, line: int | None, message: str, item_id: str | None = None) -> None:
        object.__setattr__(self, "line", line)
        if len(message) > MAX_PROBLEM_CHARS:
            message = clip(message, MAX_PROBLEM_CHARS)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "item_id", item_id)

    def render(self, source: str = "") -> str:
        where = f"{source}:{self.line}" if self.line is not None else (source or "file")
        return f"{where}: {self.message}"


class MoreProblems(Problem):
    """The closing "... and K more problems" entry of a capped list; re-collecting it adds K to the count."""

    __slots__ = ("count",)
    count: int

    def __init__(
        self, line: int | None, message: str, item_id: str | None = None, count: int = 0
    ) -> None:
        super().__init__(line, message, item_id)
        object.__setattr__(self, "count", count)


class ProblemList:
    """The problems of one prediction file, collected by a reader: the first ``cap`` are kept, the rest counted.

    Every reader collects into one of these (``append``/``extend`` like a list), so that a file of
    millions of bad lines costs ``cap`` problems of memory and one bounded message; pass it to
    :class:`InvalidPredictions` as is.
    """

    def __init__(self, problems: Iterable[Problem] = (), cap: int = MAX_PROBLEMS):
        self.cap = cap
        self.kept: list[Problem] = []
        self.more = 0
        self.extend(problems)

    def append(self, problem: Problem) -> None:
        if isinstance(problem, MoreProblems):  # an already capped list, collected again
            self.more += problem.count
        elif len(self.kept) < self.cap:
            self.kept.append(problem)
        else:
            self.more += 1

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.append(problem)

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.kept)

    def listed(self) -> list[Problem]:
        """The kept problems, closed by a :class:`MoreProblems` entry when some were only counted."""
        if not self.more:
            return list(self.kept)
        return [
            *self.kept,
            MoreProblems(None, f"... and {self.more} more problems", count=self.more),
        ]

    def __len__(self) -> int:
        """Every problem found, counted ones included."""
        return len(self.kept) + self.more

    def __bool__(self) -> bool:
        return bool(self.kept)


class InvalidPredictions(Exception):
    """A prediction file that cannot be scored; carries every problem found, not only the first.

    At most :data:`MAX_PROBLEMS` are kept (a :class:`ProblemList`'s counted rest, or a longer list's
    tail, become ``more`` and one closing "... and K more problems" entry), so the message is bounded.
    """

    def __init__(self, problems: Iterable[Problem], source: str = "", more: int = 0):
        collected = problems if isinstance(problems, ProblemList) else ProblemList(problems)
        collected.more += more
        self.more = collected.more
        self.problems = collected.listed()
        self.source = clip(source, MAX_PROBLEM_CHARS)
        super().__init__(self.render())

    @property
    def count(self) -> int:
        """Every problem found, counted ones included."""
        return len(self.problems) - (1 if self.more else 0) + self.more

    def render(self) -> str:
        n = self.count
        head = f"{n} problem{'s' if n != 1 else ''} in {self.source or 'the prediction file'}"
        return "\n".join([head, *("  " + p.render(self.source) for p in self.problems)])


class GoldSet(Record):
    """The gold side of one split: items in official order, plus slice labels.

    ``items``: item id -> whatever record the task's scorer understands (kept in the official
    iteration order). ``labels``: item id -> {slice dimension -> label value}.
    """

    __slots__ = ("items", "labels", "answer_views", "origins", "unmatched_map_keys")
    items: Mapping[str, Any]
    labels: Mapping[str, Mapping[str, str]]
    # Per-answer label views: dimension -> label value -> items with their gold restricted to the
    # answers carrying that value (OpenPI's with/without image).  Scored like the full set.
    answer_views: Mapping[str, Mapping[str, Mapping[str, Any]]]
    # item id -> "file:line" of the record it was read from (the file relative to the data root), so
    # that a scorer or a check can point at the line; empty where the reader does not know it.
    origins: Mapping[str, str]
    # item label -> keys of its map() table that matched no item of this split (a likely typo:
    # ``map(topic, { Helth = "unseen" })``); filled by the declarative reader for ``check --data``.
    unmatched_map_keys: Mapping[str, tuple[str, ...]]

    def __init__(
        self,
        items: Mapping[str, Any],
        labels: Mapping[str, Mapping[str, str]] | None = None,
        answer_views: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
        origins: Mapping[str, str] | None = None,
        unmatched_map_keys: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "labels", {} if labels is None else labels)
        object.__setattr__(self, "answer_views", {} if answer_views is None else answer_views)
        object.__setattr__(self, "origins", {} if origins is None else origins)
        object.__setattr__(
            self, "unmatched_map_keys", {} if unmatched_map_keys is None else unmatched_map_keys
        )


class ItemScore(Record):
    """Per-item statistics: the numbers an aggregator needs (scores, counts), keyed by name."""

    __slots__ = ("item_id", "values")
    item_id: str
    values: Mapping[str, float]

    def __init__(self, item_id: str, values: Mapping[str, float]) -> None:
        object.__setattr__(self, "item_id", item_id)
        object.__setattr__(self, "values", values)


class PredictionWarning(UserWarning):
    """Something odd but officially tolerated in a prediction file (e.g. missing ids scored empty).

    Components raise these with ``warnings.warn``; the runner collects them and shows them to the user.
    """


MAX_DATA_PROBLEMS = 50  # gold problems listed in one error; the rest are counted


class DataProblem(Record):
    """One problem in a gold data file: where (file relative to the data root, 1-based line), which item, what.

    ``record`` marks a whole-file JSON source, where ``line`` is the 1-based position of the record
    in the file's array (rendered ``file#3``) because the parser does not keep line numbers.
    """

    __slots__ = ("file", "line", "item_id", "message", "record")
    file: str
    line: int | None
    item_id: str | None
    message: str
    record: bool

    def __init__(
        self, file: str, line: int | None, item_id: str | None, message: str, record: bool = False
    ) -> None:
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "item_id", item_id)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "record", record)

    @staticmethod
    def at(origin: str | None, item_id: str | None, message: str) -> DataProblem:
        """A problem located by a :attr:`GoldSet.origins` string (``file:line`` or ``file#n``), or by nothing."""
        if not origin:
            return DataProblem("", None, item_id, message)
        for sep, record in ((":", False), ("#", True)):
            head, found, tail = origin.rpartition(sep)
            if found and tail.isdigit():
                return DataProblem(head, int(tail), item_id, message, record)
        return DataProblem(origin, None, item_id, message)

    def where(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}{'#' if self.record else ':'}{self.line}"

    def render(self) -> str:
        where = self.where()
        item = f"item {self.item_id!r}: " if self.item_id is not None else ""
        return f"{where + ': ' if where else ''}{item}{self.message}"


class GoldDataError(ValueError):
    """Gold data that does not fit what the spec (or a reader's contract) says it holds.

    Raised at run time instead of reading a missing field as empty or a wrong type as something
    else: the numbers would be silently wrong.  Carries every problem found (up to
    :data:`MAX_DATA_PROBLEMS`; ``more`` counts the rest) so the data or the spec is fixed in one go.
    """

    def __init__(self, problems: Sequence[DataProblem], more: int = 0, source: str = ""):
        self.problems = list(problems)
        self.more = more
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        n = len(self.problems) + self.more
        head = f"{n} problem{'s' if n != 1 else ''} in the gold data{' of ' + self.source if self.source else ''}"
        lines = [head, *("  " + p.render() for p in self.problems)]
        if self.more:
            lines.append(f"  ... and {self.more} more")
        return "\n".join(lines)


class DataProblems:
    """Collects :class:`DataProblem` values up to a cap, counting the rest; :meth:`raise_if_any` at the end."""

    def __init__(self, source: str = "", cap: int = MAX_DATA_PROBLEMS):
        self.source = source
        self.cap = cap
        self.kept: list[DataProblem] = []
        self.more = 0

    def add(self, problem: DataProblem) -> None:
        if len(self.kept) < self.cap:
            self.kept.append(problem)
        else:
            self.more += 1

    def __bool__(self) -> bool:
        return bool(self.kept)

    def raise_if_any(self) -> None:
        if self.kept:
            raise GoldDataError(self.kept, self.more, self.source)

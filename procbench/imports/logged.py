"""What the readers of foreign logs produce: one item's output, before it is mapped onto a task."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from procbench.runners.runtime.predictions import TooDeep, loads_bounded

MAX_LOG_JSON_DEPTH = (
    200  # deeper than any harness's log nests; far below where Python's own recursion gives out
)


LogTooDeep = TooDeep  # the prediction reader's refusal, with this reader's limit in its message


def loads_log_json(text: str) -> Any:
    """``json.loads`` for a foreign log: nesting past MAX_LOG_JSON_DEPTH raises LogTooDeep (a ValueError), never RecursionError."""
    return loads_bounded(text, MAX_LOG_JSON_DEPTH)


def object_or_empty(value: Any) -> Mapping[str, Any]:
    """A log's JSON object (the item's ``doc`` or ``metadata``); anything else reads as an empty one."""
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class LoggedOutput:
    """One item's model output as another harness logged it.

    ``fields`` is what the log says about the item itself: the dataset row for lm-evaluation-harness
    (``doc``), the sample ``metadata`` for Inspect.  Exactly one of ``text`` (a generation),
    ``choice_scores`` (lm-eval log-likelihoods, one per option) or ``choice`` (an option index the log
    states, e.g. Inspect's ``choice`` scorer answer) carries the output.
    """

    where: str  # "line 12" or "samples/3_epoch_1.json": for error messages
    sample_id: str | int | None
    fields: Mapping[str, Any] = field(default_factory=dict)
    text: str | None = None
    choice_scores: tuple[float, ...] = ()
    choice_texts: tuple[
        str, ...
    ] = ()  # the options as the log shows them (lm-eval continuations, Inspect choices)
    choice: int | None = None
    error: str | None = (
        None  # the sample failed in the run (Inspect's ``error``): no output; ImportOptions.errored says what it becomes
    )
    fields_root: str = ""  # what ``fields`` is in the log ("doc" for lm-eval, "metadata" for Inspect): --id-field paths start inside it


HINT_PLACES = ("ids", "hint")  # problems that say what to do: rendered first, never cut by the cap
MAX_SHOWN_PROBLEMS = 50


@dataclass(frozen=True)
class ImportProblem:
    """Something in a foreign log that stops it from becoming a valid prediction file."""

    where: str
    message: str

    def render(self, source: str = "") -> str:
        return (
            f"{source}: {self.where}: {self.message}" if source else f"{self.where}: {self.message}"
        )


class ImportFailed(Exception):
    """A log that cannot be imported; carries every problem found, not only the first."""

    def __init__(self, problems: Sequence[ImportProblem], source: str = ""):
        self.problems = list(problems)
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        n = len(self.problems)
        if n == 1:  # one problem (an archive over its limit, one bad sample): one line
            return self.problems[0].render(self.source or "the log")
        # issue #33: what to do comes first and is never cut; the cap applies to the problems themselves
        hints = [p for p in self.problems if p.where in HINT_PLACES]
        rest = [p for p in self.problems if p.where not in HINT_PLACES]
        shown = rest[:MAX_SHOWN_PROBLEMS]
        count = len(rest)
        lines = [
            f"{count} problem{'s' if count != 1 else ''} importing {self.source or 'the log'}",
            *("  " + p.render() for p in [*hints, *shown]),
        ]
        if count > len(shown):
            lines.append(f"  ... and {count - len(shown)} more")
        return "\n".join(lines)


def dotted(record: Mapping[str, Any], path: str) -> Any:
    """``record["a"]["b"]`` for ``"a.b"``; a key that itself contains dots (``"Unnamed: 0"``) is tried whole first."""
    if path in record:
        return record[path]
    value: Any = record
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value

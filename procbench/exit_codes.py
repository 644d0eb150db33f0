"""The exit statuses of every ``procbench`` command, defined once (issue #33).

Each command exits with one of these; the table in docs/submissions.md ("Exit codes") is
:func:`markdown_table`'s output, and tests/test_exit_codes.py keeps the two equal and runs each
status from a real command line.  2 is click's own: a flag that does not exist, an option without its
value or with a value out of its range.  No other failure shares it.

Plain constants only: the lean ``score``/``check`` path (procbench/console_commands.py) imports this module.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1  # nothing failed, something is to be done: `fmt --check`, `check --ship`
EXIT_USAGE = 2  # click's usage error: an unknown flag, a missing or malformed option value
EXIT_SPEC_ERROR = 3
EXIT_DATA_MISSING = 4
EXIT_REFUSED = 5
EXIT_FAILED = 6
EXIT_NOT_COMPARABLE = 7
EXIT_INVALID_PREDICTIONS = 8
EXIT_UNKNOWN_SPLIT = 9
EXIT_FETCH_FAILED = 10
EXIT_MISSING_EXTRA = 11  # runners/runtime/extras.py (the layer below) says it too; tests/test_exit_codes.py keeps the two equal
EXIT_TIMEOUT = 124  # as coreutils' timeout(1)
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT

# status -> (name, what it means); the docs' table is made from this
MEANINGS: dict[int, tuple[str, str]] = {
    EXIT_OK: ("ok", "done"),
    EXIT_FINDINGS: (
        "findings",
        "nothing failed, something is to be done (`fmt --check`: a file is not canonical; `check --ship`: a requirement is missing)",
    ),
    EXIT_USAGE: (
        "usage",
        "a bad command line (click's own status): an unknown flag, an option without its value, a value out of its range",
    ),
    EXIT_SPEC_ERROR: (
        "spec error",
        "a spec does not check (`file:line:col`, the line, a caret and a hint), or the data does not fit it",
    ),
    EXIT_DATA_MISSING: (
        "missing data",
        "the data root, a data file, the store (`--db`), an input file (predictions, log, record) or rows to export: absent",
    ),
    EXIT_REFUSED: (
        "refused",
        "the store or a service refused the request: token, quota, name, link, an unknown submission, no judge configured",
    ),
    EXIT_FAILED: (
        "scoring failed",
        "the scorer or the store failed while running (see the receipt)",
    ),
    EXIT_NOT_COMPARABLE: (
        "not comparable",
        "`compare`: the two rows are of another task, split or fingerprint, or not on their board",
    ),
    EXIT_INVALID_PREDICTIONS: (
        "invalid predictions",
        "the prediction file or imported log is refused (every problem listed with its line)",
    ),
    EXIT_UNKNOWN_SPLIT: ("unknown split", "the task has no such split (its splits are listed)"),
    EXIT_FETCH_FAILED: (
        "fetch failed",
        "a download or upload failed or did not verify (`data fetch`, `export hub-dataset --push`)",
    ),
    EXIT_MISSING_EXTRA: (
        "missing extra",
        "the feature needs an optional extra that is not installed (the `pip install` command is named)",
    ),
    EXIT_TIMEOUT: (
        "timeout",
        "a deadline passed (`data fetch --deadline`, a judge request past its `--timeout`)",
    ),
    EXIT_INTERRUPTED: ("interrupted", "stopped with Ctrl-C"),
}


def markdown_table() -> str:
    """The docs' exit-code table (docs/submissions.md), one row per status."""
    rows = ["| status | meaning | when |", "| --- | --- | --- |"]
    rows += [f"| {code} | {name} | {text} |" for code, (name, text) in sorted(MEANINGS.items())]
    return "\n".join(rows) + "\n"


def unknown_split(task: str, split: str, splits: tuple[str, ...] | list[str]) -> str:
    """The one-line message of :data:`EXIT_UNKNOWN_SPLIT`."""
    return f"error: task {task!r} has no split {split[:100]!r} (splits: {', '.join(splits)})"

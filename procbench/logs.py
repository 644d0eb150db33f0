"""Log lines and progress on stderr for the ``procbench`` commands (issue #33).

``procbench -q COMMAND`` shows warnings and errors only; plain ``procbench COMMAND`` adds the progress
lines of the commands that take a while (``demo``'s baselines, ``rescore``, ``data fetch``), one per
step as ``[3/7] paradise-tip: ...``; ``-v`` adds each step's details (debug lines of procbench),
``-vv`` the libraries' own debug lines.  Progress goes to the ``procbench.progress`` logger, so a
program using procbench's API sees it only where it configures logging itself.
"""

from __future__ import annotations

import logging
import sys
import time

PROGRESS = logging.getLogger("procbench.progress")
_HANDLER_NAME = "procbench-cli"


def configure(*, verbose: int = 0, quiet: bool = False) -> None:
    """The CLI's logging: procbench's records on stderr as plain lines, at the level -v/-q ask for."""
    logger = logging.getLogger("procbench")
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    logger.setLevel(level)
    if not any(h.get_name() == _HANDLER_NAME for h in logger.handlers):
        handler = _Stderr()
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    if verbose >= 2:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s: %(message)s")


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever ``sys.stderr`` is when a record comes (a test runner swaps it between commands)."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


class Progress:
    """``[n/total] label: what (elapsed)`` lines on the ``procbench.progress`` logger."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self.started = label, total, 0, time.monotonic()

    def step(self, what: str) -> None:
        self.done += 1
        PROGRESS.info(
            "[%d/%d] %s: %s (%.0f s)",
            self.done,
            self.total,
            self.label,
            what,
            time.monotonic() - self.started,
        )


def version_line() -> str:
    """``procbench X.Y.Z`` (the installed distribution's version, else the package's), and the Python running it."""
    from importlib import metadata

    try:
        version = metadata.version("procbench")
    except metadata.PackageNotFoundError:
        from procbench import __version__ as version
    return f"procbench {version} (Python {sys.version.split()[0]})"

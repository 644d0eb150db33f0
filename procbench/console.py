"""The ``procbench`` console script: ``score`` and ``check`` without typer, every other command line with it.

The commands users run most start here without importing typer, click or the command modules
(issue #19): procbench/cli_lean.py parses their arguments as typer would and runs them
(procbench/console_commands.py).  Anything else (another command, ``--help``, a usage error or a bad
``--metadata``) goes to the typer app in procbench/cli.py, which then prints and does what it always has.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    """Run ``procbench`` with ``sys.argv``; returns the exit status (the typer app exits by itself)."""
    from procbench.console_commands import run

    status = run(sys.argv[1:])
    if status is not None:
        return status
    from procbench.cli import app

    app()
    return 0


def script() -> int:
    """The console script (pyproject's ``[project.scripts]``): :func:`main`, then a prompt exit.

    After a lean command the process ends without tearing the interpreter down: freeing every module
    and object one by one costs about a tenth of a ``score`` (issue #19), and nothing is left to do by
    then.  The output is flushed and the ``atexit`` functions run first, as at a normal exit; with
    another thread still running, or output that cannot be flushed, the interpreter exits as usual.
    """
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return status
    import threading

    if threading.active_count() > 1:
        return status
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return status
    os._exit(status)


if __name__ == "__main__":
    raise SystemExit(script())

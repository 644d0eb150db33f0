"""The ``procbench`` console script: ``score`` and ``check`` without typer, every other command line with it.

The commands users run most start here without importing typer, click or the command modules
(issue #19): procbench/cli_lean.py parses their arguments as typer would and runs them
(procbench/console_commands.py).  Anything else (another command, ``--help``, a usage error or a bad
``--metadata``) goes to the typer app in procbench/cli.py, which then prints and does what it always has.
"""

from __future__ import annotations

import gc
import os
import sys


def main() -> int:
    """Run ``procbench`` with ``sys.argv``; returns the exit status (the typer app exits by itself)."""
    try:
        from procbench.console_commands import run

        status = run(sys.argv[1:])
        if status is not None:
            return status
        if _collector_paused_for_start_up:
            gc.enable()
        from procbench.cli import app

        app()
    except ModuleNotFoundError as exc:
        return missing_extra(exc)
    return 0


def missing_extra(exc: ModuleNotFoundError) -> int:
    """A feature whose extra is not installed: one line naming ``pip install "procbench[EXTRA]"``, and its exit status.

    Any other missing module (a broken install) is raised as it was.
    """
    from procbench.exit_codes import EXIT_MISSING_EXTRA
    from procbench.runners.runtime.extras import MissingExtra, extra_of

    if not isinstance(exc, MissingExtra):
        extra = extra_of(exc.name)
        if extra is None:
            raise exc
        command = " ".join(arg for arg in sys.argv[1:3] if not arg.startswith("-"))
        exc = MissingExtra(extra, f"procbench {command}".strip(), str(exc.name).split(".")[0])
    sys.stderr.write(f"error: {exc}\n")
    return EXIT_MISSING_EXTRA


# Set by :func:`script`: a lean command runs with Python's cyclic garbage collector off (reference
# counting still frees).  Its start-up imports modules and builds the runner, objects that all stay
# alive, so each automatic collection it triggered (16 in a 1x ProPara score, about 3 ms) found
# nothing, and its stages pause the collector anyway (``cyclic_gc_paused`` in
# procbench/runners/runtime/runner.py, streaming included).  A command the typer app runs (the store,
# the site, re-scoring) gets the collector back first; :func:`main` called in a process leaves it alone.
_collector_paused_for_start_up = False


def script() -> int:
    """The console script (pyproject's ``[project.scripts]``): :func:`main`, then a prompt exit.

    After a lean command the process ends without tearing the interpreter down: freeing every module
    and object one by one costs about a tenth of a ``score`` (issue #19), and nothing is left to do by
    then.  The output is flushed and the ``atexit`` functions run first, as at a normal exit; with
    another thread still running, or output that cannot be flushed, the interpreter exits as usual.
    """
    global _collector_paused_for_start_up
    gc.disable()
    _collector_paused_for_start_up = True
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return status
    threading = sys.modules.get("threading")  # never imported: no thread was started through it
    if threading is not None and threading.active_count() > 1:
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

"""Options several command modules share, declared once (issue #33)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from procbench.console_commands import COMPONENTS, DB

DB_ENV = DB.envvar  # the store when --db is not given; `procbench leaderboard` passes it on to the site's process (procbench/serving.py)

# --db on every command that reads or writes the store: PROCBENCH_DB, else procbench.runners.runtime.paths.DEFAULT_DB
# (declared once, with the lean commands' parameters: `procbench submit` takes it without typer)
DbOption = Annotated[Path, typer.Option(*DB.decls, envvar=DB.envvar, help=DB.help)]

# --components DIR on the commands that load specs (declared with the lean commands' parameters too)
ComponentsOption = Annotated[
    Optional[list[Path]], typer.Option(*COMPONENTS.decls, help=COMPONENTS.help)
]


@contextmanager
def as_typer() -> Iterator[None]:
    """A command of procbench/console_commands.py inside typer: its exit status and bad metadata as typer's."""
    from procbench import console_commands

    try:
        yield
    except console_commands.CommandExit as exc:
        raise typer.Exit(exc.code) from None
    except console_commands.BadMetadata as exc:
        raise typer.BadParameter(str(exc)) from None


def lean_command(name: str) -> Callable[..., None]:
    """The typer command of the lean command ``name``, built from its one declaration (console_commands.COMMANDS).

    The console parses those commands without typer (procbench/cli_lean.py) from the declared
    parameters; typer reads the same parameters from the signature made here (each Param's type,
    default, option spellings, environment variable and help), and the command's help is the
    function's docstring: there is no second declaration to keep equal.
    """
    import inspect

    from procbench import console_commands

    function, params, _ = console_commands.COMMANDS[name]

    def command(**kwargs: Any) -> None:
        with as_typer():
            function(**kwargs)

    parameters = []
    for param in params:
        hint: Any = param.base
        if param.many:
            hint = list[hint]
        if param.default is None:
            hint = Optional[hint]
        default = param.default
        decls = param.decls
        if param.option:
            info: Any = typer.Option(
                default, *decls, help=param.help or None, envvar=param.envvar or None
            )
        else:
            info = typer.Argument(default, help=param.help or None)
        parameters.append(
            inspect.Parameter(
                param.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=hint
            )
        )
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__ = command.__qualname__ = function.__name__
    command.__doc__ = function.__doc__
    command.__module__ = function.__module__
    return command

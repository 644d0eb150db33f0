"""``procbench score`` and ``procbench check`` from the console, parsed without typer (issue #19).

typer 0.29 coerces every parameter of the command it runs through a pydantic ``TypeAdapter``, and
importing typer, click and the command modules costs more CPU than checking every spec from the cache.
The commands users run most take only strings, paths, flags and repeated options, so the console
script (procbench/console.py) parses their arguments here, from the parameters that
procbench/console_commands.py declares (:class:`Param`), and that module calls the command as typer would.
Those declarations are the commands' only ones: typer's commands are built from them
(``procbench.cli_options.lean_command``).  :func:`params_of` reads parameters back from a typer signature
(``typer.Option`` and ``typer.Argument``), which tests/test_cli_lean.py uses to check that building.

Anything this parser does not take exactly as click would (``--help``, a short or unknown option, a
missing value or argument, a parameter kind it does not know) returns ``None``: typer then runs the
command line as usual, with its own messages.  tests/test_cli_lean.py checks that both give the
command the same arguments.
"""

from __future__ import annotations

import os
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# typer.Option / typer.Argument settings this parser does not implement: a parameter using one goes to typer.
_UNSUPPORTED = (
    "callback",
    "prompt",
    "parser",
    "click_type",
    "is_eager",
    "exists",
    "resolve_path",
    "allow_dash",
    "count",
    "min",
    "max",
)


class _NotLean(Exception):
    """This command line is typer's to run."""


def _is_empty(default: Any) -> bool:
    """``inspect.Parameter.empty``: a signature's parameter without a default (only a loaded ``inspect`` can have made one)."""
    inspect = sys.modules.get(
        "inspect"
    )  # importing inspect costs the lean commands several milliseconds (issue #19)
    return inspect is not None and default is inspect.Parameter.empty


class Param:
    """One parameter of a command: an option (names, takes a value or is a flag, repeats) or an argument.

    ``base`` is str, Path or bool; ``default`` is ``...`` when the parameter is required; ``decls`` are
    an option's spellings as given to ``typer.Option`` (none: ``--name``, and ``--no-name`` for a flag);
    ``envvar``: the environment variable a single-valued option falls back to when it is not given (as click reads it:
    an empty value is no value); ``help``: what ``--help`` says of it.  procbench/cli_options.py builds the typer
    command from these (``lean_command``): this is the command's one declaration.
    """

    def __init__(
        self,
        name: str,
        *,
        option: bool,
        base: Any,
        default: Any,
        many: bool = False,
        decls: Sequence[str] = (),
        envvar: str = "",
        help: str = "",  # noqa: A002 - typer.Option's name for it
    ) -> None:
        if (
            base not in (str, Path, bool)
            or (base is bool and many)
            or (envvar and (not option or many or base is bool))
        ):
            raise _NotLean(name)
        self.envvar, self.help, self.decls, self.base = envvar, help, tuple(decls), base
        self.required = default is ... or _is_empty(default)
        self.name, self.option, self.default, self.many = (
            name,
            option,
            ... if self.required else default,
            many,
        )
        self.convert: Callable[[str], Any] = Path if base is Path else str
        self.flag = base is bool
        self.names: dict[str, bool] = {}  # option spelling -> the value it sets (flags) or True
        if option:
            declared = self.decls or (
                f"--{name.replace('_', '-')}"
                + (f"/--no-{name.replace('_', '-')}" if self.flag else ""),
            )
            for decl in declared:
                on, _, off = decl.partition("/")
                if not on.startswith("--") or (off and not (self.flag and off.startswith("--"))):
                    raise _NotLean(decl)  # short options, secondary names without dashes: typer's
                self.names[on] = True
                if off:
                    self.names[off] = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Param) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Param({vars(self)!r})"


def _from_typer(name: str, hint: Any, default: Any) -> Param:
    """A parameter as typer reads it from a signature (imports typer: for tests and functions without a declaration)."""
    from typer.models import ArgumentInfo, OptionInfo, ParameterInfo

    info = default if isinstance(default, ParameterInfo) else None
    if info is not None:
        if any(getattr(info, attr, None) for attr in _UNSUPPORTED) or getattr(
            info, "default_factory", None
        ):
            raise _NotLean(name)
        if not isinstance(info, (OptionInfo, ArgumentInfo)):
            raise _NotLean(name)
        default = info.default
    envvar = getattr(info, "envvar", None) or ""
    if not isinstance(envvar, str):
        raise _NotLean(name)  # several variables: typer's to read
    required = default is ... or _is_empty(default)
    base, many = _base_type(hint)
    # typer: an OptionInfo is an option, an ArgumentInfo an argument; a bare parameter is an option when it has a default
    option = isinstance(info, OptionInfo) or (info is None and not required)
    decls = tuple(info.param_decls or ()) if option and info is not None else ()
    return Param(
        name,
        option=option,
        base=base,
        default=default,
        many=many,
        decls=decls,
        envvar=envvar,
        help=(info.help if info is not None else "") or "",
    )


def _base_type(hint: Any) -> tuple[Any, bool]:
    """``Optional[list[str]]`` -> (str, True); ``Optional[Path]`` -> (Path, False)."""
    import types

    args = (
        [a for a in typing.get_args(hint) if a is not type(None)]
        if typing.get_origin(hint) in (typing.Union, types.UnionType)
        else [hint]
    )
    if len(args) != 1:
        return None, False
    (inner,) = args
    if typing.get_origin(inner) is list:
        (item,) = typing.get_args(inner) or (None,)
        return item, True
    return inner, False


def params_of(fn: Callable[..., Any]) -> list[Param]:
    """The command's parameters as typer reads them (its own reading of the signature and annotations)."""
    from typer.utils import get_params_from_function

    return [
        _from_typer(meta.name, meta.annotation, meta.default)
        for meta in get_params_from_function(fn).values()
    ]


def parse(fn: Callable[..., Any] | Sequence[Param], argv: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would call the command with for ``argv`` (after the command name), or None.

    ``fn``: the command's declared parameters, or a typer command function to read them from.
    """
    try:
        params = list(fn) if not callable(fn) else params_of(fn)
    except (_NotLean, NameError, TypeError):
        return None
    options = {spelling: p for p in params if p.option for spelling in p.names}
    arguments = [p for p in params if not p.option]
    if sum(p.many for p in arguments) > 1 or any(p.many for p in arguments[:-1]):
        return None  # a variadic argument before another one: click's split is typer's to make
    values: dict[str, Any] = {}
    positional: list[str] = []
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        if token == "--":
            positional += tokens
            break
        if token.startswith("-") and token != "-":
            spelling, eq, attached = token.partition("=")
            param = options.get(spelling)
            if param is None:
                return None  # --help, a short option, an unknown or misspelt one: typer's message
            if param.flag:
                if eq:
                    return None
                values[param.name] = param.names[spelling]
                continue
            if not eq:
                if not tokens:
                    return None
                attached = tokens.pop(0)
            value = param.convert(attached)
            if param.many:
                values.setdefault(param.name, []).append(value)
            else:
                values[param.name] = value
            continue
        positional.append(token)
    for param in arguments:
        if param.many:
            if positional:
                values[param.name] = [param.convert(v) for v in positional]
            positional = []
        elif positional:
            values[param.name] = param.convert(positional.pop(0))
    if positional:
        return None  # more arguments than the command takes
    for param in params:
        if param.name not in values and param.envvar and os.environ.get(param.envvar):
            values[param.name] = param.convert(os.environ[param.envvar])
        if param.name not in values:
            if param.required:
                return None  # typer says what is missing
            values[param.name] = param.default
    return values

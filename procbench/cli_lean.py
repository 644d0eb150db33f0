"""``procbench score`` and ``procbench check`` from the console, without typer's per-parameter pydantic.

typer 0.29 coerces every parameter of the command it runs through a pydantic ``TypeAdapter``: importing
pydantic and building the adapters cost more CPU than checking every spec from the cache (issue #19).
The commands users run most take only strings, paths, flags and repeated options, so the console script
parses their arguments here, from the same function signatures (the ``typer.Option`` and ``typer.Argument``
in their annotations: one definition, one help text), and calls the function as typer would.

Anything this parser does not take exactly as click would (``--help``, a short or unknown option, a
missing value or argument, a parameter kind it does not know) returns ``None``: typer then runs the
command line as usual, with its own messages.  tests/test_cli_lean.py checks that both give the
command the same arguments.
"""

from __future__ import annotations

import inspect
import os
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

LEAN_COMMANDS = ("score", "check")

# typer.Option / typer.Argument settings this parser does not implement: a parameter using one goes to typer.
_UNSUPPORTED = ("callback", "envvar", "prompt", "parser", "click_type", "is_eager", "exists", "resolve_path", "allow_dash", "count", "min", "max")


class _NotLean(Exception):
    """This command line is typer's to run."""


class _Param:
    """One parameter of a command: an option (names, takes a value or is a flag, repeats) or an argument."""

    def __init__(self, name: str, hint: Any, default: Any) -> None:
        from typer.models import ArgumentInfo, OptionInfo, ParameterInfo

        info = default if isinstance(default, ParameterInfo) else None
        if info is not None:
            if any(getattr(info, attr, None) for attr in _UNSUPPORTED) or getattr(info, "default_factory", None):
                raise _NotLean(name)
            default = info.default
        self.name, self.default = name, default
        self.required = default is ... or default is inspect.Parameter.empty
        base, self.many = _base_type(hint)
        if base not in (str, Path, bool) or (base is bool and self.many):
            raise _NotLean(name)
        self.convert: Callable[[str], Any] = Path if base is Path else str
        self.flag = base is bool
        # typer: an OptionInfo is an option, an ArgumentInfo an argument; a bare parameter is an option when it has a default
        self.option = isinstance(info, OptionInfo) or (info is None and not self.required)
        if info is not None and not isinstance(info, (OptionInfo, ArgumentInfo)):
            raise _NotLean(name)
        self.names: dict[str, bool] = {}  # option spelling -> the value it sets (flags) or True
        if self.option:
            declared = tuple(info.param_decls or ()) if info is not None else ()
            if not declared:
                declared = (f"--{name.replace('_', '-')}" + (f"/--no-{name.replace('_', '-')}" if self.flag else ""),)
            for decl in declared:
                on, _, off = decl.partition("/")
                if not on.startswith("--") or (off and not (self.flag and off.startswith("--"))):
                    raise _NotLean(decl)  # short options, secondary names without dashes: typer's
                self.names[on] = True
                if off:
                    self.names[off] = False


def _base_type(hint: Any) -> tuple[Any, bool]:
    """``Optional[list[str]]`` -> (str, True); ``Optional[Path]`` -> (Path, False)."""
    import types

    args = [a for a in typing.get_args(hint) if a is not type(None)] if typing.get_origin(hint) in (typing.Union, types.UnionType) else [hint]
    if len(args) != 1:
        return None, False
    (inner,) = args
    if typing.get_origin(inner) is list:
        (item,) = typing.get_args(inner) or (None,)
        return item, True
    return inner, False


def _params(fn: Callable[..., Any]) -> list[_Param]:
    """The command's parameters as typer reads them (its own reading of the signature and annotations)."""
    from typer.utils import get_params_from_function

    return [_Param(meta.name, meta.annotation, meta.default) for meta in get_params_from_function(fn).values()]


def parse(fn: Callable[..., Any], argv: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would call ``fn`` with for ``argv`` (after the command name), or None."""
    try:
        params = _params(fn)
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
        if param.name not in values:
            if param.required:
                return None  # typer says what is missing
            values[param.name] = param.default
    return values


def run(app: Any, argv: Sequence[str]) -> int | None:
    """Run ``procbench ARGV`` without typer's coercion when it is a lean command line; its exit status, or None."""
    if not argv or argv[0] not in LEAN_COMMANDS:
        return None
    command = next((c for c in app.registered_commands if (c.name or c.callback.__name__) == argv[0]), None)
    if command is None or command.callback is None:
        return None
    kwargs = parse(command.callback, argv[1:])
    if kwargs is None:
        return None
    # Scoring and checking compute in one thread: OpenBLAS's threads (started by importing NumPy) would only
    # spin, costing CPU time. A user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from typer import Abort, Exit
    from typer._click.exceptions import ClickException, UsageError

    try:
        command.callback(**kwargs)
    except Exit as exc:
        return exc.exit_code
    except Abort:
        print("Aborted!", file=sys.stderr)
        return 1
    except ClickException as exc:  # typer.BadParameter raised by the command: shown as typer shows it
        if isinstance(exc, UsageError) and exc.ctx is None:
            exc.ctx = _context(app, argv[0])
        exc.show()
        return exc.exit_code
    return 0


def _context(app: Any, name: str) -> Any:
    """The click context typer would have made for ``procbench NAME`` (for an error's usage lines)."""
    from typer._click import Context
    from typer.main import get_command

    group = get_command(app)
    root = Context(group, info_name="procbench")
    return Context(group.get_command(root, name), info_name=name, parent=root)  # type: ignore[attr-defined]

"""A typed registry of the components that specs wire by name.

Components are plain functions registered with a decorator.  Their parameters after the runtime
arguments of their kind (with annotations and defaults) are the parameters a spec may set; the checker reads them from here to
type-check spec arguments before anything runs::

    @component("scorer", "propara.leaderboard", version="1")
    def leaderboard_scorer(gold: GoldSet, predictions: Mapping[str, Any], *, round_digits: int = 3):
        ...

Kinds and their call shapes (positional arguments first, then the spec's keyword parameters):

* ``reader``      ``(data_root: Path, split: str, **params) -> GoldSet``
* ``predictions`` ``(path: Path, gold: GoldSet, **params) -> Mapping[str, Any]``; raises
  :class:`runners.InvalidPredictions` listing every problem
* ``scorer``      ``(gold: GoldSet, predictions: Mapping[str, Any], **params) -> list[ItemScore]``
* ``aggregator``  ``(items: Sequence[ItemScore], **params) -> dict[str, float]``
* ``import_check`` ``(fields: Mapping, choice_texts: Sequence[str], gold_item, **params) -> str | None``:
  why a logged item from another harness is not the gold item it claims to be (None when it is)
* ``normaliser``, ``similarity``, ``matcher``, ``filter``: building blocks of declarative scorers
  (``runners.text``, ``runners.similarity``, ``runners.matching``, ``runners.filters``).
"""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KINDS = ("reader", "predictions", "scorer", "aggregator", "normaliser", "similarity", "matcher", "filter", "import_check")


@dataclass(frozen=True)
class Param:
    name: str
    type: Any  # a Python type or typing form (int, float, str, bool, list[str], Literal[...], ...)
    default: Any = inspect.Parameter.empty

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    def type_name(self) -> str:
        return _type_name(self.type)


@dataclass(frozen=True)
class Component:
    kind: str
    name: str
    version: str
    fn: Callable[..., Any]
    params: tuple[Param, ...]
    doc: str

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def bind(self, **kwargs: Any) -> Callable[..., Any]:
        """The component with the spec's arguments captured (for readers, scorers, aggregators...)."""

        def bound(*args: Any) -> Any:
            return self.fn(*args, **kwargs)

        bound.__name__ = f"{self.kind}:{self.name}"
        return bound

    def build(self, **kwargs: Any) -> Any:
        """Call a factory component (normaliser, similarity, matcher, filter) with the spec's arguments."""
        return self.fn(**kwargs)


class UnknownComponent(LookupError):
    def __init__(self, kind: str, name: str, suggestions: list[str]):
        self.kind, self.name, self.suggestions = kind, name, suggestions
        hint = f" (did you mean {', '.join(repr(s) for s in suggestions)}?)" if suggestions else ""
        super().__init__(f"unknown {kind} {name!r}{hint}")


_REGISTRY: dict[tuple[str, str], Component] = {}


def component(kind: str, name: str, *, version: str = "1") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a component of ``kind`` under ``name``; returns ``fn`` unchanged."""
    if kind not in KINDS:
        raise ValueError(f"unknown component kind {kind!r}; expected one of {KINDS}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        key = (kind, name)
        existing = _REGISTRY.get(key)
        if existing is not None and existing.fn is not fn:
            if (existing.fn.__module__, existing.fn.__qualname__) != (fn.__module__, fn.__qualname__):
                raise ValueError(f"{kind} {name!r} is already registered by {existing.fn.__module__}")
        _REGISTRY[key] = Component(kind, name, version, fn, _params_of(kind, fn), inspect.getdoc(fn) or "")
        return fn

    return register


def get(kind: str, name: str) -> Component:
    _load_builtin_components()
    try:
        return _REGISTRY[(kind, name)]
    except KeyError:
        names = [n for (k, n) in _REGISTRY if k == kind]
        raise UnknownComponent(kind, name, difflib.get_close_matches(name, names, n=3)) from None


def names(kind: str) -> list[str]:
    _load_builtin_components()
    return sorted(n for (k, n) in _REGISTRY if k == kind)


def all_components() -> list[Component]:
    _load_builtin_components()
    return sorted(_REGISTRY.values(), key=lambda c: (c.kind, c.name))


# How many leading positional arguments the runtime passes to each kind (the rest are spec parameters).
_RUNTIME_ARGS = {"reader": 2, "predictions": 2, "scorer": 2, "aggregator": 1, "import_check": 3}


def _params_of(kind: str, fn: Callable[..., Any]) -> tuple[Param, ...]:
    hints = typing.get_type_hints(fn)
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    return tuple(Param(p.name, hints.get(p.name, Any), p.default) for p in params[_RUNTIME_ARGS.get(kind, 0) :])


def _type_name(t: Any) -> str:
    origin = typing.get_origin(t)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(t))
    if origin in (list, tuple):
        return f"list<{_type_name(typing.get_args(t)[0])}>"
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return " | ".join(_type_name(a) for a in typing.get_args(t))
    return getattr(t, "__name__", str(t))


_BUILTIN_MODULES = (
    "runners.generic",
    "runners.text",
    "runners.similarity",
    "runners.matching",
    "runners.filters",
    "runners.propara",
    "runners.paged",
    "runners.paradise",
    "runners.pmllm",
)
_loaded = False


def _load_builtin_components() -> None:
    """Import the modules that register the shipped components (once, lazily)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import importlib.util

    for module in _BUILTIN_MODULES:
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)

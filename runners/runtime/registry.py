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
* ``metric``      ``(**params) -> procbench.runners.metrics.Metric``: a library metric of ``measure`` blocks
  (per-item statistics, the aggregations it supports, the field types it compares)
* ``normaliser``, ``similarity``, ``matcher``, ``filter``: building blocks of declarative scorers
  (``procbench.runners.library.text``, ``procbench.runners.library.similarity``, ``procbench.runners.library.matching``, ``procbench.runners.library.filters``).
* ``deriver``     ``(record, gold, **params) -> Mapping[str, Any]``: a format component that turns one gold or
  predicted record into the typed fields the score block compares (``needs`` what it reads of both,
  ``gold_needs`` / ``prediction_needs`` of one side, ``fields`` what it gives), e.g. ProPara's inputs,
  outputs, conversions and moves of an action grid.  ``gold`` is None for a gold record and the item's
  gold record for a predicted one, so that a prediction's fields can answer the gold's questions in
  the gold's order (NAACL'18's question instances).
"""

from __future__ import annotations

import contextlib
import re
import sys
import _thread  # the lock only: the threading module's import is not needed for it (issue #31)
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.records import Record

KINDS = (
    "reader",
    "predictions",
    "scorer",
    "aggregator",
    "metric",
    "normaliser",
    "similarity",
    "matcher",
    "filter",
    "import_check",
    "deriver",
)

# Parameter annotations for names a spec declares: the checker wants a bare name there and resolves
# it (a gold field, a prediction field, a per-item value emitted by the scorer) before anything runs.
GoldField = typing.NewType("GoldField", str)
PredictionField = typing.NewType("PredictionField", str)
ValueName = typing.NewType("ValueName", str)
NAME_PARAMS = {
    GoldField: "gold field",
    PredictionField: "prediction field",
    ValueName: "per-item value",
}
# A parameter that takes a normaliser block's name; the checker writes its steps in place of the name
# (so they are part of the fingerprint) and the compiler passes them as a procbench.runners.library.text.Pipeline.
NormaliserName = typing.NewType("NormaliserName", str)
# A parameter filled only by a ``similarity`` block of the spec, never written as a literal: record_mean's and
# cases' (name, similarity) pairs, all_of's similarities, on_field's and at_least's one similarity.
SimilarityParts = typing.NewType("SimilarityParts", tuple)

# ``emits`` of a mean/sum-like aggregator: the metrics are the per-item values the scorer emits.
SAME_AS_SCORER = "same-as-scorer"

Emits = tuple[str, ...] | str | Callable[[Mapping[str, Any]], tuple[str, ...]]

# What a metric may declare it requires of the spec (``library_metric(..., requires=(...))``), as lm-eval's metric
# registrations declare their metadata: the checker supplies each one, or refuses the measure at its line, from
# this declaration alone (never from the metric's name).  ``class_set``: the classes, passed as the factory's
# ``labels`` argument (``labels = [...]`` in the spec, else the gold field's enum values), checked against the
# data by ``check --data``.
METRIC_REQUIREMENTS = {
    "class_set": "the class set (labels = [...], else the gold field's enum values)",
}


class Contract(Record):
    """What a component consumes and produces, so that the checker resolves every name before a run.

    * readers: ``fields`` (gold field -> type) and ``labels`` (item label -> its values, () = open);
    * predictions: ``fields`` (the prediction record's fields and types);
    * normalisers, similarities, filters, matchers: ``takes`` / ``gives`` (value types);
    * scorers: ``needs`` (gold fields it reads, with types) and ``emits`` (per-item value names);
    * aggregators: ``emits``: metric names, :data:`SAME_AS_SCORER`, or a function of the spec's
      arguments returning the names (``micro_prf(prefix = "x_")`` emits ``x_p``, ``x_r``, ``x_f1``).
    """

    __slots__ = (
        "fields",
        "labels",
        "takes",
        "gives",
        "needs",
        "emits",
        "compares",
        "aggregations",
        "gold_needs",
        "prediction_needs",
        "requires",
        "aggregation_hint",
    )
    fields: Mapping[str, FieldType]
    labels: Mapping[str, tuple[str, ...]]
    takes: FieldType | None
    gives: FieldType | None
    needs: Mapping[str, FieldType]
    emits: Emits
    # metrics: lines saying what gold and prediction may be (per aggregation) and whose numbers it gives
    compares: tuple[str, ...]
    aggregations: tuple[
        str, ...
    ]  # metrics: how its per-item statistics may combine, the default first
    gold_needs: Mapping[str, FieldType]  # derivers: fields read of the gold records only
    prediction_needs: Mapping[str, FieldType]  # derivers: fields read of the predicted records only
    requires: tuple[str, ...]  # metrics: what the spec must supply (keys of METRIC_REQUIREMENTS)
    # metrics: the hint of the checker's refusal of an aggregation this metric does not support
    aggregation_hint: str

    def __init__(
        self,
        fields: Mapping[str, FieldType] | None = None,
        labels: Mapping[str, tuple[str, ...]] | None = None,
        takes: FieldType | None = None,
        gives: FieldType | None = None,
        needs: Mapping[str, FieldType] | None = None,
        emits: Emits = (),
        compares: tuple[str, ...] = (),
        aggregations: tuple[str, ...] = (),
        gold_needs: Mapping[str, FieldType] | None = None,
        prediction_needs: Mapping[str, FieldType] | None = None,
        requires: tuple[str, ...] = (),
        aggregation_hint: str = "",
    ) -> None:
        object.__setattr__(self, "fields", {} if fields is None else fields)
        object.__setattr__(self, "labels", {} if labels is None else labels)
        object.__setattr__(self, "takes", takes)
        object.__setattr__(self, "gives", gives)
        object.__setattr__(self, "needs", {} if needs is None else needs)
        object.__setattr__(self, "emits", emits)
        object.__setattr__(self, "compares", compares)
        object.__setattr__(self, "aggregations", aggregations)
        object.__setattr__(self, "gold_needs", {} if gold_needs is None else gold_needs)
        object.__setattr__(
            self, "prediction_needs", {} if prediction_needs is None else prediction_needs
        )
        object.__setattr__(self, "requires", requires)
        object.__setattr__(self, "aggregation_hint", aggregation_hint)

    def emitted(
        self, params: Mapping[str, Any], scorer_emits: tuple[str, ...] = ()
    ) -> tuple[str, ...]:
        """The names emitted with these spec arguments (defaults filled in by the caller)."""
        if self.emits == SAME_AS_SCORER:
            return scorer_emits
        if callable(self.emits):
            return tuple(self.emits(params))
        return tuple(self.emits)

    def describe(self) -> list[str]:
        """One line per declared part, for ``procbench components`` and the generated reference."""
        out = []
        if self.takes is not None:
            out.append(
                f"takes {self.takes.spelling()}"
                + (f", gives {self.gives.spelling()}" if self.gives else "")
            )
        parts = (
            ("fields", self.fields),
            ("needs", self.needs),
            ("needs of gold", self.gold_needs),
            ("needs of predictions", self.prediction_needs),
        )
        for title, mapping in parts:
            if mapping:
                out.append(
                    f"{title}: " + ", ".join(f"{k}: {v.spelling()}" for k, v in mapping.items())
                )
        if self.labels:
            out.append(
                "labels: "
                + ", ".join(
                    k + (f" ({' | '.join(v)})" if v else "") for k, v in self.labels.items()
                )
            )
        if self.aggregations:
            out.append(
                "aggregate: " + " | ".join(self.aggregations) + f" (default {self.aggregations[0]})"
            )
        if self.requires:
            out.append("requires: " + "; ".join(METRIC_REQUIREMENTS[r] for r in self.requires))
        out += list(self.compares)
        if self.emits == SAME_AS_SCORER:
            out.append("emits: the scorer's per-item values")
        elif callable(self.emits):
            out.append("emits: " + (_doc_of(self.emits) or "names computed from its arguments"))
        elif self.emits:
            out.append("emits: " + ", ".join(self.emits))
        return out


def _types(mapping: Mapping[str, str | FieldType] | None) -> dict[str, FieldType]:
    return {
        k: v if isinstance(v, FieldType) else FieldType.parse(v) for k, v in (mapping or {}).items()
    }


def known_requirements(requires: Sequence[str]) -> tuple[str, ...]:
    """``requires`` as declared, or ValueError naming the first requirement the checker does not know."""
    unknown = [r for r in requires if r not in METRIC_REQUIREMENTS]
    if unknown:
        raise ValueError(
            f"unknown requirement {unknown[0]!r}; a metric may require {', '.join(METRIC_REQUIREMENTS)}"
        )
    return tuple(requires)


def contract(
    *,
    fields: Mapping[str, str | FieldType] | None = None,
    labels: Mapping[str, tuple[str, ...]] | Sequence[str] | None = None,
    takes: str | None = None,
    gives: str | None = None,
    needs: Mapping[str, str | FieldType] | None = None,
    emits: Emits = (),
    compares: Sequence[str] = (),
    aggregations: Sequence[str] = (),
    gold_needs: Mapping[str, str | FieldType] | None = None,
    prediction_needs: Mapping[str, str | FieldType] | None = None,
    requires: Sequence[str] = (),
    aggregation_hint: str = "",
) -> Contract:
    """A :class:`Contract` from the spellings specs use (``"list(str)"``)."""
    known_requirements(requires)
    label_map = dict(labels) if isinstance(labels, Mapping) else {name: () for name in labels or ()}
    return Contract(
        _types(fields),
        label_map,
        FieldType.parse(takes) if takes else None,
        FieldType.parse(gives) if gives else None,
        _types(needs),
        emits,
        tuple(compares),
        tuple(aggregations),
        _types(gold_needs),
        _types(prediction_needs),
        tuple(requires),
        aggregation_hint,
    )


_NO_DEFAULT: Any = (
    object()
)  # Param's default when none is given: inspect.Parameter.empty, fetched then


class Param(Record):
    """A parameter a spec may set on a component: its name, type and default."""

    __slots__ = ("name", "type", "default")
    name: str
    type: Any  # a Python type or typing form (int, float, str, bool, list[str], Literal[...], ...)
    default: Any

    def __init__(self, name: str, type: Any, default: Any = _NO_DEFAULT) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "default", _empty() if default is _NO_DEFAULT else default)

    @property
    def required(self) -> bool:
        return self.default is _empty()

    def type_name(self) -> str:
        return _type_name(self.type)


NO_CONTRACT = Contract()  # a component's contract when it declares none (one shared frozen value)


def _empty() -> Any:
    """``inspect.Parameter.empty`` (a parameter without a default), importing ``inspect`` only when asked:
    it imports ``ast``, ``dis`` and ``tokenize``, milliseconds a warm score never needs (issue #31)."""
    import inspect

    return inspect.Parameter.empty


def _doc_of(fn: Any) -> str | None:
    """``inspect.getdoc(fn)``, importing ``inspect`` when asked (see :func:`_empty`)."""
    import inspect

    return inspect.getdoc(fn)


class Component(Record):
    """A registered component: its kind, name, version, function, parameters, documentation and contract."""

    __slots__ = (
        "kind",
        "name",
        "version",
        "fn",
        "declared_params",
        "declared_doc",
        "contract",
        "origin",
        "preset_of",
    )
    # read on first use (the doc property): left out of equality and hashing, which must not change when it is
    _hidden = frozenset({"declared_doc"})
    kind: str
    name: str
    version: str
    fn: Callable[..., Any]
    # the spec's parameters (:attr:`params`); None for a built-in one until first asked: reading them
    # (signature, evaluated annotations) costs a score that only builds its components (issue #31)
    declared_params: tuple[Param, ...] | None
    # the documentation (:attr:`doc`); None until first asked: ``inspect.getdoc`` imports ``inspect``,
    # which a score never needs (issue #31)
    declared_doc: str | None
    contract: Contract
    origin: str  # "built-in", or the entry point / components file that registered it
    # A preset: this component is another of its kind with fixed arguments, and the checker writes
    # it as that one, so a spec that names the preset keeps the fingerprint of the spelled-out call.
    preset_of: tuple[str, tuple[tuple[str, Any], ...]] | None

    def __init__(
        self,
        kind: str,
        name: str,
        version: str,
        fn: Callable[..., Any],
        declared_params: tuple[Param, ...] | None,
        declared_doc: str | None,
        contract: Contract = NO_CONTRACT,
        origin: str = "built-in",
        preset_of: tuple[str, tuple[tuple[str, Any], ...]] | None = None,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "declared_params", declared_params)
        object.__setattr__(self, "declared_doc", declared_doc)
        object.__setattr__(self, "contract", contract)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "preset_of", preset_of)

    @property
    def params(self) -> tuple[Param, ...]:
        """The parameters a spec may set, read from the function's signature once."""
        if self.declared_params is None:
            object.__setattr__(self, "declared_params", _params_of(self.kind, self.fn))
        return self.declared_params  # type: ignore[return-value]

    @property
    def doc(self) -> str:
        """The function's documentation (``inspect.getdoc``), read once."""
        if self.declared_doc is None:
            object.__setattr__(self, "declared_doc", _doc_of(self.fn) or "")
        return self.declared_doc  # type: ignore[return-value]

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
    """No component ``kind`` ``name``; ``defined_in`` names a components file that defines it but was not allowed
    (read, never imported: see :func:`not_allowed_definition`), and ``hint`` how to allow it."""

    def __init__(self, kind: str, name: str, suggestions: list[str], defined_in: str | None = None):
        self.kind, self.name, self.suggestions, self.defined_in = (
            kind,
            name,
            suggestions,
            defined_in,
        )
        self.hint = ""
        if defined_in is not None:
            folder = Path(defined_in.partition(":")[0]).parent
            self.hint = (
                f"procbench never imports code because it sits beside a spec: if you trust {folder}, allow it with "
                f"`--components {folder}` (check, compile, score, submit) or {COMPONENTS_ENV}={folder}"
            )
            super().__init__(
                f"unknown {kind} {name!r}: {defined_in} defines it, but that folder's code is not loaded"
            )
            return
        hint = f" (did you mean {', '.join(repr(s) for s in suggestions)}?)" if suggestions else ""
        super().__init__(f"unknown {kind} {name!r}{hint}")


_REGISTRY: dict[tuple[str, str], Component] = {}


def component(
    kind: str,
    name: str,
    *,
    version: str = "1",
    preset_of: tuple[str, Mapping[str, Any]] | None = None,
    **declared: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a component of ``kind`` under ``name``; returns ``fn`` unchanged.

    ``preset_of = (other, arguments)`` declares ``fn()`` the same as ``other(**arguments)`` (see
    :attr:`Component.preset_of`).  Other keyword arguments besides ``version`` are the component's
    :class:`Contract` (see :func:`contract`).
    """
    preset = (preset_of[0], tuple(preset_of[1].items())) if preset_of else None
    promised = contract(**declared)
    if kind not in KINDS:
        raise ValueError(f"unknown component kind {kind!r}; expected one of {KINDS}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        key = (kind, name)
        origin = _origin_of(fn)
        # a built-in component's parameters are read when first asked (the checker, the reference), a
        # plug-in's here, so that a signature that cannot be read fails where it is loaded
        params = (
            _params_of(kind, fn)
            if origin != BUILTIN_ORIGIN or "class_set" in promised.requires
            else None
        )
        _check_requirements(kind, name, promised, params or ())
        existing = _REGISTRY.get(key)
        if existing is not None and existing.fn is not fn:
            if (existing.fn.__module__, existing.fn.__qualname__) != (
                fn.__module__,
                fn.__qualname__,
            ):
                raise DuplicateComponent(
                    f"{kind} {name!r} is already registered by {existing.origin} ({existing.fn.__module__})"
                )
        _REGISTRY[key] = Component(
            kind,
            name,
            version,
            fn,
            params,
            None,  # the documentation, read when first asked (Component.doc)
            promised,
            origin,
            preset,
        )
        return fn

    return register


def _check_requirements(kind: str, name: str, promised: Contract, params: Sequence[Param]) -> None:
    """A requirement is a metric's, and each one reaches the metric through a parameter it takes."""
    if promised.requires and kind != "metric":
        raise ValueError(f"{kind} {name!r}: only a metric declares what it requires")
    if "class_set" in promised.requires and not any(p.name == "labels" for p in params):
        raise ValueError(
            f"metric {name!r} requires the class set but takes no labels parameter: the checker passes the classes as labels"
        )


def get(kind: str, name: str) -> Component:
    """The component ``kind`` ``name``; a shipped one imports only its own module (see :func:`_import_indexed`)."""
    found = _REGISTRY.get((kind, name))
    if found is not None or (not _loaded and _import_indexed(kind, name)):
        return found or _REGISTRY[(kind, name)]
    _load_builtin_components()
    try:
        return _REGISTRY[(kind, name)]
    except KeyError:
        import difflib  # only to suggest names for an unknown one (issue #31: start-up)

        names = [n for (k, n) in _REGISTRY if k == kind]
        raise UnknownComponent(
            kind,
            name,
            difflib.get_close_matches(name, names, n=3),
            not_allowed_definition(kind, name),
        ) from None


def names(kind: str) -> list[str]:
    _load_builtin_components()
    return sorted(n for (k, n) in _REGISTRY if k == kind)


def all_components() -> list[Component]:
    _load_builtin_components()
    return sorted(_REGISTRY.values(), key=lambda c: (c.kind, c.name))


# How many leading positional arguments the runtime passes to each kind (the rest are spec parameters).
_RUNTIME_ARGS = {
    "reader": 2,
    "predictions": 2,
    "scorer": 2,
    "aggregator": 1,
    "import_check": 3,
    "deriver": 2,
}


def _params_of(kind: str, fn: Callable[..., Any]) -> tuple[Param, ...]:
    import inspect  # only where a signature is read (a plug-in's, the checker's, the reference's)

    hints = typing.get_type_hints(fn)
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    return tuple(
        Param(p.name, hints.get(p.name, Any), p.default)
        for p in params[_RUNTIME_ARGS.get(kind, 0) :]
    )


def _type_name(t: Any) -> str:
    origin = typing.get_origin(t)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(t))
    if origin in (list, tuple):
        return f"list<{_type_name(typing.get_args(t)[0])}>"
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return " | ".join(_type_name(a) for a in typing.get_args(t))
    return getattr(t, "__name__", str(t))


# ---------------------------------------------------------------------------------------------
# Discovery: where components come from.
#
# Nothing is imported until a component is first looked up (get, names, all_components). Then the
# modules named by the ``procbench.components`` entry points are imported: procbench's own first
# (pyproject.toml lists the built-in modules), then other installed distributions'. A source checkout
# whose metadata is not installed falls back to the same list as the component index records it
# (runners/runtime/_component_index.py's MODULES, generated from pyproject.toml). Besides those, only the folders of
# component modules the operator names (``--components DIR`` or PROCBENCH_COMPONENTS) are imported:
# load_operator_components, which the checker calls. A ``components/`` folder beside a spec is never
# imported because it is there (a spec is data, docs/submissions.md's threat model): the checker only
# notes it (note_folder_beside_spec) so that an unknown name it defines gets a hint naming the file and the flag.

ENTRY_POINT_GROUP = "procbench.components"
COMPONENTS_ENV = (
    "PROCBENCH_COMPONENTS"  # folders of component modules the operator allows, os.pathsep-separated
)
BUILTIN_ORIGIN = "built-in"
_OWN_DISTRIBUTION = "procbench"

# Every shipped component module is one of this package's (the entry points pyproject.toml declares):
# a component defined under it is built-in, even when a plugin's import pulled its module in.
_OWN_PACKAGE = "procbench"

_lock = _thread.RLock()  # the leaderboard looks components up from several threads
_loaded = False
_discovering = False
_loading_origin: str | None = None  # the entry point or components file being imported
_module_origins: dict[
    str, str
] = {}  # module named by an entry point or components file -> its origin
_problems: list[LoadProblem] = []  # entry points that failed: their components are missing
_entry_points_done: set[tuple[str, str, str]] = set()
_spec_dir_files: dict[
    Path, tuple[int, int]
] = {}  # components files imported -> (mtime_ns, size) then
_folders_beside_specs: set[Path] = (
    set()
)  # components/ folders seen beside checked specs: read for hints, never imported


class DuplicateComponent(ValueError):
    """Two different modules register the same kind and name."""


class LoadProblem(Record):
    """Why a components module did not load: where (file, line, column), what happened, what to do."""

    __slots__ = ("origin", "message", "path", "line", "column", "hint")
    origin: str
    message: str
    path: str | None
    line: int
    column: int
    hint: str

    def __init__(
        self,
        origin: str,
        message: str,
        path: str | None = None,
        line: int = 0,
        column: int = 0,
        hint: str = "",
    ) -> None:
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "column", column)
        object.__setattr__(self, "hint", hint)

    def render(self) -> str:
        where = self.path or self.origin
        if self.line:
            where += f":{self.line}" + (f":{self.column}" if self.column else "")
        lines = [f"{where}: error: {self.message}"]
        text = _source_line(self.path, self.line)
        if text is not None:
            gutter = f"{self.line:>4} | "
            lines.append(gutter + text)
            if self.column:
                lines.append(" " * (len(gutter) + self.column - 1) + "^")
        if self.path and self.origin != self.path:
            lines.append(f"  from: {self.origin}")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)


class ComponentLoadError(Exception):
    """Components files that failed to import; ``str()`` names each file and line, not a traceback."""

    def __init__(self, problems: Sequence[LoadProblem]):
        self.problems = tuple(problems)
        super().__init__("\n".join(p.render() for p in self.problems))


def load_problems() -> tuple[LoadProblem, ...]:
    """Entry points that failed to import (their components are missing; the rest work)."""
    _load_builtin_components()
    return tuple(_problems)


def operator_folders() -> tuple[Path, ...]:
    """The folders of component modules the operator allowed: :data:`COMPONENTS_ENV`, in order."""
    import os

    return tuple(
        Path(p).expanduser()
        for p in os.environ.get(COMPONENTS_ENV, "").split(os.pathsep)
        if p.strip()
    )


def allow_folders(folders: Sequence[Path]) -> None:
    """``--components DIR``: add ``folders`` to :data:`COMPONENTS_ENV` for this process and what it starts (the site)."""
    import os

    known = [str(p) for p in operator_folders()]
    added = [str(Path(f).expanduser().resolve()) for f in folders]
    os.environ[COMPONENTS_ENV] = os.pathsep.join(dict.fromkeys([*known, *added]))


def load_operator_components() -> tuple[Path, ...]:
    """Import every ``*.py`` of each folder the operator allowed (:func:`operator_folders`); returns those files.

    Raises :class:`ComponentLoadError` naming every file that fails, and a named folder that is not one.
    """
    folders = operator_folders()
    if not folders:
        return ()
    missing = [
        LoadProblem(
            COMPONENTS_ENV,
            f"{f} is not a folder",
            str(f),
            hint="name a folder of component modules (*.py)",
        )
        for f in folders
        if not f.is_dir()
    ]
    if missing:
        raise ComponentLoadError(missing)
    return tuple(file for folder in folders for file in load_components_folder(folder))


def load_components_folder(folder: Path) -> tuple[Path, ...]:
    """Import every ``*.py`` in ``folder`` (once per file version); returns those files.

    Only for a folder the operator chose (:func:`load_operator_components`). Each file is imported by
    path under its own module name, registering what it decorates with ``@component``;
    ``Component.origin`` is the file. A file that changed since it was imported is imported again and
    replaces what it registered. Raises :class:`ComponentLoadError` naming every file that fails
    (syntax error, exception, a name another module registered).
    """
    folder = Path(folder)
    files = sorted(p for p in folder.glob("*.py") if p.is_file()) if folder.is_dir() else []
    if not files:
        return ()
    _load_builtin_components()  # first, so that a clash with a built-in is this file's error
    with _lock:
        problems = [
            problem for file in files if (problem := _import_components_file(file)) is not None
        ]
    if problems:
        raise ComponentLoadError(problems)
    return tuple(files)


def note_folder_beside_spec(spec_dir: Path) -> None:
    """Remember ``<spec_dir>/components`` (when there is one) for :func:`not_allowed_definition`; nothing is imported."""
    folder = Path(spec_dir) / "components"
    if folder.is_dir():
        with _lock:
            _folders_beside_specs.add(folder)


def not_allowed_definition(kind: str, name: str) -> str | None:
    """``file:line`` of a noted components folder that defines ``kind`` ``name`` and is not allowed, or None.

    The files are parsed (``ast``), never imported: a ``@component("kind", "name")`` decorator is what is looked for.
    """
    allowed = {f.resolve() for f in operator_folders()}
    with _lock:
        folders = sorted(f for f in _folders_beside_specs if f.resolve() not in allowed)
    for folder in folders:
        for file in sorted(folder.glob("*.py")):
            line = _decorated_line(file, kind, name)
            if line:
                return f"{file}:{line}"
    return None


def _decorated_line(file: Path, kind: str, name: str) -> int:
    """The line of a ``@component(kind, name, ...)`` decorator in ``file`` (0: none, or not Python)."""
    import ast

    try:
        tree = ast.parse(file.read_text(encoding="utf-8", errors="replace"), str(file))
    except (OSError, SyntaxError, ValueError):
        return 0
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and len(deco.args) >= 2:
                words = [a.value for a in deco.args[:2] if isinstance(a, ast.Constant)]
                if words == [kind, name]:
                    return deco.lineno
    return 0


def _origin_of(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None) or ""
    if module.partition(".")[0] == _OWN_PACKAGE:
        return BUILTIN_ORIGIN  # even when a plugin's import pulls a built-in module in
    # by module first: importing one entry point's module may import another's (a package and its submodule)
    owners = [m for m in _module_origins if module == m or module.startswith(m + ".")]
    if owners:
        return _module_origins[max(owners, key=len)]
    return _loading_origin or f"module {module}"


@contextlib.contextmanager
def _origin(label: str) -> Iterator[None]:
    global _loading_origin
    previous, _loading_origin = _loading_origin, label
    try:
        yield
    finally:
        _loading_origin = previous


# -- the index of the shipped components ---------------------------------------------------------
# runners/runtime/_component_index.py maps each shipped component (kind, name) to the module whose import
# registers it, so that looking one up (``get``) imports that module only: scoring ProPara does not
# import PAGED's, PARADISE's or the metric library's modules. ``names``, ``all_components`` and
# ``load_problems`` still discover everything (entry points included). It also records (MODULES) the
# built-in component modules that pyproject.toml declares as procbench's entry points, the one list of
# them: a checkout run without installed metadata reads it there instead of parsing pyproject.toml at
# start-up. The file is generated from pyproject.toml and what those modules register
# (``python -m procbench.runners.runtime.registry --write-index``); tests/test_registry_index.py checks it has not
# drifted. A stale entry costs time, never a result: a name the indexed module does not register, or a
# module that is gone, falls back to discovering everything.
INDEX_MODULE = "procbench.runners.runtime._component_index"
INDEX_COMMAND = "python -m procbench.runners.runtime.registry --write-index"
PYPROJECT = (
    Path(__file__).resolve().parents[2] / "pyproject.toml"
)  # a checkout's; absent when installed


def _index() -> Mapping[tuple[str, str], str]:
    try:
        from procbench.runners.runtime._component_index import INDEX
    except ImportError:  # no index (being regenerated): every lookup discovers everything
        return {}
    return INDEX


def _indexed_modules() -> tuple[str, ...]:
    """The built-in component modules as the index records them (pyproject.toml's entry points)."""
    try:
        from procbench.runners.runtime._component_index import MODULES
    except ImportError:  # no index (being regenerated): the checkout's pyproject.toml itself
        return declared_modules()
    return MODULES


def declared_modules(pyproject: Path | None = None) -> tuple[str, ...]:
    """The modules pyproject.toml declares as procbench's ``procbench.components`` entry points, in its order."""
    import tomllib

    path = pyproject or PYPROJECT
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    group = table.get("project", {}).get("entry-points", {}).get(ENTRY_POINT_GROUP, {})
    return tuple(str(module) for module in group.values())


def _import_indexed(kind: str, name: str) -> bool:
    """Import the module the index names for (kind, name); True when that registered it."""
    module = _index().get((kind, name))
    if module is None:
        return False
    import importlib

    with _lock:
        if module not in sys.modules:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise  # the module is there and fails as discovery would make it fail
                return False  # moved or removed since the index was written
    return (kind, name) in _REGISTRY


def _import_component_module(module: str) -> None:
    """Import a built-in component module, and the modules it names in ``COMPONENT_MODULES``: a package whose
    components are imported on first use (procbench.runners.metrics) registers them all here."""
    import importlib

    imported = importlib.import_module(module)
    for name in getattr(imported, "COMPONENT_MODULES", ()):
        importlib.import_module(name)


def render_index(pyproject: Path | None = None) -> str:
    """The text of runners/runtime/_component_index.py: the built-in component modules pyproject.toml declares, and every
    component they register with the module that registers it."""

    modules = declared_modules(pyproject)
    if not modules:
        raise FileNotFoundError(
            f"no {ENTRY_POINT_GROUP} entry points in {pyproject or PYPROJECT}: the index is generated in a checkout"
        )
    with _origin(BUILTIN_ORIGIN):
        for module in modules:
            _import_component_module(module)
    entries = sorted(
        (c.kind, c.name, c.fn.__module__) for c in _REGISTRY.values() if c.origin == BUILTIN_ORIGIN
    )
    lines = [
        f'"""Generated by `{INDEX_COMMAND}` from pyproject.toml; do not edit by hand.',
        "",
        "MODULES: the built-in component modules, as pyproject.toml declares them (procbench's entry points in the",
        "procbench.components group); a checkout without installed metadata imports these.",
        "INDEX: each shipped component (kind, name) -> the module whose import registers it (runners/runtime/registry.py reads",
        'this so that a lookup imports one module, not every component module)."""',
        "",
        "MODULES: tuple[str, ...] = (",
        *(f'    "{module}",' for module in modules),
        ")",
        "",
        "INDEX: dict[tuple[str, str], str] = {",
        *(
            f"    ({kind!r}, {name!r}): {module!r},".replace("'", '"')
            for kind, name, module in entries
        ),
        "}",
        "",
    ]
    return "\n".join(lines)


def _index_entries(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith('    ("')]


def index_path() -> Path:
    return Path(__file__).with_name(INDEX_MODULE.rpartition(".")[2] + ".py")


def _load_builtin_components() -> None:
    """Import the modules named by entry points (once, on the first lookup)."""
    global _loaded, _discovering
    if _loaded:
        return
    with _lock:
        if _loaded or _discovering:  # _discovering: a module being imported looked a component up
            return
        _discovering = True
        try:
            _discover()
        finally:
            _discovering = False
            _loaded = True


def _discover() -> None:
    """Import procbench's own component modules, then other distributions' entry points."""
    import importlib
    import importlib.util

    own, others = _entry_points()
    declared = {ep.value for ep in own}
    shipped = _indexed_modules()
    modules = [ep.value for ep in own] + [m for m in shipped if m not in declared]
    if own and not set(shipped) <= declared:
        _problems.append(
            LoadProblem(
                f"entry point {_OWN_DISTRIBUTION}",
                f"the installed metadata of {_OWN_DISTRIBUTION} lists other component modules than this checkout's",
                hint="reinstall it (`pip install -e .`, or `make setup`); the checkout's modules were loaded too",
            )
        )
    with _origin(BUILTIN_ORIGIN):
        for module in modules:
            if importlib.util.find_spec(module) is not None:
                _import_component_module(module)
    for ep in others:
        _module_origins.setdefault(ep.module, _entry_point_label(ep))
    for ep in others:
        _load_entry_point(ep)


def _entry_points() -> tuple[list[Any], list[Any]]:
    """The group's entry points: procbench's own (empty without installed metadata) and the others."""
    from importlib import metadata

    own: list[Any] = []
    others: list[Any] = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        (own if _normalise(_dist_name(ep)) == _OWN_DISTRIBUTION else others).append(ep)
    others.sort(key=lambda ep: (_dist_name(ep), ep.name))
    return own, others


def _dist_name(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return (dist.name if dist is not None else "") or "?"


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _load_entry_point(ep: Any) -> None:
    """Import the module an entry point names, or call the function it names (which registers)."""
    key = (_dist_name(ep), ep.name, ep.value)
    if key in _entry_points_done:
        return
    _entry_points_done.add(key)
    label = _entry_point_label(ep)
    try:
        with _origin(label):
            target = ep.load()
            if ep.attr and callable(target):
                target()
    except (
        Exception
    ) as exc:  # a broken plugin must not break every spec: record it, report it where asked
        _problems.append(
            _problem(
                exc,
                label,
                None,
                f"fix or uninstall the distribution {key[0]!r} (its entry point is {ep.value!r})",
            )
        )


def _entry_point_label(ep: Any) -> str:
    return f"entry point {_dist_name(ep)}:{ep.name}"


def _import_components_file(file: Path) -> LoadProblem | None:
    import importlib.util

    resolved = file.resolve()
    stat = resolved.stat()
    version = (stat.st_mtime_ns, stat.st_size)
    if _spec_dir_files.get(resolved) == version:
        return None
    name = _module_name(resolved)
    _module_origins[name] = str(file)
    _forget_module(name)  # a changed file replaces what it registered before
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        return LoadProblem(str(file), "cannot be imported as a Python module", str(file))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing look their module up here
    try:
        with _origin(str(file)):
            spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        _forget_module(name)  # nothing half-registered by a broken file lingers
        _spec_dir_files.pop(resolved, None)
        return _problem(
            exc,
            str(file),
            resolved,
            f"fix {file.name}: every *.py in {file.parent} is imported, as --components / {COMPONENTS_ENV} allowed it",
        )
    _spec_dir_files[resolved] = version
    return None


def _module_name(resolved: Path) -> str:
    """A module name unique to the file (two spec folders may both hold components/metrics.py)."""
    import hashlib

    digest = hashlib.sha1(str(resolved.parent).encode()).hexdigest()[:10]
    stem = re.sub(r"\W", "_", resolved.stem)
    return f"procbench_components_{digest}_{stem}"


def _forget_module(module: str) -> None:
    for key in [key for key, comp in _REGISTRY.items() if comp.fn.__module__ == module]:
        del _REGISTRY[key]


def _problem(exc: Exception, origin: str, file: Path | None, hint: str) -> LoadProblem:
    """Where ``exc`` arose (the deepest frame in ``file`` when given) as a LoadProblem, no traceback."""
    if isinstance(exc, SyntaxError):
        path = exc.filename or (str(file) if file else None)
        return LoadProblem(
            origin,
            f"syntax error: {exc.msg}",
            _shown(path, file, origin),
            exc.lineno or 0,
            exc.offset or 0,
            hint,
        )
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    if file is not None:
        frames = [f for f in frames if Path(f.filename) == file] or frames
    frame = frames[-1] if frames else None
    if isinstance(exc, DuplicateComponent):
        message, hint = (
            str(exc),
            "choose another name: a component cannot replace one registered elsewhere",
        )
    elif isinstance(exc, ImportError):
        message, hint = (
            f"import failed: {exc}",
            "install the missing package in this environment, or remove the import",
        )
    else:
        message = f"raised {type(exc).__name__}: {exc}"
    path = _shown(frame.filename, file, origin) if frame else (origin if file is not None else None)
    return LoadProblem(origin, message, path, frame.lineno or 0 if frame else 0, 0, hint)


def _shown(path: str | None, file: Path | None, origin: str) -> str | None:
    """Components files are shown as the user named them (``origin``), other files as they are."""
    if path is not None and file is not None and Path(path) == file:
        return origin
    return path


def _source_line(path: str | None, line: int) -> str | None:
    if not path or line < 1:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return lines[line - 1].expandtabs(1) if line <= len(lines) else None


def _main(argv: Sequence[str] | None = None) -> int:
    """``python -m procbench.runners.runtime.registry --write-index`` (regenerate the index) or ``--check-index`` (exit 1 when stale)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m procbench.runners.runtime.registry", description=_main.__doc__
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--write-index",
        action="store_true",
        help=f"write {INDEX_MODULE} from the shipped component modules",
    )
    group.add_argument(
        "--check-index",
        action="store_true",
        help="exit 1 when the index differs from what the modules register",
    )
    args = parser.parse_args(argv)
    text, path = render_index(), index_path()
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    if args.check_index:
        if current != text:
            print(f"{path} is stale: run `{INDEX_COMMAND}`", file=sys.stderr)
            return 1
        return 0
    if current != text:
        path.write_text(text, encoding="utf-8")
    print(f"wrote {path} ({len(_index_entries(text))} components)")
    return 0


if __name__ == "__main__":
    # run as a script this file is ``__main__``: use the module the components register with
    from procbench.runners.runtime import registry as _registry

    raise SystemExit(_registry._main())

"""procbench.ext: the public API for writing components (metrics, normalisers, readers, scorers, ...).

A component is a plain function registered with :func:`component` (or, for a metric of ``measure``
blocks, :func:`library_metric`). Import everything a component needs from this module only: the
modules it re-exports (``procbench.runners.*``) are private and may change; these names will not
without a deprecation. ``docs/plugins.md`` walks through a complete plugin (a metric and a normaliser,
packaged as a distribution with an entry point, and the same file in an operator-enabled folder).

Where components come from
    procbench imports component code only from where its operator chose: the modules that installed
    distributions name under the entry-point group :data:`ENTRY_POINT_GROUP` (``procbench.components``
    in a ``pyproject.toml``), and every ``*.py`` of a folder named with ``--components DIR`` or
    :data:`COMPONENTS_ENV`. A ``components/`` folder beside a spec is never imported because it is there.

Registering
    ``@component(kind, name, version="1", **contract)`` registers a function and returns it unchanged.
    ``kind`` is one of :data:`KINDS`; the runtime calls the function with its kind's runtime arguments
    first (``reader``: ``(data_root, split)``; ``predictions``: ``(path, gold)``; ``scorer``:
    ``(gold, predictions)``; ``aggregator``: ``(items,)``; ``deriver``: ``(record, gold)``;
    ``import_check``: ``(fields, choice_texts, gold_item)``; factories (``metric``, ``normaliser``,
    ``similarity``, ``matcher``, ``filter``): none). The parameters after those, with annotations and
    defaults, are what a spec may set: ``procbench check`` type-checks a spec's arguments against them
    before anything runs. :data:`GoldField`, :data:`PredictionField`, :data:`ValueName` and
    :data:`NormaliserName` annotate a parameter that takes a name the checker resolves. The other
    keyword arguments are the component's :class:`Contract` (see :func:`contract`): what it reads and
    gives, in the type spellings of specs (``"str"``, ``"list(str)"``, ``"enum(a, b)"``)::

        from procbench.ext import component

        @component("normaliser", "yes_no", takes="str", gives="str")
        def yes_no():
            '''"y", "Yes", "true" as "yes"; "n", "No", "false" as "no"; other texts unchanged.'''
            ...

    Bump ``version`` when a component's numbers change: it is part of every task fingerprint that uses it.

    What a factory returns: a ``normaliser`` a ``str -> str`` function; a ``filter`` a function from a
    list of answers to a list of answers; a ``similarity`` an object of the :class:`Similarity` protocol
    (``name``, ``prepare(text)``, ``score(gold, prediction) -> float``); a ``metric`` a :class:`Metric`.
    Matchers are not part of this API yet: use the shipped ones (``procbench components --kind matcher``).

Metrics
    A ``measure`` block's metric is a :class:`Metric`: ``item(gold, prediction, aggregate)`` turns one item
    into a tuple of floats (its sufficient statistics; ``prediction`` is None for an unanswered item) and
    ``reduce(rows, aggregate)`` turns the rows of any set of items (the split, a slice, a bootstrap
    resample) into the outputs. Class attributes say what it compares (``gold``, ``prediction``: field
    types such as :data:`ANY`, :data:`TEXT`, :data:`NUMBER`), how it aggregates (``aggregations``, the
    first the default, from :data:`AGGREGATIONS`), whether a normaliser may apply (``text``), whether both
    sides are one value of one type (``one_value``, ``same_type``), and its display metadata:
    ``higher_is_better``, ``percent`` and ``value_range`` (least and greatest value, None for unbounded).
    ``library`` names the library whose numbers it reproduces (the oracle of its tests).
    :func:`library_metric` registers a factory and reads the contract from the metric it builds with its
    defaults, so every parameter of the factory needs a default.

    >>> from procbench.ext import ANY, Metric
    >>> class Hit(Metric):
    ...     '''1 where the prediction equals the gold value, else 0.'''
    ...     gold, prediction, one_value = (ANY,), (ANY,), True
    ...     def item(self, gold, prediction, aggregate):
    ...         return (1.0 if prediction == gold else 0.0,)
    >>> hit = Hit()
    >>> rows = [hit.item("a", "a", "mean"), hit.item("b", None, "mean"), hit.item("c", "c", "mean")]
    >>> hit.reduce(rows, "mean"), hit.reduce(rows, "sum"), hit.aggregations, hit.value_range
    ((0.6666666666666666,), (2.0,), ('mean', 'sum'), (0.0, 1.0))

Contracts and types
    >>> from procbench.ext import FieldType, contract
    >>> contract(takes="str", gives="str", needs={"steps": "list(str)"}).describe()
    ['takes str, gives str', 'needs: steps: list(str)']
    >>> FieldType.parse("list(str)").fits(FieldType.parse("list(any)"))
    True

Looking components up (tests of a plugin)
    >>> from procbench.ext import get
    >>> get("normaliser", "lowercase").build()("Boil WATER")
    'boil water'
    >>> get("metric", "accuracy").origin
    'built-in'

Runtime values
    Readers return a :class:`GoldSet` (items in official order, per-item labels); scorers return
    :class:`ItemScore` values; a ``predictions`` component raises :class:`InvalidPredictions` with every
    :class:`Problem` (collected in a :class:`ProblemList`, which caps them) and warns with
    :class:`PredictionWarning`; a reader raises :class:`GoldDataError` (from :class:`DataProblems`) for
    gold that does not fit its contract.
"""

from __future__ import annotations

from procbench.runners.runtime._types import (
    DataProblem,
    DataProblems,
    GoldDataError,
    GoldSet,
    InvalidPredictions,
    ItemScore,
    PredictionWarning,
    Problem,
    ProblemList,
)
from procbench.runners.metrics._base import (
    AGGREGATION_DOCS,
    AGGREGATIONS,
    ANY,
    CLASS_AGGREGATIONS,
    NUMBER,
    NUMBERS,
    TEXT,
    TEXTS,
    Metric,
    Stats,
    finite,
    library_metric,
)
from procbench.runners.metrics._classification import label_text
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.registry import (
    COMPONENTS_ENV,
    ENTRY_POINT_GROUP,
    KINDS,
    SAME_AS_SCORER,
    Component,
    Contract,
    GoldField,
    NormaliserName,
    PredictionField,
    ValueName,
    component,
    contract,
    get,
    names,
)
from procbench.runners.library.similarity import Similarity

__all__ = [
    "AGGREGATIONS",
    "AGGREGATION_DOCS",
    "ANY",
    "CLASS_AGGREGATIONS",
    "COMPONENTS_ENV",
    "ENTRY_POINT_GROUP",
    "KINDS",
    "NUMBER",
    "NUMBERS",
    "SAME_AS_SCORER",
    "Similarity",
    "TEXT",
    "TEXTS",
    "Component",
    "Contract",
    "DataProblem",
    "DataProblems",
    "FieldType",
    "GoldDataError",
    "GoldField",
    "GoldSet",
    "InvalidPredictions",
    "ItemScore",
    "Metric",
    "NormaliserName",
    "PredictionField",
    "PredictionWarning",
    "Problem",
    "ProblemList",
    "Stats",
    "ValueName",
    "component",
    "contract",
    "finite",
    "get",
    "label_text",
    "library_metric",
    "names",
]

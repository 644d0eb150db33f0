"""The checked, typed model of a task spec, and the schema of the spec language in one place.

Each block of the language is one frozen dataclass here.  Its fields say, through their metadata
(:func:`attr`, :func:`label`, :func:`block`, :func:`blocks`, :func:`entries`), how the block is
written; their annotations say what type each value has.  ``procbench.dsl.binding`` reads a syntax block
against the dataclass and constructs it in the same pass, so adding an attribute is adding one field
here.  Names a spec declares are bare names (:data:`Name`); strings are text.

Every field also declares its *role* (:data:`ROLES`: scored, identity, ranking, display, origin):
the fingerprint keeps the fields whose role is fingerprinted (:func:`fingerprinted`), the board and
the exports read a block's display and ranking settings (:func:`settings_of`) from the spec last
registered, and the block reference in docs/language.md lists each attribute's role.  A field
without a role is refused (:func:`field_roles`; the helpers below take ``role`` as a required keyword).

Every object carries ``at`` (where each of its parts was written, for error messages); ``at`` is not
part of equality, of :meth:`TaskSpec.to_dict` or of the fingerprint.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NewType

from procbench.dsl.spans import NOWHERE, Span
from procbench.runners.runtime.predictions import FieldType
from procbench.runners.runtime.records import Record
from procbench.runners.runtime.id_paths import EXPLODE_INDEX

Name = NewType("Name", str)  # a bare name: declared here or referring to a declaration
DataPath = NewType("DataPath", tuple)  # a dotted path into a data source: gold.answers

# -- what each field is for: its role --------------------------------------------------------


@dataclass(frozen=True)
class Role:
    """What an attribute does: whether it is part of the fingerprint follows from it (nowhere else)."""

    name: str
    fingerprinted: bool
    meaning: str


SCORED = "scored"
IDENTITY = "identity"
RANKING = "ranking"
DISPLAY = "display"
ORIGIN = "origin"
ROLES: Mapping[str, Role] = {
    r.name: r
    for r in (
        Role(
            SCORED,
            True,
            "what the numbers are computed from and how (data, fields, scorers, measures, metric and slice names): changing it can change a number",
        ),
        Role(
            IDENTITY,
            True,
            "which board this is: the task's name and version, the metric it ranks by and its tie-breaks; another is another board, even where no number moves",
        ),
        Role(
            RANKING,
            False,
            "how rows are ordered by those numbers (a metric's direction, ranking partial files):"
            " ranks are computed when a board is read, from the spec last registered",
        ),
        Role(
            DISPLAY,
            False,
            "how the task and its numbers are shown: titles, names, help text, units, groups, labels, paper rows",
        ),
        Role(
            ORIGIN,
            False,
            "where a part comes from, not what it computes: positions, fetch origins (the gold content"
            " is fingerprinted itself), the task a variant extends, harness imports, the names of"
            " normaliser and similarity blocks (inlined where used)",
        ),
    )
}


def part(role: str, default: Any = dataclasses.MISSING, *, compare: bool = True) -> Any:
    """A field of a model class that is not written as such in a spec (the checker fills it), with its role."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    return field(default=default, compare=compare, metadata={"role": role})


def _role(role: str, meta: dict[str, Any]) -> dict[str, Any]:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    return {**meta, "role": role}


@functools.cache
def field_roles(cls: type) -> Mapping[str, str] | None:
    """Each field's role, by name; ``None`` for a plain value type (no field declares one: ``FieldType``).

    A class with some fields declaring a role and others not is refused: every attribute of the
    model says what it is for, so that the fingerprint, the board and the exports can follow it.
    """
    fields = dataclasses.fields(cls)
    roles = {f.name: f.metadata.get("role") for f in fields}
    if not any(roles.values()):
        return None
    missing = [name for name, role in roles.items() if not role]
    if missing:
        raise TypeError(
            f"{cls.__name__}.{missing[0]} declares no role (one of {', '.join(ROLES)}): see dsl/model.py"
        )
    return {name: str(role) for name, role in roles.items()}


def role_of(cls: type, name: str) -> str:
    roles = field_roles(cls)
    if roles is None:
        raise TypeError(f"{cls.__name__} is not a model class (its fields declare no roles)")
    return roles[name]


def with_role(cls: type, *roles: str) -> tuple[str, ...]:
    """The names of ``cls``'s fields with one of ``roles``, in declaration order."""
    return tuple(name for name, role in (field_roles(cls) or {}).items() if role in roles)


def settings_of(cls: type) -> tuple[str, ...]:
    """What a spec says about showing and ordering a ``cls`` (its display and ranking fields): not fingerprinted,
    so read from the spec registered last (the board's metric metadata, the exports' metric keys)."""
    return with_role(cls, DISPLAY, RANKING)


def fingerprinted(value: Any) -> Any:
    """A checked spec (or any part of it) as plain JSON-ready values, keeping only fingerprinted fields.

    What equality ignores (positions, file paths) is left out too; a plain value type's fields are
    all kept, a record's (``FieldType``) as they were when it was a dataclass.
    :func:`procbench.dsl.compiler.semantic_form` builds on this.
    """
    if isinstance(value, Record):  # a runtime value type: no roles, every compared field in order
        return {name: fingerprinted(getattr(value, name)) for name in type(value)._compared}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        roles = field_roles(type(value))
        return {
            f.name: fingerprinted(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.compare and (roles is None or ROLES[roles[f.name]].fingerprinted)
        }
    if isinstance(value, (tuple, list)):
        return [fingerprinted(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): fingerprinted(v) for k, v in value.items()}
    return value


# -- how fields are written ---------------------------------------------------------------------


def attr(
    default: Any = dataclasses.MISSING,
    *,
    role: str,
    key: str = "",
    refers: str = "",
    option: tuple[str, ...] = (),
    kind: str = "",
    parse: str = "",
    doc: str = "",
) -> Any:
    """An attribute ``key = value`` (``key`` defaults to the field name); no default = required.

    ``refers``: the namespace a bare name resolves in (metric, split, field, ...); ``option``: the
    allowed strings; ``kind``: the component kind of a call; ``parse``: a binder method for values
    with a shape of their own (``map(...)``, objects).
    """
    meta = _role(
        role,
        {
            "syntax": "attr",
            "key": key,
            "refers": refers,
            "option": option,
            "kind": kind,
            "parse": parse,
            "doc": doc,
        },
    )
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple default")
    return field(default=default, metadata=meta)


def label(
    *, role: str, refers: str = "", name: bool = True, optional: bool = False, doc: str = ""
) -> Any:
    """The block's label: a bare name when ``name`` (declarations), else quoted text (system names)."""
    meta = _role(
        role, {"syntax": "label", "refers": refers, "name": name, "optional": optional, "doc": doc}
    )
    return field(default="", metadata=meta) if optional else field(metadata=meta)


def block(tag: str, *, role: str, required: bool = True, doc: str = "") -> Any:
    """One nested block ``tag { ... }`` (required unless told otherwise)."""
    meta = {"syntax": "block", "tag": tag, "required": required, "doc": doc}
    return field(default=None, metadata=_role(role, meta))


def blocks(tag: str, doc: str = "", *, role: str) -> Any:
    """Repeated nested blocks ``tag name { ... }``, kept in order."""
    return field(default=(), metadata=_role(role, {"syntax": "blocks", "tag": tag, "doc": doc}))


def entries(parse: str, *, role: str, tag: str = "", doc: str = "") -> Any:
    """A block of free-form ``name = value`` statements (``fields``, ``labels``, ``params``); ``tag`` defaults to the field name."""
    meta = {"syntax": "entries", "parse": parse, "tag": tag, "doc": doc}
    return field(default=(), metadata=_role(role, meta))


def derived(default: Any = None, *, role: str) -> Any:
    """Filled in by the checker, not written in the spec."""
    return field(default=default, metadata=_role(role, {"syntax": "derived"}))


def _where() -> Any:
    """Where each part of the object was written (for messages): never compared, never fingerprinted."""
    meta = {"syntax": "where", "role": ORIGIN}
    return field(default_factory=dict, compare=False, repr=False, metadata=meta)


Where = Mapping[str, Span]  # "" = the block, "<label>" = its label, else an attribute name


def span_of(obj: Any, part: str = "") -> Span:
    where = getattr(obj, "at", None) or {}
    return where.get(part) or where.get("") or NOWHERE


# -- components -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComponentCall:
    """A registered component with the spec's arguments bound by name."""

    kind: str = part(SCORED)
    name: str = part(SCORED)
    kwargs: tuple[tuple[str, Any], ...] = part(SCORED, ())
    at: Where = _where()

    def kwargs_dict(self) -> dict[str, Any]:
        return {k: thaw(v) for k, v in self.kwargs}


# -- data -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Source:
    name: Name = label(doc="the source's name; fields refer to it as <name>.<key>", role=SCORED)
    format: str = attr(option=("jsonl", "json", "csv", "tsv"), role=SCORED)
    path: str = attr(doc="relative to the data root; {split} is filled in", role=SCORED)
    key: Name | None = attr(
        None, doc="the field joined to the item id (secondary sources)", role=SCORED
    )
    splits: tuple[Name, ...] = attr(
        (), refers="split", doc="the splits that have this source (default: all)", role=SCORED
    )
    optional: bool = attr(False, doc="items without a row in this source are allowed", role=SCORED)
    at: Where = _where()


@dataclass(frozen=True)
class FieldBinding:
    """A gold field the scorer sees: ``answers: list(str) = gold.answers``; the path may be a computed value (runners/runtime/data_exprs.py)."""

    name: str = part(SCORED)
    path: tuple[Any, ...] = part(SCORED)
    type: FieldType = part(SCORED)
    at: Where = _where()


@dataclass(frozen=True)
class LabelRule:
    """A per-item slice label: a field path, optionally mapped through a table with a default."""

    name: str = part(SCORED)
    path: tuple[Any, ...] = part(
        SCORED, ()
    )  # a path, or a computed value (runners/runtime/data_exprs.py)
    mapping: tuple[tuple[str, str], ...] = part(SCORED, ())
    default: str | None = part(SCORED, None)
    # (path, column, label), first match wins
    members: tuple[tuple[str, str, str], ...] = part(SCORED, ())
    splits: tuple[str, ...] = part(SCORED, ())
    at: Where = _where()

    def values(self) -> tuple[str, ...] | None:
        """The label values this rule can produce, when the spec fixes them (map(), membership)."""
        if self.members:
            return tuple(dict.fromkeys([m[2] for m in self.members] + [self.default or "other"]))
        if self.mapping:  # without a default, a value that is no key is a data error: the map's labels are all there is
            return tuple(
                dict.fromkeys(
                    [v for _, v in self.mapping]
                    + ([self.default] if self.default is not None else [])
                )
            )
        return None


@dataclass(frozen=True, kw_only=True)
class AnswerLabelRule:
    """A per-answer label: restricts a gold list field to the answers carrying one label value."""

    name: Name = label(role=SCORED)
    field: Name = attr(refers="field", doc="the gold list field it restricts", role=SCORED)
    items: DataPath = attr(parse="data_path", doc="path to the list of answer records", role=SCORED)
    text: Name = attr(doc="key of the answer text within each record", role=SCORED)
    label: Name = attr(
        "", doc="key of the label within each record (default: the block's name)", role=SCORED
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ExplodeSpec:
    """``explode step { items = proc.questions  id = index }``: each element of a list or mapping in the primary record is one item.

    The item id is ``<parent id><separator><element id>``; fields, labels and answer labels read the
    element as ``<name>.<key>`` (or ``<name>`` itself for a scalar element) beside the parent's sources.
    """

    name: Name = label(
        doc="the element's name; fields and labels refer to it as <name>.<key>", role=SCORED
    )
    items: DataPath = attr(
        parse="explode_items",
        doc="path to the list or mapping in the parent record: <source>.<key>..., product(a = <list>, b = <list>) or distinct(...)",
        role=SCORED,
    )
    id: tuple[Any, ...] = attr(
        EXPLODE_INDEX,
        parse="explode_id",
        doc="index (0-based position), key (mapping key), a path into the element: <name>.<key>, or a list of paths (joined)",
        role=SCORED,
    )
    separator: str = attr("/", doc="between the parent id and the element id", role=SCORED)
    where: tuple[Any, ...] = attr(
        (),
        parse="explode_conditions",
        doc="only the elements meeting this condition (or every one of a list) are items",
        role=SCORED,
    )
    skip: tuple[Any, ...] = attr(
        (),
        parse="explode_conditions",
        doc="elements meeting this condition (or any of a list) are not items",
        role=SCORED,
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class DataSpec:
    splits: tuple[Name, ...] = attr(
        doc="the task's splits; declared here, referred to by name elsewhere", role=SCORED
    )
    hidden: tuple[Name, ...] = attr(
        (), refers="split", doc="splits whose items the board never shows", role=SCORED
    )
    reader: ComponentCall | None = attr(
        None, kind="reader", doc="a reader component instead of sources", role=SCORED
    )
    sources: tuple[Source, ...] = blocks("source", role=SCORED)
    id_path: tuple[str, ...] = attr(
        (),
        key="id",
        parse="id_path",
        doc="the item id: <source>.<key>, key(<source>) (a JSON object's keys) or row_index()",
        role=SCORED,
    )
    explode: ExplodeSpec | None = block(
        "explode",
        required=False,
        doc="one primary record -> many items (before fields: they may read the element)",
        role=SCORED,
    )
    fields: tuple[FieldBinding, ...] = entries(
        "field_binding", doc="typed gold fields: `name: type = source.path`", role=SCORED
    )
    labels: tuple[LabelRule, ...] = entries(
        "label_rule",
        doc="item labels: a path, map(path, {...}, default = ...) or membership([...])",
        role=SCORED,
    )
    answer_labels: tuple[AnswerLabelRule, ...] = blocks("answer_label", role=SCORED)
    at: Where = _where()

    def field_types(self) -> dict[str, FieldType]:
        return {f.name: f.type for f in self.fields}


@dataclass(frozen=True, kw_only=True)
class PredictionSpec:
    format: str = attr(option=("jsonl", "csv", "tsv", "custom"), role=SCORED)
    id_field: Name = attr(
        "id",
        key="id",
        refers="schema_field",
        doc="the schema field holding the item id",
        role=SCORED,
    )
    fields: tuple[tuple[str, FieldType], ...] = entries(
        "schema_field", tag="schema", doc="schema { name = type ... }", role=SCORED
    )
    reader: ComponentCall | None = attr(
        None, kind="predictions", doc="a predictions component instead of a schema", role=SCORED
    )
    extensions: tuple[str, ...] = attr(
        (), doc="file name extensions accepted on upload", role=SCORED
    )
    at: Where = _where()


# -- scoring ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MatchSpec:
    """One ``match`` block: gold and predicted lists, normalised, paired by a similarity, matched."""

    name: Name = label(doc="also the metric family its three outputs belong to", role=SCORED)
    gold: Name = attr(refers="score_field", role=SCORED)
    prediction: Name = attr(refers="prediction_field", role=SCORED)
    similarity: ComponentCall = attr(
        parse="similarity", doc="a similarity call, or the name of a similarity block", role=SCORED
    )
    matcher: ComponentCall = attr(kind="matcher", role=SCORED)
    filters: tuple[ComponentCall, ...] = attr((), kind="filter", role=SCORED)
    normaliser: tuple[ComponentCall, ...] = attr(
        (),
        parse="normaliser_ref",
        doc="a normaliser's name: applied to every answer first",
        role=SCORED,
    )
    similarity_normaliser: tuple[ComponentCall, ...] = attr(
        (), parse="normaliser_ref", doc="a normaliser applied before the similarity", role=SCORED
    )
    outputs: tuple[Name, Name, Name] = attr(
        (),
        parse="outputs",
        doc="[precision, recall, f1] names; default <name>_p, <name>_r, <name>_f1",
        role=SCORED,
    )
    at: Where = _where()


# A measure's conventions for predictions it cannot compare as they are (dsl/checker_conventions.py checks them,
# runners/metrics/_measure.py applies them): ("empty",), ("refuse",), ("predict", value) or ("score", number).
MISSING_DOC = 'an item with no prediction record: "empty" (scored as unanswered; the default), "refuse" (the file), predict(<value>) or score(<number>)'
DEFAULT_CONVENTIONS = {
    "missing": ("empty",),
    "invalid": ("refuse",),
}  # what procbench always did; never written into the checked spec
INVALID_DOC = 'a prediction the metric cannot measure (not a permutation of the gold): "refuse" (the default), "empty", predict(<value>) or score(<number>)'


@dataclass(frozen=True, kw_only=True)
class MeasureSpec:
    """One ``measure`` block: a library metric over a gold and a prediction field, aggregated as declared.

    ``measure macro_f1 { metric = f1()  gold = label  prediction = label  aggregate = "macro" }``, or over
    a per-item value a scorer component emits: ``measure total { value = score  aggregate = "sum" }``.
    """

    name: Name = label(
        doc="the output's name (families add suffixes: _p/_r/_f1, _<class>)", role=SCORED
    )
    metric: ComponentCall | None = attr(
        None,
        kind="metric",
        doc="a metric of the library (procbench components --kind metric)",
        role=SCORED,
    )
    gold: Name | None = attr(None, refers="score_field", role=SCORED)
    prediction: Name | None = attr(None, refers="prediction_field", role=SCORED)
    value: Name | None = attr(
        None,
        refers="per_item_value",
        doc="instead of metric, gold and prediction: a per-item value the scorer emits",
        role=SCORED,
    )
    # ("metric", name) | ("number", value) | ("call", function, (arguments, ...))
    formula: tuple[Any, ...] | None = attr(
        None,
        key="from",
        parse="formula",
        doc="or computed from other metrics: mean(a, b, ...), f1(p, r), round(x, digits), weighted(x1, w1, x2, w2, ...), names, numbers",
        role=SCORED,
    )
    counts: tuple[str, ...] = attr(
        (),
        parse="value_paths",
        doc="or: prefixes of count values the scorer emits per item (node.XOR), pooled over items and prefixes",
        role=SCORED,
    )
    stats: tuple[tuple[str, ...], ...] = attr(
        (),
        parse="count_names",
        doc="count values (under each counts prefix, if any): [numerator, denominator] or [p_num, p_den, r_num, r_den]; [a, b] in a place adds a and b",
        role=SCORED,
    )
    aggregate: str = attr(
        "",
        option=("", "mean", "sum", "micro", "macro", "weighted", "per_class", "corpus", "pooled"),
        doc="how the per-item statistics combine; default: the metric's first",
        role=SCORED,
    )
    where: tuple[tuple[str, str], ...] = attr(
        (),
        parse="where",
        doc='only the items whose labels have these values: { modality = "text" }',
        role=SCORED,
    )
    normaliser: tuple[ComponentCall, ...] = attr(
        (),
        parse="normaliser_ref",
        doc="a normaliser's name: applied to text values on both sides first",
        role=SCORED,
    )
    scale: float | None = attr(
        None,
        parse="number",
        doc="multiply every output by this (after aggregating, before rounding)",
        role=SCORED,
    )
    divide_by: float | None = attr(
        None,
        parse="number",
        doc="divide every output by this (after scale): `sum / 10` is divide_by = 10, not scale = 0.1, in floating point",
        role=SCORED,
    )
    round: int | None = attr(
        None, doc="Python round() of every output to this many digits", role=SCORED
    )
    missing: tuple[Any, ...] | None = attr(None, parse="convention", doc=MISSING_DOC, role=SCORED)
    invalid: tuple[Any, ...] | None = attr(None, parse="convention", doc=INVALID_DOC, role=SCORED)
    outputs: tuple[str, ...] = derived(
        (), role=SCORED
    )  # filled in by the checker: the metric names it produces
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ScoreSpec:
    aggregate: ComponentCall | None = attr(
        None,
        kind="aggregator",
        doc="the aggregator of the scorer's or match blocks' per-item values",
        role=SCORED,
    )
    scorer: ComponentCall | None = attr(None, kind="scorer", role=SCORED)
    derive: ComponentCall | None = attr(
        None,
        kind="deriver",
        doc="a format component that turns each gold and predicted record into the typed fields match and measure blocks compare",
        role=SCORED,
    )
    matches: tuple[MatchSpec, ...] = blocks("match", role=SCORED)
    measures: tuple[MeasureSpec, ...] = blocks("measure", role=SCORED)
    aligns: tuple[AlignSpec, ...] = blocks(
        "align",
        doc="aligned walks: lines paired with their best partners, counted (PAGED)",
        role=SCORED,
    )
    values: tuple[ItemValueSpec, ...] = blocks(
        "value", doc="per-item values computed from the scorer's, before the measures", role=SCORED
    )
    flags: tuple[tuple[str, str], ...] = attr(
        (),
        parse="metadata",
        doc='formula name <- submission metadata key (1 where true, else 0): { cot = "cot" }',
        role=SCORED,
    )
    metadata_params: tuple[tuple[str, str], ...] = attr(
        (),
        key="metadata",
        parse="metadata",
        doc="scorer parameter <- submission metadata key",
        role=SCORED,
    )
    missing: tuple[Any, ...] | None = attr(
        None,
        parse="convention",
        doc="the default of every measure block's missing = ...",
        role=SCORED,
    )
    invalid: tuple[Any, ...] | None = attr(
        None,
        parse="convention",
        doc="the default of every measure block's invalid = ...",
        role=SCORED,
    )
    at: Where = _where()


@dataclass(frozen=True)
class MetricSpec:
    name: str = part(SCORED)
    display: str = part(DISPLAY)
    group: str = part(DISPLAY, "")
    description: str = part(DISPLAY, "")
    higher_is_better: bool = part(RANKING, True)
    percent: bool = part(DISPLAY, True)  # shown x100 on the board
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class MetricBlock:
    """``metric name { ... }``: one metric, or with ``family = prf`` the triple name_p, name_r, name_f1."""

    name: Name = label(role=SCORED)
    display: str = attr(
        "", doc="shown on the board (a family's members get ' P', ' R', ' F1')", role=DISPLAY
    )
    group: str = attr("", doc="the board's column group", role=DISPLAY)
    description: str = attr(
        "",
        doc="its definition in one sentence (how it is computed, its unit): the column's help text on the board; not fingerprinted",
        role=DISPLAY,
    )
    higher_is_better: bool = attr(
        True,
        doc="the direction rows are ranked in (false: lower is better); not fingerprinted: a board re-orders at the spec's next registration",
        role=RANKING,
    )
    percent: bool = attr(True, doc="shown x100 on the board", role=DISPLAY)
    family: str = attr(
        "",
        option=("", "prf"),
        parse="family",
        doc="prf: precision, recall and F1 named <name>_p, <name>_r, <name>_f1",
        role=SCORED,
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class SliceSpec:
    name: Name = label(role=SCORED)
    kind: str = derived("label", role=SCORED)  # label | answer_label
    key: str = derived("", role=SCORED)
    display: str = attr("", doc="what the slice is, as the board names it", role=DISPLAY)
    label: Name | None = attr(
        None, refers="label", doc="group items by this item label", role=SCORED
    )
    answer_label: Name | None = attr(
        None,
        refers="answer_label",
        doc="re-score with gold restricted per answer label",
        role=SCORED,
    )
    # (value, label) pairs in the spec's order; display text: not part of the fingerprint (its role)
    values: tuple[tuple[str, str], ...] = entries(
        "value_label",
        doc='human labels of the slice\'s values: values { exclusive = "Exclusive (XOR)"  "sim > 0.5" = "Similar to a step" }',
        role=DISPLAY,
    )
    at: Where = _where()


@dataclass(frozen=True)
class ReportedRow:
    system: str = part(DISPLAY)
    split: str = part(DISPLAY)
    source: str = part(DISPLAY)
    values: tuple[tuple[str, float], ...] = part(DISPLAY)
    slice: tuple[str, str] | None = part(DISPLAY, None)
    note: str = part(DISPLAY, "")
    at: Where = _where()
    path: str = part(
        ORIGIN, "", compare=False
    )  # the file it is written in: the spec, or the reported file beside it
    url: str = part(DISPLAY, "")  # the paper's link (https), shown with the row
    date: str = (
        part(
            DISPLAY, ""
        )  # when the paper appeared (YYYY-MM or YYYY-MM-DD): the row's date on the progress chart
    )


@dataclass(frozen=True, kw_only=True)
class ReportedTable:
    """``reported "source" { split = test  columns = [m1, m2]  rows = { "System" = [0.1, _] } }``.

    Written in the task, or in a file beside the spec that holds only reported blocks, named by
    ``reported = file("task.reported")`` (checked the same way, errors at that file's lines).
    """

    source: str = label(name=False, doc="where the numbers come from (paper, table)", role=DISPLAY)
    split: Name = attr(refers="split", role=DISPLAY)
    columns: tuple[Name, ...] = attr(refers="metric", role=DISPLAY)
    rows: tuple[tuple[str, str, tuple[float | None, ...]], ...] = attr(
        parse="rows",
        doc='{ "System" = [value or _ per column] }, or on a slice { "System" = { value = [...] } }',
        role=DISPLAY,
    )
    slice: Name | None = attr(
        None, refers="slice", doc="the rows give each value of this slice", role=DISPLAY
    )
    note: str = attr("", doc="a note on every row", role=DISPLAY)
    notes: tuple[tuple[str, str], ...] = attr(
        (), parse="notes", doc='a note per row: { "System" = "..." }', role=DISPLAY
    )
    url: str = attr(
        "",
        doc="the paper's link (an https URL: arXiv or ACL Anthology), shown with every row",
        role=DISPLAY,
    )
    date: str = attr(
        "",
        doc="when the paper appeared, YYYY-MM or YYYY-MM-DD: the rows' date on the progress chart",
        role=DISPLAY,
    )
    at: Where = _where()


@dataclass(frozen=True)
class FetchSpec:
    """One upstream file the task needs (from the lock file): where it comes from and what it must hash to."""

    name: str = part(ORIGIN)
    path: str = part(ORIGIN)
    sha256: str = part(ORIGIN)
    size: int = part(ORIGIN)
    url: str = part(ORIGIN, "")
    hub_repo: str = part(ORIGIN, "")
    hub_file: str = part(ORIGIN, "")
    revision: str = part(ORIGIN, "")
    repo_type: str = part(ORIGIN, "dataset")
    splits: tuple[str, ...] = part(ORIGIN, ())


@dataclass(frozen=True, kw_only=True)
class FetchBlock:
    """``fetch { url = "https://.../<commit>/"  into = "bench/"  files = ["data/{split}.jsonl"] }``."""

    name: str = label(
        optional=True, doc="needed only when a task fetches from several origins", role=ORIGIN
    )
    url: str = attr("", doc="base URL the files are relative to", role=ORIGIN)
    hub_repo: str = attr("", doc="or a Hugging Face Hub repository", role=ORIGIN)
    revision: str = attr("", role=ORIGIN)
    repo_type: str = attr("dataset", option=("dataset", "model", "space"), role=ORIGIN)
    into: str = attr("", doc="where under the data root the files land", role=ORIGIN)
    files: tuple[str, ...] = attr(
        (),
        doc="paths relative to the origin; {split} expands, globs expand when locking (default: the data sources' paths under `into`)",
        role=ORIGIN,
    )
    splits: tuple[Name, ...] = attr((), refers="split", role=ORIGIN)
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ImportSpec:
    """How per-item outputs logged by another harness (lm-eval, Inspect) become prediction records."""

    name: Name = label(role=ORIGIN)
    kind: str = attr(option=("choice", "text_list"), role=ORIGIN)
    field: Name = attr(
        refers="prediction_field", doc="the prediction record's value field", role=ORIGIN
    )
    id_fields: tuple[str, ...] = attr(
        key="id", doc="dotted paths into the logged item, tried in order", role=ORIGIN
    )
    id_type: str = attr("str", option=("str", "int"), role=ORIGIN)
    choices: int = attr(0, role=ORIGIN)
    separator: str = attr("", role=ORIGIN)
    check: ComponentCall | None = attr(None, kind="import_check", role=ORIGIN)
    notes: str = attr("", role=ORIGIN)
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class TemplateSpec:
    name: Name = label(role=SCORED)
    text: str = attr(doc="Jinja2, rendered in a sandbox", role=SCORED)
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class NormaliserBlock:
    name: Name = label(role=ORIGIN)
    steps: tuple[Any, ...] = attr(
        parse="steps", doc="normaliser calls, or names of other normalisers (inlined)", role=SCORED
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class SimilarityBlock:
    """``similarity name { ... }``: a pair similarity declared once and used by name (match blocks, other similarity blocks).

    Either one similarity component, ``similarity location { use = phrase_overlap(alternatives = place) }``,
    or a similarity of records: a pair whose ``same`` fields differ scores 0, any other the mean of its
    fields' similarities, added in the order written::

        similarity move { same = [step]  mean { participant = participant  before = location  after = location } }
    """

    name: Name = label(role=ORIGIN)
    use: Any = attr(
        None,
        parse="similarity_ref",
        doc="one similarity: a component call, or another similarity block's name",
        role=SCORED,
    )
    same: tuple[str, ...] = attr(
        (),
        parse="field_paths",
        doc="record members (dotted paths: head.kind) that must be equal for a pair to score above 0",
        role=SCORED,
    )
    mean: tuple[tuple[str, Any], ...] = entries(
        parse="similarity_part",
        doc="record field = a similarity call or a similarity block's name",
        role=SCORED,
    )
    cases: str | None = attr(
        None,
        parse="field_path",
        doc="a member whose value (in the first record) chooses the similarity from `when`",
        role=SCORED,
    )
    when: tuple[tuple[str, Any], ...] = entries(
        parse="similarity_part",
        doc="with cases: value = the similarity of records with that value",
        role=SCORED,
    )
    otherwise: Any = attr(
        None,
        parse="similarity_ref",
        doc="with cases: the similarity of records whose value `when` does not name",
        role=SCORED,
    )
    all_of: tuple[Any, ...] = attr(
        (),
        key="all",
        parse="similarity_refs",
        doc="the product of these similarities of the records (0/1 parts: all of them)",
        role=SCORED,
    )
    on: str | None = attr(
        None,
        parse="field_path",
        doc="compare this member of the two records (absent in either: 0)",
        role=SCORED,
    )
    at_least: float | None = attr(
        None, parse="number", doc="1 where the similarity reaches this value, else 0", role=SCORED
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ItemValueSpec:
    """``value score { from = mul(judged, normalised) }``: a per-item value computed from the scorer's values and flags."""

    name: Name = label(
        doc="the per-item value it writes (measures read it with `value = name`)", role=SCORED
    )
    formula: tuple[Any, ...] = attr(
        key="from",
        parse="item_formula",
        doc="names of the scorer's values, flags and earlier values; numbers; min, max, add, sub, mul, round, pick",
        role=SCORED,
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class EntitiesSpec:
    """``entities node { ... }`` in an ``align`` block: records at places of a line that are occurrences of one entity."""

    name: Name = label(doc="what count blocks name in `of`", role=SCORED)
    places: tuple[str, ...] = attr(
        parse="field_paths",
        doc="the line members holding one (each compared with the partner line's same member)",
        role=SCORED,
    )
    same: tuple[str, ...] = attr(
        (), parse="field_paths", doc="members two occurrences of one entity share", role=SCORED
    )
    identity: Any = attr(
        parse="similarity_ref",
        doc="the first registered entity scoring at_least with the occurrence is the same entity",
        role=SCORED,
    )
    at_least: float = attr(parse="number", role=SCORED)
    until: Any = attr(
        parse="similarity_ref",
        doc="an entity is compared at each occurrence until this first scores 1",
        role=SCORED,
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class CountSpec:
    """``count node { ... }`` in an ``align`` block: per-item values ``<name>.<kind>.<p|r>_<stat>``."""

    name: Name = label(doc="the prefix of its per-item values", role=SCORED)
    of: Name | None = attr(
        None, doc="an entities block's name (default: the aligned lines)", role=SCORED
    )
    by: str = attr(
        parse="field_path", doc="the member whose value names the kind counted under", role=SCORED
    )
    kinds: tuple[str, ...] = attr(
        (),
        parse="names",
        doc="the kinds counted (default: the values of `by`'s enum type)",
        role=SCORED,
    )
    where: str | None = attr(
        None,
        parse="field_path",
        doc="a member that must be non-empty for the record to be counted",
        role=SCORED,
    )
    stats: tuple[tuple[str, Any], ...] = entries(
        parse="count_stat",
        doc="stat = 1 (once per line or entity), a similarity (each comparison) or best(X)",
        role=SCORED,
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class AlignSpec:
    """``align lines { ... }``: each line of one side with its best partner line on the other, and what the pairs count."""

    name: Name = label(role=SCORED)
    gold: Name = attr(refers="score_field", role=SCORED)
    prediction: Name = attr(refers="prediction_field", role=SCORED)
    on: str = attr(
        parse="field_path", doc="the member of a line the lines are aligned on", role=SCORED
    )
    similarity: Any = attr(
        parse="similarity_ref", doc="how two lines' `on` members compare", role=SCORED
    )
    threshold: float = attr(
        parse="number", doc="a line whose best partner scores lower is skipped", role=SCORED
    )
    where: str | None = attr(
        None,
        parse="field_path",
        doc="lines without this member (false, empty) are aligned but add nothing",
        role=SCORED,
    )
    entities: tuple[EntitiesSpec, ...] = blocks("entities", role=SCORED)
    counts: tuple[CountSpec, ...] = blocks("count", role=SCORED)
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    name: Name = label(role=IDENTITY)
    title: str = attr(role=DISPLAY)
    version: str = attr(role=IDENTITY)
    data: DataSpec = block("data", role=SCORED)
    predictions: PredictionSpec = block("predictions", role=SCORED)
    normalisers: tuple[NormaliserBlock, ...] = blocks("normaliser", role=ORIGIN)
    similarities: tuple[SimilarityBlock, ...] = blocks("similarity", role=ORIGIN)
    score: ScoreSpec = block("score", role=SCORED)
    metrics: tuple[MetricSpec, ...] = blocks("metric", role=SCORED)
    primary: Name = attr(refers="metric", role=IDENTITY)
    rank_by: tuple[Name, ...] = attr(
        (), refers="metric", doc="tie-breaks after the primary metric, in order", role=IDENTITY
    )
    rank_partial: bool = attr(
        False,
        doc="rank rows whose file answers only part of the split among the full ones (default: listed with their coverage, unranked)",
        role=RANKING,
    )
    description: str = attr("", doc='text, or file("name") of a file beside the spec', role=DISPLAY)
    citation: str = attr("", doc='BibTeX, or file("task.bib") beside the spec', role=DISPLAY)
    url: str = attr("", role=DISPLAY)
    license: str = attr("", role=DISPLAY)
    benchmark: str = attr("", role=DISPLAY)
    extends: Name | None = attr(None, refers="task", role=ORIGIN)
    params: tuple[tuple[str, Any], ...] = entries("param", role=SCORED)
    slices: tuple[SliceSpec, ...] = blocks("slice", role=SCORED)
    reported: tuple[ReportedRow, ...] = blocks(
        "reported",
        doc='paper rows; also `reported = file("task.reported")`, a file beside the spec of reported blocks',
        role=DISPLAY,
    )
    templates: tuple[TemplateSpec, ...] = blocks("template", role=SCORED)
    fetch: tuple[FetchSpec, ...] = blocks("fetch", role=ORIGIN)
    imports: tuple[ImportSpec, ...] = blocks("import", role=ORIGIN)
    path: str = part(ORIGIN, "", compare=False)
    at: Where = _where()

    def metric(self, name: str) -> MetricSpec | None:
        return next((m for m in self.metrics if m.name == name), None)

    def template(self, name: str) -> str | None:
        return next((t.text for t in self.templates if t.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


def _plain(value: Any) -> Any:
    """A dataclass tree as plain JSON-ready values, without what equality ignores (positions, the file path)."""
    if isinstance(value, Record):  # a runtime value type (FieldType), as its dataclass was
        return {name: _plain(getattr(value, name)) for name in type(value)._compared}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.compare
        }
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def thaw(value: Any) -> Any:
    """Frozen spec values (tuples) back into the lists/dicts components expect."""
    if isinstance(value, tuple) and value and value[0] == "__object__":
        return {k: thaw(v) for k, v in value[1]}
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value

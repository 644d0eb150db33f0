"""The checked, typed model of a task spec, and the schema of the spec language in one place.

Each block of the language is one frozen dataclass here.  Its fields say, through their metadata
(:func:`attr`, :func:`label`, :func:`block`, :func:`blocks`, :func:`entries`), how the block is
written; their annotations say what type each value has.  ``dsl.binding`` reads a syntax block
against the dataclass and constructs it in the same pass, so adding an attribute is adding one field
here.  Names a spec declares are bare names (:data:`Name`); strings are text.

Every object carries ``at`` (where each of its parts was written, for error messages); ``at`` is not
part of equality, of :meth:`TaskSpec.to_dict` or of the fingerprint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NewType

from procbench.dsl.syntax import NOWHERE, Span
from procbench.runners.predictions import FieldType
from procbench.runners.tables import EXPLODE_INDEX

Name = NewType("Name", str)  # a bare name: declared here or referring to a declaration
DataPath = NewType("DataPath", tuple)  # a dotted path into a data source: gold.answers

# -- how fields are written ---------------------------------------------------------------------


def attr(
    default: Any = dataclasses.MISSING,
    *,
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
    meta = {
        "syntax": "attr",
        "key": key,
        "refers": refers,
        "option": option,
        "kind": kind,
        "parse": parse,
        "doc": doc,
    }
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple default")
    return field(default=default, metadata=meta)


def label(*, refers: str = "", name: bool = True, optional: bool = False, doc: str = "") -> Any:
    """The block's label: a bare name when ``name`` (declarations), else quoted text (system names)."""
    meta = {"syntax": "label", "refers": refers, "name": name, "optional": optional, "doc": doc}
    return field(default="", metadata=meta) if optional else field(metadata=meta)


def block(tag: str, *, required: bool = True, doc: str = "") -> Any:
    """One nested block ``tag { ... }`` (required unless told otherwise)."""
    return field(
        default=None, metadata={"syntax": "block", "tag": tag, "required": required, "doc": doc}
    )


def blocks(tag: str, doc: str = "") -> Any:
    """Repeated nested blocks ``tag name { ... }``, kept in order."""
    return field(default=(), metadata={"syntax": "blocks", "tag": tag, "doc": doc})


def entries(parse: str, *, tag: str = "", doc: str = "") -> Any:
    """A block of free-form ``name = value`` statements (``fields``, ``labels``, ``params``); ``tag`` defaults to the field name."""
    return field(default=(), metadata={"syntax": "entries", "parse": parse, "tag": tag, "doc": doc})


def derived(default: Any = None) -> Any:
    """Filled in by the checker, not written in the spec."""
    return field(default=default, metadata={"syntax": "derived"})


def _where() -> Any:
    return field(default_factory=dict, compare=False, repr=False, metadata={"syntax": "where"})


Where = Mapping[str, Span]  # "" = the block, "<label>" = its label, else an attribute name


def span_of(obj: Any, part: str = "") -> Span:
    where = getattr(obj, "at", None) or {}
    return where.get(part) or where.get("") or NOWHERE


# -- components -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComponentCall:
    """A registered component with the spec's arguments bound by name."""

    kind: str
    name: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    at: Where = _where()

    def kwargs_dict(self) -> dict[str, Any]:
        return {k: thaw(v) for k, v in self.kwargs}


# -- data -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Source:
    name: Name = label(doc="the source's name; fields refer to it as <name>.<key>")
    format: str = attr(option=("jsonl", "json", "csv", "tsv"))
    path: str = attr(doc="relative to the data root; {split} is filled in")
    key: Name | None = attr(None, doc="the field joined to the item id (secondary sources)")
    splits: tuple[Name, ...] = attr(
        (), refers="split", doc="the splits that have this source (default: all)"
    )
    optional: bool = attr(False, doc="items without a row in this source are allowed")
    at: Where = _where()


@dataclass(frozen=True)
class FieldBinding:
    """A gold field the scorer sees: ``answers: list(str) = gold.answers``; the path may be a computed value (runners/data_exprs.py)."""

    name: str
    path: tuple[Any, ...]
    type: FieldType
    at: Where = _where()


@dataclass(frozen=True)
class LabelRule:
    """A per-item slice label: a field path, optionally mapped through a table with a default."""

    name: str
    path: tuple[Any, ...] = ()  # a path, or a computed value (runners/data_exprs.py)
    mapping: tuple[tuple[str, str], ...] = ()
    default: str | None = None
    members: tuple[tuple[str, str, str], ...] = ()  # (path, column, label), first match wins
    splits: tuple[str, ...] = ()
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

    name: Name = label()
    field: Name = attr(refers="field", doc="the gold list field it restricts")
    items: DataPath = attr(parse="data_path", doc="path to the list of answer records")
    text: Name = attr(doc="key of the answer text within each record")
    label: Name = attr("", doc="key of the label within each record (default: the block's name)")
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ExplodeSpec:
    """``explode step { items = proc.questions  id = index }``: each element of a list or mapping in the primary record is one item.

    The item id is ``<parent id><separator><element id>``; fields, labels and answer labels read the
    element as ``<name>.<key>`` (or ``<name>`` itself for a scalar element) beside the parent's sources.
    """

    name: Name = label(doc="the element's name; fields and labels refer to it as <name>.<key>")
    items: DataPath = attr(
        parse="explode_items",
        doc="path to the list or mapping in the parent record: <source>.<key>..., product(a = <list>, b = <list>) or distinct(...)",
    )
    id: tuple[Any, ...] = attr(
        EXPLODE_INDEX,
        parse="explode_id",
        doc="index (0-based position), key (mapping key), a path into the element: <name>.<key>, or a list of paths (joined)",
    )
    separator: str = attr("/", doc="between the parent id and the element id")
    where: tuple[Any, ...] = attr(
        (),
        parse="explode_conditions",
        doc="only the elements meeting this condition (or every one of a list) are items",
    )
    skip: tuple[Any, ...] = attr(
        (),
        parse="explode_conditions",
        doc="elements meeting this condition (or any of a list) are not items",
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class DataSpec:
    splits: tuple[Name, ...] = attr(
        doc="the task's splits; declared here, referred to by name elsewhere"
    )
    hidden: tuple[Name, ...] = attr(
        (), refers="split", doc="splits whose items the board never shows"
    )
    reader: ComponentCall | None = attr(
        None, kind="reader", doc="a reader component instead of sources"
    )
    sources: tuple[Source, ...] = blocks("source")
    id_path: tuple[str, ...] = attr(
        (),
        key="id",
        parse="id_path",
        doc="the item id: <source>.<key>, key(<source>) (a JSON object's keys) or row_index()",
    )
    explode: ExplodeSpec | None = block(
        "explode",
        required=False,
        doc="one primary record -> many items (before fields: they may read the element)",
    )
    fields: tuple[FieldBinding, ...] = entries(
        "field_binding", doc="typed gold fields: `name: type = source.path`"
    )
    labels: tuple[LabelRule, ...] = entries(
        "label_rule",
        doc="item labels: a path, map(path, {...}, default = ...) or membership([...])",
    )
    answer_labels: tuple[AnswerLabelRule, ...] = blocks("answer_label")
    at: Where = _where()

    def field_types(self) -> dict[str, FieldType]:
        return {f.name: f.type for f in self.fields}


@dataclass(frozen=True, kw_only=True)
class PredictionSpec:
    format: str = attr(option=("jsonl", "csv", "tsv", "custom"))
    id_field: Name = attr(
        "id", key="id", refers="schema_field", doc="the schema field holding the item id"
    )
    fields: tuple[tuple[str, FieldType], ...] = entries(
        "schema_field", tag="schema", doc="schema { name = type ... }"
    )
    reader: ComponentCall | None = attr(
        None, kind="predictions", doc="a predictions component instead of a schema"
    )
    extensions: tuple[str, ...] = attr((), doc="file name extensions accepted on upload")
    at: Where = _where()


# -- scoring ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MatchSpec:
    """One ``match`` block: gold and predicted lists, normalised, paired by a similarity, matched."""

    name: Name = label(doc="also the metric family its three outputs belong to")
    gold: Name = attr(refers="score_field")
    prediction: Name = attr(refers="prediction_field")
    similarity: ComponentCall = attr(
        parse="similarity", doc="a similarity call, or the name of a similarity block"
    )
    matcher: ComponentCall = attr(kind="matcher")
    filters: tuple[ComponentCall, ...] = attr((), kind="filter")
    normaliser: tuple[ComponentCall, ...] = attr(
        (), parse="normaliser_ref", doc="a normaliser's name: applied to every answer first"
    )
    similarity_normaliser: tuple[ComponentCall, ...] = attr(
        (), parse="normaliser_ref", doc="a normaliser applied before the similarity"
    )
    outputs: tuple[Name, Name, Name] = attr(
        (),
        parse="outputs",
        doc="[precision, recall, f1] names; default <name>_p, <name>_r, <name>_f1",
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

    name: Name = label(doc="the output's name (families add suffixes: _p/_r/_f1, _<class>)")
    metric: ComponentCall | None = attr(
        None, kind="metric", doc="a metric of the library (procbench components --kind metric)"
    )
    gold: Name | None = attr(None, refers="score_field")
    prediction: Name | None = attr(None, refers="prediction_field")
    value: Name | None = attr(
        None,
        refers="per_item_value",
        doc="instead of metric, gold and prediction: a per-item value the scorer emits",
    )
    # ("metric", name) | ("number", value) | ("call", function, (arguments, ...))
    formula: tuple[Any, ...] | None = attr(
        None,
        key="from",
        parse="formula",
        doc="or computed from other metrics: mean(a, b, ...), f1(p, r), round(x, digits), weighted(x1, w1, x2, w2, ...), names, numbers",
    )
    counts: tuple[str, ...] = attr(
        (),
        parse="value_paths",
        doc="or: prefixes of count values the scorer emits per item (node.XOR), pooled over items and prefixes",
    )
    stats: tuple[tuple[str, ...], ...] = attr(
        (),
        parse="count_names",
        doc="count values (under each counts prefix, if any): [numerator, denominator] or [p_num, p_den, r_num, r_den]; [a, b] in a place adds a and b",
    )
    aggregate: str = attr(
        "",
        option=("", "mean", "sum", "micro", "macro", "weighted", "per_class", "corpus", "pooled"),
        doc="how the per-item statistics combine; default: the metric's first",
    )
    where: tuple[tuple[str, str], ...] = attr(
        (),
        parse="where",
        doc='only the items whose labels have these values: { modality = "text" }',
    )
    normaliser: tuple[ComponentCall, ...] = attr(
        (),
        parse="normaliser_ref",
        doc="a normaliser's name: applied to text values on both sides first",
    )
    scale: float | None = attr(
        None,
        parse="number",
        doc="multiply every output by this (after aggregating, before rounding)",
    )
    divide_by: float | None = attr(
        None,
        parse="number",
        doc="divide every output by this (after scale): `sum / 10` is divide_by = 10, not scale = 0.1, in floating point",
    )
    round: int | None = attr(None, doc="Python round() of every output to this many digits")
    missing: tuple[Any, ...] | None = attr(None, parse="convention", doc=MISSING_DOC)
    invalid: tuple[Any, ...] | None = attr(None, parse="convention", doc=INVALID_DOC)
    outputs: tuple[str, ...] = derived(())  # filled in by the checker: the metric names it produces
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ScoreSpec:
    aggregate: ComponentCall | None = attr(
        None,
        kind="aggregator",
        doc="the aggregator of the scorer's or match blocks' per-item values",
    )
    scorer: ComponentCall | None = attr(None, kind="scorer")
    derive: ComponentCall | None = attr(
        None,
        kind="deriver",
        doc="a format component that turns each gold and predicted record into the typed fields match and measure blocks compare",
    )
    matches: tuple[MatchSpec, ...] = blocks("match")
    measures: tuple[MeasureSpec, ...] = blocks("measure")
    aligns: tuple[AlignSpec, ...] = blocks(
        "align", doc="aligned walks: lines paired with their best partners, counted (PAGED)"
    )
    values: tuple[ItemValueSpec, ...] = blocks(
        "value", doc="per-item values computed from the scorer's, before the measures"
    )
    flags: tuple[tuple[str, str], ...] = attr(
        (),
        parse="metadata",
        doc='formula name <- submission metadata key (1 where true, else 0): { cot = "cot" }',
    )
    metadata_params: tuple[tuple[str, str], ...] = attr(
        (), key="metadata", parse="metadata", doc="scorer parameter <- submission metadata key"
    )
    missing: tuple[Any, ...] | None = attr(
        None, parse="convention", doc="the default of every measure block's missing = ..."
    )
    invalid: tuple[Any, ...] | None = attr(
        None, parse="convention", doc="the default of every measure block's invalid = ..."
    )
    at: Where = _where()


@dataclass(frozen=True)
class MetricSpec:
    name: str
    display: str
    group: str = ""
    description: str = ""
    higher_is_better: bool = True
    percent: bool = True  # shown x100 on the board
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class MetricBlock:
    """``metric name { ... }``: one metric, or with ``family = prf`` the triple name_p, name_r, name_f1."""

    name: Name = label()
    display: str = attr("", doc="shown on the board (a family's members get ' P', ' R', ' F1')")
    group: str = attr("", doc="the board's column group")
    description: str = attr(
        "",
        doc="its definition in one sentence (how it is computed, its unit): the column's help text on the board; not fingerprinted",
    )
    higher_is_better: bool = attr(True)
    percent: bool = attr(True, doc="shown x100 on the board")
    family: str = attr(
        "",
        option=("", "prf"),
        parse="family",
        doc="prf: precision, recall and F1 named <name>_p, <name>_r, <name>_f1",
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class SliceSpec:
    name: Name = label()
    kind: str = derived("label")  # label | answer_label
    key: str = derived("")
    display: str = attr("", doc="what the slice is, as the board names it")
    label: Name | None = attr(None, refers="label", doc="group items by this item label")
    answer_label: Name | None = attr(
        None, refers="answer_label", doc="re-score with gold restricted per answer label"
    )
    # (value, label) pairs in the spec's order; display text: not part of the fingerprint (dsl.compiler.semantic_form)
    values: tuple[tuple[str, str], ...] = entries(
        "value_label",
        doc='human labels of the slice\'s values: values { exclusive = "Exclusive (XOR)"  "sim > 0.5" = "Similar to a step" }',
    )
    at: Where = _where()


@dataclass(frozen=True)
class ReportedRow:
    system: str
    split: str
    source: str
    values: tuple[tuple[str, float], ...]
    slice: tuple[str, str] | None = None
    note: str = ""
    at: Where = _where()
    path: str = field(
        default="", compare=False
    )  # the file it is written in: the spec, or the reported file beside it
    url: str = ""  # the paper's link (https), shown with the row
    date: str = (
        ""  # when the paper appeared (YYYY-MM or YYYY-MM-DD): the row's date on the progress chart
    )


@dataclass(frozen=True, kw_only=True)
class ReportedTable:
    """``reported "source" { split = test  columns = [m1, m2]  rows = { "System" = [0.1, _] } }``.

    Written in the task, or in a file beside the spec that holds only reported blocks, named by
    ``reported = file("task.reported")`` (checked the same way, errors at that file's lines).
    """

    source: str = label(name=False, doc="where the numbers come from (paper, table)")
    split: Name = attr(refers="split")
    columns: tuple[Name, ...] = attr(refers="metric")
    rows: tuple[tuple[str, str, tuple[float | None, ...]], ...] = attr(
        parse="rows",
        doc='{ "System" = [value or _ per column] }, or on a slice { "System" = { value = [...] } }',
    )
    slice: Name | None = attr(None, refers="slice", doc="the rows give each value of this slice")
    note: str = attr("", doc="a note on every row")
    notes: tuple[tuple[str, str], ...] = attr(
        (), parse="notes", doc='a note per row: { "System" = "..." }'
    )
    url: str = attr(
        "", doc="the paper's link (an https URL: arXiv or ACL Anthology), shown with every row"
    )
    date: str = attr(
        "",
        doc="when the paper appeared, YYYY-MM or YYYY-MM-DD: the rows' date on the progress chart",
    )
    at: Where = _where()


@dataclass(frozen=True)
class FetchSpec:
    """One upstream file the task needs (from the lock file): where it comes from and what it must hash to."""

    name: str
    path: str
    sha256: str
    size: int
    url: str = ""
    hub_repo: str = ""
    hub_file: str = ""
    revision: str = ""
    repo_type: str = "dataset"
    splits: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class FetchBlock:
    """``fetch { url = "https://.../<commit>/"  into = "bench/"  files = ["data/{split}.jsonl"] }``."""

    name: str = label(optional=True, doc="needed only when a task fetches from several origins")
    url: str = attr("", doc="base URL the files are relative to")
    hub_repo: str = attr("", doc="or a Hugging Face Hub repository")
    revision: str = attr("")
    repo_type: str = attr("dataset", option=("dataset", "model", "space"))
    into: str = attr("", doc="where under the data root the files land")
    files: tuple[str, ...] = attr(
        (),
        doc="paths relative to the origin; {split} expands, globs expand when locking (default: the data sources' paths under `into`)",
    )
    splits: tuple[Name, ...] = attr((), refers="split")
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ImportSpec:
    """How per-item outputs logged by another harness (lm-eval, Inspect) become prediction records."""

    name: Name = label()
    kind: str = attr(option=("choice", "text_list"))
    field: Name = attr(refers="prediction_field", doc="the prediction record's value field")
    id_fields: tuple[str, ...] = attr(
        key="id", doc="dotted paths into the logged item, tried in order"
    )
    id_type: str = attr("str", option=("str", "int"))
    choices: int = attr(0)
    separator: str = attr("")
    check: ComponentCall | None = attr(None, kind="import_check")
    notes: str = attr("")
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class TemplateSpec:
    name: Name = label()
    text: str = attr(doc="Jinja2, rendered in a sandbox")
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class NormaliserBlock:
    name: Name = label()
    steps: tuple[Any, ...] = attr(
        parse="steps", doc="normaliser calls, or names of other normalisers (inlined)"
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

    name: Name = label()
    use: Any = attr(
        None,
        parse="similarity_ref",
        doc="one similarity: a component call, or another similarity block's name",
    )
    same: tuple[str, ...] = attr(
        (),
        parse="field_paths",
        doc="record members (dotted paths: head.kind) that must be equal for a pair to score above 0",
    )
    mean: tuple[tuple[str, Any], ...] = entries(
        parse="similarity_part", doc="record field = a similarity call or a similarity block's name"
    )
    cases: str | None = attr(
        None,
        parse="field_path",
        doc="a member whose value (in the first record) chooses the similarity from `when`",
    )
    when: tuple[tuple[str, Any], ...] = entries(
        parse="similarity_part", doc="with cases: value = the similarity of records with that value"
    )
    otherwise: Any = attr(
        None,
        parse="similarity_ref",
        doc="with cases: the similarity of records whose value `when` does not name",
    )
    all_of: tuple[Any, ...] = attr(
        (),
        key="all",
        parse="similarity_refs",
        doc="the product of these similarities of the records (0/1 parts: all of them)",
    )
    on: str | None = attr(
        None, parse="field_path", doc="compare this member of the two records (absent in either: 0)"
    )
    at_least: float | None = attr(
        None, parse="number", doc="1 where the similarity reaches this value, else 0"
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class ItemValueSpec:
    """``value score { from = mul(judged, normalised) }``: a per-item value computed from the scorer's values and flags."""

    name: Name = label(doc="the per-item value it writes (measures read it with `value = name`)")
    formula: tuple[Any, ...] = attr(
        key="from",
        parse="item_formula",
        doc="names of the scorer's values, flags and earlier values; numbers; min, max, add, sub, mul, round, pick",
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class EntitiesSpec:
    """``entities node { ... }`` in an ``align`` block: records at places of a line that are occurrences of one entity."""

    name: Name = label(doc="what count blocks name in `of`")
    places: tuple[str, ...] = attr(
        parse="field_paths",
        doc="the line members holding one (each compared with the partner line's same member)",
    )
    same: tuple[str, ...] = attr(
        (), parse="field_paths", doc="members two occurrences of one entity share"
    )
    identity: Any = attr(
        parse="similarity_ref",
        doc="the first registered entity scoring at_least with the occurrence is the same entity",
    )
    at_least: float = attr(parse="number")
    until: Any = attr(
        parse="similarity_ref",
        doc="an entity is compared at each occurrence until this first scores 1",
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class CountSpec:
    """``count node { ... }`` in an ``align`` block: per-item values ``<name>.<kind>.<p|r>_<stat>``."""

    name: Name = label(doc="the prefix of its per-item values")
    of: Name | None = attr(None, doc="an entities block's name (default: the aligned lines)")
    by: str = attr(parse="field_path", doc="the member whose value names the kind counted under")
    kinds: tuple[str, ...] = attr(
        (), parse="names", doc="the kinds counted (default: the values of `by`'s enum type)"
    )
    where: str | None = attr(
        None, parse="field_path", doc="a member that must be non-empty for the record to be counted"
    )
    stats: tuple[tuple[str, Any], ...] = entries(
        parse="count_stat",
        doc="stat = 1 (once per line or entity), a similarity (each comparison) or best(X)",
    )
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class AlignSpec:
    """``align lines { ... }``: each line of one side with its best partner line on the other, and what the pairs count."""

    name: Name = label()
    gold: Name = attr(refers="score_field")
    prediction: Name = attr(refers="prediction_field")
    on: str = attr(parse="field_path", doc="the member of a line the lines are aligned on")
    similarity: Any = attr(parse="similarity_ref", doc="how two lines' `on` members compare")
    threshold: float = attr(parse="number", doc="a line whose best partner scores lower is skipped")
    where: str | None = attr(
        None,
        parse="field_path",
        doc="lines without this member (false, empty) are aligned but add nothing",
    )
    entities: tuple[EntitiesSpec, ...] = blocks("entities")
    counts: tuple[CountSpec, ...] = blocks("count")
    at: Where = _where()


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    name: Name = label()
    title: str = attr()
    version: str = attr()
    data: DataSpec = block("data")
    predictions: PredictionSpec = block("predictions")
    normalisers: tuple[NormaliserBlock, ...] = blocks("normaliser")
    similarities: tuple[SimilarityBlock, ...] = blocks("similarity")
    score: ScoreSpec = block("score")
    metrics: tuple[MetricSpec, ...] = blocks("metric")
    primary: Name = attr(refers="metric")
    rank_by: tuple[Name, ...] = attr(
        (), refers="metric", doc="tie-breaks after the primary metric, in order"
    )
    rank_partial: bool = attr(
        False,
        doc="rank rows whose file answers only part of the split among the full ones (default: listed with their coverage, unranked)",
    )
    description: str = attr("", doc='text, or file("name") of a file beside the spec')
    citation: str = attr("", doc='BibTeX, or file("task.bib") beside the spec')
    url: str = attr("")
    license: str = attr("")
    benchmark: str = attr("")
    extends: Name | None = attr(None, refers="task")
    params: tuple[tuple[str, Any], ...] = entries("param")
    slices: tuple[SliceSpec, ...] = blocks("slice")
    reported: tuple[ReportedRow, ...] = blocks(
        "reported",
        doc='paper rows; also `reported = file("task.reported")`, a file beside the spec of reported blocks',
    )
    templates: tuple[TemplateSpec, ...] = blocks("template")
    fetch: tuple[FetchSpec, ...] = blocks("fetch")
    imports: tuple[ImportSpec, ...] = blocks("import")
    path: str = field(default="", compare=False)
    at: Where = _where()

    def metric(self, name: str) -> MetricSpec | None:
        return next((m for m in self.metrics if m.name == name), None)

    def template(self, name: str) -> str | None:
        return next((t.text for t in self.templates if t.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


def _plain(value: Any) -> Any:
    """A dataclass tree as plain JSON-ready values, without what equality ignores (positions, the file path)."""
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

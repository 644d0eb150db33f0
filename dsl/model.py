"""The checked, typed model of a task spec: what the compiler consumes.

Everything here is a frozen dataclass of plain values, so a spec can be serialised (``to_dict``),
fingerprinted and compared.  The checker produces it; nothing downstream reads syntax trees.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from runners.predictions import FieldType


@dataclass(frozen=True)
class ComponentCall:
    """A registered component with the spec's arguments bound by name."""

    kind: str
    name: str
    kwargs: tuple[tuple[str, Any], ...] = ()

    def kwargs_dict(self) -> dict[str, Any]:
        return {k: _thaw(v) for k, v in self.kwargs}


@dataclass(frozen=True)
class Source:
    name: str
    format: str  # jsonl | json | csv | tsv
    path: str  # relative to the data root; may contain {split}
    key: str | None = None  # field joined to the item id; None for the primary source
    splits: tuple[str, ...] = ()  # empty = every split


@dataclass(frozen=True)
class LabelRule:
    """A per-item slice label: a field path, optionally mapped through a table with a default."""

    name: str
    path: tuple[str, ...] = ()
    mapping: tuple[tuple[str, str], ...] = ()
    default: str | None = None
    members: tuple[tuple[str, str, str], ...] = ()  # (path, column, label), first match wins
    splits: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerLabelRule:
    """A per-answer label: restricts a gold list field to the answers carrying one label value."""

    name: str
    field: str  # the gold field it restricts
    items: tuple[str, ...]  # path to a list of records
    text: str  # key of the answer text within each record
    label: str  # key of the label within each record


@dataclass(frozen=True)
class DataSpec:
    splits: tuple[str, ...]
    hidden: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    id_path: tuple[str, ...] = ()
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    labels: tuple[LabelRule, ...] = ()
    answer_labels: tuple[AnswerLabelRule, ...] = ()
    reader: ComponentCall | None = None


@dataclass(frozen=True)
class PredictionSpec:
    format: str  # jsonl | csv | tsv | custom
    id_field: str = "id"
    fields: tuple[tuple[str, FieldType], ...] = ()
    reader: ComponentCall | None = None
    extensions: tuple[str, ...] = ()


@dataclass(frozen=True)
class MatchSpec:
    name: str
    gold: str
    prediction: str
    similarity: ComponentCall
    matcher: ComponentCall
    filters: tuple[ComponentCall, ...] = ()
    normaliser: tuple[ComponentCall, ...] = ()
    similarity_normaliser: tuple[ComponentCall, ...] = ()
    outputs: tuple[str, str, str] = ("p", "r", "f1")


@dataclass(frozen=True)
class ScoreSpec:
    aggregate: ComponentCall
    scorer: ComponentCall | None = None
    matches: tuple[MatchSpec, ...] = ()
    metadata_params: tuple[tuple[str, str], ...] = ()  # scorer parameter <- submission metadata key


@dataclass(frozen=True)
class MetricSpec:
    name: str
    display: str
    group: str = ""
    description: str = ""
    higher_is_better: bool = True
    percent: bool = True  # shown x100 on the board


@dataclass(frozen=True)
class SliceSpec:
    name: str
    kind: str  # label | answer_label
    key: str
    display: str = ""


@dataclass(frozen=True)
class ReportedRow:
    system: str
    split: str
    source: str
    values: tuple[tuple[str, float], ...]
    slice: tuple[str, str] | None = None
    note: str = ""


@dataclass(frozen=True)
class FetchSpec:
    """One upstream file the task needs: where it comes from and what it must hash to.

    Exactly one origin: ``url`` (any HTTP(S) address, e.g. a raw GitHub file at a pinned commit) or
    ``hub_repo`` + ``hub_file`` (+ ``revision``) on the Hugging Face Hub (``repo_type``, default
    "dataset").  ``path`` is where it lands under the data root (the layout the task reads).
    """

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


@dataclass(frozen=True)
class ImportSpec:
    """How per-item outputs logged by another harness (lm-eval, Inspect) become prediction records."""

    name: str
    kind: str  # choice | text_list
    field: str  # the prediction record's value field
    id_fields: tuple[str, ...]  # dotted paths into the logged item, tried in order
    id_type: str = "str"  # str | int
    choices: int = 0
    separator: str = ""
    check: ComponentCall | None = None
    notes: str = ""


@dataclass(frozen=True)
class TemplateSpec:
    name: str
    text: str


@dataclass(frozen=True)
class TaskSpec:
    name: str
    title: str
    version: str
    data: DataSpec
    predictions: PredictionSpec
    score: ScoreSpec
    metrics: tuple[MetricSpec, ...]
    primary: str
    rank_by: tuple[str, ...] = ()  # tie-breaks after the primary metric, in order
    description: str = ""
    citation: str = ""
    url: str = ""
    license: str = ""
    benchmark: str = ""
    extends: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    slices: tuple[SliceSpec, ...] = ()
    reported: tuple[ReportedRow, ...] = ()
    templates: tuple[TemplateSpec, ...] = ()
    fetch: tuple[FetchSpec, ...] = ()
    imports: tuple[ImportSpec, ...] = ()
    path: str = field(default="", compare=False)

    def metric(self, name: str) -> MetricSpec | None:
        return next((m for m in self.metrics if m.name == name), None)

    def template(self, name: str) -> str | None:
        return next((t.text for t in self.templates if t.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("path", None)
        return out


def _thaw(value: Any) -> Any:
    """Frozen spec values (tuples) back into the lists/dicts components expect."""
    if isinstance(value, tuple) and value and value[0] == "__object__":
        return {k: _thaw(v) for k, v in value[1]}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value

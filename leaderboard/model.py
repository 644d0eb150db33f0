"""What the site knows about a task, read from ``current_tasks.spec_json`` (typed, frozen)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from procbench.dsl.model import MetricSpec, settings_of

WHOLE_SPLIT = "(whole split)"

# What the board reads of a metric besides its name: every display and ranking setting of the model's
# MetricSpec (their roles, dsl/model.py), so a setting added there reaches MetricInfo or fails its test.
METRIC_SETTINGS = settings_of(MetricSpec)
_METRIC_DEFAULTS: dict[str, Any] = {"display": "", "group": "", "description": ""} | {
    f.name: f.default
    for f in dataclasses.fields(MetricSpec)
    if f.default is not dataclasses.MISSING
}


@dataclass(frozen=True)
class MetricInfo:
    name: str
    display: str
    group: str
    description: str
    higher_is_better: bool
    percent: bool

    @classmethod
    def of(cls, metric: Mapping[str, Any]) -> MetricInfo:
        """A metric of a spec (its JSON, or a ``MetricSpec``'s fields): its name and every setting in
        :data:`METRIC_SETTINGS`, the model's default where the spec has none (a spec stored before it)."""
        name = str(metric["name"])
        settings = {k: metric.get(k, _METRIC_DEFAULTS.get(k)) for k in METRIC_SETTINGS}
        for (
            key,
            value,
        ) in settings.items():  # the stored JSON is untrusted: each setting as its type
            default = _METRIC_DEFAULTS.get(key)
            settings[key] = bool(value) if isinstance(default, bool) else str(value or "")
        settings["display"] = settings["display"] or name
        settings["group"] = settings["group"] or "metrics"
        return cls(name=name, **settings)

    @classmethod
    def from_spec(cls, metric: MetricSpec) -> MetricInfo:
        return cls.of({"name": metric.name, **{k: getattr(metric, k) for k in METRIC_SETTINGS}})

    def shown(self, value: float | None) -> float | None:
        """The value as the board prints it (x100 for fractions), rounded for display."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return round(value * (100 if self.percent else 1), 2)


@dataclass(frozen=True)
class SliceInfo:
    name: str
    kind: (
        str  # "label": a subset of items (resamplable); "answer_label": gold restricted, re-scored
    )
    key: str
    display: str
    # value -> its human label, where the spec gives one (a slice's ``values`` table; see docs/site.md)
    value_labels: Mapping[str, str] = field(default_factory=dict)

    def value_label(self, value: str) -> str:
        """A slice value as the site shows it: the spec's label with the stored value, else the value itself."""
        label = self.value_labels.get(value)
        return f"{label} ({value})" if label and label != value else value

    @property
    def per_item(self) -> bool:
        """Whether the slice is a subset of items, so its intervals can be bootstrapped from stored item scores."""
        return self.kind == "label"


@dataclass(frozen=True)
class TaskInfo:
    task: str
    split: str
    title: str
    benchmark: str
    version: str
    fingerprint: str
    hidden: bool
    primary: str
    metrics: tuple[MetricInfo, ...]
    slices: tuple[SliceInfo, ...]
    aggregator: str  # the spec's aggregator component name
    aggregator_kwargs: Mapping[str, Any]
    spec: Mapping[str, Any]
    rank_by: tuple[str, ...] = ()  # the spec's tie-breaks after the primary metric
    rank_partial: bool = False  # issue #33: the spec ranks partial files (fewer items answered than the split's) among full ones

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> TaskInfo:
        spec = json.loads(row["spec_json"])
        metrics = tuple(MetricInfo.of(m) for m in spec.get("metrics", []))
        slices = tuple(
            SliceInfo(
                s["name"],
                s.get("kind", "label"),
                s.get("key", s["name"]),
                s.get("display") or s["name"],
                _value_labels(s.get("values")),
            )
            for s in spec.get("slices", [])
        )
        score = spec.get("score") or {}
        aggregate = (
            (score.get("aggregate") or {}) if not score.get("measures") else {}
        )  # measures are not a plain mean or sum
        return cls(
            task=row["task"],
            split=row["split"],
            title=spec.get("title") or row["task"],
            benchmark=spec.get("benchmark") or row["task"],
            version=str(spec.get("version", "")),
            fingerprint=row["fingerprint"],
            hidden=bool(row["hidden"]),
            primary=row.get("primary_metric") or spec.get("primary", ""),
            metrics=metrics,
            slices=slices,
            aggregator=str(aggregate.get("name", "")),
            aggregator_kwargs={k: v for k, v in aggregate.get("kwargs", [])},
            spec=spec,
            rank_by=tuple(spec.get("rank_by") or ()),
            rank_partial=bool(spec.get("rank_partial", False)),
        )

    @property
    def parent(self) -> str:
        """The task this one ``extends`` in its spec ('' when none)."""
        return str(self.spec.get("extends") or "")

    @property
    def params(self) -> dict[str, Any]:
        """The spec's parameters (what a variant such as ``openpi-head`` changes), by name."""
        raw = self.spec.get("params") or []
        pairs = (
            raw.items()
            if isinstance(raw, Mapping)
            else [p for p in raw if isinstance(p, (list, tuple)) and len(p) == 2]
        )
        return {str(k): v for k, v in pairs}

    @property
    def description(self) -> str:
        """The spec's description of the task (markdown, from the project's own spec)."""
        return str(self.spec.get("description") or "").strip()

    def metric(self, name: str) -> MetricInfo:
        found = next((m for m in self.metrics if m.name == name), None)
        return found or MetricInfo(name, name, "metrics", "", True, False)

    @property
    def primary_metric(self) -> MetricInfo:
        return self.metric(self.primary)

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(m.group for m in self.metrics))

    def slice(self, name: str) -> SliceInfo | None:
        return next((s for s in self.slices if s.name == name), None)

    def restriction(self, metric: str) -> tuple[tuple[str, str], ...]:
        """The item labels ``metric`` is restricted to (its measure's ``where``, e.g. PM-LLM's Score: modality = text); () for every item."""
        for measure in (self.spec.get("score") or {}).get("measures") or []:
            if metric in (measure.get("outputs") or [measure.get("name")]):
                return tuple((str(key), str(value)) for key, value in measure.get("where") or [])
        return ()

    def comparable_across(self, metric: str, sl: SliceInfo) -> bool:
        """Whether ``metric``'s values on two values of ``sl`` measure the same quantity (so one plot may hold both).

        Not when the metric is defined on one value only (a measure ``where`` on the slice's label, e.g.
        PM-LLM's text-only Score on the vision questions) or is a sum (it grows with the slice's item count).
        """
        score = self.spec.get("score") or {}
        aggregate = score.get("aggregate") or {}
        for measure in score.get("measures") or []:
            if metric not in (measure.get("outputs") or [measure.get("name")]):
                continue
            if (
                any(key == sl.key for key, _ in measure.get("where") or [])
                or measure.get("aggregate") == "sum"
            ):
                return False
            return True
        return aggregate.get("name") != "sum"

    @property
    def linear(self) -> str | None:
        """'mean' / 'sum' when the aggregator is the plain, unrounded mean or sum of per-item values."""
        if (
            self.aggregator in ("mean", "sum")
            and self.aggregator_kwargs.get("round_digits") is None
        ):
            return self.aggregator
        return None


def _value_labels(raw: Any) -> dict[str, str]:
    """A slice's value labels from its spec entry: a mapping, or (value, label) pairs; anything else reads as none."""
    if isinstance(raw, Mapping):
        return {str(k): str(v) for k, v in raw.items()}
    if isinstance(raw, (list, tuple)):
        return {
            str(pair[0]): str(pair[1])
            for pair in raw
            if isinstance(pair, (list, tuple)) and len(pair) == 2
        }
    return {}

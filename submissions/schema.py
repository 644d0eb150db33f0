"""JSON Schema of a task's prediction file (one JSON line), from its typed predictions block."""

from __future__ import annotations

from typing import Any

from procbench.dsl.model import TaskSpec
from procbench.runners.runtime.predictions import COLLECTION_KINDS, FieldType


COLLECTION_DOCS = {
    "ordering": "a ranked list of distinct items, first = first (docs/language.md, types)",
    "set": "a list whose order and repeats do not matter (docs/language.md, types)",
}


def _field_schema(t: FieldType) -> dict[str, Any]:
    if (
        t.kind in COLLECTION_KINDS
    ):  # an ordering or a set is a JSON list too; its kind is what a metric makes of it
        schema = {"type": "array", "items": _field_schema(t.item) if t.item else {}}
        return (
            schema
            if t.kind == "list"
            else {**schema, "description": f"{t.spelling()}: " + COLLECTION_DOCS[t.kind]}
        )
    if t.kind == "optional":
        inner = _field_schema(t.item) if t.item else {}
        return {"anyOf": [inner, {"type": "null"}]}
    if t.kind == "enum":
        return {"enum": list(t.values)}
    return {
        "str": {"type": "string"},
        "int": {"type": "integer"},
        "float": {"type": "number"},
        "bool": {"type": "boolean"},
    }.get(t.kind, {})


def prediction_schema(spec: TaskSpec) -> dict[str, Any]:
    pred = spec.predictions
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"procbench:{spec.name}:predictions",
        "title": f"{spec.title}: one prediction",
    }
    if pred.reader is not None:
        reader = pred.reader.name
        schema["description"] = (
            f"{pred.format} prediction files are read by the {reader!r} component; see the task documentation for the format."
        )
        return schema
    schema.update(
        {
            "description": f"One {pred.format} record per item, keyed by {pred.id_field!r}.",
            "type": "object",
            "properties": {name: _field_schema(t) for name, t in pred.fields},
            "required": [name for name, t in pred.fields if t.kind != "optional"],
        }
    )
    return schema

"""Issue #32.3: every attribute of the spec model declares its role, and what is fingerprinted, what the
board reads of a metric, the exports' metric keys and the block reference all follow from the roles.

A new attribute is tried the way a newcomer would add one: a subclass of the real model class with one
more field (``dataclasses.make_dataclass``), put into every shipped spec, fingerprinted by the real
``spec_digest``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
from typing import Any

import pytest

from procbench.dsl import compiler, reference
from procbench.dsl import model as m
from procbench.dsl.tasks import all_spec_paths, load_task
from procbench.leaderboard.model import METRIC_SETTINGS, MetricInfo
from procbench.export.hub_dataset import _task_info

# sha256 of the JSON of each shipped spec's semantic form (the spec part of its fingerprint; the rest is
# component and library versions), as the hand-listed exclusions computed it before roles existed.
SHIPPED_FORMS = {
    "openpi-head": "71a16e08e591014a765ba66de4df54108ef627f426c28ca440f823a730061ef7",
    "openpi": "cfff50481b1e83c040040f5ef529eb2715639c07b6eba400326ab9fe02216117",
    "paged": "2839a7fe6f2246e8297685c75c927c0ee92a0ae2a9b710ca00d9eb9ea229de7e",
    "paradise-reverse-tip": "1965da94e3f251ab53813d891926fdd1120fe62b92589490717d2460ddefda40",
    "paradise-reverse-warning": "42e1a04039003578886b078a2f73c4ab270f6630f84a2be208bbcc477f23ea86",
    "paradise-tip": "c1e9faf201b0ec6b2e36050044ac37509ee8ca68aeb73dff96fff82597b9dcf7",
    "paradise-warning": "0cc814725b492c46c19c8607e5fe09b80fb94ac74e4a48cfb24b938a12d470e2",
    "pm-llm-benchmark": "6bec8996eb7b1019aa9e967b0d8ab96c5395d4c365e499102a8ae6c7d2efa7b2",
    "propara-naacl18": "a017fda73cc9fbfda98a5cc3fe4dfb09b3459f4f3f4393c269d021f422a559d4",
    "propara": "370c936279a4b2bfb94a0405e1a06eab5378ecdafd5d0b017263961bd680e0f5",
}

MODEL_CLASSES = [
    cls
    for _, cls in inspect.getmembers(m, inspect.isclass)
    if dataclasses.is_dataclass(cls) and cls.__module__ == m.__name__ and cls is not m.Role
]


def _specs() -> dict[str, m.TaskSpec]:
    return {p.stem: load_task(p)[0] for p in all_spec_paths()}


@pytest.fixture(scope="module")
def shipped() -> dict[str, m.TaskSpec]:
    # Every pinned spec is still shipped; a spec added since (a maintainer's new task, as docs/adding-a-benchmark.md
    # walks through) has no pin yet and is not compared: its author pins it here when it ships.
    specs = _specs()
    assert set(SHIPPED_FORMS) <= set(specs), "a pinned spec was removed: drop its pin here"
    return {name: spec for name, spec in specs.items() if name in SHIPPED_FORMS}


# -- every field has a role --------------------------------------------------------------------


def test_every_field_of_every_model_class_declares_a_known_role() -> None:
    assert len(MODEL_CLASSES) > 20
    for cls in MODEL_CLASSES:
        roles = m.field_roles(cls)
        assert roles is not None, cls.__name__
        assert set(roles) == {f.name for f in dataclasses.fields(cls)}
        assert set(roles.values()) <= set(m.ROLES), cls.__name__


def test_a_field_without_a_role_is_refused() -> None:
    plain = dataclasses.make_dataclass(
        "MetricSpecWithAPlainField",
        [("decimals", int, dataclasses.field(default=2))],
        bases=(m.MetricSpec,),
        frozen=True,
    )
    with pytest.raises(TypeError, match=r"MetricSpecWithAPlainField\.decimals declares no role"):
        m.field_roles(plain)
    metric = plain("x", "X")
    with pytest.raises(TypeError, match="declares no role"):
        m.fingerprinted(metric)  # the fingerprint refuses it too, never guesses
    with pytest.raises(TypeError):
        m.attr("")  # type: ignore[call-arg]  # the spec-syntax helpers take the role as a required keyword
    with pytest.raises(ValueError, match="unknown role"):
        m.attr("", role="shown")


def test_the_written_and_the_checked_metric_agree_on_roles() -> None:
    written, checked = m.field_roles(m.MetricBlock) or {}, m.field_roles(m.MetricSpec) or {}
    assert {k: written[k] for k in checked} == checked


# -- the fingerprint follows the roles ---------------------------------------------------------


def _form_digest(spec: m.TaskSpec) -> str:
    form = json.dumps(compiler.semantic_form(spec), sort_keys=True, default=str)
    return hashlib.sha256(form.encode()).hexdigest()


def test_every_shipped_specs_fingerprinted_form_is_the_one_it_had(
    shipped: dict[str, m.TaskSpec],
) -> None:
    assert {name: _form_digest(spec) for name, spec in shipped.items()} == SHIPPED_FORMS


def test_the_fingerprinted_form_keeps_exactly_the_fingerprinted_roles(
    shipped: dict[str, m.TaskSpec],
) -> None:
    kept = {
        name
        for name, role in (m.field_roles(m.TaskSpec) or {}).items()
        if m.ROLES[role].fingerprinted
    }
    assert {"name", "version", "primary", "rank_by", "data", "score", "metrics"} <= kept
    assert not kept & {"title", "description", "benchmark", "rank_partial", "fetch", "reported"}
    form = compiler.semantic_form(shipped["pm-llm-benchmark"])
    # the compiler drops a few default-valued keys of older specs, never adds one
    assert set(form) == kept
    assert set(form["metrics"][0]) == {"name"}  # display, group, description, percent, direction
    assert all(set(sl) == {"name", "kind", "key", "label", "answer_label"} for sl in form["slices"])


def _with_new_field(cls: type, role: str, default: Any) -> type:
    return dataclasses.make_dataclass(
        f"{cls.__name__}WithNew",
        [("new_attribute", type(default), m.part(role, default))],
        bases=(cls,),
        frozen=True,
        kw_only=True,  # the new field only: the base's keep theirs
    )


def _rebuilt(obj: Any, cls: type, value: Any) -> Any:
    kept = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init}
    return cls(**kept, new_attribute=value)


@pytest.mark.parametrize("role", list(m.ROLES))
def test_a_new_attribute_moves_every_shipped_fingerprint_exactly_when_its_role_is_fingerprinted(
    shipped: dict[str, m.TaskSpec], role: str
) -> None:
    metric_cls = _with_new_field(m.MetricSpec, role, 2)
    task_cls = _with_new_field(m.TaskSpec, role, "")
    for name, spec in shipped.items():
        before = compiler.spec_digest(spec)
        on_metrics = dataclasses.replace(
            spec, metrics=tuple(_rebuilt(x, metric_cls, 3) for x in spec.metrics)
        )
        on_task = _rebuilt(spec, task_cls, "a new attribute's value")
        for changed in (on_metrics, on_task):
            moved = compiler.spec_digest(changed) != before
            assert moved is m.ROLES[role].fingerprinted, (name, role, type(changed).__name__)


# -- what the board and the exports read of a metric -------------------------------------------


def test_the_board_reads_every_display_and_ranking_setting_of_a_metric() -> None:
    assert METRIC_SETTINGS == m.settings_of(m.MetricSpec)
    assert set(METRIC_SETTINGS) == {
        "display",
        "group",
        "description",
        "higher_is_better",
        "percent",
    }
    assert [f.name for f in dataclasses.fields(MetricInfo)] == ["name", *METRIC_SETTINGS]


def test_the_board_and_the_hub_export_read_a_metric_as_the_stored_spec_says(
    shipped: dict[str, m.TaskSpec],
) -> None:
    spec = shipped["paged"]
    stored = json.dumps(spec.to_dict(), default=str)
    row = {"task": "paged", "title": spec.title, "benchmark": "PAGED", "primary_metric": "action"}
    exported = _task_info({**row, "spec_json": stored})["metrics"]
    assert [list(e) for e in exported] == [["name", *METRIC_SETTINGS]] * len(spec.metrics)
    for metric, entry in zip(spec.metrics, exported, strict=True):
        info = MetricInfo.of(entry)
        assert info == MetricInfo.from_spec(metric)
        assert (info.display, info.higher_is_better, info.percent) == (
            metric.display,
            metric.higher_is_better,
            metric.percent,
        )
    # a stored spec from before a setting existed: the model's default
    assert MetricInfo.of({"name": "x"}) == MetricInfo("x", "x", "metrics", "", True, True)


# -- the block reference -------------------------------------------------------------------------


def test_the_block_reference_in_language_md_is_current() -> None:
    text = reference.DOC_PATH.read_text(encoding="utf-8")
    section = reference.section_of(text, reference.BLOCKS_BEGIN, reference.BLOCKS_END)
    assert section is not None, f"{reference.DOC_PATH} lost its block reference markers"
    assert section == reference.render_blocks(), (
        f"the block reference in {reference.DOC_PATH.name} differs from dsl/model.py: run `{reference.REGENERATE}`"
    )


def test_the_block_reference_lists_every_written_attribute_with_its_role() -> None:
    text = reference.render_blocks()
    blocks = reference.blocks_of()
    assert {cls for _, cls in blocks} >= {m.TaskSpec, m.MetricBlock, m.SliceSpec, m.MeasureSpec}
    for path, cls in blocks:
        body = text.split(f"\n#### {path}\n", 1)[1].split("\n#### ", 1)[0]
        for f in dataclasses.fields(cls):
            if f.metadata.get("syntax") not in (None, "where"):
                assert f"\n- `{f.name}` · {m.role_of(cls, f.name)} · " in body, (path, f.name)
    for role in m.ROLES.values():
        assert f"| {role.name} | {'yes' if role.fingerprinted else 'no'} |" in text


def test_the_roles_are_those_docs_name() -> None:
    # the hand-written text of docs/language.md names each role the reference lists
    text = reference.DOC_PATH.read_text(encoding="utf-8")
    prose = text.split(reference.BLOCKS_BEGIN, 1)[0]
    for role in m.ROLES:
        assert f"`{role}`" in prose, role

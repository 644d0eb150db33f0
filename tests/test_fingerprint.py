"""Fingerprints are stable across processes (no hash-order dependence) and move when the spec does."""

from __future__ import annotations

import os
import subprocess
import sys

from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT

SCRIPT = "from procbench.api import load_task; from pathlib import Path; import sys; print(load_task(sys.argv[1])[1].gold(Path(sys.argv[2]), sys.argv[3])[1])"


def _fingerprint(task: str, split: str, seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, task, str(SAMPLE_DATA_ROOT), split],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip().splitlines()[-1]


def test_fingerprint_is_the_same_in_every_process() -> None:
    # propara-naacl18 gold holds frozensets: their str() order follows the per-process hash seed
    assert _fingerprint("propara-naacl18", "test", "1") == _fingerprint(
        "propara-naacl18", "test", "2"
    )


def test_variants_have_different_fingerprints() -> None:
    assert _fingerprint("openpi", "test", "0") != _fingerprint("openpi-head", "test", "0")


def _slot_names(value: object) -> tuple[str, ...]:
    """A record's fields, read off its classes' ``__slots__`` (base classes first), not from records.py."""
    from procbench.runners.runtime.records import Record

    names: list[str] = []
    for cls in reversed(type(value).__mro__):
        if not issubclass(cls, Record):  # a mixin's slot (a cached value) is no field
            continue
        own = cls.__dict__.get("__slots__", ())
        names += [own] if isinstance(own, str) else list(own)
    return tuple(names)


def _plain_canonical(value: object) -> object:
    """The canonical form written plainly (isinstance checks only): the oracle of the fast version.

    A record (runners/runtime/records.py) is written as the dataclass it replaced: ``__type__`` and its
    fields in slot order.
    """
    import dataclasses
    import json
    from collections.abc import Mapping

    from procbench.runners.runtime.records import Record

    if isinstance(value, Mapping):
        return {str(k): _plain_canonical(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted(
            (_plain_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True)
        )
    if isinstance(value, (list, tuple)):
        return [_plain_canonical(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__type__": type(value).__name__,
            **{f.name: _plain_canonical(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, Record):
        return {
            "__type__": type(value).__name__,
            **{name: _plain_canonical(getattr(value, name)) for name in _slot_names(value)},
        }
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _gold_like():  # type: ignore[no-untyped-def]
    import dataclasses
    import types

    from hypothesis import strategies as st

    from procbench.runners.runtime.records import Record

    @dataclasses.dataclass(frozen=True)
    class Entity:
        name: str
        tags: frozenset[str]

    class Tagged(Record):  # a record beside the dataclass: the gold of a converted benchmark
        __slots__ = ("name", "tags")

        def __init__(self, name: str, tags: frozenset[str]) -> None:
            object.__setattr__(self, "name", name)
            object.__setattr__(self, "tags", tags)

    scalars = (
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
    )
    keys = st.text(max_size=4) | st.integers(-3, 3) | st.booleans()
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(keys, inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(types.MappingProxyType)
        | st.frozensets(st.text(max_size=4) | st.integers(), max_size=4)
        | st.builds(Entity, st.text(max_size=4), st.frozensets(st.text(max_size=3), max_size=3))
        | st.builds(Tagged, st.text(max_size=4), st.frozensets(st.text(max_size=3), max_size=3)),
        max_leaves=20,
    )


def test_fast_canonical_form_equals_the_plain_one() -> None:
    import json

    from hypothesis import given

    from procbench.runners.runtime.runner import _canonical

    @given(_gold_like())
    def check(value: object) -> None:
        assert json.dumps(_canonical(value), sort_keys=True) == json.dumps(
            _plain_canonical(value), sort_keys=True
        )

    check()


def test_a_record_is_written_as_the_dataclass_it_replaced() -> None:
    """Fingerprints did not move when the warm path's dataclasses became records (issue #31)."""
    import dataclasses
    import json
    from typing import Any

    from hypothesis import given
    from hypothesis import strategies as st

    from procbench.runners.runtime.records import Record
    from procbench.runners.runtime.runner import _canonical

    @dataclasses.dataclass(frozen=True)
    class Track:
        name: str
        steps: Any
        extra: Any = None

    as_dataclass = Track

    class Track(Record):  # type: ignore[no-redef]  # the same name, as a converted class keeps it
        __slots__ = ("name", "steps")

        def __init__(self, name: str, steps: Any) -> None:
            object.__setattr__(self, "name", name)
            object.__setattr__(self, "steps", steps)

    class Track(Track):  # type: ignore[no-redef]  # a subclass lists only its own new fields
        __slots__ = ("extra",)

        def __init__(self, name: str, steps: Any, extra: Any = None) -> None:
            super().__init__(name, steps)
            object.__setattr__(self, "extra", extra)

    as_record = Track
    members = st.text(max_size=4) | st.integers() | st.none()
    steps = st.lists(members, max_size=4) | st.frozensets(st.text(max_size=3), max_size=3)

    @given(st.text(max_size=5), steps, members)
    def check(name: str, steps: Any, extra: Any) -> None:
        record, dataclass = (
            _canonical(as_record(name, steps, extra)),
            _canonical(as_dataclass(name, steps, extra)),
        )
        assert json.dumps(record) == json.dumps(dataclass)  # keys in the same order too
        assert list(record) == ["__type__", "name", "steps", "extra"]

    check()


def test_fast_canonical_form_equals_the_plain_one_on_real_gold(data_root) -> None:  # type: ignore[no-untyped-def]
    import json

    from procbench.api import load_task
    from procbench.runners.runtime.runner import _canonical

    for task, split in (
        ("openpi", "dev"),
        ("propara-naacl18", "test"),
        ("paged", "dev"),
        ("paradise-tip", "test"),
        ("pm-llm-benchmark", "main"),
    ):
        gold = load_task(task)[1].read_gold(data_root, split)
        value = [gold.items, gold.labels, gold.answer_views]
        assert json.dumps(_canonical(value), sort_keys=True) == json.dumps(
            _plain_canonical(value), sort_keys=True
        ), task

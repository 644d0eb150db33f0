"""Records behave as the frozen dataclasses they replace (runners/runtime/records.py).

The oracle is ``dataclasses`` itself: for generated field values, a record and the dataclass with the
same fields agree on equality, hashing, repr, replace, pickling and refused assignment.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.runtime.records import FrozenRecordError, Record, record_fields


class Pair(Record):
    __slots__ = ("left", "right")
    left: Any
    right: Any

    def __init__(self, left: Any, right: Any = 0) -> None:
        object.__setattr__(self, "left", left)
        object.__setattr__(self, "right", right)


@dataclasses.dataclass(frozen=True)
class PairOracle:
    left: Any
    right: Any = 0


class Triple(Pair):
    __slots__ = ("extra",)
    extra: Any

    def __init__(self, left: Any, right: Any = 0, extra: Any = None) -> None:
        super().__init__(left, right)
        object.__setattr__(self, "extra", extra)


class Cached(Record):
    __slots__ = ("name", "memo", "doubled")
    _hidden = frozenset({"memo"})
    _not_init = frozenset({"doubled"})
    name: str
    memo: dict[str, int]
    doubled: str

    def __init__(self, name: str, memo: dict[str, int] | None = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "memo", {} if memo is None else memo)
        object.__setattr__(self, "doubled", name * 2)


class Counter(Record, frozen=False):
    __slots__ = ("count",)
    count: int

    def __init__(self, count: int = 0) -> None:
        self.count = count


class Stage(Record, compare=False):
    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)


hashable = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.tuples(st.integers())
)


@given(hashable, hashable, hashable, hashable)
def test_equality_hash_and_repr_follow_the_dataclass(a: Any, b: Any, c: Any, d: Any) -> None:
    record, other = Pair(a, b), Pair(c, d)
    oracle, other_oracle = PairOracle(a, b), PairOracle(c, d)
    assert (record == other) == (oracle == other_oracle)
    assert (hash(record) == hash(Pair(a, b))) and (hash(oracle) == hash(PairOracle(a, b)))
    assert repr(record) == repr(oracle).replace("PairOracle", "Pair")
    assert record != oracle and record != (a, b)  # another class is never equal
    assert Pair(a) == Pair(a, 0)


@given(hashable, hashable, hashable)
def test_replace_pickle_and_copy_keep_every_field(a: Any, b: Any, c: Any) -> None:
    record = Triple(a, b, c)
    assert record.replace(right=c) == Triple(a, c, c)
    assert dataclasses.replace(PairOracle(a, b), right=c) == PairOracle(a, c)
    for again in (pickle.loads(pickle.dumps(record)), copy.copy(record), copy.deepcopy(record)):
        assert again == record and type(again) is Triple
    assert record_fields(record) == ("left", "right", "extra")
    assert record_fields(PairOracle(a, b)) is None


def test_frozen_hidden_and_derived_fields() -> None:
    record = Pair(1, 2)
    with pytest.raises(FrozenRecordError):
        record.left = 3
    with pytest.raises(AttributeError):
        del record.right
    with pytest.raises(TypeError):
        record.replace(nothing=1)
    cached = Cached("ab", {"x": 1})
    assert cached == Cached("ab") and hash(cached) == hash(Cached("ab"))
    assert repr(cached) == "Cached(name='ab', doubled='abab')"
    assert cached.replace(name="c").doubled == "cc"
    with pytest.raises(ValueError):
        cached.replace(doubled="x")
    assert pickle.loads(pickle.dumps(cached)).memo == {"x": 1}


def test_mutable_and_identity_records() -> None:
    counter = Counter()
    counter.count += 1
    assert counter == Counter(1) and Counter.__hash__ is None
    stage = Stage("a")
    assert stage != Stage("a") and stage == stage
    assert hash(stage) == object.__hash__(stage)


def test_records_do_not_import_dataclasses() -> None:
    probe = (
        "import sys, procbench.runners.runtime.records\n"
        "print('dataclasses' in sys.modules, 'inspect' in sys.modules)"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert shown == ["False", "False"]

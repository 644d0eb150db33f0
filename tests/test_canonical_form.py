"""The canonical form the gold fingerprint hashes (runners/runner._canonical), against the rule it states.

Issue #31 made it cheaper (scalars kept without a call, dataclass field names remembered per type);
the reference below is the rule written out plainly, one case per kind, applied to generated values
with nested dicts, lists, tuples, sets, dataclasses, records (real ProPara tracks among them) and
Mappings.  A record (runners/runtime/records.py) is written as the dataclass it replaced was.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.runners.propara.action_file import ParticipantTrack, ProcessTracks
from procbench.runners.runtime.records import Record
from procbench.runners.runtime.runner import _canonical
from tests.test_fingerprint import (
    _slot_names,
)  # the fingerprint oracle's reading of a record's fields


@dataclasses.dataclass(frozen=True)
class _Pair:
    left: Any
    right: Any


def _reference(value: Any) -> Any:
    if value is None or type(value) in (str, int, float, bool):
        return value
    if type(value) is dict or isinstance(value, Mapping):
        return {str(k): _reference(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        members = [_reference(v) for v in value]
        return sorted(members, key=lambda m: json.dumps(m, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [_reference(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__type__": type(value).__name__,
            **{f.name: _reference(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, Record):
        return {
            "__type__": type(value).__name__,
            **{name: _reference(getattr(value, name)) for name in _slot_names(value)},
        }
    if isinstance(value, (str, int, float, bool)):  # a subclass: as it is
        return value
    return str(value)


_text = st.text(max_size=6)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), _text)
_tracks = st.builds(
    ParticipantTrack,
    _text,
    st.lists(_text, max_size=4).map(tuple),
    st.lists(st.sampled_from(["NONE", "MOVE"]), max_size=3).map(tuple),
)
_values = st.recursive(
    st.one_of(_scalars, _tracks),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(_text, st.integers()), inner, max_size=4),
        st.dictionaries(_text, inner, max_size=3).map(MappingProxyType),
        st.frozensets(_text, max_size=4),
        st.builds(_Pair, inner, inner),
        st.builds(
            ProcessTracks,
            st.integers(),
            st.integers(min_value=0, max_value=5),
            st.lists(_tracks, max_size=3).map(tuple),
        ),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_the_canonical_form_follows_its_rule(value: Any) -> None:
    assert _canonical(value) == _reference(value)
    assert _canonical(value) == _reference(value)  # the second time, the field names are remembered

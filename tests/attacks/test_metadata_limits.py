"""Issue #29, submission metadata: size, depth and non-finite numbers are limited at intake, refused with one
line (exit 5 from the CLI), and nothing is stored: no row, no raw file, no staging copy."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.cli import app
from procbench.submissions import blobs
from procbench.submissions.details import DetailError
from procbench.submissions.errors import SubmissionRefused
from procbench.submissions.metadata_checks import (
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    check_metadata,
)
from tests.test_submissions_support import (
    NO_CHANGE,
    TEMPLATE,
    counts,
    failures,
    query,
    submit_openpi,
)

cli = CliRunner()


def _deep(depth: int, leaf: Any = 1, kind: str = "dict") -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value} if kind == "dict" else [value]
    return value


HOSTILE: dict[str, dict[str, Any]] = {
    "50 MB string": {"notes": "x" * (50 << 20)},
    "100 000 keys": {f"k{i}": i for i in range(100_000)},
    "long list": {"runs": list(range(200_000))},
    "5 000-deep object": {"config": _deep(5_000)},
    "5 000-deep list": {"config": _deep(5_000, kind="list")},
    "NaN": {"temperature": float("nan")},
    "Infinity in a list": {"scores": [1.0, float("inf")]},
    "-Infinity deep": {"a": {"b": {"c": float("-inf")}}},
    "a huge integer": {"seed": 10**20_000},
}


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "board.duckdb"
    submit_openpi(path, NO_CHANGE, team="earlier", metadata={"open": True})
    return path


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_metadata_is_refused_and_nothing_is_stored(case: str, db: Path) -> None:
    before, raw_before = counts(db), _files(blobs.blob_root(db))
    with pytest.raises(SubmissionRefused) as refused:
        submit_openpi(db, TEMPLATE, metadata=HOSTILE[case])
    message = refused.value.message
    assert (
        refused.value.stage == "request"
        and "metadata" in message
        and "\n" not in message
        and len(message) < 400
    )
    assert (
        counts(db) == before and _files(blobs.blob_root(db)) == raw_before
    )  # no row, no raw file, no staging copy left
    assert [r["stage"] for r in failures(db) if r["receipt_id"] == refused.value.receipt] == [
        "request"
    ]


def test_every_stored_metadata_row_is_strict_json(db: Path) -> None:
    submit_openpi(
        db,
        TEMPLATE,
        metadata={"temperature": 0.7, "nested": _deep(MAX_METADATA_DEPTH - 1), "notes": "é" * 1000},
    )

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    for (text,) in query(db, "SELECT metadata_json FROM submissions"):
        json.loads(str(text), parse_constant=refuse_constant)


def test_the_cli_refuses_oversized_metadata_with_exit_5(db: Path) -> None:
    before = counts(db)
    result = cli.invoke(
        app,
        [
            "submit",
            "openpi",
            "--split",
            "test",
            "--predictions",
            str(TEMPLATE),
            "--model",
            "m",
            "--team",
            "t",
            "--db",
            str(db),
            "--data-dir",
            str(Path("samples/data")),
            "--metadata",
            "notes=" + "x" * (MAX_METADATA_BYTES + 1),
        ],
    )
    assert result.exit_code == 5, result.output
    assert "metadata is larger than" in result.output and "receipt" in result.output
    assert counts(db) == before


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


def _depth(value: Any) -> int:
    """Levels of objects and lists (an independent recursive count; the values here are shallow)."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5))
@settings(max_examples=300, deadline=None)
def test_metadata_is_accepted_exactly_when_it_is_finite_shallow_and_small(
    metadata: dict[str, Any],
) -> None:
    text = json.dumps(metadata, sort_keys=True, default=str) if _finite(metadata) else ""
    acceptable = (
        _finite(metadata)
        and _depth(metadata) <= MAX_METADATA_DEPTH
        and len(text.encode()) <= MAX_METADATA_BYTES
    )
    if acceptable:
        assert check_metadata(metadata) == metadata
    else:
        with pytest.raises(DetailError):
            check_metadata(metadata)


SITE_BOX = [
    '{"t": NaN}',
    '{"t": -Infinity}',
    '{"c": ' + "[" * 5_000 + "]" * 5_000 + "}",
    '{"notes": "' + "x" * (MAX_METADATA_BYTES + 10) + '"}',
]


@pytest.mark.parametrize("text", SITE_BOX, ids=["NaN", "-Infinity", "5 000 deep", "over 64 KiB"])
def test_the_sites_metadata_box_refuses_the_same_with_a_message(text: str) -> None:
    from procbench.leaderboard.intake_form import parse_metadata

    with pytest.raises(ValueError, match="metadata"):
        parse_metadata(text)
    assert parse_metadata('{"open": true, "temperature": 0.7}') == {
        "open": True,
        "temperature": 0.7,
    }

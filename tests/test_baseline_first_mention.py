"""ProPara-NAACL'18's second baseline, `propara-naacl18-first-mention` (issue #30): its rows on a real paragraph,
read off the paragraph's sentences by hand, and its place between the all-unknown baseline and a perfect grid."""

from __future__ import annotations

from pathlib import Path

import pytest

from procbench.api import score, spec_path
from procbench.dsl.tasks import load_task
from procbench.runners.baselines import BaselineInput, get


@pytest.fixture(scope="module")
def written(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not (data_root / "propara" / "propara" / "data" / "naacl18").is_dir():
        pytest.skip("ProPara's NAACL'18 data absent under the data root")
    _, runner = load_task(spec_path("propara-naacl18"))
    gold, _ = runner.gold(data_root, "test")
    folder = tmp_path_factory.mktemp("naacl18-baselines")
    return {
        name: get(name).write(
            BaselineInput(data_root, "propara-naacl18", "test", gold.items), folder / f"{name}.tsv"
        )
        for name in ("propara-naacl18-first-mention", "propara-naacl18-all-unknown")
    }


def test_paragraph_37_rows_follow_its_sentences(written: dict[str, Path]) -> None:
    # Paragraph 37: "1 A plant of animal dies ... 3 Soft tissues quickly decompose leaving behind hard bones ...
    # 6 Fossils are formed."  The plant is named in sentence 1 (there from the start); "bone" first in 3 (created
    # there: absent before, present after); "fossil" first in 6.
    rows = [
        line.split("\t")
        for line in written["propara-naacl18-first-mention"].read_text().splitlines()
    ]
    by = {(r[2], int(r[1])): (r[3], r[4]) for r in rows if r[0] == "37"}
    assert [by[("plant", sid)] for sid in range(1, 7)] == [("unk", "unk")] * 6
    assert [by[("bone", sid)] for sid in range(1, 7)] == [
        ("null", "null"),
        ("null", "null"),
        ("null", "unk"),
    ] + [("unk", "unk")] * 3
    assert [by[("fossil", sid)] for sid in range(1, 7)] == [("null", "null")] * 5 + [
        ("null", "unk")
    ]


def test_it_answers_when_things_are_created_where_all_unknown_cannot(
    written: dict[str, Path], data_root: Path
) -> None:
    first = score(
        "propara-naacl18",
        written["propara-naacl18-first-mention"],
        split="test",
        data_dir=data_root,
    ).metrics
    unknown = score(
        "propara-naacl18", written["propara-naacl18-all-unknown"], split="test", data_dir=data_root
    ).metrics
    assert (
        unknown["q2"] == 0.0 and first["q2"] > 0.0
    )  # Q2 (when created?) needs a creation sentence
    assert first["cat3"] == unknown["cat3"] == 0.0  # no locations: Cat-3 stays 0
    assert first["q4"] == unknown["q4"]  # neither destroys anything
    assert 0.0 < first["macro"] < 100.0

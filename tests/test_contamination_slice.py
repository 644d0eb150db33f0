"""Issue #34: "possibly seen" as a slice in one line (docs/language.md, *A contamination slice*).

A generated multiple-choice task whose items carry the year they were published; one `map()` label puts the
items published up to a model's training cutoff in `possibly seen`, every later (and every future) year in
`unseen`, and the slice's accuracy on each is what counting the items by hand gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.api import score

# the recipe's line, verbatim from docs/language.md
RECIPE = 'possibly_seen = map(questions.year, { "2019" = "possibly seen", "2020" = "possibly seen" }, default = "unseen")'

SPEC = """
task seenqa {
  title   = "A generated task with publication years"
  version = "1.0"
  primary = accuracy

  data {
    splits = [test]
    source questions { format = "jsonl"  path = "seenqa/{split}.jsonl" }
    id     = questions.id
    fields { answer: int = questions.answer }
    labels { %s }
  }

  predictions { format = "jsonl"  schema { id = str  choice = int } }
  score { measure accuracy { metric = accuracy()  gold = answer  prediction = choice } }
  metric accuracy { display = "Accuracy" }
  slice possibly_seen { label = possibly_seen  display = "Published before the model's training cutoff" }
}
"""


def test_the_recipe_is_the_documented_line() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "language.md").read_text(
        encoding="utf-8"
    )
    assert RECIPE in docs


ROWS = st.lists(
    st.tuples(
        st.sampled_from([2019, 2020, 2021, 2022]), st.integers(0, 3), st.integers(0, 3)
    ),  # year (an int, as JSON gives it), answer, choice
    min_size=0,
    max_size=12,
)


@settings(deadline=None, max_examples=15)
@given(rows=ROWS)
def test_possibly_seen_is_a_slice_of_the_items_published_up_to_the_cutoff(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[int, int, int]]
) -> None:
    rows = [
        (2019, 0, 0),
        (2020, 1, 2),
        *rows,
    ]  # both of the line's years occur (check --data refuses a map key no item has)
    root = tmp_path_factory.mktemp("seenqa")
    (root / "data" / "seenqa").mkdir(parents=True)
    (root / "data" / "seenqa" / "test.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "year": year, "answer": answer}) + "\n"
            for i, (year, answer, _) in enumerate(rows)
        ),
        encoding="utf-8",
    )
    (root / "p.jsonl").write_text(
        "".join(
            json.dumps({"id": f"q{i}", "choice": choice}) + "\n"
            for i, (_, _, choice) in enumerate(rows)
        ),
        encoding="utf-8",
    )
    (root / "seenqa.spec").write_text(SPEC % RECIPE, encoding="utf-8")
    result = score(root / "seenqa.spec", root / "p.jsonl", split="test", data_dir=root / "data")
    expected: dict[str, list[bool]] = {}
    for year, answer, choice in rows:
        expected.setdefault("possibly seen" if year <= 2020 else "unseen", []).append(
            answer == choice
        )
    got = result.slices["possibly_seen"]
    assert set(got) == set(expected)
    for value, hits in expected.items():
        assert got[value].n_items == len(hits)
        assert got[value].metrics["accuracy"] == pytest.approx(sum(hits) / len(hits))

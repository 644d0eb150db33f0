"""map()'s one rule, map keys against the data, key/id mistakes at their own line, and score/submit refusing what
check --data refuses, in the same words (docs/language.md, "Labels through map()" and "Mistakes the checker catches")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.dsl import check_file
from procbench.dsl.compiler import compile_spec, explain
from procbench.dsl.datacheck import DataRefused, check_against_data
from procbench.cli import app
from procbench.runners.runtime._types import GoldDataError
from procbench.runners.runtime.tables import ItemLabel, TableReader, TableSource

cli = CliRunner()
EXIT_SPEC_ERROR = 3

SPEC = """task maps {
  title   = "maps"
  version = "1.0"
  primary = accuracy

  data {
    splits = [dev, test]
    source gold { format = "jsonl"  path = "maps/{split}.jsonl" }
    source meta { format = "jsonl"  path = "maps/{split}_meta.jsonl"  key = id }
    id     = gold.id
    fields { label: str = gold.label }
    labels { kind = map(meta.topic, { Food = "cooking", Drink = "cooking", Garden = "outdoor" }) }
  }

  predictions {
    format = "jsonl"
    schema { id = str  label = str }
  }

  score {
    measure accuracy { metric = accuracy()  gold = label  prediction = label }
  }

  slice kind { label = kind }
}
"""
TOPICS = {"dev": ["Food", "Garden", "Food"], "test": ["Drink", "Food", "Garden", "Drink"]}


def _task(
    tmp_path: Path, old: str = "", new: str = "", topics: dict[str, list[str]] | None = None
) -> tuple[Path, Path, Path]:
    """(spec, data root, predictions of the test split) in tmp_path; ``old`` -> ``new`` edits the spec once."""
    assert not old or SPEC.count(old) == 1, old
    spec = tmp_path / "maps.spec"
    spec.write_text(SPEC.replace(old, new), encoding="utf-8")
    root = tmp_path / "data"
    (root / "maps").mkdir(parents=True, exist_ok=True)
    for split, topics_of in (topics or TOPICS).items():
        rows = [
            {"id": f"{split}{n}", "label": "yes" if n % 2 else "no"} for n in range(len(topics_of))
        ]
        (root / "maps" / f"{split}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
        meta = [{"id": r["id"], "topic": t} for r, t in zip(rows, topics_of)]
        (root / "maps" / f"{split}_meta.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in meta), encoding="utf-8"
        )
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"id": f"test{n}", "label": "yes"}) + "\n"
            for n in range(len((topics or TOPICS)["test"]))
        ),
        encoding="utf-8",
    )
    return spec, root, preds


def _errors(spec_path: Path, root: Path) -> list:
    spec = check_file(spec_path).spec
    found, _ = check_against_data(spec, compile_spec(spec), root)
    return [d for d in found if d.severity == "error"]


def _position(spec_path: Path, text: str) -> tuple[int, int]:
    source = spec_path.read_text(encoding="utf-8")
    at = source.index(text)
    return source.count("\n", 0, at) + 1, at - source.rfind("\n", 0, at)


def _diagnostics(output: str) -> str:
    """The diagnostics of a command's output: from the first ``file:line:col: error:`` on, without the ``ok`` lines."""
    lines = output.splitlines()
    first = next(i for i, line in enumerate(lines) if ": error: " in line)
    return "\n".join(line for line in lines[first:] if not line.startswith("ok  "))


# -- the rule at run time ------------------------------------------------------------------------------


def _reader(mapping: dict[str, str], default: str | None) -> TableReader:
    label = ItemLabel("kind", ("gold", "t"), mapping, default)
    return TableReader(
        sources=(TableSource("gold", "jsonl", "g/{split}.jsonl"),),
        id_path=("gold", "id"),
        fields=(),
        labels=(label,),
    )


VALUES = st.sampled_from(["a", "b", "c", "d", "e f", "1"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(VALUES, min_size=1, max_size=8),
    st.dictionaries(VALUES, st.sampled_from(["x", "y"]), max_size=4),
    st.one_of(st.none(), st.just("z")),
)
def test_a_value_that_is_no_key_gets_the_default_or_is_an_error_naming_its_line(
    tmp_path: Path, values: list[str], mapping: dict, default: str | None
) -> None:
    path = tmp_path / "g" / "dev.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps({"id": f"i{n}", "t": v}) + "\n" for n, v in enumerate(values)),
        encoding="utf-8",
    )
    unmatched = [(n, v) for n, v in enumerate(values) if v not in mapping]
    if default is None and unmatched:
        with pytest.raises(GoldDataError) as caught:
            _reader(mapping, default)(tmp_path, "dev")
        assert [p.render() for p in caught.value.problems] == [
            f"g/dev.jsonl:{n + 1}: item 'i{n}': label 'kind' <- gold.t is {v!r}, which is no key of its map() "
            f"({', '.join(repr(k) for k in mapping)}) and it has no default"
            for n, v in unmatched
        ]
        return
    gold = _reader(mapping, default)(tmp_path, "dev")
    assert gold.labels == {f"i{n}": {"kind": mapping.get(v, default)} for n, v in enumerate(values)}
    assert set(gold.unmatched_map_keys.get("kind", ())) == set(mapping) - set(values)


def test_explain_says_what_a_value_that_is_no_key_becomes(tmp_path: Path) -> None:
    spec, _, _ = _task(tmp_path)
    assert (
        "label kind <- meta.topic mapped {'Food': 'cooking', 'Drink': 'cooking', 'Garden': 'outdoor'}; any other value is an error (no default)"
        in explain(check_file(spec).spec)
    )
    spec, _, _ = _task(tmp_path, '"outdoor" })', '"outdoor" }, default = "other")')
    assert "; any other value -> 'other'" in explain(check_file(spec).spec)


def test_a_map_without_default_fixes_the_labels_a_slice_can_have(tmp_path: Path) -> None:
    spec, _, _ = _task(
        tmp_path,
        "slice kind { label = kind }",
        'slice kind {\n    label = kind\n    values { cooking = "Cooking"  outdor = "Outdoors" }\n  }',
    )
    result = cli.invoke(app, ["check", str(spec)])
    assert (
        result.exit_code == EXIT_SPEC_ERROR
        and "slice 'kind' labels the value 'outdor', which its label 'kind' never has"
        in result.output
    )


# -- check --data, score and submit: one verdict, one message -------------------------------------------


def test_a_value_no_key_matches_is_refused_by_check_score_and_submit_in_the_same_words(
    tmp_path: Path,
) -> None:
    spec, root, preds = _task(
        tmp_path, topics={"dev": ["Food", "Garden"], "test": ["Drink", "Food", "Tools", "Drink"]}
    )
    checked = cli.invoke(app, ["check", "--data", "--data-dir", str(root), str(spec)])
    scored = cli.invoke(
        app,
        [
            "score",
            str(spec),
            "--split",
            "test",
            "--predictions",
            str(preds),
            "--data-dir",
            str(root),
        ],
    )
    assert checked.exit_code == scored.exit_code == EXIT_SPEC_ERROR, (checked.output, scored.output)
    line, column = _position(spec, "map(meta.topic")
    expected = f"{spec}:{line}:{column}: error: split 'test': maps/test_meta.jsonl:3: item 'test2': label 'kind' <- meta.topic is 'Tools', which is no key"
    assert _diagnostics(checked.output).startswith(expected), checked.output
    assert _diagnostics(scored.output) == _diagnostics(checked.output)
    import procbench
    from procbench.submissions.errors import SubmissionRefused

    with pytest.raises(DataRefused) as refused:
        procbench.score(spec, preds, split="test", data_dir=root)
    assert str(refused.value) == _diagnostics(checked.output)
    db = tmp_path / "b.duckdb"
    with pytest.raises(SubmissionRefused) as caught:
        procbench.submit(spec, preds, split="test", model="m", team="t", db=db, data_dir=root)
    assert str(caught.value) == _diagnostics(checked.output)
    if db.exists():  # a failure receipt may be kept; no submission is
        import duckdb

        with duckdb.connect(str(db), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM submissions").fetchone() == (0,)
    # the dev split is fine: scoring it is not refused for the test split's problem (that is check --data's to report)
    dev_preds = tmp_path / "dev.jsonl"
    dev_preds.write_text(
        "".join(json.dumps({"id": f"dev{n}", "label": "no"}) + "\n" for n in range(2)),
        encoding="utf-8",
    )
    assert (
        cli.invoke(
            app,
            [
                "score",
                str(spec),
                "--split",
                "dev",
                "--predictions",
                str(dev_preds),
                "--data-dir",
                str(root),
            ],
        ).exit_code
        == 0
    )


def test_a_misspelt_map_key_is_one_error_at_the_key_even_where_another_key_gives_its_label(
    tmp_path: Path,
) -> None:
    # "Drink" and "Food" both give "cooking": the old check (was "cooking" seen?) let this typo through
    without_default, _, _ = _task(tmp_path, 'Drink = "cooking"', 'Drnik = "cooking"')
    (error,) = _errors(
        without_default, tmp_path / "data"
    )  # "Drink" is now no key: a data error at the map, naming the keys
    assert (error.span.line, error.span.column) == _position(without_default, "map(meta.topic")
    assert (
        "is 'Drink', which is no key of its map() ('Food', 'Drnik', 'Garden') and it has no default"
        in error.message
    )
    spec, root, preds = _task(
        tmp_path,
        'Drink = "cooking", Garden = "outdoor" })',
        'Drnik = "cooking", Garden = "outdoor" }, default = "other")',
    )
    (error,) = _errors(spec, root)
    assert (error.span.line, error.span.column) == _position(spec, 'Drnik = "cooking"')
    assert (
        error.message == "map() key 'Drnik' of label 'kind' matches no item of split(s) dev, test"
    )
    checked = cli.invoke(app, ["check", "--data", "--data-dir", str(root), str(spec)])
    for split in ("dev", "test"):  # refused on both splits: the key matches nothing anywhere
        scored = cli.invoke(
            app,
            [
                "score",
                str(spec),
                "--split",
                split,
                "--predictions",
                str(preds),
                "--data-dir",
                str(root),
            ],
        )
        assert scored.exit_code == EXIT_SPEC_ERROR and _diagnostics(scored.output) == _diagnostics(
            checked.output
        ), scored.output


def test_a_key_that_occurs_in_another_split_only_is_not_refused(tmp_path: Path) -> None:
    spec, root, preds = _task(tmp_path)  # "Drink" occurs on test only
    assert _errors(spec, root) == []
    dev_preds = tmp_path / "dev.jsonl"
    dev_preds.write_text(
        "".join(json.dumps({"id": f"dev{n}", "label": "no"}) + "\n" for n in range(3)),
        encoding="utf-8",
    )
    result = cli.invoke(
        app,
        [
            "score",
            str(spec),
            "--split",
            "dev",
            "--predictions",
            str(dev_preds),
            "--data-dir",
            str(root),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["slices"]["kind"].keys() == {"cooking", "outdoor"}


@pytest.mark.parametrize(
    ("old", "new", "at", "message"),
    [
        ("key = id", "key = idd", "idd", "record of source 'meta' has no key field 'idd'"),
        ("id     = gold.id", "id     = gold.idd", "gold.idd", "record has no id at gold.idd"),
    ],
)
def test_a_key_or_id_typo_is_one_error_at_its_own_line(
    tmp_path: Path, old: str, new: str, at: str, message: str
) -> None:
    spec, root, _ = _task(tmp_path, old, new)
    (error,) = _errors(
        spec, root
    )  # one mistake: not one per split, not one per item, not a second for the rows it could not join
    assert (error.span.line, error.span.column) == _position(spec, at)
    assert message in error.message and "more like it" in error.message


def test_a_gold_value_outside_a_class_set_stops_score_with_check_datas_message(
    tmp_path: Path,
) -> None:
    # scoring stops on the gold (the value has no class index); it says why in check --data's words, at the measure
    measure = '    measure f1 { metric = f1(labels = ["yes"])  gold = label  prediction = label  aggregate = "macro" }\n'
    spec, root, preds = _task(tmp_path, "  score {\n", "  score {\n" + measure)
    checked = cli.invoke(app, ["check", "--data", "--data-dir", str(root), str(spec)])
    assert (
        checked.exit_code == EXIT_SPEC_ERROR
        and "measure 'f1': gold value 'no' (maps/dev.jsonl:1) is not one of its classes (yes)"
        in checked.output
    )
    scored = cli.invoke(
        app,
        [
            "score",
            str(spec),
            "--split",
            "test",
            "--predictions",
            str(preds),
            "--data-dir",
            str(root),
        ],
    )
    assert scored.exit_code == EXIT_SPEC_ERROR and _diagnostics(scored.output) == _diagnostics(
        checked.output
    ), scored.output
    import procbench
    from procbench.submissions.errors import SubmissionRefused

    with pytest.raises(
        SubmissionRefused
    ) as caught:  # submit stops there too, in the same words; nothing stored
        procbench.submit(
            spec, preds, split="test", model="m", team="t", db=tmp_path / "b.duckdb", data_dir=root
        )
    assert str(caught.value) == _diagnostics(checked.output)


def test_a_passed_check_across_splits_is_remembered_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCBENCH_CACHE_DIR", str(tmp_path / "cache"))
    spec, root, _ = _task(
        tmp_path
    )  # "Drink" occurs on test only: scoring dev checks the other splits, and passes
    dev_preds = tmp_path / "dev.jsonl"
    dev_preds.write_text(
        "".join(json.dumps({"id": f"dev{n}", "label": "no"}) + "\n" for n in range(3)),
        encoding="utf-8",
    )
    args = [
        "score",
        str(spec),
        "--split",
        "dev",
        "--predictions",
        str(dev_preds),
        "--data-dir",
        str(root),
    ]
    assert cli.invoke(app, args).exit_code == 0
    assert (
        len(list((tmp_path / "cache" / "datacheck").iterdir())) == 1
    )  # remembered: the next run reads dev only
    assert cli.invoke(app, args).exit_code == 0
    # the test split loses its only "Drink": the files changed, so the check runs again and refuses
    meta = root / "maps" / "test_meta.jsonl"
    meta.write_text(meta.read_text(encoding="utf-8").replace('"Drink"', '"Food"'), encoding="utf-8")
    # a fresh process, as every `procbench score` is (this one keeps the splits it read)
    again = subprocess.run(
        [sys.executable, "-m", "procbench.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
    )
    assert (
        again.returncode == EXIT_SPEC_ERROR
        and "map() key 'Drink' of label 'kind' matches no item of split(s) dev, test"
        in again.stderr
    ), again.stderr

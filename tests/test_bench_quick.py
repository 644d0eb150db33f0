"""The benchmark suite runs end to end in quick mode (on the bundled samples), so it cannot rot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from procbench.bench import stores
from procbench.bench.generate import GENERATORS, generate
from procbench.api import load_task
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT


# what `make bench-site` writes into docs/performance.md (a made-up figure: only its survival is tested)
SITE_BLOCK = "<!-- site-bench:begin -->\n## Site\n\n| page | first paint s |\n|---|---|\n| board | 0.42 |\n<!-- site-bench:end -->"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    work = tmp_path_factory.mktemp("bench")
    out, raw = work / "performance.md", work / "results.json"
    out.write_text(
        f"an older report\n\n{SITE_BLOCK}\nwritten after it\n", encoding="utf-8"
    )  # the site section must survive
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "procbench.bench.run",
            "--quick",
            "--in-process",
            "--no-ray",
            "--skip",
            "official",
            "--data",
            str(SAMPLE_DATA_ROOT),
            "--out",
            str(out),
            "--work",
            str(work / "work"),
            "--json",
            str(raw),
        ],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out.read_text(encoding="utf-8"), json.loads(raw.read_text(encoding="utf-8"))


def test_quick_bench_writes_every_section(quick_run: tuple[str, dict]) -> None:
    report, _ = quick_run
    for heading in (
        "## Machine",
        "## Targets",
        "## Whole process, as a user runs it",
        "## In-process stage timings",
        "## Intake",
        "## Store and leaderboard queries",
        "### Task board page render",
        "## Against the reference implementations",
        "## Re-scoring all submissions",
    ):
        assert heading in report
    assert "numpy " in report and "duckdb " in report  # library versions on top


def test_quick_bench_measures_every_benchmark_without_errors(quick_run: tuple[str, dict]) -> None:
    _, results = quick_run
    scored = {row["task"]: row for row in results["scoring"]}
    assert set(scored) >= {
        "openpi",
        "openpi-head",
        "propara",
        "propara-naacl18",
        "paged",
        "paradise-tip",
        "pm-llm-benchmark",
    }
    for task, row in scored.items():
        assert "error" not in row, (task, row.get("error"))
        assert row["items"] > 0 and row["wall_s"] > 0 and row["peak_rss_mb"] > 0
    assert all("error" not in row and row["validate_mb_s"] > 0 for row in results["intake"])
    assert {row["format"] for row in results["intake"]} == {"JSONL", "TSV"}


def test_quick_bench_compares_with_references_and_rescores(quick_run: tuple[str, dict]) -> None:
    _, results = quick_run
    names = {row["name"]: row for row in results["comparisons"]}
    assert set(names) == {"openpi", "openpi-dedup", "paradise", "pmllm", "paged"}
    assert all("error" not in row and row["ratio"] > 0 for row in names.values()), names
    engines = {row["engine"]: row for row in results["rescore"]}
    assert set(engines) == {
        "local",
        "processes",
    }  # the re-scoring table sets the processes engine beside the local one
    for row in engines.values():
        assert row["rescored"] == row["submissions"] == 3 and not row["failed"], row
    assert engines["processes"][
        "same_as_local"
    ]  # the bench checks the rows it timed are the local engine's
    # the machine's own ceiling for parallel work is measured beside the engines and said in the report
    ceiling = results["parallel_ceiling"]
    assert ceiling["copies"] == (os.cpu_count() or 1) and ceiling["alone_s"] > 0
    assert ceiling["ceiling"] == pytest.approx(
        ceiling["copies"] * ceiling["alone_s"] / ceiling["together_s"]
    )
    report, _ = quick_run
    assert f"ceiling for {ceiling['copies']} processes is {ceiling['ceiling']:.2f}x" in report
    store = results["stores"][0]
    assert store["size"] == 100 and store["rows"]["item_scores"] > 0
    for kind in ("site", "sql"):
        assert all("p95_ms" in entry for entry in store["queries"][kind].values()), store[
            "queries"
        ][kind]


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generators_scale_the_split_and_stay_scorable(name: str, tmp_path: Path) -> None:
    one = generate(name, SAMPLE_DATA_ROOT, tmp_path / "one", 1)
    three = generate(name, SAMPLE_DATA_ROOT, tmp_path / "three", 3)
    again = generate(name, SAMPLE_DATA_ROOT, tmp_path / "again", 3)
    assert three.n_items == 3 * one.n_items
    assert three.predictions.read_bytes() == again.predictions.read_bytes()  # seeded
    _, runner = load_task(three.task)
    evaluation = runner.evaluate(three.data_root, three.split, three.predictions)
    assert evaluation.n_items == three.n_items


def test_store_builder_clones_a_template_into_the_real_schema(tmp_path: Path) -> None:
    from procbench.submissions.intake import SubmissionRequest, submit

    workload = generate("paradise-tip", SAMPLE_DATA_ROOT, tmp_path / "w", 1)
    spec, runner = load_task("paradise-tip")
    template = tmp_path / "template.duckdb"
    submit(
        SubmissionRequest(split="test", predictions=workload.predictions, model="m", team="t"),
        spec,
        runner,
        data_root=workload.data_root,
        db_path=template,
    )
    db = stores.build(template, tmp_path / "store.duckdb", 25)
    counts = stores.counts(db)
    con = duckdb.connect(str(template), read_only=True)
    per_submission = con.execute("SELECT count(*) FROM item_scores").fetchone()[0]
    con.close()
    assert counts["submissions"] == 25 and counts["item_scores"] == 25 * per_submission
    from procbench.leaderboard import queries

    board = queries.board(db, "paradise-tip", "test")
    assert board.height == 25 and board["team"].n_unique() == 25


def test_quick_bench_times_whole_processes_of_every_task(quick_run: tuple[str, dict]) -> None:
    report, results = quick_run
    rows = {row["task"]: row for row in results["whole_process"]["rows"]}
    assert set(rows) >= {
        "openpi",
        "openpi-head",
        "propara",
        "propara-naacl18",
        "paged",
        "paradise-tip",
        "pm-llm-benchmark",
    }
    for task, row in rows.items():
        figure = row["procbench"]
        assert "error" not in figure, (task, figure)
        # a whole process: CPU and peak RSS of the child itself, start-up included (an interpreter alone is > 5 MB)
        assert figure["cpu_s"] > 0 and figure["wall_s"] > 0 and figure["peak_rss_mb"] > 5
    # PAGED's official evaluator is run (not a recorded figure) unless left out, as here (issue #31)
    assert "official" not in rows["paged"] and "left out (--skip official)" in rows["paged"]["note"]
    assert set(results["whole_process"]["cli"]) == {"--help", "check"}
    assert "left out (--skip official)" in results["whole_process"]["official_skipped"]
    assert "`procbench --help`: < 0.15 s CPU" in report
    # the start-up floor beside ProPara's row: the interpreter alone, then with the runner loaded from its plan (no file read)
    start_up = results["whole_process"]["start_up"]
    assert {"interpreter", "runner loaded"} <= set(start_up) and all(
        start_up[k]["cpu_s"] > 0 for k in ("interpreter", "runner loaded")
    )
    assert start_up["inside"]["task"] == "propara" and "dataclass_cpu_s" in start_up["inside"], (
        start_up["inside"]
    )
    assert "### Start-up: what a ProPara `score` spends before it reads a file" in report
    # issue #31: loading the runner defines no dataclass (records), and the report says so
    assert start_up["inside"]["dataclasses"] == 0 and "defining no dataclass" in report


def test_official_scorer_commands_are_run_unchanged_from_their_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procbench.bench import process

    official = tmp_path / "official"
    (official / "propara-evaluator").mkdir(parents=True)
    (official / "openpi-eval").mkdir()
    monkeypatch.setenv("PROCBENCH_OFFICIAL", str(official))
    python = Path(sys.executable)
    propara = process.official_propara(python, tmp_path, tmp_path / "p.tsv", tmp_path / "a.tsv")
    assert (
        propara.cwd == official / "propara-evaluator"
        and propara.argv[1] == "evaluator.py"
        and propara.env["PYTHONPATH"] == "."
    )
    openpi = process.official_openpi(python, tmp_path, tmp_path / "p.jsonl", tmp_path / "g.jsonl")
    assert (
        openpi.argv[1:3] == ("-m", "eval.simple_eval")
        and (openpi.cwd / "eval").resolve() == (official / "openpi-eval").resolve()
    )


def test_a_whole_process_figure_is_the_childs_own(tmp_path: Path) -> None:
    from procbench.bench import process

    burn = process.Command(
        (sys.executable, "-c", "x = bytearray(64 * 1024 * 1024); sum(range(3_000_000))")
    )
    idle = process.Command((sys.executable, "-c", "pass"))
    figures = process.alternating({"burn": burn, "idle": idle}, 1)
    assert (
        figures["burn"]["peak_rss_mb"] > 64 > figures["idle"]["peak_rss_mb"]
    )  # ru_maxrss of each child, not the bench's
    assert figures["burn"]["cpu_s"] > figures["idle"]["cpu_s"]
    failing = process.alternating(
        {"fails": process.Command((sys.executable, "-c", "raise SystemExit('no such file')"))}, 2
    )
    assert "no such file" in failing["fails"]["error"]


def test_rewriting_the_report_keeps_the_site_section(quick_run: tuple[str, dict]) -> None:
    report, _ = quick_run
    assert report.count(SITE_BLOCK) == 1 and report.endswith(SITE_BLOCK + "\n")
    assert (
        "an older report" not in report and "written after it" not in report
    )  # the rest is regenerated
    assert report.startswith("# Performance")


def test_the_site_markers_are_added_when_absent_and_kept_verbatim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procbench.bench import report

    monkeypatch.setattr(report, "render", lambda results: f"# Performance\n\nrun {results['n']}\n")
    out = tmp_path / "docs" / "performance.md"
    report.write(out, {"n": 1})
    assert (
        out.read_text(encoding="utf-8")
        == "# Performance\n\nrun 1\n\n<!-- site-bench:begin -->\n<!-- site-bench:end -->\n"
    )
    site = "<!-- site-bench:begin -->\nfirst paint 0.9 s | <!-- a comment -->\n\n<!-- site-bench:end -->"
    out.write_text(
        out.read_text(encoding="utf-8").replace(
            "<!-- site-bench:begin -->\n<!-- site-bench:end -->", site
        ),
        encoding="utf-8",
    )
    report.write(out, {"n": 2})
    report.write(out, {"n": 3})
    assert out.read_text(encoding="utf-8") == f"# Performance\n\nrun 3\n\n{site}\n"

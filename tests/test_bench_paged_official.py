"""The bench runs PAGED's official evaluator as a whole process beside ``procbench score paged`` (issue #31).

The evaluator is read in place from the official folder (``PROCBENCH_OFFICIAL``, else ``official/`` beside the
data); its environment is made under the bench's work folder, never in the project.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procbench.bench import process
from procbench.bench.generate import PAGED_DIR, generate
from procbench.paths import SAMPLE_DATA_ROOT


def test_without_the_official_folder_the_evaluator_is_skipped_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "official").mkdir()
    monkeypatch.setenv("PROCBENCH_OFFICIAL", str(tmp_path / "official"))
    python, reason = process.official_paged_python(tmp_path / "work")
    assert python is None and "official PAGED evaluator's folder is absent" in reason
    assert not (tmp_path / "work").exists()  # nothing made for a scorer that is not there


def test_the_official_evaluator_scores_the_bench_workload_in_place(tmp_path: Path) -> None:
    root = process.official_root()
    if root is None or not (root / "paged-evaluator" / "run.py").is_file():
        pytest.skip(
            "the official PAGED evaluator is not staged (set PROCBENCH_OFFICIAL to the official folder)"
        )
    before = sorted(p.name for p in (root / "paged-evaluator").iterdir())
    work = tmp_path / "work"
    python, note = process.official_paged_python(work)
    assert python is not None, note
    assert python.is_relative_to(work.absolute())
    workload = generate("paged", SAMPLE_DATA_ROOT, tmp_path / "paged-1x", 1)
    gold = workload.data_root / PAGED_DIR / f"{workload.split}.json"
    command = process.official_paged(
        python, work, workload.predictions.absolute(), gold.absolute(), "1x"
    )
    assert command.cwd == root / "paged-evaluator" and command.argv[1] == "run.py"
    figures = process.alternating({"official": command}, 1)["official"]
    assert "error" not in figures, figures
    assert figures["cpu_s"] > 0 and figures["peak_rss_mb"] > 0
    written = json.loads((work / "official-out" / "paged-1x.json").read_text(encoding="utf-8"))
    assert set(written) == {"node_eva", "edge_detailed", "other"}
    # the evaluator's node precision, recall and F1 for each type it reports, as numbers
    assert all(
        isinstance(v, (int, float))
        for scores in written["node_eva"].values()
        for v in scores.values()
    )
    assert sorted(p.name for p in (root / "paged-evaluator").iterdir()) == before  # run in place


def test_a_bounded_run_is_stopped_at_its_cpu_bound_and_said_to_be(tmp_path: Path) -> None:
    """PAGED's evaluator at 100x runs only up to the CPU that decides the ratio goal (issue #31)."""
    import sys

    spin = process.Command((sys.executable, "-c", "while True: pass"), cwd=tmp_path)
    stopped = process.bounded(spin, 1.0, timeout=60)
    assert stopped["stopped"] is True and stopped["runs"] == 1
    assert stopped["cpu_s"] >= 1.0  # RLIMIT_CPU: the signal comes once a whole second is used
    assert not list(tmp_path.iterdir())  # no core file left where it ran
    quick = process.bounded(process.Command((sys.executable, "-c", "pass")), 30.0, timeout=60)
    assert quick["stopped"] is False and "error" not in quick
    failing = process.bounded(
        process.Command((sys.executable, "-c", "raise SystemExit('broken input')")),
        30.0,
        timeout=60,
    )
    assert "broken input" in failing["error"]


def test_a_stopped_official_run_is_reported_as_a_lower_bound() -> None:
    from procbench.bench import report

    ours = {"cpu_s": 120.0, "wall_s": 121.0, "peak_rss_mb": 900.0, "runs": 1}
    theirs = {"cpu_s": 1201.0, "wall_s": 1230.0, "peak_rss_mb": 700.0, "runs": 1}
    row = {
        "task": "paged",
        "split": "test",
        "scale": 100,
        "items": 54300,
        "note": "",
        "procbench": ours,
        "official": {**theirs, "stopped": True, "what": "PAGED run.py"},
    }
    results = {"whole_process": {"rows": [row], "cli": {}, "start_up": {}}, "scoring": []}
    goal = next(line for line in report._targets(results) if "paged test 100x: CPU" in line)
    assert "1201 s of CPU" in goal and "without finishing" in goal and "< 0.10x" in goal
    assert "not met" not in goal and "met" in goal
    table = "\n".join(report._whole_process_section(results))
    assert (
        "> 1201.0 / 1230.0 / 700" in table and "< 0.10x" in table and "stopped unfinished" in table
    )

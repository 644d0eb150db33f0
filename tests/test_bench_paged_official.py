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

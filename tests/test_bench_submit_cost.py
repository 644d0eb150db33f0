"""bench/submit_cost.py's table (issue #31: submit beyond score, at most 0.15 s CPU): rendering only, no timing."""

from __future__ import annotations

from procbench.bench.submit_cost import GOAL_S, SAMPLES, lines


def _figures(score: float, new: float, stored: float) -> dict[str, dict[str, float]]:
    return {
        "score": {"cpu_s": score},
        "submit (new)": {"cpu_s": new},
        "submit (stored)": {"cpu_s": stored},
    }


def test_the_table_says_what_each_submit_costs_beyond_score_and_whether_the_goal_is_met() -> None:
    result = {
        "goal_s": 0.15,
        "reps": 7,
        "load_before": "1.00 1.00 1.00",
        "load_after": "1.10 1.00 1.00",
        "samples": {
            "paradise-tip": _figures(0.100, 0.200, 0.180),  # +0.100 and +0.080: met
            "openpi": _figures(0.200, 0.400, 0.300),  # +0.200: not met
        },
    }
    table = lines(result)
    assert "medians of 7 alternated runs" in table[0] and "1.00 1.00 1.00" in table[0]
    rows = {row.split(" | ")[0].strip("| "): row for row in table if row.startswith("| ")}
    assert rows["paradise-tip"] == (
        "| paradise-tip | 0.100 s | 0.200 s | +0.100 s | 0.180 s | +0.080 s | met |"
    )
    assert (
        rows["openpi"] == "| openpi | 0.200 s | 0.400 s | +0.200 s | 0.300 s | +0.100 s | not met |"
    )


def test_a_failed_command_is_shown_and_never_met() -> None:
    result = {
        "goal_s": 0.15,
        "reps": 1,
        "load_before": "n/a",
        "load_after": "n/a",
        "samples": {
            "openpi": {
                "score": {"cpu_s": 0.2},
                "submit (new)": {"error": "exit status 8"},
                "submit (stored)": {"cpu_s": 0.25},
            }
        },
    }
    (row,) = [r for r in lines(result) if r.startswith("| openpi")]
    assert "failed: exit status 8" in row and row.endswith("| not met |")


def test_the_samples_are_the_bundled_paradise_tip_and_openpi_files() -> None:
    from procbench.paths import SAMPLE_SUBMISSIONS_DIR

    assert GOAL_S == 0.15 and set(SAMPLES) == {"paradise-tip", "openpi"}
    for task, _split, measured, other in SAMPLES.values():
        assert (SAMPLE_SUBMISSIONS_DIR / task / measured).is_file()
        assert (SAMPLE_SUBMISSIONS_DIR / task / other).is_file() and other != measured

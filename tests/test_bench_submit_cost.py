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


# -- where the submit's extra CPU goes (the import probes, in the same turns) ---------------------------------
def _probes(*cpu: float) -> dict[str, dict[str, float]]:
    from procbench.bench.submit_cost import PROBES

    return {name: {"cpu_s": c} for name, c in zip(PROBES, cpu)}


def _with_imports() -> dict:
    return {
        "goal_s": 0.15,
        "reps": 3,
        "load_before": "1.00 1.00 1.00",
        "load_after": "1.10 1.00 1.00",
        "samples": {
            "paradise-tip": _figures(0.100, 0.200, 0.180),  # met: no cause in the goals row
            "openpi": _figures(0.300, 0.550, 0.460),  # +0.250 (new): not met
        },
        "imports": {
            "paradise-tip": {
                "probes": _probes(0.040, 0.090, 0.110, 0.120, 0.130, 0.140),
                "dataclasses": 13,
                "modules": ["procbench.dsl.board_spec", "procbench.submissions.intake"],
                "spec_model": False,
                "already_in_score": [],
            },
            "openpi": {
                "probes": _probes(0.040, 0.100, 0.160, 0.260, 0.290, 0.320),
                "dataclasses": 13,
                "modules": ["procbench.dsl.board_spec", "procbench.submissions.intake"],
                "spec_model": False,
                "already_in_score": [],
            },
        },
    }


def test_the_where_table_shows_each_probe_beyond_the_one_before_and_what_is_left_for_the_submit() -> (
    None
):
    from procbench.bench.submit_cost import where_lines

    table = where_lines(_with_imports())
    assert (
        "| paradise-tip CPU s | beyond the row above | openpi CPU s | beyond the row above |"
        in table[3]
    )
    rows = [row for row in table if row.startswith("| ") and "CPU s" not in row]
    assert len(rows) == 6 + 2  # the six probes, then the rest of each submit
    assert rows[0].endswith("| 0.040 | +0.040 | 0.040 | +0.040 |")  # the interpreter: its own CPU
    assert rows[1].endswith("| 0.090 | +0.050 | 0.100 | +0.060 |")  # score's start-up
    assert "`procbench.dsl.board_spec`" in rows[2]
    assert rows[2].endswith("| 0.110 | +0.020 | 0.160 | +0.060 |")
    assert "`_duckdb`" in rows[3] and rows[3].endswith("| 0.120 | +0.010 | 0.260 | +0.100 |")
    assert rows[4].endswith("| 0.130 | +0.010 | 0.290 | +0.030 |")
    assert "DuckDB connection" in rows[5] and rows[5].endswith(
        "| 0.140 | +0.010 | 0.320 | +0.030 |"
    )
    # submit beyond score less the probes beyond score's start-up (paradise-tip 0.050, openpi 0.220)
    assert rows[6].startswith("| submit (new) beyond score")
    assert rows[6].endswith("|  | +0.050 |  | +0.030 |")
    assert rows[7].startswith("| submit (stored) beyond score")
    assert rows[7].endswith("|  | +0.030 |  | -0.060 |")
    assert table[-1] == (
        "For paradise-tip and openpi: what a submit imports beyond a score's start-up defines 13 dataclasses, "
        "in 2 procbench modules (the spec's syntax tree, `procbench.dsl.model`, not among them)."
    )


def test_the_goals_row_of_a_missed_goal_says_which_imports_take_the_submit_cpu() -> None:
    from procbench.bench import report

    rows = report._targets({"submit_cost": _with_imports(), "scoring": []})
    openpi = next(row for row in rows if "`procbench submit` openpi" in row)
    assert (
        "the board fields 0.060 s, DuckDB's engine 0.100 s, intake's imports (13 dataclasses) 0.030 s, "
        "a DuckDB connection 0.030 s, the rest (the submit's work on the store) 0.030 s, of the +0.250 s (new)"
        in openpi
    )
    assert "not met" in openpi
    paradise = next(row for row in rows if "`procbench submit` paradise-tip" in row)
    assert "dataclasses" not in paradise and "not met" not in paradise


def test_a_failed_probe_is_shown_and_no_cause_is_claimed() -> None:
    from procbench.bench.submit_cost import PROBES, cause, where_lines

    result = _with_imports()
    result["imports"]["openpi"]["probes"][PROBES[3]] = {"error": "exit status 1"}
    table = where_lines(result)
    assert any("failed: exit status 1" in row for row in table)
    assert cause(result, "openpi") == ""
    assert where_lines({**result, "imports": {}}) == []  # a run without the probes: no table


def test_the_probes_run_and_each_imports_what_the_one_before_did() -> None:
    """Real processes (the bundled paradise-tip runner): every probe exits 0; their CPU is never compared."""
    import ast

    from procbench.bench.process import run_once
    from procbench.bench.submit_cost import PROBES, count_dataclasses, probes
    from procbench.paths import PROJECT_ROOT

    work = PROJECT_ROOT / "var" / "bench"
    commands = probes("paradise-tip", work)
    assert list(commands) == list(PROBES)
    codes = [command.argv[-1] for command in commands.values()]
    assert all(later.startswith(earlier) for earlier, later in zip(codes, codes[1:]))
    assert "load_runner('paradise-tip')" in codes[1] and "load_cached('paradise-tip')" in codes[2]
    for name, command in commands.items():
        run = run_once(command)
        assert run.returncode == 0 and run.cpu_s >= 0, (name, run.error)
    counted = count_dataclasses("paradise-tip", work)
    counted = count_dataclasses("paradise-tip", work)  # the first may fill the spec cache
    assert counted["already_in_score"] == [], counted
    assert "procbench.submissions.intake" in counted["modules"] and not counted["spec_model"]
    intake = ast.parse((PROJECT_ROOT / "submissions" / "intake.py").read_text(encoding="utf-8"))
    decorated = [
        node.name
        for node in ast.walk(intake)
        if isinstance(node, ast.ClassDef)
        and any("dataclass" in ast.unparse(d) for d in node.decorator_list)
    ]
    assert counted["dataclasses"] >= len(decorated) > 0


def test_propara_start_up_probes_are_unchanged_by_the_shared_helper() -> None:
    from procbench.bench.process import procbench, start_up

    parts = start_up()
    assert parts["interpreter"].argv[-2:] == ("-c", "pass")
    assert (
        parts["runner loaded"]
        .argv[-1]
        .endswith("from procbench.console_commands import load_runner\nload_runner('propara')")
    )
    assert all(p.env == procbench().env for p in parts.values())


def test_one_measured_turn_gives_the_existing_figures_and_the_probes(tmp_path) -> None:
    """Real processes, one measured turn (about 10 s): structure only, timings never compared."""
    from procbench.bench.submit_cost import KINDS, PROBES, lines, measure, where_lines

    result = measure(tmp_path, reps=1)
    assert set(result["samples"]) == set(SAMPLES) == set(result["imports"])
    for label in SAMPLES:
        assert list(result["samples"][label]) == list(
            KINDS
        )  # the existing table's figures, as before
        info = result["imports"][label]
        assert list(info["probes"]) == list(PROBES)
        for figures in [*result["samples"][label].values(), *info["probes"].values()]:
            assert figures["runs"] == 1 and figures["cpu_s"] >= 0 and figures["wall_s"] >= 0, (
                figures
            )
        assert isinstance(info["dataclasses"], int) and info["dataclasses"] > 0
        assert info["already_in_score"] == []
    assert result["load_before"] and result["load_after"]
    rendered = lines(result) + where_lines(result)
    # a header and a row per sample; a header, a row per probe and one per submit kind
    assert sum(row.startswith("| ") for row in rendered) == (1 + len(SAMPLES)) + (
        1 + len(PROBES) + 2
    )


def test_the_report_renders_the_where_table_after_the_submit_table() -> None:
    from procbench.bench import report

    results = {
        "quick": True,
        "full": False,
        "machine": {},
        "versions": {},
        "source": "samples",
        "total_s": 1,
        "scoring": [],
        "intake": [],
        "stores": [],
        "comparisons": [],
        "rescore": [],
        "submit_cost": _with_imports(),
    }
    text = report.render(results)
    section = text[
        text.index("## `procbench submit` beyond `procbench score`") : text.index("## Intake")
    ]
    assert section.index("| sample | score |") < section.index("Where the submit's extra CPU goes")
    assert (
        "| DuckDB's engine (`_duckdb`, imported by `procbench.submissions.sql`) | 0.120 | +0.010 | 0.260 | +0.100 |"
        in section
    )
    assert (
        "For paradise-tip and openpi: what a submit imports beyond a score's start-up defines 13 dataclasses"
        in section
    )

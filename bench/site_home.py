"""Home after a write, in-process (issue #31): ``python -m procbench.bench.site home --db STORE``.

Runs Home (Streamlit's AppTest, the page's own script, no browser) over a copy-free store: first in a fresh
process, then after one real intake (a bundled OpenPI sample through ``submissions.submit``: the write a user
makes), then warm; and times the reads it is made of beside what the first view after a write used to cost (the
full group-by of the board view and every board built again).  Prints one line per figure, with the load average.
The store gets one more submission per run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from procbench.bench.browserbench import HOME_HEADING
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR

APP = str(PROJECT_ROOT / "leaderboard" / "app.py")


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _load() -> str:
    return (
        Path("/proc/loadavg").read_text().split(" ", 3)[0]
        if Path("/proc/loadavg").exists()
        else "?"
    )


def run(db: Path, log: Callable[[str], None] = print, doc: Path | None = None) -> dict[str, float]:
    from streamlit.testing.v1 import AppTest

    from procbench.api import load_task
    from procbench.leaderboard import cache, overview, queries, sitedata
    from procbench.submissions import SubmissionRequest, submit

    os.environ["PROCBENCH_DB"] = str(db)
    spec, runner = load_task("openpi")
    sample = sorted((SAMPLE_SUBMISSIONS_DIR / "openpi").glob("*.jsonl"))[0]

    def write() -> None:
        submit(
            SubmissionRequest(
                split="test",
                predictions=sample,
                model=f"home-bench-{time.time_ns()}",
                team=f"home-bench-{time.time_ns()}",
            ),
            spec,
            runner,
            data_root=SAMPLE_DATA_ROOT,
            db_path=db,
        )

    components: list[Any] = []

    def home() -> None:
        at = AppTest.from_file(APP, default_timeout=600)
        # A server scans the installed packages for Streamlit components once, when it starts; a new AppTest scans
        # them again (0.2-0.8 s here), which no view of the served site pays: every run after the first shares the scan.
        if components:
            at._bidi_component_manager = components[0]
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        components[:] = [at._bidi_component_manager]

    def reads() -> None:  # the store reads and computations Home's script makes, in its order
        overview.prefetch_home(db)  # its reads and the touched board's, in one attachment
        sitedata.tasks(db)
        sitedata.pending(db, None, None)
        overview.ranks(db)
        sitedata.home_counts(db)
        sitedata.all_provenance(db)
        names = overview.benchmarks(db)
        overview.matrix(db, "", "")
        for name in names:
            overview.boards_of(db, name)
            overview.metrics_of(db, name)

    out: dict[str, float] = {}
    start_load = _load()
    log(f"store {db}: load average {start_load} at the start")
    out["page, first view in a fresh process (every board built)"] = _timed(home)[0]
    out["page, warm"] = _timed(home)[0]
    out["intake of one submission (the write)"] = _timed(write)[0]
    out["Home's reads, first after the write"] = _timed(reads)[0]
    out["Home's reads, warm"] = _timed(reads)[0]
    write()
    out["page, first view after a second write"] = _timed(home)[0]
    out["page, warm again"] = _timed(home)[0]
    out["board counts from the summary (queries.home_counts)"] = _timed(
        lambda: queries.home_counts(db)
    )[0]
    out["before #31: the full group-by (queries.home)"] = _timed(lambda: queries.home(db))[0]
    cache.clear()  # every board's ranks built again, as every write made Home do before #31
    out["before #31: every board's ranks built (overview.ranks, nothing kept)"] = _timed(
        lambda: overview.ranks(db)
    )[0]
    for what, seconds in out.items():
        log(f"  {what}: {seconds:.2f} s")
    end_load = _load()
    log(f"load average {end_load} at the end")
    if doc is not None:
        submissions = int(queries.home_counts(db)["submitted"].sum())
        write_doc(doc, section(db, out, (start_load, end_load), submissions))
        log(f"wrote the Home-after-a-write figures into {doc}")
    return out


GOAL_S = 1.0  # issue #31: Home's first view after a write, and every warm view


def section(db: Path, out: dict[str, float], loads: tuple[str, str], submissions: int) -> str:
    """The figures as a subsection of the site block of docs/performance.md (met / not met against the goal)."""
    after = out["page, first view after a second write"]
    warm = out["page, warm again"]
    lines = [
        HOME_HEADING,
        "",
        f"Written by `python -m procbench.bench.site home --db {db.name} --doc docs/performance.md` on a store of "
        f"{submissions:,} submissions made by `python -m procbench.bench.site generate` (`make bench-site-big`), "
        "in one process (Streamlit's AppTest runs Home's own script: the server's work, no browser; the scan of the "
        "installed packages for components, which a server makes once when it starts, is made by the first run only). "
        f"Load average {loads[0]} at the start and {loads[1]} at the end.",
        "",
        "| figure | seconds |",
        "|---|---|",
        *[f"| {what} | {seconds:.2f} |" for what, seconds in out.items()],
        "",
        f"Goal (issue #31): Home's first view after a write ≤ {GOAL_S:g} s: {after:.2f} s, "
        + ("**met**" if after <= GOAL_S else "**not met**")
        + f"; warm ≤ {GOAL_S:g} s: {warm:.2f} s, "
        + ("**met**" if warm <= GOAL_S else "**not met**")
        + ".",
    ]
    return "\n".join(lines)


def write_doc(doc: Path, text: str) -> None:
    """Put ``text`` in the site block of ``doc`` in place of an earlier Home-after-a-write subsection."""
    from procbench.bench.browserbench import BEGIN, END, write_section

    current = doc.read_text() if doc.exists() else ""
    block = (
        current.split(BEGIN, 1)[1].split(END, 1)[0] if BEGIN in current and END in current else ""
    )
    kept = block.split(HOME_HEADING, 1)[0].strip()
    write_section(doc, (kept + "\n\n" if kept else "") + text)

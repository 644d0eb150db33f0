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


def run(db: Path, log: Callable[[str], None] = print) -> dict[str, float]:
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

    def home() -> None:
        at = AppTest.from_file(APP, default_timeout=600)
        at.run()
        assert not at.exception, [e.value for e in at.exception]

    def reads() -> None:  # the store reads and computations Home's script makes, in its order
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
    log(f"store {db}: load average {_load()} at the start")
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
    log(f"load average {_load()} at the end")
    return out

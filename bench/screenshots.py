"""Full-page screenshots of the site on a store (``make screenshots``; ``python -m procbench.bench.site screenshots``).

Serves ``db`` with :mod:`procbench.leaderboard.live`, opens each view in headless Debian Chromium, waits until the page's
script has finished and its main content is on screen, stretches the window to the page's full height (the
app scrolls inside its own container, so a plain full-page capture would stop at the window) and saves a PNG.
The views: Home, the board of every current task, the model page of the model on most boards, a submission,
Charts and Compare where a board has two submissions, and PAGED's item browser with its graphs.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from procbench.bench import browserbench
from procbench.leaderboard import live
from procbench.submissions import store

WIDTH = 1440
MAX_HEIGHT = 12_000


def views(db: Path) -> list[tuple[str, str, str]]:
    """(file name, address, content kind) for every screenshot."""
    with store.reader(db) as con:
        boards = con.execute("SELECT task, split FROM current_tasks ORDER BY task").fetchall()
        counts = dict(
            con.execute(
                "SELECT task, count(*) FROM submissions WHERE NOT is_reference AND NOT deleted GROUP BY task"
            ).fetchall()
        )
        model = con.execute(
            "SELECT model FROM submissions WHERE NOT is_reference AND NOT deleted GROUP BY model ORDER BY count(DISTINCT task) DESC, model LIMIT 1"
        ).fetchone()
        top = dict(
            con.execute(
                "SELECT task, arg_max(submission_id, value) FROM board WHERE slice = '' AND NOT is_reference GROUP BY task"
            ).fetchall()
        )
    split_of = dict(boards)
    out = [("home.png", "", "home")]
    several = {t for t, _ in boards if sum(1 for u, _ in boards if u == t) > 1}
    out += [
        (
            f"board-{t}-{s}.png" if t in several else f"board-{t}.png",
            f"board?task={t}&split={s}",
            "board",
        )
        for t, s in boards
    ]
    if model:
        out.append((f"model-{_safe(model[0])}.png", f"model?model={model[0]}", "model"))
    if "pm-llm-benchmark" in top:
        out.append(
            (
                "submission-pm-llm-benchmark.png",
                f"submission?id={top['pm-llm-benchmark']}",
                "submission",
            )
        )
    for task in ("pm-llm-benchmark", "paradise-tip", "openpi"):
        if counts.get(task, 0) >= 2:
            out.append(
                (f"charts-{task}.png", f"charts?task={task}&split={split_of[task]}", "charts")
            )
            out.append(
                (f"compare-{task}.png", f"compare?task={task}&split={split_of[task]}", "compare")
            )
    if "paged" in top:
        out.append(
            (
                "items-paged.png",
                f"items?task=paged&split={split_of['paged']}&id={top['paged']}",
                "items",
            )
        )
    return out


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]


def _shoot(context: Any, url: str, kind: str, path: Path) -> None:
    page = context.new_page()
    page.set_default_timeout(browserbench.TIMEOUT_MS)
    page.add_init_script(
        script=browserbench.PROBE.replace("__SELECTOR__", json.dumps(browserbench.CONTENT[kind]))
    )
    try:
        page.goto(url, wait_until="commit")
        page.wait_for_function(browserbench.READY, polling=100, timeout=browserbench.TIMEOUT_MS)
        page.wait_for_timeout(1500)  # grids and charts draw after their element appears
        height = page.evaluate(
            "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain], [data-testid=stAppViewContainer], [data-testid=stSidebar] > div')]"
            ".map(e => e.scrollHeight), document.body.scrollHeight)"
        )
        page.set_viewport_size({"width": WIDTH, "height": min(int(height) + 40, MAX_HEIGHT)})
        page.wait_for_timeout(1200)  # the grids re-measure for the new height
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.close()


def take(
    db: Path,
    out: Path,
    *,
    names: Sequence[str] = (),
    log: Callable[[str], None] = print,
    browser: Any = None,
) -> list[Path]:
    """Screenshots of every view of ``db`` (or those whose file name starts with one of ``names``) into ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    chosen = [v for v in views(db) if not names or v[0].startswith(tuple(names))]
    with (
        contextlib.nullcontext(browser) if browser is not None else live.chromium() as browser,
        live.serving(db) as server,
    ):
        context = browser.new_context(viewport={"width": WIDTH, "height": 1000})
        for name, address, kind in chosen:
            path = out / name
            try:
                _shoot(context, f"{server.url}/{address}", kind, path)
                written.append(path)
            except Exception as e:  # noqa: BLE001 - one failed view is reported, the others still taken
                log(f"{name}: failed ({type(e).__name__}: {str(e)[:200]})")
        context.close()
    return written

"""Whole pages in a real browser (``make bench-site``, issues #16 item 9 and #19): what a visitor waits for.

For each store (the demo board, and the 10 000-submission store of ``python -m procbench.bench.site generate``) and each view
(Home; the board of every current task; Charts, Compare, Submission, Model, Items, Task, Downloads and Upload on
one task; PAGED's Compare with its graphs), in headless Debian Chromium through Playwright:

* **first paint**: the browser's first-contentful-paint (Paint Timing API), from navigation start;
* **content**: when the page's main content (its table, chart, graph or form; :data:`CONTENT`) first has a
  box on screen, recorded in the page by a mutation observer (so a slow reader of the result cannot inflate it);
* **done**: when Streamlit reports the page's script finished (``data-test-script-state=notRunning``).

* **sidebar change** (issue #31): on a warm page, a sidebar selectbox (:data:`SIDEBAR`) set to another option, timed
  in the page from the press on the option to the main content redrawn by the script run after it, and to the run's end.

A **floor** page (:data:`FLOOR_APP`: one title, one sidebar selectbox, one 10-row table), served with the board's own
Streamlit settings in the same browser and run, is measured the same way: what Streamlit alone costs a warm view here.

*First ever* is the first view of a store whose bootstrap cache beside it was deleted (one server for all
views); *cold* is a fresh server process (the on-disk bootstrap cache kept, as after a restart) and a fresh
browser profile; *warm* is the median of :data:`WARM_REPEATS` further views of the same address from the same
server and browser.  **Server CPU per warm view** is the server process's user + system time (``/proc``) read
before and after each warm view (page closed and its session ended).  **Concurrent** opens
:data:`CONCURRENT` pages of one warm board at once and reports p50 / p95 of first paint and content.  **Without browsers**
then opens :data:`CONCURRENT` sessions of the same warm board on the same server at once over Streamlit's websocket
protocol (:mod:`procbench.bench.streamclient`), so the report can tell the server's share of a crowd's wait from the
browsers' (on a small machine the tabs' JavaScript takes most of the CPU).

Results go to JSON and to ``docs/performance.md`` between :data:`BEGIN` and :data:`END` (only there).
Timings are measured, never asserted by tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from procbench.bench import report, site_stores, streamclient
from procbench.leaderboard import live
from procbench.submissions import store

# the markers of the site's section in docs/performance.md, which `make bench` keeps when it rewrites the file
BEGIN, END = report.SITE_BEGIN, report.SITE_END
WARM_REPEATS = 3
CONCURRENT = 20
TIMEOUT_MS = 240_000
GOALS = {"warm_s": 1.0, "cold_s": 3.0, "cpu_s": 0.10, "concurrent_p95_s": 3.0, "sidebar_s": 0.5}
# issue #31: the server alone (the project's websocket client), content delivered: 20 sessions at once p95 <= 1 s,
# and a crowd of LARGE_CROWD at once p95 <= 2.5 s
LARGE_CROWD = 50
PROTOCOL_GOALS = {CONCURRENT: 1.0, LARGE_CROWD: 2.5}

# The main content of each page: what a visitor came for.
TABLE = "[data-testid=stDataFrame]"
CONTENT = {
    "home": TABLE,
    "board": TABLE,
    "charts": "[data-testid=stVegaLiteChart], [data-testid=stArrowVegaLiteChart]",
    "compare": TABLE,
    "compare-graph": "[data-testid=stGraphVizChart] svg",
    "submission": TABLE,
    "model": TABLE,
    "items": TABLE,
    "task": "[data-testid=stHeading]",
    "downloads": "[data-testid=stDownloadButton]",
    "upload": "[data-testid=stFileUploader]",
}


@dataclass(frozen=True)
class SidebarChange:
    """A sidebar control to change on a warm page (issue #31: a sidebar change <= 0.5 s).

    ``label``: the sidebar selectbox's label; the first option not chosen is picked, so repeated changes alternate.
    ``marker``: whether the main area must also show the chosen option's text in a fresh element (the page names
    what was chosen: the metric's caption on Charts, the task's caption on Task); without it the new state is the
    page's main content redrawn by a script run that started after the change.
    """

    label: str
    marker: bool = False


SIDEBAR = {
    "board": SidebarChange("Rank by"),
    "charts": SidebarChange("Metric", marker=True),
    "compare": SidebarChange("Metric"),
    "task": SidebarChange("Task", marker=True),
    "floor": SidebarChange("Rows", marker=True),
}
SIDEBAR_REPEATS = 3
CHANGE_TIMEOUT_MS = 30_000

# Runs in every page before its own scripts: records when the content first has a box, and when the script
# finished after having run (``window.__pb``), from the page's own clock (ms since its navigation start).
PROBE = """
(() => {
  const selector = __SELECTOR__;
  const pb = window.__pb = {content: null, running: false, done: null, change: null};
  // a sidebar change (SIDEBAR): its start is the press on the chosen option; then a script run that started after
  // it, the main content redrawn by that run (its element no longer stale) and, when asked, the chosen text shown
  document.addEventListener('pointerdown', (e) => {
    if (e.target.closest && e.target.closest('[role=option]') && pb.pending) {
      pb.change = {at: performance.now(), running: false, content: null, done: null, text: pb.pending, message: false, drawn: false};
      pb.pending = null;
    }
  }, true);
  // React may draw a quick run's start and end in one commit, so the page never shows it running: a message from the
  // server after the change, then the main area redrawn, also says the run happened
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const ch = pb.change;
        if (!ch) return;
        ch.message = true;
        if (ch.finished === undefined && finished(e.data)) ch.finished = performance.now();
      });
    }
  };
  // Streamlit's ForwardMsg carries `script_finished` as field 6 (a varint): the run's end, read off the wire
  const finished = (data) => {
    if (!(data instanceof ArrayBuffer)) return false;
    const b = new Uint8Array(data);
    let i = 0;
    const varint = () => { let v = 0, s = 0, x; do { x = b[i++]; v += (x & 127) * 2 ** s; s += 7; } while (x & 128 && i < b.length); return v; };
    while (i < b.length) {
      const tag = varint(), type = tag & 7;
      if (tag >> 3 === 6 && type === 0) return true;
      if (type === 0) varint(); else if (type === 2) i += varint(); else if (type === 1) i += 8; else if (type === 5) i += 4; else return false;
    }
    return false;
  };
  // ...and when a run changed nothing the page draws, no mutation says it ended: the last redraw of the main area
  // after the change (else the end of the run on the wire) once the page has been quiet for QUIET ms
  const QUIET = 300;
  setInterval(() => {
    const ch = pb.change;
    if (!ch || ch.done !== null || ch.finished === undefined) return;
    const last = Math.max(ch.finished, ch.lastDrawn || 0);
    if (performance.now() - last < QUIET) return;
    if (ch.content === null) ch.content = last;
    ch.done = last;
  }, 50);
  const fresh = (el) => { const c = el.closest('[data-stale]'); return !c || c.getAttribute('data-stale') !== 'true'; };
  const onScreen = (el) => { const box = el.getBoundingClientRect(); return box.width > 0 && box.height > 0; };
  const changed = (state) => {
    const ch = pb.change;
    if (!ch || ch.done !== null) return;
    if (state === 'running') ch.running = true;
    if (!ch.running) return;
    if (ch.content === null && state === 'running') {
      const drawn = Array.from(document.querySelectorAll(selector)).some((el) => onScreen(el) && fresh(el));
      const named = !ch.text.marker || Array.from(document.querySelectorAll(
        '[data-testid=stMain] [data-testid=stElementContainer][data-stale=false]')).some((el) => el.textContent.includes(ch.text.option));
      if (drawn && named) ch.content = performance.now();
    }
    if (state === 'notRunning') {
      const now = performance.now();
      if (ch.content === null) ch.content = now;  // the run ended before a mutation showed it running: its end is the content
      ch.done = now;
    }
  };
  const check = (records) => {
    const ch = pb.change;
    if (ch && ch.done === null && records) {
      for (const r of records) {
        if (r.attributeName === 'data-test-script-state' && r.oldValue === 'running') ch.running = true;
        const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        if (ch.message && el && el.closest('[data-testid=stMain]')) { ch.drawn = true; ch.lastDrawn = performance.now(); }
      }
      if (ch.drawn) ch.running = true;
    }
    if (pb.content === null) {
      for (const el of document.querySelectorAll(selector)) {
        const box = el.getBoundingClientRect();
        if (box.width > 0 && box.height > 0) { pb.content = performance.now(); break; }
      }
    }
    const app = document.querySelector('[data-testid=stApp]');
    if (app) {
      const state = app.getAttribute('data-test-script-state');
      if (state === 'running') pb.running = true;
      else if (state === 'notRunning' && pb.running && pb.content !== null && pb.done === null) pb.done = performance.now();
      changed(state);
    }
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true, attributeOldValue: true});
})();
"""
RESULT = """() => {
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  return {fcp: paint ? paint.startTime : null, content: window.__pb.content, done: window.__pb.done,
          exception: document.querySelector('[data-testid=stException]') !== null};
}"""
READY = "() => window.__pb && window.__pb.content !== null && window.__pb.done !== null"
CHANGED = "() => window.__pb.change !== null && window.__pb.change.done !== null"
CHANGE_RESULT = """() => {
  const ch = window.__pb.change;
  return {content: (ch.content - ch.at) / 1000, done: (ch.done - ch.at) / 1000,
          exception: document.querySelector('[data-testid=stException]') !== null};
}"""

# The floor (issue #31): the least page Streamlit serves, under the board's settings, in the same browser: what a warm
# view costs before the project adds anything.  Written by the bench under its work folder, never shipped.
FLOOR_APP = """import streamlit as st

st.set_page_config(page_title="floor", layout="wide")
rows = st.sidebar.selectbox("Rows", ["first", "second"])
st.title(f"Floor page: {rows}")
st.dataframe({"model": [f"{rows} model {i}" for i in range(10)], "score": [i / 10 for i in range(10)]})
"""
FLOOR = "floor"
CONTENT[FLOOR] = TABLE


@dataclass(frozen=True)
class View:
    name: str
    path: str
    kind: str  # a key of CONTENT


@dataclass
class Load:
    fcp_s: float | None
    content_s: float
    done_s: float
    cpu_s: float | None = None
    browser_cpu_s: float | None = None


@dataclass
class Change:
    """A sidebar change on a warm page, seconds from the press on the new option: content in the new state, script done."""

    content_s: float
    done_s: float


@dataclass
class ViewResult:
    view: str
    path: str
    first_ever: Load | None = None
    cold: Load | None = None
    warm: list[Load] = field(default_factory=list)
    error: str = ""
    sidebar: list[Change] = field(default_factory=list)
    sidebar_error: str = ""

    def warm_median(self, attr: str) -> float | None:
        values = [getattr(w, attr) for w in self.warm if getattr(w, attr) is not None]
        return statistics.median(values) if values else None

    def sidebar_median(self, attr: str = "content_s") -> float | None:
        values = [getattr(c, attr) for c in self.sidebar]
        return statistics.median(values) if values else None

    @classmethod
    def from_json(cls, v: dict[str, Any]) -> ViewResult:
        """A view as the JSON holds it (results of a bench run before the sidebar change read without it)."""
        return cls(
            v["view"],
            v["path"],
            Load(**v["first_ever"]) if v.get("first_ever") else None,
            Load(**v["cold"]) if v.get("cold") else None,
            [Load(**w) for w in v.get("warm", [])],
            v.get("error", ""),
            [Change(**c) for c in v.get("sidebar", [])],
            v.get("sidebar_error", ""),
        )


def views(db: Path, main_task: str = "openpi") -> list[View]:
    """Home, every current board, and the other pages on ``main_task`` (else the first board), PAGED's graphs."""
    with store.reader(db) as con:
        boards = con.execute(
            "SELECT task, split FROM current_tasks ORDER BY task, split"
        ).fetchall()
        counts = dict(
            con.execute(
                "SELECT task, count(*) FROM submissions WHERE NOT is_reference GROUP BY task"
            ).fetchall()
        )
        split_of = {t: s for t, s in boards}
        task = main_task if main_task in split_of else boards[0][0]
        top = con.execute(
            "SELECT submission_id, model FROM board WHERE task = ? AND split = ? AND slice = '' AND NOT is_reference ORDER BY value DESC LIMIT 1",
            [task, split_of[task]],
        ).fetchone()
    q = f"task={task}&split={split_of[task]}"
    out = [View("home", "", "home")]
    out += [View(f"board · {t}", f"board?task={t}&split={s}", "board") for t, s in boards]
    out += [
        View(f"charts · {task}", f"charts?{q}", "charts"),
        View(f"compare · {task}", f"compare?{q}", "compare"),
        View(
            f"submission · {task}", f"submission?id={top[0]}" if top else "submission", "submission"
        ),
        View("model", f"model?model={top[1]}" if top else "model", "model"),
        View(f"items · {task}", f"items?{q}" + (f"&id={top[0]}" if top else ""), "items"),
        View(f"task · {task}", f"task?task={task}", "task"),
        View(f"downloads · {task}", f"downloads?{q}", "downloads"),
        View(f"upload · {task}", f"upload?{q}", "upload"),
    ]
    if counts.get("paged", 0) >= 2:  # Compare needs two submissions
        out.append(
            View(
                "compare · paged (graphs)",
                f"compare?task=paged&split={split_of['paged']}",
                "compare-graph",
            )
        )
    return out


CROWD_TIMEOUT_MS = 90_000  # a crowd's tab that shows nothing by then is counted as stuck


def _open(context: Any, url: str, kind: str) -> Any:
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(script=PROBE.replace("__SELECTOR__", json.dumps(CONTENT[kind])))
    page.goto(url, wait_until="commit")
    return page


def _result(page: Any, timeout_ms: int = TIMEOUT_MS) -> Load:
    page.wait_for_function(READY, polling=50, timeout=timeout_ms)
    r = page.evaluate(RESULT)
    if r["exception"]:
        raise RuntimeError(f"{page.url}: the page shows an exception")
    return Load(
        None if r["fcp"] is None else r["fcp"] / 1000, r["content"] / 1000, r["done"] / 1000
    )


def load(context: Any, server: live.Server, view: View, *, cpu: bool = False) -> Load:
    """One view in a new tab of ``context``; with ``cpu``, the server's CPU seconds spent on it."""
    before, client = (
        server.cpu_seconds(),
        live.client_cpu_seconds(server.process.pid) if cpu else 0.0,
    )
    page = _open(context, f"{server.url}/{view.path}", view.kind)
    try:
        result = _result(page)
        if cpu:
            result.browser_cpu_s = live.client_cpu_seconds(server.process.pid) - client
    finally:
        page.close()
    if cpu:
        time.sleep(0.5)  # the session's websocket closes and the server lets it go
        result.cpu_s = server.cpu_seconds() - before
    return result


def sidebar_changes(
    context: Any, server: live.Server, view: View, repeats: int = SIDEBAR_REPEATS
) -> list[Change]:
    """On one warm page of ``view``, ``repeats`` changes of its sidebar control (:data:`SIDEBAR`), each timed in the page."""
    change = SIDEBAR[view.kind]
    page = _open(context, f"{server.url}/{view.path}", view.kind)
    try:
        _result(page)
        sidebar = page.locator("[data-testid=stSidebar]")
        out = []
        for _ in range(repeats):
            box = sidebar.locator("[data-testid=stSelectbox]").filter(
                has=page.locator("[data-testid=stWidgetLabel]").get_by_text(
                    change.label, exact=True
                )
            )
            box.first.click()
            option = page.locator("[role=option][aria-selected=false]").first
            text = option.inner_text().strip()
            page.evaluate(
                "(t) => { window.__pb.change = null; window.__pb.pending = t; }",
                {"option": text, "marker": change.marker},
            )
            option.click()
            page.wait_for_function(CHANGED, polling=50, timeout=CHANGE_TIMEOUT_MS)
            r = page.evaluate(CHANGE_RESULT)
            if r["exception"]:
                raise RuntimeError(f"{page.url}: the page shows an exception after the change")
            out.append(Change(r["content"], r["done"]))
        return out
    finally:
        page.close()


def bench_floor(browser: Any, env: dict[str, str], work: Path, db: Path) -> dict[str, Any]:
    """:data:`FLOOR_APP` under the board's Streamlit settings: a cold view, warm views and sidebar changes (as a view's)."""
    work.mkdir(parents=True, exist_ok=True)
    app = work / "floor_app.py"
    app.write_text(FLOOR_APP)
    view, result = View(FLOOR, "", FLOOR), ViewResult(FLOOR, "")
    try:
        with live.serving(db, env=env, log=work / "floor.log", app=app) as server:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            try:
                result.cold = load(context, server, view)
                result.warm = [load(context, server, view, cpu=True) for _ in range(WARM_REPEATS)]
                result.sidebar = sidebar_changes(context, server, view)
            finally:
                context.close()
    except Exception as e:  # noqa: BLE001 - reported, the bench goes on
        result.error = f"{type(e).__name__}: {e}"[:300]
    return asdict(result)


def _crowd(context: Any, server: live.Server, view: View) -> dict[str, Any]:
    """:data:`CONCURRENT` viewers of a warm ``view`` at once, with where the CPU went (server, browser, the rest of the machine)."""
    load(context, server, view)  # warm the server and the browser cache first
    server_cpu, client_cpu, busy = (
        server.cpu_seconds(),
        live.client_cpu_seconds(server.process.pid),
        live.machine_busy_seconds(),
    )
    wall = time.monotonic()
    pages = [_open(context, f"{server.url}/{view.path}", view.kind) for _ in range(CONCURRENT)]
    loads, stuck = [], 0
    try:
        for p in (
            pages
        ):  # a tab that never shows the content is counted, not waited for (the crowd goes on)
            try:
                loads.append(_result(p, CROWD_TIMEOUT_MS))
            except Exception:  # noqa: BLE001 - Playwright's timeout, or the page's exception
                stuck += 1
        wall = time.monotonic() - wall
        client_cpu = (
            live.client_cpu_seconds(server.process.pid) - client_cpu
        )  # read before the tabs close
    finally:
        for p in pages:
            p.close()
    server_cpu = server.cpu_seconds() - server_cpu
    busy = live.machine_busy_seconds() - busy
    if not loads:
        return {"view": view.name, "error": f"none of {len(pages)} tabs showed its content"}
    fcp = [x.fcp_s for x in loads if x.fcp_s is not None]
    content = [x.content_s for x in loads]
    return {
        "view": view.name,
        "pages": len(loads),
        "stuck": stuck,
        "wall_s": wall,
        "server_cpu_s": server_cpu,
        "browser_cpu_s": client_cpu,
        "other_cpu_s": max(0.0, busy - server_cpu - client_cpu),
        "cpus": os.cpu_count(),
        "fcp_p50_s": _percentile(fcp, 0.5) if fcp else None,
        "fcp_p95_s": _percentile(fcp, 0.95) if fcp else None,
        "content_p50_s": _percentile(content, 0.5),
        "content_p95_s": _percentile(content, 0.95),
        "done_p95_s": _percentile([x.done_s for x in loads], 0.95),
    }


def _protocol_crowd(server: live.Server, view: View, count: int = CONCURRENT) -> dict[str, Any]:
    """``count`` sessions of a warm board at once without browsers: what the server alone does for a crowd.

    A failure is reported in the result (``error``) rather than raised, as a failing view is: the rest of the bench stands.
    """
    try:
        streamclient.crowd(
            server.url, view.path, 1
        )  # warm-up: the server's caches, as the browser crowd had
        server_cpu, client_cpu, wall = server.cpu_seconds(), time.process_time(), time.monotonic()
        sessions = streamclient.crowd(server.url, view.path, count)
        wall, client_cpu = time.monotonic() - wall, time.process_time() - client_cpu
        server_cpu = server.cpu_seconds() - server_cpu
    except Exception as e:  # noqa: BLE001 - reported, the bench goes on
        return {"view": view.name, "error": f"{type(e).__name__}: {e}"[:300]}
    content, finished = [s.content_s for s in sessions], [s.finished_s for s in sessions]
    return {
        "view": view.name,
        "sessions": len(sessions),
        "wall_s": wall,
        "server_cpu_s": server_cpu,
        "client_cpu_s": client_cpu,
        "first_delta_p95_s": _percentile([s.first_delta_s for s in sessions], 0.95),
        "content_p50_s": _percentile(content, 0.5),
        "content_p95_s": _percentile(content, 0.95),
        "finished_p50_s": _percentile(finished, 0.5),
        "finished_p95_s": _percentile(finished, 0.95),
        "received_bytes": sessions[0].received_bytes,
    }


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def bench_store(
    name: str,
    db: Path,
    *,
    env: dict[str, str],
    work: Path,
    log: Callable[[str], None] = print,
    only: Sequence[str] = (),
    browser: Any = None,
) -> dict[str, Any]:
    """Every view of one store: first ever, cold and warm loads, server CPU per warm view, and the concurrent board.

    ``browser``: a Playwright browser already launched (one process may run only one sync Playwright); else Chromium is launched here.
    """
    chosen = [v for v in views(db) if not only or any(o in v.name for o in only)]
    results = {v.name: ViewResult(v.name, v.path) for v in chosen}
    shutil.rmtree(
        Path(str(db) + ".cache"), ignore_errors=True
    )  # the bootstrap cache: the first-ever views compute it
    work.mkdir(parents=True, exist_ok=True)
    with contextlib.nullcontext(browser) if browser is not None else live.chromium() as browser:
        with live.serving(db, env=env, log=work / f"{name}-first.log") as server:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            for v in chosen:
                try:
                    results[v.name].first_ever = load(context, server, v)
                except Exception as e:  # noqa: BLE001 - a failing view is reported, the bench goes on
                    results[v.name].error = f"{type(e).__name__}: {e}"[:300]
                log(f"{name:<5} first ever  {v.name:<34} {_fmt(results[v.name].first_ever)}")
            context.close()
        for v in chosen:
            if results[v.name].error:
                continue
            with live.serving(db, env=env, log=work / f"{name}-cold.log") as server:
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                try:
                    results[v.name].cold = load(context, server, v)
                    results[v.name].warm = [
                        load(context, server, v, cpu=True) for _ in range(WARM_REPEATS)
                    ]
                except Exception as e:  # noqa: BLE001
                    results[v.name].error = f"{type(e).__name__}: {e}"[:300]
                if v.kind in SIDEBAR and not results[v.name].error:
                    try:
                        results[v.name].sidebar = sidebar_changes(context, server, v)
                    except Exception as e:  # noqa: BLE001 - the view's loads stand
                        results[v.name].sidebar_error = f"{type(e).__name__}: {e}"[:300]
                context.close()
            r = results[v.name]
            log(
                f"{name:<5} cold / warm {v.name:<34} {_fmt(r.cold)}  /  {_fmt(r.warm[-1] if r.warm else None)}  cpu {r.warm_median('cpu_s')}"
                + (f"  sidebar {_s(r.sidebar_median())}" if v.kind in SIDEBAR else "")
                + (f" failed: {r.sidebar_error[:120]}" if r.sidebar_error else "")
            )
        board = next(
            (v for v in chosen if v.kind == "board" and "openpi" in v.name),
            next((v for v in chosen if v.kind == "board"), None),
        )
        crowd: dict[str, Any] = {}
        protocol: dict[str, Any] = {}
        protocol_large: dict[str, Any] = {}
        if board is not None:
            with live.serving(db, env=env, log=work / f"{name}-crowd.log") as server:
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                crowd = _crowd(context, server, board)
                context.close()
                log(
                    f"{name:<5} at once on {board.name}: {crowd['error']}"
                    if "error" in crowd
                    else f"{name:<5} {crowd['pages']} at once on {board.name}: content p50 {crowd['content_p50_s']:.2f} s, p95 {crowd['content_p95_s']:.2f} s; "
                    f"CPU server {crowd['server_cpu_s']:.1f} s, browser {crowd['browser_cpu_s']:.1f} s, other {crowd['other_cpu_s']:.1f} s"
                    + (f"; {crowd['stuck']} tab(s) never showed content" if crowd["stuck"] else "")
                )
                protocol = _protocol_crowd(server, board)
                log(
                    f"{name:<5} {CONCURRENT} at once without browsers on {board.name}: {_protocol_summary(protocol)}"
                )
                protocol_large = _protocol_crowd(server, board, LARGE_CROWD)
                log(
                    f"{name:<5} {LARGE_CROWD} at once without browsers on {board.name}: {_protocol_summary(protocol_large)}"
                )
    with store.reader(db) as con:
        n_subs, n_items = con.execute(
            "SELECT count(*), coalesce(sum(n_items), 0) FROM submissions WHERE NOT is_reference"
        ).fetchone() or (0, 0)
    made = site_stores.Cost.read(db)
    return {
        "store": str(db),
        "submissions": n_subs,
        "item_rows": n_items,
        "generated": None if made is None else asdict(made),
        "views": [asdict(r) for r in results.values()],
        "concurrent": crowd,
        "concurrent_protocol": protocol,
        "concurrent_protocol_large": protocol_large,
    }


def _protocol_summary(protocol: dict[str, Any]) -> str:
    if "error" in protocol:
        return f"failed: {protocol['error'].splitlines()[0][:120]}"
    return (
        f"content p50 {protocol['content_p50_s']:.2f} s, p95 {protocol['content_p95_s']:.2f} s; script finished p50 {protocol['finished_p50_s']:.2f} s, "
        f"p95 {protocol['finished_p95_s']:.2f} s; all done in {protocol['wall_s']:.2f} s; server CPU {protocol['server_cpu_s']:.2f} s"
    )


def _fmt(x: Load | None) -> str:
    if x is None:
        return "failed"
    fcp = f"{x.fcp_s:.2f}" if x.fcp_s is not None else "–"
    return f"paint {fcp} content {x.content_s:.2f} done {x.done_s:.2f}"


def machine() -> dict[str, Any]:
    load1, load5, _ = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "load_1m": round(load1, 2),
        "load_5m": round(load5, 2),
        "python": platform.python_version(),
        "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def run(
    stores: dict[str, Path],
    *,
    output: Path,
    doc: Path | None,
    env: dict[str, str],
    log: Callable[[str], None] = print,
    only: Sequence[str] = (),
) -> dict[str, Any]:
    before = machine()
    work = output.parent / "bench-site"
    with live.chromium() as browser:
        floor = bench_floor(browser, env, work, next(iter(stores.values())))
        log(f"floor page: {_fmt(Load(**floor['warm'][-1]) if floor['warm'] else None)}")
        results = {
            "machine": before,
            "goals": GOALS,
            "floor": floor,
            "stores": {
                name: bench_store(name, db, env=env, work=work, log=log, only=only, browser=browser)
                for name, db in stores.items()
            },
        }
    results["machine_after"] = machine()
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=1))
    if doc is not None:
        # Home after a write (bench-site-big, a 100k store: tens of minutes) is measured apart: its figures stay
        write_section(doc, markdown(results), keep_from=HOME_HEADING)
    return results


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _mark(ok: bool) -> str:
    return "met" if ok else "**not met**"


def markdown(results: dict[str, Any]) -> str:
    """The docs/performance.md section (between the markers)."""
    m, after = results["machine"], results.get("machine_after", results["machine"])
    lines = [
        "## Site pages in a real browser (`make bench-site`)",
        "",
        "Written by `python -m procbench.bench.site pages` (`make bench-site`; `make bench-site-big` adds a 100k store), a checkout tool:",
        "the bench is not in the wheel.",
        f"Measured {m['when']} on {m['cpus']} CPUs, load average {m['load_1m']} at the start and {after['load_1m']} at the end (the browser, the",
        "server and anything else on the machine share those CPUs). Headless Debian Chromium through Playwright, 1440×900. Seconds from",
        "navigation start: **paint** = first contentful paint; **content** = the page's main table / chart / graph / form first on screen;",
        "*first ever* = first view after the bootstrap cache beside the store was deleted; *cold* = fresh server process and browser profile",
        f"(bootstrap cache kept, as after a restart); *warm* = median of {WARM_REPEATS} later views. **CPU** = server process CPU seconds",
        "(user + system, `/proc`) per warm view. **Sidebar change** = on a warm page, a sidebar selectbox set to another option (*Rank by* on a",
        "board, *Metric* on Charts and Compare, *Task* on Task): seconds from the press on the option to the main content redrawn by the run",
        f"after it / to the script done, median of {SIDEBAR_REPEATS}. Goals (issues #16, #19): paint < 1 s warm, < 3 s cold; ≤ 0.10 s server CPU per",
        "warm view; 20 viewers at once p95 < 3 s; issue #31: warm content ≤ 1 s, a sidebar change ≤ 0.5 s. The **floor** after the goals is",
        "Streamlit's least page measured the same way.",
        "",
    ]
    verdicts: list[str] = []
    for name, store_result in results["stores"].items():
        lines += [
            f"### {name} store: {store_result['submissions']:,} submissions, {store_result['item_rows']:,} item rows",
            "",
            "| view | first ever: content | cold: paint / content | warm: paint / content / done | CPU per warm view: server / browser "
            "| sidebar change: content / done |",
            "|---|---|---|---|---|---|",
        ]
        made = store_result.get("generated")
        if made:
            lines[-3:-3] = [f"The store was {site_stores.Cost(**made).line()}.", ""]
        worst = {
            "warm_paint": 0.0,
            "warm_content": 0.0,
            "cold_paint": 0.0,
            "cold_content": 0.0,
            "cpu": 0.0,
            "sidebar": 0.0,
        }
        changed = 0
        for v in store_result["views"]:
            r = ViewResult.from_json(v)
            if r.error:
                lines.append(f"| {r.view} | failed: {r.error.splitlines()[0][:80]} | | | | |")
                continue
            first = _s(r.first_ever.content_s) if r.first_ever else "–"
            cold = f"{_s(r.cold.fcp_s)} / {_s(r.cold.content_s)}" if r.cold else "–"
            warm = f"{_s(r.warm_median('fcp_s'))} / {_s(r.warm_median('content_s'))} / {_s(r.warm_median('done_s'))}"
            lines.append(
                f"| {r.view} | {first} | {cold} | {warm} | {_s(r.warm_median('cpu_s'))} / {_s(r.warm_median('browser_cpu_s'))} "
                f"| {_sidebar_cell(r)} |"
            )
            changed += bool(r.sidebar)
            for key, value in (
                ("warm_paint", r.warm_median("fcp_s")),
                ("warm_content", r.warm_median("content_s")),
                ("cold_paint", r.cold.fcp_s if r.cold else None),
                ("cold_content", r.cold.content_s if r.cold else None),
                ("cpu", r.warm_median("cpu_s")),
                ("sidebar", r.sidebar_median()),
            ):
                worst[key] = max(worst[key], value or 0.0)
        crowd = store_result.get("concurrent") or {}
        crowd_error = crowd.get("error")
        crowd = {} if crowd_error else crowd
        shares = [
            (w.get("browser_cpu_s") or 0.0, w.get("cpu_s") or 0.0)
            for v in store_result["views"]
            for w in v["warm"]
        ]
        server_total, browser_total = sum(x[1] for x in shares), sum(x[0] for x in shares)
        if server_total > 0:
            lines += [
                "",
                f"Warm views spent {browser_total / server_total:.0f}× more CPU in the browser tab ({browser_total:.1f} s) than in the server "
                f"({server_total:.1f} s): what remains of a warm view's wait is mostly Streamlit's own page start and drawing in the browser.",
            ]
        lines.append("")
        if crowd:
            lines.append(
                f"{crowd['pages']} viewers at once on {crowd['view']} (warm): paint p50 {_s(crowd['fcp_p50_s'])} s, p95 {_s(crowd['fcp_p95_s'])} s; "
                f"content p50 {_s(crowd['content_p50_s'])} s, p95 {_s(crowd['content_p95_s'])} s, all done in {crowd['wall_s']:.1f} s. CPU in that time: "
                f"server {crowd['server_cpu_s']:.2f} s ({crowd['server_cpu_s'] / crowd['pages']:.3f} s per view), the {crowd['pages']} browser tabs "
                f"{crowd.get('browser_cpu_s', 0.0):.1f} s, everything else on the machine {crowd.get('other_cpu_s', 0.0):.1f} s, of "
                f"{crowd.get('cpus') or '?'} CPUs × {crowd['wall_s']:.1f} s."
                + (
                    f" {crowd['stuck']} more tab(s) never showed the content within {CROWD_TIMEOUT_MS // 1000} s (not counted above)."
                    if crowd.get("stuck")
                    else ""
                )
            )
            lines.append("")
        elif crowd_error:
            lines += [f"{CONCURRENT} viewers at once in browsers: {crowd_error}.", ""]
        protocol = store_result.get("concurrent_protocol") or {}
        if protocol and "error" in protocol:
            lines += [
                f"The same {CONCURRENT} viewers without browsers on {protocol['view']}: {_protocol_summary(protocol)}.",
                "",
            ]
        elif protocol:
            lines += [
                f"The same {protocol['sessions']} viewers without browsers ({protocol['sessions']} sessions at once over Streamlit's websocket protocol "
                f"from one Python client, the same server, warm; seconds from connecting): content (the table's data) p50 {protocol['content_p50_s']:.2f} s, "
                f"p95 {protocol['content_p95_s']:.2f} s; script finished p50 {protocol['finished_p50_s']:.2f} s, p95 {protocol['finished_p95_s']:.2f} s; "
                f"all done in {protocol['wall_s']:.2f} s. CPU in that time: server {protocol['server_cpu_s']:.2f} s "
                f"({protocol['server_cpu_s'] / protocol['sessions']:.3f} s per view), the client {protocol['client_cpu_s']:.2f} s.",
                "",
            ]
        large = store_result.get("concurrent_protocol_large") or {}
        if large:
            lines += [
                f"{LARGE_CROWD} sessions at once without browsers on {large.get('view', '?')} (the same client and server, warm): "
                f"{_protocol_summary(large)}.",
                "",
            ]
        cpu_met = round(worst["cpu"], 2) <= GOALS["cpu_s"]  # /proc counts CPU in 0.01 s ticks
        verdict = (
            f"* {name}: first paint warm ≤ {worst['warm_paint']:.2f} s ({_mark(worst['warm_paint'] < GOALS['warm_s'])}), cold ≤ "
            f"{worst['cold_paint']:.2f} s ({_mark(worst['cold_paint'] < GOALS['cold_s'])}); content warm ≤ {worst['warm_content']:.2f} s "
            f"({_mark(worst['warm_content'] < GOALS['warm_s'])}), cold ≤ {worst['cold_content']:.2f} s ({_mark(worst['cold_content'] < GOALS['cold_s'])}); "
            f"server CPU ≤ {worst['cpu']:.2f} s per warm view ({_mark(cpu_met)})"
        )
        if crowd:
            fcp95 = crowd["fcp_p95_s"] if crowd["fcp_p95_s"] is not None else float("inf")
            verdict += (
                f"; 20 viewers p95 first paint {_s(crowd['fcp_p95_s'])} s ({_mark(fcp95 < GOALS['concurrent_p95_s'])}), content "
                f"{crowd['content_p95_s']:.2f} s ({_mark(crowd['content_p95_s'] < GOALS['concurrent_p95_s'])}), the server's share "
                f"{crowd['server_cpu_s']:.2f} of {crowd['server_cpu_s'] + crowd.get('browser_cpu_s', 0.0) + crowd.get('other_cpu_s', 0.0):.1f} CPU s"
            )
        if protocol and "error" in protocol:
            verdict += f"; the server alone ({CONCURRENT} sessions without browsers) failed"
        for found in (protocol, store_result.get("concurrent_protocol_large") or {}):
            if found and "error" not in found:
                goal = PROTOCOL_GOALS.get(found["sessions"], GOALS["concurrent_p95_s"])
                verdict += (
                    f"; the server alone ({found['sessions']} sessions without browsers) p95 content {found['content_p95_s']:.2f} s "
                    f"({_mark(found['content_p95_s'] <= goal)} vs ≤ {goal:g} s)"
                )
        if made:
            cost = site_stores.Cost(**made)
            verdict += f"; the generator's peak RSS {cost.peak_rss_mb:,.0f} MB ({_mark(cost.met)} vs ≤ {site_stores.GOAL_PEAK_RSS_MB:,} MB)"
        if changed:
            verdict += (
                f"; a sidebar change (issue #31) ≤ {worst['sidebar']:.2f} s to the new content "
                f"({_mark(worst['sidebar'] <= GOALS['sidebar_s'])} vs ≤ {GOALS['sidebar_s']:g} s)"
            )
        verdicts.append(verdict + ".")
    lines += [
        "Goals, on the worst view of each store (first paint as the goals say it; content, the stricter reading, beside it):",
        "",
        *verdicts,
    ]
    if results.get("floor"):
        lines += ["", floor_line(results["floor"])]
    return "\n".join(lines)


def _sidebar_cell(r: ViewResult) -> str:
    if r.sidebar_error:
        return f"failed: {r.sidebar_error.splitlines()[0][:60]}"
    if not r.sidebar:
        return "–"
    return f"{_s(r.sidebar_median())} / {_s(r.sidebar_median('done_s'))}"


def floor_line(floor: dict[str, Any]) -> str:
    """What Streamlit alone costs a warm view in this browser on this machine: the part of the goals the project cannot remove."""
    r = ViewResult.from_json(floor)
    head = (
        "**Floor** (issue #31): a page of one title, one sidebar selectbox and one 10-row table, served by the same "
        "`streamlit run` settings as the board, in the same browser, in the same run"
    )
    if r.error:
        return f"{head}: failed: {r.error.splitlines()[0][:120]}."
    return (
        f"{head}: warm paint {_s(r.warm_median('fcp_s'))} s, content {_s(r.warm_median('content_s'))} s, done "
        f"{_s(r.warm_median('done_s'))} s, browser CPU {_s(r.warm_median('browser_cpu_s'))} s and server CPU "
        f"{_s(r.warm_median('cpu_s'))} s per warm view; a sidebar change {_sidebar_cell(r)} s (content / done). Streamlit's "
        "own page start in this browser takes that much of every warm view above; the rest is what the pages add."
    )


# The heading of the subsection `make bench-site-big` writes into the block (bench/site_home.py): the pages' run keeps it
HOME_HEADING = "### Home after a write"


def write_section(doc: Path, section: str, *, keep_from: str | None = None) -> None:
    """Replace what lies between the markers in ``doc`` (the markers are appended at the end when absent).

    With ``keep_from``, what the block held from that line on (another run's subsection) is kept after ``section``.
    """
    text = doc.read_text() if doc.exists() else ""
    if BEGIN not in text or END not in text:
        text = text.rstrip("\n") + f"\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    if keep_from is not None and keep_from in block:
        section = f"{section.rstrip()}\n\n{keep_from}{block.split(keep_from, 1)[1]}"
    doc.write_text(f"{head}{BEGIN}\n{section.rstrip()}\n{END}{tail}")

"""``procbench export hub-dataset``: the public board as a Hugging Face dataset folder.

Layout (ready for ``huggingface_hub.upload_folder``)::

    README.md                     dataset card: YAML header (one config per task, one split per task split),
                                  the tasks, their metric definitions and the benchmarks' data licences
    metrics.json                  per task: primary metric, metric definitions, fingerprints, source, licence
    data/<task>/<split>.parquet   one row per visible submission and slice value, one column per metric

Only what the site shows is exported: the ``board`` view (current fingerprint, not hidden, not
deleted; aggregates only, so hidden splits leak nothing item-level).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import polars as pl

from submissions.display import for_markdown
from submissions.store import reader

# Where each benchmark's data comes from and under which licence (the staged SOURCE.md files).
DATA_LICENCES: dict[str, tuple[str, str]] = {
    "OpenPI": ("MIT", "allenai/openpi-dataset (LICENSE, Copyright (c) 2020 AI2)"),
    "ProPara": ("Apache-2.0", "allenai/aristo-leaderboard and allenai/propara (LICENSE)"),
    "PAGED": ("Apache-2.0", "WitcherLeo/PAGED (LICENSE)"),
    "PARADISE": ("MIT", "the Hugging Face copy GGLab/PARADISE is tagged MIT; the GitHub repository GGLAB-KU/paradise has no licence file"),
    "PM-LLM-Benchmark": ("GPL-3.0", "fit-alessandro-berti/pm-llm-benchmark (LICENSE)"),
}

ORDER = ["task", "split", "slice", "slice_value"]


class PublishError(Exception):
    """The folder could not be uploaded (no token, no network, Hub error); the message says which."""


@dataclass(frozen=True)
class DatasetFolder:
    """What was written: the folder, one Parquet file per task split, how many rows in all."""

    root: Path
    tasks: dict[str, Path] = field(default_factory=dict)  # task -> its folder under data/
    files: tuple[Path, ...] = ()
    rows: int = 0


def _frame(con: Any, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())  # type: ignore[return-value]


def _wide(long: pl.DataFrame, metric_order: list[str]) -> pl.DataFrame:
    """One row per submission and slice value, one column per metric (in the spec's order)."""
    index = [c for c in long.columns if c not in ("metric", "value")]
    wide = long.pivot(on="metric", index=index, values="value")
    metrics = [m for m in metric_order if m in wide.columns] + sorted(c for c in wide.columns if c not in index and c not in metric_order)
    first = [c for c in ORDER if c in index]
    return wide.select(first + [c for c in index if c not in first] + metrics)


def _task_info(row: dict[str, Any]) -> dict[str, Any]:
    spec = json.loads(row["spec_json"])
    benchmark = row["benchmark"] or spec.get("benchmark") or row["task"]
    licence, licence_source = DATA_LICENCES.get(benchmark, (spec.get("license") or "see upstream", spec.get("url") or ""))
    return {
        "task": row["task"],
        "title": row["title"],
        "benchmark": benchmark,
        "primary": row["primary_metric"],
        "url": spec.get("url", ""),
        "citation": (spec.get("citation") or "").strip(),
        "spec_license": spec.get("license", ""),
        "data_licence": licence,
        "data_licence_source": licence_source,
        "metrics": [
            {k: m.get(k) for k in ("name", "display", "group", "description", "higher_is_better", "percent")}
            for m in spec.get("metrics", [])
        ],
        "splits": {},
    }


def write_dataset(db_path: Path, directory: Path) -> DatasetFolder:
    """Write the board of ``db_path`` as a dataset folder in ``directory`` (created; files rewritten)."""
    root = Path(directory)
    (root / "data").mkdir(parents=True, exist_ok=True)
    tasks: dict[str, dict[str, Any]] = {}
    written: list[Path] = []
    folders: dict[str, Path] = {}
    total = 0
    with reader(db_path) as con:
        current = _frame(con, "SELECT task, split, fingerprint, title, benchmark, primary_metric, hidden, spec_json FROM current_tasks ORDER BY task, split")
        for row in current.iter_rows(named=True):
            long = _frame(con, "SELECT * FROM board WHERE task = ? AND split = ? ORDER BY created_at, submission_id", [row["task"], row["split"]])
            if long.is_empty():
                continue
            info = tasks.setdefault(row["task"], _task_info(row))
            metric_order = [m["name"] for m in info["metrics"]]
            wide = _wide(long, metric_order)
            primary = info["primary"]
            whole = wide.filter((pl.col("slice") == "") & (pl.col("slice_value") == "")) if "slice" in wide.columns else wide
            best = (
                whole.sort(primary, descending=next((m["higher_is_better"] for m in info["metrics"] if m["name"] == primary), True), nulls_last=True).row(
                    0, named=True
                )
                if primary in whole.columns and not whole.is_empty()
                else None
            )
            folder = root / "data" / row["task"]
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{row['split']}.parquet"
            wide.write_parquet(path)
            written.append(path)
            folders[row["task"]] = folder
            total += wide.height
            info["splits"][row["split"]] = {
                "file": path.relative_to(root).as_posix(),
                "fingerprint": row["fingerprint"],
                "hidden": bool(row["hidden"]),
                "submissions": wide["submission_id"].n_unique(),  # reference rows may exist for slices only
                "rows": wide.height,
                "best": {"model": best.get("model"), "team": best.get("team"), primary: best.get(primary)} if best else None,
            }
    (root / "metrics.json").write_text(json.dumps(tasks, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (root / "README.md").write_text(render_card(tasks), encoding="utf-8")
    return DatasetFolder(root, folders, tuple(written), total)


# issue #17: every stored or spec-given string is put in the card through `md` (submissions.display:
# Markdown and HTML escaped, one line), so a team or model name cannot break a table or add a link.
_CARD_ENV = jinja2.Environment(autoescape=False)  # a fixed template of ours (spec templates use runners.templates)
_CARD_ENV.filters["md"] = for_markdown
CARD = _CARD_ENV.from_string(
    """---
pretty_name: procbench leaderboard
license: other
tags:
- leaderboard
- evaluation
- procedural-text
- procbench
configs:
{%- for task, info in tasks.items() %}
- config_name: {{ task }}
  data_files:
{%- for split, s in info.splits.items() %}
  - split: {{ split }}
    path: {{ s.file }}
{%- endfor %}
{%- endfor %}
---

# procbench leaderboard

Every visible submission on the procbench board, scored by procbench's reproduction of each
benchmark's official scorer. One configuration per task, one split per task split; a row is one
submission on the whole split (`slice` = "") or on one slice value, with one column per metric.
Metric values are fractions as stored (the board shows those marked `percent` ×100). Results of
hidden splits are aggregates only. `fingerprint` identifies the spec and gold a row was scored with:
compare rows only under one fingerprint.

```python
from datasets import load_dataset
board = load_dataset("<this repo>", "{{ tasks | first if tasks else 'openpi' }}", split="{{ (tasks[tasks | first].splits | first) if tasks else 'test' }}")
```

## Tasks

| task | benchmark | split | submissions | primary metric | best |
|---|---|---|---|---|---|
{%- for task, info in tasks.items() %}{% for split, s in info.splits.items() %}
| `{{ task }}` | {{ info.benchmark | md }} | {{ split | md }}{% if s.hidden %} (hidden){% endif %} | {{ s.submissions }} | `{{ info.primary }}` | {% if s.best %}{{ s.best.model | md }} ({{ s.best.team | md }}): {{ "%.4f" | format(s.best[info.primary]) if s.best[info.primary] is not none else "-" }}{% else %}-{% endif %} |
{%- endfor %}{% endfor %}

## Metrics
{% for task, info in tasks.items() %}
### {{ info.title | md }} (`{{ task }}`)

| metric | shown as | group | higher is better | description |
|---|---|---|---|---|
{%- for m in info.metrics %}
| `{{ m.name }}`{% if m.name == info.primary %} (primary){% endif %} | {{ m.display | md }}{% if m.percent %} (×100){% endif %} | {{ m.group | md }} | {{ "yes" if m.higher_is_better else "no" }} | {{ m.description | md }} |
{%- endfor %}
{% endfor %}
## Data licences

This dataset holds scores only, no benchmark data. The benchmarks the scores are computed on:

| benchmark | licence | source |
|---|---|---|
{%- for benchmark, (licence, source) in licences.items() %}
| {{ benchmark | md }} | {{ licence | md }} | {{ source | md }} |
{%- endfor %}
{% for task, info in tasks.items() if info.citation %}{% if loop.first %}
## Citations
{% endif %}
```bibtex
{{ info.citation }}
```
{% endfor %}"""
)


def render_card(tasks: dict[str, dict[str, Any]]) -> str:
    """The README.md dataset card of the exported tasks."""
    benchmarks = sorted({info["benchmark"] for info in tasks.values()})
    licences = {b: next((info["data_licence"], info["data_licence_source"]) for info in tasks.values() if info["benchmark"] == b) for b in benchmarks}
    seen: set[str] = set()
    cited = {}
    for task, info in tasks.items():  # one citation per benchmark
        cited[task] = {**info, "citation": info["citation"] if info["benchmark"] not in seen else ""}
        seen.add(info["benchmark"])
    return CARD.render(tasks=cited, licences=licences).rstrip() + "\n"


def _is_transport_error(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "requests", "urllib3")


def push_folder(folder: Path, repo_id: str, *, private: bool = False, endpoint: str | None = None, token: str | None = None) -> str:
    """Create the dataset repo if needed and upload the folder; returns the commit URL. Raises PublishError."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token)  # HF_ENDPOINT read now, not at import
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset", commit_message="procbench: board export")
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise PublishError(f"could not push {folder} to the Hub dataset {repo_id}: {exc}") from None
    except Exception as exc:
        if _is_transport_error(exc):
            raise PublishError(f"could not reach the Hub to push {repo_id} ({type(exc).__name__}: {exc}); nothing was uploaded") from None
        raise
    return str(getattr(commit, "commit_url", "") or f"{api.endpoint}/datasets/{repo_id}")

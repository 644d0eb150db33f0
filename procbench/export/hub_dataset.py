"""``procbench export hub-dataset``: the public board as a Hugging Face dataset folder.

Layout (ready for ``huggingface_hub.upload_folder``)::

    README.md                     dataset card: YAML header (one config per task, one split per task split;
                                  one details config per task; the licences of the tasks' specs), the
                                  tasks, their metric definitions and the benchmarks' data licences
    metrics.json                  per task: primary metric, metric definitions, fingerprints, source, licence
    data/<task>/<split>.parquet   one row per visible submission and slice value, one column per metric
    details/<task>/<split>/<submission_id>.parquet
                                  per-item details (as the Open LLM Leaderboard's details datasets): one row
                                  per item, named and typed as procbench.score(...).to_polars() has it (id,
                                  labels by dimension, one column per item metric), after the submission's
                                  submission_id, model, team, task, split

Only what the site shows is exported: the ``board`` view (current fingerprint, not hidden, not
deleted) for the aggregates, and the ``public_item_scores`` view for the details, so hidden
splits and hidden submissions leak nothing item-level.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import polars as pl

from procbench.dsl.model import MetricSpec, settings_of
from procbench.results import class_labels, int_ids, item_frame, item_row
from procbench.submissions.display import for_markdown
from procbench.submissions.store import reader

# Where each benchmark's data comes from and under which licence (the staged SOURCE.md files).
DATA_LICENCES: dict[str, tuple[str, str]] = {
    "OpenPI": ("MIT", "allenai/openpi-dataset (LICENSE, Copyright (c) 2020 AI2)"),
    "ProPara": ("Apache-2.0", "allenai/aristo-leaderboard and allenai/propara (LICENSE)"),
    "PAGED": ("Apache-2.0", "WitcherLeo/PAGED (LICENSE)"),
    "PARADISE": (
        "MIT",
        "the Hugging Face copy GGLab/PARADISE is tagged MIT; the GitHub repository GGLAB-KU/paradise has no licence file",
    ),
    "PM-LLM-Benchmark": ("GPL-3.0", "fit-alessandro-berti/pm-llm-benchmark (LICENSE)"),
}

ORDER = ["task", "split", "slice", "slice_value"]
DETAIL_KEYS = (
    "submission_id",
    "model",
    "team",
    "task",
    "split",
)  # a details file's bookkeeping columns, then the item's row


def detail_label(dimension: str) -> str:
    """A label's column in the details: its dimension, as ``to_polars()`` names it; ``label_<dimension>`` when that is a bookkeeping column's name."""
    return f"label_{dimension}" if dimension in DETAIL_KEYS else dimension


DETAILS_CONFIG = "details_{task}"  # the config of a task's per-item details

# Licence ids the Hub accepts in a card's `license:` (https://huggingface.co/docs/hub/repositories-licenses),
# the common ones a benchmark is released under; a spec's `license` is matched case-insensitively.
HUB_LICENCES = frozenset(
    {
        "apache-2.0",
        "mit",
        "bsd-2-clause",
        "bsd-3-clause",
        "bsd-3-clause-clear",
        "gpl-2.0",
        "gpl-3.0",
        "lgpl-2.1",
        "lgpl-3.0",
        "agpl-3.0",
        "mpl-2.0",
        "epl-2.0",
        "cc0-1.0",
        "cc-by-2.0",
        "cc-by-3.0",
        "cc-by-4.0",
        "cc-by-sa-3.0",
        "cc-by-sa-4.0",
        "cc-by-nc-2.0",
        "cc-by-nc-3.0",
        "cc-by-nc-4.0",
        "cc-by-nc-sa-3.0",
        "cc-by-nc-sa-4.0",
        "cc-by-nd-4.0",
        "cc-by-nc-nd-4.0",
        "odc-by",
        "odbl",
        "pddl",
        "unlicense",
        "artistic-2.0",
        "wtfpl",
        "c-uda",
        "openrail",
        "llama2",
        "llama3",
    }
)


def hub_licence(text: str | None) -> str | None:
    """The Hub's id for a licence name (``"Apache-2.0"`` -> ``"apache-2.0"``), or None when it is not one."""
    candidate = (text or "").strip().lower()
    return candidate if candidate in HUB_LICENCES else None


def card_licence(tasks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The card's licence fields: ``license`` (one Hub id, or a list of them); ``other`` with ``license_name``
    and ``license_link`` (as the Hub documents) when a task's licence is not one the Hub knows."""
    ids = sorted({info["license"] for info in tasks.values() if info["license"]})
    unknown = [info for info in tasks.values() if not info["license"]]
    fields: dict[str, Any] = {}
    if unknown:
        ids.append("other")
        first = unknown[0]
        text = first["spec_license"] or first["data_licence"] or "see upstream"
        fields["license_name"] = (
            "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split()) or "other"
        )
        if first["url"]:
            fields["license_link"] = first["url"]
    fields["license"] = ids[0] if len(ids) == 1 else ids or "other"
    return fields


class PublishError(Exception):
    """The folder could not be uploaded (no token, no network, Hub error); the message says which."""


@dataclass(frozen=True)
class DatasetFolder:
    """What was written: the folder, one Parquet file per task split, how many rows in all."""

    root: Path
    tasks: dict[str, Path] = field(default_factory=dict)  # task -> its folder under data/
    files: tuple[Path, ...] = ()
    rows: int = 0
    details: tuple[Path, ...] = ()  # one Parquet file per submission with public per-item scores


def _frame(con: Any, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
    return pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())  # type: ignore[return-value]


def _wide(long: pl.DataFrame, metric_order: list[str]) -> pl.DataFrame:
    """One row per submission and slice value, one column per metric (in the spec's order)."""
    index = [c for c in long.columns if c not in ("metric", "value")]
    wide = long.pivot(on="metric", index=index, values="value")
    metrics = [m for m in metric_order if m in wide.columns] + sorted(
        c for c in wide.columns if c not in index and c not in metric_order
    )
    first = [c for c in ORDER if c in index]
    return wide.select(first + [c for c in index if c not in first] + metrics)


def _task_info(row: dict[str, Any]) -> dict[str, Any]:
    spec = json.loads(row["spec_json"])
    benchmark = row["benchmark"] or spec.get("benchmark") or row["task"]
    licence, licence_source = DATA_LICENCES.get(
        benchmark, (spec.get("license") or "see upstream", spec.get("url") or "")
    )
    return {
        "license": hub_licence(spec.get("license"))
        or hub_licence(licence),  # the spec's licence; the benchmark's when it says none
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
            {k: m.get(k) for k in ("name", *settings_of(MetricSpec))}
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
    detail_files: list[Path] = []
    total = 0
    with reader(db_path) as con:
        current = _frame(
            con,
            "SELECT task, split, fingerprint, title, benchmark, primary_metric, hidden, spec_json FROM current_tasks ORDER BY task, split",
        )
        for row in current.iter_rows(named=True):
            long = _frame(
                con,
                "SELECT * FROM board WHERE task = ? AND split = ? ORDER BY created_at, submission_id",
                [row["task"], row["split"]],
            )
            if long.is_empty():
                continue
            info = tasks.setdefault(row["task"], _task_info(row))
            metric_order = [m["name"] for m in info["metrics"]]
            wide = _wide(long, metric_order)
            primary = info["primary"]
            whole = (
                wide.filter((pl.col("slice") == "") & (pl.col("slice_value") == ""))
                if "slice" in wide.columns
                else wide
            )
            best = (
                whole.sort(
                    primary,
                    descending=next(
                        (m["higher_is_better"] for m in info["metrics"] if m["name"] == primary),
                        True,
                    ),
                    nulls_last=True,
                ).row(0, named=True)
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
            details = [] if row["hidden"] else _write_details(con, root, row, info)
            detail_files += details
            info["splits"][row["split"]] = {
                "file": path.relative_to(root).as_posix(),
                "details": f"details/{row['task']}/{row['split']}/*.parquet" if details else None,
                "fingerprint": row["fingerprint"],
                "hidden": bool(row["hidden"]),
                "submissions": wide[
                    "submission_id"
                ].n_unique(),  # reference rows may exist for slices only
                "rows": wide.height,
                "best": {
                    "model": best.get("model"),
                    "team": best.get("team"),
                    primary: best.get(primary),
                }
                if best
                else None,
            }
    (root / "metrics.json").write_text(
        json.dumps(tasks, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (root / "README.md").write_text(render_card(tasks), encoding="utf-8")
    return DatasetFolder(root, folders, tuple(written), total, tuple(detail_files))


def _write_details(con: Any, root: Path, row: dict[str, Any], info: dict[str, Any]) -> list[Path]:
    """``details/<task>/<split>/<submission_id>.parquet`` for each visible submission with per-item scores
    (``public_item_scores``: current fingerprint, public split): the bookkeeping columns, then the item's row as
    ``procbench.score(...).to_polars()`` has it (``procbench.results.item_row`` / ``item_frame``, typed by the stored
    spec: ``id``, labels by their dimension, one column per item metric, class statistics as class labels)."""
    items = _frame(
        con,
        "SELECT * FROM public_item_scores WHERE task = ? AND split = ?",
        [row["task"], row["split"]],
    )
    folder = root / "details" / row["task"] / row["split"]
    if folder.exists():
        for stale in folder.glob("*.parquet"):
            stale.unlink()
    if items.is_empty():
        return []
    spec = json.loads(row["spec_json"])
    ids, classes = int_ids(spec), class_labels(spec)
    labels: dict[str, dict[str, Any]] = {}
    for item_id, dimension, value in _frame(
        con,
        "SELECT item_id, dimension, value FROM item_labels WHERE task = ? AND split = ? AND fingerprint = ? ORDER BY dimension",
        [row["task"], row["split"], row["fingerprint"]],
    ).iter_rows():
        labels.setdefault(item_id, {})[dimension] = value
    metric_order = [m["name"] for m in info["metrics"]]
    stored = set(items["metric"])
    metrics = [m for m in metric_order if m in stored] + sorted(stored - set(metric_order))
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for (sid,), part in items.partition_by(
        "submission_id", as_dict=True, maintain_order=True
    ).items():
        values: dict[str, dict[str, Any]] = {}
        for item_id, metric, value in part.select("item_id", "metric", "value").iter_rows():
            values.setdefault(item_id, {})[metric] = value
        rows = [
            item_row(
                item_id,
                labels.get(item_id, {}),
                {m: values[item_id][m] for m in metrics if m in values[item_id]},
                int_ids=ids,
                classes=classes,
                label_name=detail_label,
            )
            for item_id in values
        ]
        keys = part.row(0, named=True)
        frame = item_frame(rows, int_ids=ids).sort("id")
        frame = frame.select(
            [pl.lit(keys[c], dtype=pl.String).alias(c) for c in DETAIL_KEYS if c in keys]
            + [pl.col(c) for c in frame.columns]
        )
        path = folder / f"{sid}.parquet"
        frame.write_parquet(path)
        written.append(path)
    return written


# issue #17: every stored or spec-given string is put in the card through `md` (procbench.submissions.display:
# Markdown and HTML escaped, one line), so a team or model name cannot break a table or add a link.
_CARD_ENV = jinja2.Environment(
    autoescape=False
)  # a fixed template of ours (spec templates use procbench.runners.runtime.templates)
_CARD_ENV.filters["md"] = for_markdown
CARD = _CARD_ENV.from_string(
    """---
pretty_name: procbench leaderboard
{{ licence_yaml }}
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
{%- for task, info in tasks.items() if info.details_splits %}
- config_name: {{ details_config.format(task=task) }}
  data_files:
{%- for split, pattern in info.details_splits.items() %}
  - split: {{ split }}
    path: {{ pattern }}
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

{% if tasks.values() | selectattr("details_splits") | list %}
Per-item details, as in the Open LLM Leaderboard's details datasets: configuration
`details_<task>`, one split per public task split, one Parquet file per submission
(`details/<task>/<split>/<submission_id>.parquet`) with a row per item: `submission_id`, `model`,
`team`, `task`, `split`, then the item as `procbench.score(...).to_polars()` has it: `id` (an integer
when the task's items are row indices, else a string), the item's labels by dimension (what the board
slices by; `label_<dimension>` only where a dimension is named like one of the five columns before)
and one column per item metric (floats; a class statistic `<measure>:gold` / `:prediction` is the
declared class label). Hidden splits and hidden submissions have none.

```python
{%- set shown = (tasks.values() | selectattr("details_splits") | first) %}
from datasets import load_dataset
details = load_dataset("<this repo>", "{{ details_config.format(task=shown.task) }}", split="{{ shown.details_splits | first }}")
```
{% endif %}
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


def _yaml_fields(fields: dict[str, Any]) -> str:
    """``key: value`` lines (a list as ``- item`` lines); a value other than a plain id is a JSON string (valid YAML)."""

    def scalar(value: str) -> str:
        return value if re.fullmatch(r"[a-z0-9][a-z0-9.-]*", value) else json.dumps(value)

    lines = []
    for key, value in fields.items():
        lines += (
            [f"{key}:"] + [f"- {scalar(v)}" for v in value]
            if isinstance(value, list)
            else [f"{key}: {scalar(value)}"]
        )
    return "\n".join(lines)


def render_card(tasks: dict[str, dict[str, Any]]) -> str:
    """The README.md dataset card of the exported tasks."""
    benchmarks = sorted({info["benchmark"] for info in tasks.values()})
    licences = {
        b: next(
            (info["data_licence"], info["data_licence_source"])
            for info in tasks.values()
            if info["benchmark"] == b
        )
        for b in benchmarks
    }
    seen: set[str] = set()
    cited = {}
    for task, info in tasks.items():  # one citation per benchmark
        cited[task] = {
            **info,
            "citation": info["citation"] if info["benchmark"] not in seen else "",
        }
        seen.add(info["benchmark"])
    for info in cited.values():
        info["details_splits"] = {
            split: s["details"] for split, s in info["splits"].items() if s.get("details")
        }
    licence_yaml = _yaml_fields(card_licence(tasks))
    return (
        CARD.render(
            tasks=cited, licences=licences, licence_yaml=licence_yaml, details_config=DETAILS_CONFIG
        ).rstrip()
        + "\n"
    )


def _is_transport_error(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "requests", "urllib3")


def push_folder(
    folder: Path,
    repo_id: str,
    *,
    private: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
) -> str:
    """Create the dataset repo if needed and upload the folder; returns the commit URL. Raises PublishError."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(
        endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token
    )  # HF_ENDPOINT read now, not at import
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="dataset",
            commit_message="procbench: board export",
        )
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise PublishError(f"could not push {folder} to the Hub dataset {repo_id}: {exc}") from None
    except Exception as exc:
        if _is_transport_error(exc):
            raise PublishError(
                f"could not reach the Hub to push {repo_id} ({type(exc).__name__}: {exc}); nothing was uploaded"
            ) from None
        raise
    return str(getattr(commit, "commit_url", "") or f"{api.endpoint}/datasets/{repo_id}")

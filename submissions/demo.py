"""The demo database: every bundled spec, its sample submissions and its reference rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from dsl import SpecError
from procbench.api import all_spec_paths, load_task
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from runners._types import InvalidPredictions
from submissions.intake import load_reported, submit

DEMO_TEAM = "demo"


def _split_order(splits: tuple[str, ...]) -> list[str]:
    return sorted(splits, key=lambda s: (s != "test", s != "dev", splits.index(s)))


def build_demo(db_path: Path, *, data_root: Path = SAMPLE_DATA_ROOT, submissions_dir: Path = SAMPLE_SUBMISSIONS_DIR, log: Callable[[str], None] = print) -> int:
    """Submit every sample file of every task to ``db_path``; returns how many were stored."""
    stored = 0
    for spec_file in all_spec_paths():
        try:
            spec, runner = load_task(spec_file)
        except SpecError as exc:
            log(f"skipping {spec_file.name}: {exc}")
            continue
        folder = submissions_dir / spec.name
        files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json")) if folder.is_dir() else []
        for path in files:
            # optional submission metadata beside a sample, e.g. {"cot": true} for PM-LLM
            meta_path = path.with_name(path.name.split(".")[0] + ".meta.json")
            metadata = {"source": "sample", **(json.loads(meta_path.read_text()) if meta_path.is_file() else {})}
            for split in _split_order(spec.data.splits):
                try:
                    outcome = submit(spec, runner, data_root=data_root, split=split, predictions=path, model=path.name.split(".")[0], team=DEMO_TEAM, db_path=db_path, metadata=metadata)
                except (InvalidPredictions, FileNotFoundError, ValueError):
                    continue
                stored += outcome.created
                primary = outcome.evaluation.metrics.get(spec.primary, float("nan"))
                log(f"{spec.name:<24} {split:<6} {path.name:<32} {spec.primary}={primary:.4f}")
                break
            else:
                log(f"{spec.name:<24} could not score {path.name} on any split of the sample data")
        load_reported(spec, runner, data_root=data_root, db_path=db_path)
    return stored

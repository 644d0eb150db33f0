"""The demo database: the real board when the real data is there, else every bundled spec's samples.

``build_board`` (``procbench demo``, ``make leaderboard``) looks for real data (``PROCBENCH_DATA`` or
``../shared/data``: files matching the specs' data locks) and builds from it with ``build_real``:
the registered baselines of every task (``runners.baselines``) and the upstream PM-LLM answers with
their judge's verdicts, submitted through intake, plus the papers' rows.  Without real data it
builds ``build_demo`` from the bundled samples; those boards say so (``submissions.provenance``).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsl import SpecError
from dsl.model import TaskSpec
from dsl.tasks import all_spec_paths, load_task
from runners import baselines
from runners._types import InvalidPredictions, PredictionWarning
from runners.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, default_data_root
from runners.pmllm.answers import read_submission
from runners.pmllm.models import cot_penalised
from runners.pmllm.naming import parse_result_file_name
from runners.runner import TaskRunner
from submissions import provenance
from submissions.intake import load_reported, submit

DEMO_TEAM = "demo"


def _split_order(splits: tuple[str, ...]) -> list[str]:
    return sorted(splits, key=lambda s: (s != "test", s != "dev", splits.index(s)))


def _loadable_tasks(log: Callable[[str], None]) -> Iterator[tuple[TaskSpec, TaskRunner]]:
    """Every shipped task that checks; one that does not is logged and skipped (a demo shows the rest)."""
    for spec_file in all_spec_paths():
        try:
            yield load_task(spec_file)
        except SpecError as exc:
            log(f"skipping {spec_file.name}: {exc}")


def build_demo(db_path: Path, *, data_root: Path = SAMPLE_DATA_ROOT, submissions_dir: Path = SAMPLE_SUBMISSIONS_DIR, log: Callable[[str], None] = print) -> int:
    """Submit every sample file of every task to ``db_path``; returns how many were stored."""
    stored = 0
    for spec, runner in _loadable_tasks(log):
        folder = submissions_dir / spec.name
        files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json")) if folder.is_dir() else []
        for path in files:
            # optional submission metadata beside a sample, e.g. {"cot": true} for PM-LLM
            meta_path = path.with_name(path.name.split(".")[0] + ".meta.json")
            metadata = {"source": "sample", **(json.loads(meta_path.read_text()) if meta_path.is_file() else {})}
            for split in _split_order(spec.data.splits):
                try:
                    outcome = submit(
                        spec,
                        runner,
                        data_root=data_root,
                        split=split,
                        predictions=path,
                        model=path.name.split(".")[0],
                        team=DEMO_TEAM,
                        db_path=db_path,
                        metadata=metadata,
                    )
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


# -- a real board when the real data is there (issue #16) ------------------------------------------

BASELINE_TEAM = "baselines"
UPSTREAM_TEAM = "pm-llm-benchmark (upstream)"
PMLLM_TASK = "pm-llm-benchmark"
PMLLM_JUDGE = "gpt-5.4"  # the judge of the staged upstream evaluation folder (evaluation-gpt-5.4/)


@dataclass(frozen=True)
class DemoPlan:
    """What ``build_board`` builds from: real data when the data root has it, else the bundled samples."""

    data_root: Path
    real: bool
    real_tasks: tuple[str, ...] = ()  # tasks with at least one split whose files match the lock


def real_splits(spec: TaskSpec, data_root: Path) -> list[str]:
    """The splits of ``spec`` whose files under ``data_root`` match the spec's data lock, board order first."""
    return [s for s in _split_order(spec.data.splits) if provenance.of(spec, s, data_root, gold_items=None, scorer_digest="").kind == provenance.REAL]


def plan(data_root: Path | None = None) -> DemoPlan:
    """Real data at ``data_root`` (default: PROCBENCH_DATA or ../shared/data) for any task, else the samples."""
    root = data_root if data_root is not None else default_data_root()
    if root is None or not Path(root).is_dir():
        return DemoPlan(SAMPLE_DATA_ROOT, False)
    found = []
    for spec_file in all_spec_paths():
        try:
            spec, _ = load_task(spec_file)
        except SpecError:
            continue
        if real_splits(spec, Path(root)):
            found.append(spec.name)
    return DemoPlan(Path(root), True, tuple(found)) if found else DemoPlan(SAMPLE_DATA_ROOT, False)


def build_board(db_path: Path, *, data_root: Path | None = None, log: Callable[[str], None] = print, work_dir: Path | None = None, heavy: bool = False) -> int:
    """``procbench demo``: the real board when the data root has real data (``build_real``), else the sample demo."""
    chosen = plan(data_root)
    if not chosen.real:
        log("no real data found (PROCBENCH_DATA or ../shared/data): building the demo from the bundled samples; every board says so")
        return build_demo(db_path, log=log)
    log(f"real data at {chosen.data_root} for {len(chosen.real_tasks)} tasks: {', '.join(chosen.real_tasks)}")
    return build_real(db_path, chosen.data_root, log=log, work_dir=work_dir, heavy=heavy)


def build_real(db_path: Path, data_root: Path, *, log: Callable[[str], None] = print, work_dir: Path | None = None, heavy: bool = False) -> int:
    """Baselines for every task on its first real split (test, else dev, else the first), the upstream PM-LLM
    answers of every staged model with their judge's verdicts, and every paper row whose split is here.

    Prediction files are written under ``work_dir`` (default: a folder beside the store) and submitted
    through intake like any upload.  ``heavy`` also runs the neural baselines (PARADISE embedding).
    """
    folder = Path(work_dir) if work_dir is not None else Path(str(db_path) + ".inputs")
    stored = 0
    for spec, runner in _loadable_tasks(log):
        splits = real_splits(spec, data_root)
        if not splits:
            log(f"{spec.name:<24} no real data under {data_root}: not on this board")
            continue
        split = splits[0]
        gold, _ = runner.gold(data_root, split)
        for chosen in baselines.for_task(spec.name, heavy=heavy):
            out = folder / "baselines" / f"{chosen.name}.{spec.name}.{split}.{chosen.suffix}"
            path = chosen.write(baselines.BaselineInput(data_root, spec.name, split, gold.items), out)
            metadata = {"source": f"procbench baseline {chosen.name}", "baseline": chosen.name, "description": chosen.description}
            stored += _submit(spec, runner, data_root, split, path, chosen.name, BASELINE_TEAM, db_path, metadata, log)
        if spec.name == PMLLM_TASK:
            stored += _submit_upstream_pmllm(spec, runner, data_root, split, folder / "pm-llm", db_path, log)
        load_reported(spec, runner, data_root=data_root, db_path=db_path)
    return stored


def _submit(
    spec: TaskSpec,
    runner: TaskRunner,
    data_root: Path,
    split: str,
    path: Path,
    model: str,
    team: str,
    db_path: Path,
    metadata: dict[str, Any],
    log: Callable[[str], None],
) -> int:
    try:
        outcome = submit(spec, runner, data_root=data_root, split=split, predictions=path, model=model, team=team, db_path=db_path, metadata=metadata)
    except (InvalidPredictions, FileNotFoundError, ValueError, RuntimeError) as exc:
        log(f"{spec.name:<24} {split:<6} {model:<32} not stored: {exc}")
        return 0
    primary = outcome.evaluation.metrics.get(spec.primary, float("nan"))
    log(f"{spec.name:<24} {split:<6} {model:<32} {spec.primary}={primary:.4f}")
    return int(outcome.created)


def upstream_models(root: Path) -> list[str]:
    """The models with answers in the staged upstream PM-LLM-Benchmark folder (``answers/<model>_<question>.txt``)."""
    answers = root / "answers"
    names = {parsed.model for p in answers.iterdir() if (parsed := parse_result_file_name(p.name)) is not None} if answers.is_dir() else set()
    return sorted(names)


def _submit_upstream_pmllm(spec: TaskSpec, runner: TaskRunner, data_root: Path, split: str, folder: Path, db_path: Path, log: Callable[[str], None]) -> int:
    """Each staged model's upstream answers with the upstream judge's verdicts, as the JSON lines intake takes."""
    root = data_root / "pm-llm-benchmark"
    gold, _ = runner.gold(data_root, split)
    stored = 0
    for model in upstream_models(root):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PredictionWarning)  # questions without an answer: counted as upstream does
            answers = read_submission(root, list(gold.items), model=model, judge=PMLLM_JUDGE)
        path = folder / f"{model}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            for answer in answers.values():
                handle.write(json.dumps({"id": answer.question_id, "answer": answer.answer, "verdict": answer.verdict}, ensure_ascii=False) + "\n")
        metadata = {
            "source": f"upstream PM-LLM-Benchmark answers, verdicts of its evaluation-{PMLLM_JUDGE} folder",
            "verdicts_by": PMLLM_JUDGE,
            "cot": cot_penalised(model, data_root),  # upstream's published CoT list: its penalty applies as on its leaderboard
        }
        stored += _submit(spec, runner, data_root, split, path, model, UPSTREAM_TEAM, db_path, metadata, log)
    return stored

"""The demo database: the real board when the real data is there, else every bundled spec's samples.

``build_board`` (``procbench demo``, ``make leaderboard``) looks for real data (``PROCBENCH_DATA`` or
``../shared/data``: files matching the specs' data locks) and builds from it with ``build_real``:
the registered baselines of every task (``procbench.runners.baselines``) and the upstream PM-LLM answers with
their judge's verdicts, submitted through intake with their model cards, plus the papers' rows.
Without real data it builds ``build_demo`` from the bundled samples; those boards say so
(``procbench.submissions.provenance``).  A neural baseline runs only when asked (``heavy``: ``procbench demo``
asks) and its model is installed; its prediction file is reused while its inputs are unchanged
(``procbench.runners.baselines.cache``).
"""

from __future__ import annotations

import json
import re
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procbench.dsl import SpecError
from procbench.dsl.model import TaskSpec
from procbench.dsl.tasks import all_spec_paths, load_task
from procbench.logs import Progress
from procbench.runners import baselines
from procbench.runners.runtime._types import InvalidPredictions, PredictionWarning
from procbench.runners.baselines.cache import write_or_reuse
from procbench.runners.runtime.paths import (
    SAMPLE_DATA_ROOT,
    SAMPLE_SUBMISSIONS_DIR,
    default_cache_dir,
    default_data_root,
)
from procbench.runners.pmllm.answers import read_submission
from procbench.runners.pmllm.models import (
    cot_penalised,
    load_model_info,
    model_size_class,
    open_source,
    parameter_count,
)
from procbench.runners.pmllm.naming import parse_result_file_name
from procbench.runners.runtime.runner import TaskRunner
from procbench.submissions import pending as pending_rows
from procbench.submissions import provenance
from procbench.submissions.details import ModelCard
from procbench.submissions.intake import SubmissionRequest, load_reported, submit

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


def build_demo(
    db_path: Path,
    *,
    data_root: Path = SAMPLE_DATA_ROOT,
    submissions_dir: Path = SAMPLE_SUBMISSIONS_DIR,
    log: Callable[[str], None] = print,
) -> int:
    """Submit every sample file of every task to ``db_path``; returns how many were stored."""
    stored = 0
    for spec, runner in _loadable_tasks(log):
        folder = submissions_dir / spec.name
        files = (
            sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json"))
            if folder.is_dir()
            else []
        )
        for path in files:
            # optional submission metadata beside a sample, e.g. {"cot": true} for PM-LLM
            meta_path = path.with_name(path.name.split(".")[0] + ".meta.json")
            metadata = {
                "source": "sample",
                **(json.loads(meta_path.read_text()) if meta_path.is_file() else {}),
            }
            for split in _split_order(spec.data.splits):
                try:
                    outcome = submit(
                        SubmissionRequest(
                            split=split,
                            predictions=path,
                            model=path.name.split(".")[0],
                            team=DEMO_TEAM,
                            metadata=metadata,
                        ),
                        spec,
                        runner,
                        data_root=data_root,
                        db_path=db_path,
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
    return [
        s
        for s in _split_order(spec.data.splits)
        if provenance.of(spec, s, data_root, gold_items=None, scorer_digest="").kind
        == provenance.REAL
    ]


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


def build_board(
    db_path: Path,
    *,
    data_root: Path | None = None,
    log: Callable[[str], None] = print,
    work_dir: Path | None = None,
    heavy: bool = False,
) -> int:
    """``procbench demo``: the real board when the data root has real data (``build_real``), else the sample demo."""
    chosen = plan(data_root)
    if not chosen.real:
        log(
            "no real data found (PROCBENCH_DATA or ../shared/data): building the demo from the bundled samples; every board says so"
        )
        return build_demo(db_path, log=log)
    log(
        f"real data at {chosen.data_root} for {len(chosen.real_tasks)} tasks: {', '.join(chosen.real_tasks)}"
    )
    return build_real(db_path, chosen.data_root, log=log, work_dir=work_dir, heavy=heavy)


def planned_baselines(task: str, *, heavy: bool) -> tuple[list[baselines.Baseline], list[str]]:
    """The baselines a real board runs for ``task``, and why each other registered one for it is left out.

    A neural baseline runs only with ``heavy`` and when the distributions it imports are installed
    (the ``models`` extra, which ``make setup`` installs); nothing is imported to find out.
    """
    run, left_out = [], []
    for chosen in baselines.for_task(task, heavy=True):
        if chosen.heavy and not heavy:
            left_out.append(
                f"{chosen.name} left out for now: it needs a model (`procbench leaderboard --run-baselines` runs it once the site is up)"
            )
        elif chosen.heavy and baselines.installed_versions(chosen) is None:
            left_out.append(
                f"{chosen.name} left out: its model is not installed (the `models` extra: {', '.join(chosen.requires)}; `make setup` installs it)"
            )
        else:
            run.append(chosen)
    return run, left_out


def build_real(
    db_path: Path,
    data_root: Path,
    *,
    log: Callable[[str], None] = print,
    work_dir: Path | None = None,
    heavy: bool = False,
    cache_dir: Path | None = None,
) -> int:
    """Baselines for every task on its first real split (test, else dev, else the first), the upstream PM-LLM
    answers of every staged model with their judge's verdicts, and every paper row whose split is here.

    Prediction files are written under ``work_dir`` (default: a folder beside the store) and submitted
    through intake like any upload.  ``heavy`` also runs the neural baselines (PARADISE embedding) whose
    model is installed; their files are reused from ``cache_dir`` (default ``var/cache/baselines``)
    while the gold, the baseline's version and the installed model and libraries are the same.
    """
    folder = Path(work_dir) if work_dir is not None else Path(str(db_path) + ".inputs")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir("baselines")
    stored = 0
    said: set[str] = set()
    progress = Progress(
        "demo", len(all_spec_paths())
    )  # a line per task on stderr: the baselines take minutes (issue #33)
    for spec, runner in _loadable_tasks(log):
        splits = real_splits(spec, data_root)
        if not splits:
            log(f"{spec.name:<24} no real data under {data_root}: not on this board")
            progress.step(f"{spec.name} has no real data")
            continue
        split = splits[0]
        gold, fingerprint = runner.gold(data_root, split)
        chosen_ones, left_out = planned_baselines(spec.name, heavy=heavy)
        for line in left_out:
            if line not in said:  # once per board, not once per task
                said.add(line)
                log(line)
        for chosen in chosen_ones:
            if chosen.heavy:
                stored += _run_neural(
                    NeuralJob(spec, runner, split, chosen), db_path, data_root, folder, cache, log
                )
                continue
            path = chosen.write(
                baselines.BaselineInput(data_root, spec.name, split, gold.items),
                _baseline_file(folder, chosen, spec.name, split),
            )
            stored += _submit_baseline(spec, runner, data_root, split, path, chosen, db_path, log)
        if spec.name == PMLLM_TASK:
            stored += _submit_upstream_pmllm(
                spec, runner, data_root, split, folder / "pm-llm", db_path, log
            )
        load_reported(spec, runner, data_root=data_root, db_path=db_path)
        progress.step(
            f"{spec.name} {split}: {len(chosen_ones)} baseline(s) and its paper rows stored"
        )
    return stored


def _baseline_file(folder: Path, chosen: baselines.Baseline, task: str, split: str) -> Path:
    return folder / "baselines" / f"{chosen.name}.{task}.{split}.{chosen.suffix}"


def _submit_baseline(
    spec: TaskSpec,
    runner: TaskRunner,
    data_root: Path,
    split: str,
    path: Path,
    chosen: baselines.Baseline,
    db_path: Path,
    log: Callable[[str], None],
) -> int:
    metadata = {
        "source": f"procbench baseline {chosen.name}",
        "baseline": chosen.name,
        "description": chosen.description,
    }
    if chosen.card.parameters:
        metadata["parameters"] = chosen.card.parameters
    # issue #34: the board's operator ran these baselines (the row says so: run by the operator)
    return _submit(
        spec,
        runner,
        data_root,
        split,
        path,
        chosen.name,
        BASELINE_TEAM,
        db_path,
        metadata,
        log,
        card=baseline_card(chosen),
        run_by="operator",
    )


# -- baselines that need a model: minutes each on a CPU, so a served board may run them after it starts --------


@dataclass(frozen=True)
class NeuralJob:
    """One neural baseline to run on one task's board split."""

    spec: TaskSpec
    runner: TaskRunner
    split: str
    baseline: baselines.Baseline

    @property
    def pending(self) -> pending_rows.Pending:
        return pending_rows.Pending(
            self.spec.name,
            self.split,
            self.baseline.name,
            f"{self.baseline.name}: {self.baseline.description}",
        )


def neural_jobs(data_root: Path, log: Callable[[str], None] = print) -> list[NeuralJob]:
    """The neural baselines a real board at ``data_root`` would run (installed models only), on each task's board split."""
    jobs = []
    for spec, runner in _loadable_tasks(log):
        splits = real_splits(spec, data_root)
        if splits:
            chosen_ones, _ = planned_baselines(spec.name, heavy=True)
            jobs += [
                NeuralJob(spec, runner, splits[0], chosen) for chosen in chosen_ones if chosen.heavy
            ]
    return jobs


def run_neural_jobs(
    db_path: Path,
    data_root: Path,
    jobs: list[NeuralJob],
    *,
    log: Callable[[str], None] = print,
    cache_dir: Path | None = None,
) -> int:
    """Run ``jobs`` one after the other into ``db_path``, each listed as computing (``procbench.submissions.pending``) until it is stored or fails."""
    pending_rows.mark(db_path, [job.pending for job in jobs])
    folder, cache = (
        Path(str(db_path) + ".inputs"),
        Path(cache_dir) if cache_dir is not None else default_cache_dir("baselines"),
    )
    stored = 0
    progress = Progress("baselines", len(jobs))
    for n, job in enumerate(jobs, 1):
        log(
            f"[{n}/{len(jobs)}] {job.spec.name} {job.split}: {job.baseline.name} predicting (its board says 'computing' until it is stored)"
        )
        started = time.monotonic()
        try:
            stored += _run_neural(job, db_path, data_root, folder, cache, log)
        finally:
            pending_rows.unmark(db_path, job.spec.name, job.split, job.baseline.name)
        log(
            f"[{n}/{len(jobs)}] {job.spec.name} {job.split}: {job.baseline.name} done in {time.monotonic() - started:.0f} s"
        )
        progress.step(f"{job.spec.name} {job.split}: {job.baseline.name} stored")
    return stored


def _run_neural(
    job: NeuralJob,
    db_path: Path,
    data_root: Path,
    folder: Path,
    cache: Path,
    log: Callable[[str], None],
) -> int:
    spec, split, chosen = job.spec, job.split, job.baseline
    gold, fingerprint = job.runner.gold(data_root, split)
    given = baselines.BaselineInput(data_root, spec.name, split, gold.items)
    try:
        written = write_or_reuse(
            chosen,
            given,
            _baseline_file(folder, chosen, spec.name, split),
            fingerprint=fingerprint,
            cache_dir=cache,
        )
    except (
        ImportError,
        OSError,
        RuntimeError,
    ) as exc:  # a broken model install costs its rows, not the board
        log(f"{spec.name:<24} {split:<6} {chosen.name:<32} not run: {exc}")
        return 0
    done = (
        "reused the predictions made for this gold"
        if written.reused
        else "predicted (stored for reuse)"
    )
    log(f"{spec.name:<24} {split:<6} {chosen.name:<32} {done}")
    return _submit_baseline(spec, job.runner, data_root, split, written.path, chosen, db_path, log)


def baseline_card(chosen: baselines.Baseline) -> ModelCard:
    """The model card a baseline's row carries (its parameter count goes in the metadata: the card has no field for it)."""
    facts = chosen.card
    return ModelCard(
        size_class=facts.size_class,
        weights=facts.weights,
        method_family=facts.method_family,
        paper_url=facts.paper_url,
        code_url=facts.code_url,
        description=chosen.description,
    )


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
    *,
    card: ModelCard | None = None,
    run_by: str = "submitter",
) -> int:
    try:
        outcome = submit(
            SubmissionRequest(
                split=split,
                predictions=path,
                model=model,
                team=team,
                metadata=metadata,
                card=card or ModelCard(),
                run_by=run_by,
            ),
            spec,
            runner,
            data_root=data_root,
            db_path=db_path,
        )
    except (InvalidPredictions, FileNotFoundError, ValueError, RuntimeError) as exc:
        log(f"{spec.name:<24} {split:<6} {model:<32} not stored: {exc}")
        return 0
    primary = outcome.evaluation.metrics.get(spec.primary, float("nan"))
    log(f"{spec.name:<24} {split:<6} {model:<32} {spec.primary}={primary:.4f}")
    return int(outcome.created)


def upstream_models(root: Path) -> list[str]:
    """The models with answers in the staged upstream PM-LLM-Benchmark folder (``answers/<model>_<question>.txt``)."""
    answers = root / "answers"
    names = (
        {
            parsed.model
            for p in answers.iterdir()
            if (parsed := parse_result_file_name(p.name)) is not None
        }
        if answers.is_dir()
        else set()
    )
    return sorted(names)


# Upstream names a model by its provider id with "/" and ":" removed (docs/metrics.md §4.1), so
# "deepseek/deepseek-v4-pro" is stored as "deepseekdeepseek-v4-pro".  The board shows the provider id:
# the "/" goes back after a provider prefix when the rest starts with one of that provider's model
# families, so a name that only begins like a provider ("qwen3.7-plus") is left as it is.  A removed
# ":" (":free", ":thinking") cannot be told apart and stays removed.
_PROVIDER_FAMILIES = {
    "ai21": ("jamba",),
    "amazon": ("nova",),
    "anthropic": ("claude",),
    "arcee-ai": ("trinity",),
    "deepseek": ("deepseek",),
    "deepseek-ai": ("deepseek",),
    "google": ("gemini", "gemma"),
    "ibm-granite": ("granite",),
    "inception": ("mercury",),
    "inclusionai": ("ling", "ring"),
    "meituan": ("longcat",),
    "meta-llama": ("llama",),
    "microsoft": ("phi", "mai-"),
    "minimax": ("minimax",),
    "mistralai": ("mistral", "ministral", "magistral", "devstral", "codestral", "pixtral"),
    "moonshotai": ("kimi",),
    "nousresearch": ("hermes",),
    "nvidia": ("nemotron", "llama", "nvidia-"),
    "openai": ("gpt", "o1", "o3", "o4", "codex"),
    "prime-intellect": ("intellect",),
    "qwen": ("qwen", "qwq", "qvq"),
    "stepfun": ("step",),
    "x-ai": ("grok",),
    "xiaomi": ("mimo",),
    "z-ai": ("glm",),
}


def provider_model_name(upstream_name: str) -> str:
    """The provider id an upstream model name was made from (``deepseekdeepseek-v4-pro`` -> ``deepseek/deepseek-v4-pro``), else the name."""
    for provider in sorted(
        _PROVIDER_FAMILIES, key=len, reverse=True
    ):  # "deepseek-ai" before "deepseek"
        rest = upstream_name[len(provider) :]
        if upstream_name.startswith(provider) and rest.lower().startswith(
            _PROVIDER_FAMILIES[provider]
        ):
            return f"{provider}/{rest}"
    return upstream_name


def upstream_card(model: str, data_root: Path) -> tuple[ModelCard, dict[str, Any]]:
    """The model card upstream's own metadata gives a staged model, and the parameter count for the metadata.

    Weights: the OS column of upstream's leaderboard (else ``model_is_os.json``); size class and
    parameters: ``hallucinations/model_info.json`` (total parameters, billions), which for closed models
    are upstream's estimates and are labelled so.  What upstream does not say stays unknown.
    """
    is_open = open_source(model, data_root)
    try:
        params_b = parameter_count(model, load_model_info(data_root))
        size = model_size_class(model, data_root)
    except FileNotFoundError:
        params_b, size = None, "commercial" if not is_open else "open-source (size unknown)"
    extra: dict[str, Any] = {}
    if params_b is not None:
        extra["parameters"] = (
            f"{params_b:g}B" if is_open else f"~{params_b:g}B (upstream's estimate)"
        )
    card = ModelCard(
        size_class=size if size != "open-source (size unknown)" else "unknown",
        weights="open" if is_open else "closed",
        method_family="llm",
    )
    return card, extra


_NAME_DATE = re.compile(
    r"(?<!\d)(20\d\d)-?(0[1-9]|1[0-2])-?(0[1-9]|[12]\d|3[01])(?!\d)"
)  # 2024-11-20, 20260422
_MISTRAL_MONTH = re.compile(
    r"^(?:mistralai/)?(?:mistral|ministral|magistral|devstral|codestral|pixtral)\S*-(2[3-9])(0[1-9]|1[0-2])$",
    re.I,
)  # -2506: 2025-06


def release_in_name(model: str) -> str:
    """The release date a model's name carries (``gpt-4o-2024-11-20`` -> 2024-11-20; Mistral's ``-2506`` -> 2025-06), else ''."""
    found = _NAME_DATE.search(model)
    if found:
        return "-".join(found.groups())
    month = _MISTRAL_MONTH.match(model)
    return f"20{month.group(1)}-{month.group(2)}" if month else ""


def _submit_upstream_pmllm(
    spec: TaskSpec,
    runner: TaskRunner,
    data_root: Path,
    split: str,
    folder: Path,
    db_path: Path,
    log: Callable[[str], None],
) -> int:
    """Each staged model's upstream answers with the upstream judge's verdicts, as the JSON lines intake takes."""
    root = data_root / "pm-llm-benchmark"
    gold, _ = runner.gold(data_root, split)
    stored = 0
    for model in upstream_models(root):
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", PredictionWarning
            )  # questions without an answer: counted as upstream does
            answers = read_submission(root, list(gold.items), model=model, judge=PMLLM_JUDGE)
        path = folder / f"{model}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            for answer in answers.values():
                handle.write(
                    json.dumps(
                        {
                            "id": answer.question_id,
                            "answer": answer.answer,
                            "verdict": answer.verdict,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
        card, extra = upstream_card(model, data_root)
        metadata = {
            "source": f"upstream PM-LLM-Benchmark answers, verdicts of its evaluation-{PMLLM_JUDGE} folder",
            "upstream_name": model,  # the name in upstream's files and leaderboards
            "verdicts_by": PMLLM_JUDGE,
            "cot": cot_penalised(
                model, data_root
            ),  # upstream's published CoT list: its penalty applies as on its leaderboard
            "imported": True,  # produced upstream before it was stored: the progress chart dates it by its release, if known
            **(
                {"released": released, "released_from": "the date in the model's name"}
                if (released := release_in_name(model))
                else {}
            ),
            **extra,
        }
        stored += _submit(
            spec,
            runner,
            data_root,
            split,
            path,
            provider_model_name(model),
            UPSTREAM_TEAM,
            db_path,
            metadata,
            log,
            card=card,
        )
    return stored

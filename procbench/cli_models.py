"""Commands that run models: ``procbench judge`` (LLM-as-judge) and ``procbench baseline``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from procbench.exit_codes import EXIT_USAGE
from procbench.paths import resolve_data_root


def judge(
    task: Annotated[
        str, typer.Argument(help="a task whose spec has a `judge` template (pm-llm-benchmark)")
    ],
    predictions: Annotated[
        Path, typer.Option(help="answers: JSON lines {id, answer} or upstream's answer folder")
    ],
    out: Annotated[
        Path, typer.Option(help="where to write the judged answers (JSON lines with verdicts)")
    ],
    base_url: Annotated[
        Optional[str],
        typer.Option(help="OpenAI-compatible endpoint (default: PROCBENCH_JUDGE_BASE_URL)"),
    ] = None,
    model: Annotated[
        Optional[str], typer.Option(help="judge model (default: PROCBENCH_JUDGE_MODEL)")
    ] = None,
    api_key: Annotated[
        Optional[str], typer.Option(help="API key (default: PROCBENCH_JUDGE_API_KEY)")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1)] = 4,
    retries: Annotated[int, typer.Option(min=0)] = 5,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="overall deadline of one request to the judge, in seconds (each retry has its own)",
        ),
    ] = 600.0,
    cot: Annotated[
        bool, typer.Option(help="the answering model shows its chain of thought")
    ] = False,
    cache: Annotated[
        Optional[Path],
        typer.Option(
            help="verdict cache (default: PROCBENCH_JUDGE_CACHE or ~/.cache/procbench/judge)"
        ),
    ] = None,
    data_dir: Annotated[Optional[Path], typer.Option()] = None,
) -> None:
    """Grade answers with an LLM judge through any OpenAI-compatible endpoint, using the spec's prompts.

    Verdicts are cached by (judge model, prompt hash): a rerun costs nothing.  Submit the output
    with `procbench submit TASK --predictions OUT --metadata cot=true|false`: it is ranked as
    self-judged, unless the board has its own judge (PROCBENCH_BOARD_JUDGE_URL and _MODEL at
    intake), which discards these verdicts and grades the answers itself.
    """
    from procbench.cli import _err, _load
    from procbench.exit_codes import (
        EXIT_INVALID_PREDICTIONS,
        EXIT_REFUSED,
        EXIT_SPEC_ERROR,
        EXIT_TIMEOUT,
    )
    from procbench.runners.runtime._types import InvalidPredictions
    from procbench.runners.pmllm.judge import JudgeError, JudgeSettings, judge_answers

    spec, runner = _load(task)
    from procbench.runners.runtime.templates import JUDGE, JUDGE_IMAGE

    text_template, image_template = spec.template(JUDGE), spec.template(JUDGE_IMAGE)
    if text_template is None:
        _err(f"error: task {spec.name!r} declares no `template {JUDGE}`")
        raise typer.Exit(EXIT_SPEC_ERROR)
    gold, _ = runner.gold(resolve_data_root(data_dir), spec.data.splits[0])
    try:
        answers, notes = runner.validate(predictions, gold)
    except InvalidPredictions as exc:
        _err(exc.render())
        raise typer.Exit(EXIT_INVALID_PREDICTIONS) from None
    for note in notes:
        _err(f"warning: {note}")
    options = {
        "concurrency": concurrency,
        "max_retries": retries,
        "timeout_s": timeout,
        "template": text_template,
    }
    if image_template is not None:
        options["image_template"] = image_template
    try:
        settings = JudgeSettings.from_env(base_url, model, api_key, **options)
        with typer.progressbar(length=max(1, len(answers)), label="judging") as bar:
            last = [0]

            def progress(done: int, total: int) -> None:
                bar.update(done - last[0])
                last[0] = done

            run = judge_answers(
                gold.items, answers, settings, cot=cot, cache_dir=cache, progress=progress
            )
    except JudgeError as exc:
        _err(f"error: {exc}")
        raise typer.Exit(
            EXIT_TIMEOUT if "the request's deadline" in str(exc) else EXIT_REFUSED
        ) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for qid, answer in run.answers.items():
            handle.write(
                json.dumps(
                    {"id": qid, "answer": answer.answer, "verdict": answer.verdict},
                    ensure_ascii=False,
                )
                + "\n"
            )
    typer.echo(
        f"judged {len(run.verdicts)} answers ({run.requests} requests, {run.cache_hits} from the cache) -> {out}"
    )


def baseline(
    name: Annotated[
        str,
        typer.Argument(
            help="a registered baseline: openpi-no-change | -copy-step, propara-all-none | -most-frequent-action, propara-naacl18-all-unknown, "
            "paged-sentence-chain | -clause-chain, paradise-random | -majority | -embedding"
        ),
    ],
    split: Annotated[str, typer.Option()] = "test",
    task: Annotated[
        Optional[str],
        typer.Option(
            help="the task (default: the baseline's first); PARADISE also takes warning | tip | reverse_warning | reverse_tip"
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option(
            help="prediction file to write (default: var/baselines/<name>.<task>.<split>.<ext>)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option()] = 0,
    data_dir: Annotated[Optional[Path], typer.Option()] = None,
) -> None:
    """Run a baseline and write a real prediction file (score or submit it like any other)."""
    from procbench.dsl.tasks import load_task
    from procbench.runners.baselines import BaselineInput, get
    from procbench.runners.baselines.simple import PARADISE_TASKS

    try:
        chosen = get(name)
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    target_task = task or chosen.tasks[0]
    root = resolve_data_root(data_dir)
    # PARADISE's read their own split (and take the short names warning, tip, ...); the others get the task's gold items
    items = (
        {}
        if target_task in PARADISE_TASKS.values() or target_task in PARADISE_TASKS
        else load_task(target_task)[1].gold(root, split)[0].items
    )
    target = out or Path("var/baselines") / f"{name}.{target_task}.{split}.{chosen.suffix}"
    path = chosen.write(BaselineInput(root, target_task, split, items, seed), target)
    typer.echo(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.command()(judge)
    app.command()(baseline)

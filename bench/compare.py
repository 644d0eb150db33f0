"""procbench against the plain reference implementations: same input, same process, results asserted equal.

Each comparison times procbench first (cold caches: a freshly compiled runner) and the reference
second, on the same files, and raises ``AssertionError`` when the results differ.  Per-item values
must be bit-identical; aggregates computed by a different library (scikit-learn's weighted P/R/F1)
must agree to 1e-12.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from procbench.bench.generate import Workload


@dataclass(frozen=True)
class Comparison:
    metric: str
    items: int
    procbench_s: float
    reference_s: float
    max_abs_difference: float

    @property
    def ratio(self) -> float:
        """procbench's time over the reference's (below 1: procbench is faster)."""
        return self.procbench_s / self.reference_s if self.reference_s else float("nan")


def _fresh_runner(task: str) -> Any:
    from procbench.dsl import check_file, compile_spec
    from procbench.api import spec_path
    from procbench.paths import SPECS_DIR

    return compile_spec(check_file(spec_path(task), search=[SPECS_DIR]).spec)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def _truncated(path: Path, target: Path, limit: int) -> Path:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:limit]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def openpi(workload: Workload, *, limit: int, dedup: bool = False) -> Comparison:
    """The whole OpenPI metric (3 similarities x best match, per item and mean) on the first ``limit`` steps."""
    from procbench.bench.reference import openpi as reference

    gold_file = (
        workload.data_root / "openpi" / "data" / "gold" / workload.split / "id_answers.jsonl"
    )
    original = gold_file.read_text(encoding="utf-8")
    predictions = _truncated(
        workload.predictions, workload.predictions.with_name("reference-input.jsonl"), limit
    )
    try:
        _truncated(gold_file, gold_file, limit)
        runner = _fresh_runner("openpi-head" if dedup else "openpi")

        def ours() -> Any:
            gold, _ = runner.gold(workload.data_root, workload.split)
            records, _ = runner.validate(predictions, gold)
            items = runner.score(gold, records)
            return items, runner.aggregate(items)

        (items, metrics), ours_s = _timed(ours)
        theirs, theirs_s = _timed(lambda: reference.score(gold_file, predictions, dedup=dedup))
    finally:
        gold_file.write_text(original, encoding="utf-8")
    difference = 0.0
    for item in items:
        want = theirs[item.item_id]
        assert dict(item.values) == want, (
            f"OpenPI item {item.item_id}: procbench {dict(item.values)} != reference {want}"
        )
    n = len(items)
    for key in metrics:
        mean = sum(theirs[i.item_id][key] for i in items) / n
        assert metrics[key] == mean, f"OpenPI {key}: {metrics[key]} != {mean}"
    return Comparison(
        "OpenPI (Exact, BLEU-2, ROUGE-L best match)" + (" dedup" if dedup else ""),
        n,
        ours_s,
        theirs_s,
        difference,
    )


def _official_metrics(runner: Any, workload: Workload) -> dict[str, float]:
    """The whole pipeline of a runner (compiled outside the timing): read gold, validate, score, aggregate."""
    gold, _ = runner.gold(workload.data_root, workload.split)
    records, _ = runner.validate(workload.predictions, gold)
    return runner.aggregate(runner.score(gold, records))


def paradise(workload: Workload) -> Comparison:
    from procbench.bench.reference import paradise as reference

    runner = _fresh_runner(workload.task)
    metrics, ours_s = _timed(lambda: _official_metrics(runner, workload))
    gold_csv = (
        workload.data_root
        / "paradise"
        / "src"
        / "data"
        / f"{workload.task.removeprefix('paradise-')}_test.csv"
    )
    theirs, theirs_s = _timed(lambda: reference.score(gold_csv, workload.predictions))
    assert metrics["accuracy"] == theirs["accuracy"], (metrics, theirs)
    difference = max(abs(metrics[k] - theirs[k]) for k in theirs)
    assert difference <= 1e-12, (metrics, theirs)
    return Comparison(
        "PARADISE (accuracy, weighted P/R/F1)", workload.n_items, ours_s, theirs_s, difference
    )


def pmllm(workload: Workload) -> Comparison:
    from procbench.bench.reference import pmllm as reference

    runner = _fresh_runner(workload.task)
    metrics, ours_s = _timed(lambda: _official_metrics(runner, workload))
    theirs, theirs_s = _timed(lambda: reference.score(workload.predictions))
    for key, value in theirs.items():
        assert metrics[key] == value, f"PM-LLM {key}: {metrics[key]} != {value}"
    return Comparison(
        "PM-LLM-Benchmark (grades, normalisation, sums)", workload.n_items, ours_s, theirs_s, 0.0
    )


def paged(workload: Workload, *, limit: int) -> Comparison:
    """The alignment kernel (lexical F1 of every predicted x gold line) and BLEU-1 of aligned lines."""
    import json

    from procbench.bench.reference import paged as reference
    from procbench.runners.paged import tokens as ours_module
    from procbench.runners.paged.gold import load_documents
    from procbench.runners.paged.parse import parse_text

    documents = load_documents(
        workload.data_root
        / "paged"
        / "dataset"
        / "procedural_graph_extraction"
        / f"{workload.split}.json"
    )[:limit]
    outputs = {
        str(r["id"]): r["graph"]
        for r in (
            json.loads(line)
            for line in workload.predictions.read_text().splitlines()
            if line.strip()
        )
    }
    cases = [
        (
            [s.line for s in parse_text(outputs.get(d.item_id, "")).spans],
            [line.text for line in d.lines],
        )
        for d in documents
    ]
    for cache in (
        ours_module.tokens,
        ours_module._profile,
        ours_module.lexical_f1,
        ours_module.bleu1,
    ):
        cache.cache_clear()

    def ours() -> tuple[list[Any], list[float]]:
        matrices = [ours_module.lexical_f1_matrix(p, g) for p, g in cases]
        bleus = [
            ours_module.bleu1(p[i], g[int(m[i].argmax())])
            for (p, g), m in zip(cases, matrices)
            for i in range(len(p))
            if len(g)
        ]
        return matrices, bleus

    (matrices, bleus), ours_s = _timed(ours)

    def theirs() -> tuple[list[Any], list[float]]:
        plain = [reference.alignment_matrix(p, g) for p, g in cases]
        best = [
            max(range(len(g)), key=lambda j: (row[j], -j))  # (max calls it at once)
            for (p, g), rows in zip(cases, plain)
            for row in rows
            if len(g)
        ]
        flat = [(p[i], g) for (p, g) in cases for i in range(len(p)) if len(g)]
        return plain, [reference.bleu1(hyp, gold[j]) for (hyp, gold), j in zip(flat, best)]

    (plain, plain_bleus), theirs_s = _timed(theirs)
    for matrix, rows in zip(matrices, plain):
        assert matrix.tolist() == rows, "PAGED lexical F1 matrices differ"
    assert bleus == plain_bleus, "PAGED BLEU-1 values differ"
    return Comparison(
        "PAGED (line alignment by lexical F1, BLEU-1)", len(documents), ours_s, theirs_s, 0.0
    )

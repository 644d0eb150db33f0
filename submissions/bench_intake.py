"""Intake benchmark: throughput (MB/s) and peak memory of the intake path on large files.

    .venv/bin/python -m procbench.submissions.bench_intake [--size-mb 1024] [--json out.json]

Each scenario runs in its own subprocess, which reports its peak RSS (VmHWM: unlike ``ru_maxrss``
it does not inherit the parent's high-water mark across fork+exec).  Scenarios:

* ``stage``: the staging pass alone (size and line limits, sha256) over a SIZE-MB JSON-lines file;
* ``stream``: the full intake of that file with the limits raised: staging, then the task's reader
  validates every line (each a duplicate id) and the file is refused with 200 listed problems;
* ``gzip``: staging of the same content uploaded gzip-compressed (decompressed with the cap);
* ``valid``: a valid file end to end (validate, score, store), the gold answers of the OpenPI test
  split as predictions (the real data when present, else the bundled sample);
* ``burst``: 40 small valid submissions in a row to one store (the cost of one store transaction).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MiB = 1 << 20


def _make_stream(path: Path, size_mb: int) -> None:
    from procbench.runners.runtime.paths import SAMPLE_SUBMISSIONS_DIR

    line = (
        (SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl")
        .read_bytes()
        .splitlines(keepends=True)[0]
    )
    block = line * max(1, MiB // len(line))
    with path.open("wb") as handle:
        while handle.tell() < size_mb * MiB:
            handle.write(block)


def _gold_as_predictions(folder: Path, data_root: Path) -> Path:
    gold = data_root / "openpi" / "data" / "gold" / "test" / "id_answers.jsonl"
    out = folder / "gold-as-predictions.jsonl"
    out.write_text(
        "".join(
            json.dumps({"id": r["id"], "answers": r["answers"]}) + "\n"
            for r in map(json.loads, gold.read_text().splitlines())
        )
    )
    return out


def _scenario(name: str, work: Path, size_mb: int) -> dict[str, Any]:
    """Runs inside the subprocess."""
    from procbench.dsl.tasks import load_task
    from procbench.runners.runtime.paths import SAMPLE_DATA_ROOT, default_data_root
    from procbench.runners.runtime._types import InvalidPredictions
    from procbench.submissions import SubmissionRequest, submit
    from procbench.submissions.staging import IntakeLimits, stage

    stream = work / "stream.jsonl"
    raised = IntakeLimits(max_bytes=(size_mb + 64) * MiB)
    if name == "stage":
        start = time.perf_counter()
        with stage(stream, filename=None, limits=raised) as staged:
            size = staged.size_bytes
        return {"bytes": size, "seconds": time.perf_counter() - start}
    if name == "gzip":
        start = time.perf_counter()
        with stage(work / "stream.jsonl.gz", filename=None, limits=raised, scratch=work) as staged:
            size = staged.size_bytes
        return {"bytes": size, "seconds": time.perf_counter() - start}
    spec, runner = load_task("openpi")
    if name == "stream":
        runner.gold(SAMPLE_DATA_ROOT, "test")  # gold read outside the timing
        start = time.perf_counter()
        try:
            submit(
                SubmissionRequest(split="test", predictions=stream, model="m", team="t"),
                spec,
                runner,
                data_root=SAMPLE_DATA_ROOT,
                db_path=work / "stream.duckdb",
                limits=raised,
            )
        except InvalidPredictions as exc:
            outcome = f"refused with {len(exc.problems)} problems listed"
        else:
            outcome = "stored (unexpected)"
        return {
            "bytes": stream.stat().st_size,
            "seconds": time.perf_counter() - start,
            "outcome": outcome,
        }
    if name == "valid":
        root = default_data_root() or SAMPLE_DATA_ROOT
        path = _gold_as_predictions(work, root)
        runner.gold(root, "test")
        start = time.perf_counter()
        stored = submit(
            SubmissionRequest(split="test", predictions=path, model="m", team="t"),
            spec,
            runner,
            data_root=root,
            db_path=work / "valid.duckdb",
        )
        return {
            "bytes": path.stat().st_size,
            "seconds": time.perf_counter() - start,
            "items": stored.evaluation.n_items,
            "data": str(root),
        }
    if name == "burst":
        from procbench.runners.runtime.paths import SAMPLE_SUBMISSIONS_DIR

        base = (SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl").read_text()
        files = []
        for k in range(40):
            p = work / f"burst-{k}.jsonl"
            p.write_text(base.replace("afterwards", f"afterwards {k}", 1))
            files.append(p)
        runner.gold(SAMPLE_DATA_ROOT, "test")
        start = time.perf_counter()
        for p in files:
            submit(
                SubmissionRequest(split="test", predictions=p, model=p.stem, team="t"),
                spec,
                runner,
                data_root=SAMPLE_DATA_ROOT,
                db_path=work / "burst.duckdb",
            )
        return {
            "bytes": sum(p.stat().st_size for p in files),
            "seconds": time.perf_counter() - start,
            "submissions": len(files),
        }
    raise ValueError(name)


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(name: str, work: Path, size_mb: int) -> dict[str, Any]:
    env = {**os.environ}
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "procbench.submissions.bench_intake",
                "--scenario",
                name,
                "--work",
                str(work),
                "--size-mb",
                str(size_mb),
            ],
            stdout=out,
            env=env,
        )
        status = os.waitpid(proc.pid, 0)[1]
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"scenario {name} failed:\n{text}")
    result = json.loads(text.strip().splitlines()[-1])
    result["peak_rss_mib"] = round(result["peak_rss_mib"], 1)
    result["mb_per_s"] = (
        round(result["bytes"] / MiB / result["seconds"], 1) if result["seconds"] else None
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--scenarios", default="stage,stream,gzip,valid,burst")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario:
        result = _scenario(args.scenario, args.work, args.size_mb)
        result["peak_rss_mib"] = _peak_rss_mib()
        print(json.dumps(result))
        return
    names = args.scenarios.split(",")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="procbench-bench-") as tmp:
        work = Path(tmp)
        if {"stage", "stream", "gzip"} & set(names):
            _make_stream(work / "stream.jsonl", args.size_mb)
        if "gzip" in names:
            with (
                (work / "stream.jsonl").open("rb") as src,
                gzip.open(work / "stream.jsonl.gz", "wb", compresslevel=1) as dst,
            ):
                while chunk := src.read(MiB):
                    dst.write(chunk)
        for name in names:
            results[name] = _run(name, work, args.size_mb)
            r = results[name]
            extra = {
                k: v
                for k, v in r.items()
                if k not in ("bytes", "seconds", "peak_rss_mib", "mb_per_s")
            }
            print(
                f"{name:<7} {r['bytes'] / MiB:9.1f} MiB  {r['seconds']:8.2f} s  {r['mb_per_s'] or 0:8.1f} MiB/s  peak RSS {r['peak_rss_mib']:7.1f} MiB  "
                f"{extra or ''}",
                flush=True,
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

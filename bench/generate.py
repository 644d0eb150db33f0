"""Synthetic but realistic workloads: a data root holding k copies of a test split, and predictions.

Each generator reads a benchmark's real files (the data root when present, else the bundled
samples, which have the same layout), writes a data root where the split holds ``scale`` copies of
every item under fresh ids (copy 0 keeps the real ids), and a prediction file built from real
material: resampled real answers, perturbed gold tracks, real model outputs.  Everything is seeded.
"""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Workload:
    """What a measurement scores: ``task`` / ``split`` of ``data_root`` against ``predictions``."""

    benchmark: str
    task: str
    split: str
    scale: int
    data_root: Path
    predictions: Path
    n_items: int


def _jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# -- OpenPI ----------------------------------------------------------------------------------------
def openpi(source: Path, out: Path, scale: int, rng: random.Random) -> Workload:
    """Copies of the test steps; copies after the first resample their gold from real answers.

    Predictions keep ~40% of the gold answers, add 1-6 real answers of other steps, repeat some
    (the 2020 scorer counts duplicates) and sometimes say "There will be no change." or nothing.
    """
    gold_dir = source / "openpi" / "data" / "gold"
    split = "test"
    answers = _read_jsonl(gold_dir / split / "id_answers.jsonl")
    meta = {r["id"]: r for r in _read_jsonl(gold_dir / split / "id_question_metadata.jsonl")}
    answer_meta = {r["id"]: r for r in _read_jsonl(gold_dir / split / "id_answers_metadata.jsonl")}
    pool = [a for r in answers for a in r["answers"]]
    for other in ("train", "dev"):
        if (gold_dir / other / "id_answers.jsonl").is_file():
            pool += [
                a for r in _read_jsonl(gold_dir / other / "id_answers.jsonl") for a in r["answers"]
            ]
    target = out / "openpi" / "data" / "gold" / split
    target.mkdir(parents=True, exist_ok=True)
    n_items = 0
    # written as generated, one line at a time: a million-item split (issue #31) never sits in memory
    with (
        (target / "id_answers.jsonl").open("w", encoding="utf-8") as gold_file,
        (target / "id_question_metadata.jsonl").open("w", encoding="utf-8") as meta_file,
        (target / "id_answers_metadata.jsonl").open("w", encoding="utf-8") as answer_meta_file,
        (out / "predictions.jsonl").open("w", encoding="utf-8") as predictions_file,
    ):
        for copy in range(scale):
            for record in answers:
                item_id = record["id"] if copy == 0 else f"{record['id']}#{copy}"
                gold = (
                    list(record["answers"])
                    if copy == 0
                    else rng.sample(pool, len(record["answers"]))
                )
                gold_file.write(json.dumps({"id": item_id, "answers": gold}) + "\n")
                topic = meta.get(record["id"], {}).get("question_metadata", {"topic": "unknown"})
                meta_file.write(json.dumps({"id": item_id, "question_metadata": topic}) + "\n")
                listed = (
                    answer_meta.get(record["id"], {}).get("answers_metadata") if copy == 0 else None
                )
                if listed is None:
                    listed = [
                        {"answer": a, "modality": rng.choice(("with_image", "without_image"))}
                        for a in gold
                    ]
                answer_meta_file.write(
                    json.dumps({"id": item_id, "answers_metadata": listed}) + "\n"
                )
                predicted = [a for a in gold if rng.random() < 0.4] + rng.sample(
                    pool, rng.randint(1, 6)
                )
                if rng.random() < 0.1:
                    predicted += predicted[:2]
                rng.shuffle(predicted)
                if rng.random() < 0.04:
                    predicted = ["There will be no change."]
                elif rng.random() < 0.02:
                    predicted = []
                predictions_file.write(json.dumps({"id": item_id, "answers": predicted}) + "\n")
                n_items += 1
    return Workload("OpenPI", "openpi", split, scale, out, out / "predictions.jsonl", n_items)


# -- PARADISE --------------------------------------------------------------------------------------
def paradise(
    source: Path, out: Path, scale: int, rng: random.Random, task: str = "tip"
) -> Workload:
    """Copies of the test rows (row index = item id), the explicitness lists shifted alike; a model
    that is right 55% of the time."""
    data = Path("paradise", "src", "data")
    with (source / data / f"{task}_test.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    written, predictions = [header], []
    for copy in range(scale):
        for position, row in enumerate(body):
            index = copy * len(body) + position
            written.append([str(index), *row[1:]])
            label = int(row[header.index("label")])
            guess = (
                label if rng.random() < 0.55 else rng.choice([x for x in range(4) if x != label])
            )
            predictions.append({"id": index, "label": guess})
    target = out / data
    target.mkdir(parents=True, exist_ok=True)
    with (target / f"{task}_test.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(written)
    for threshold in ("0.5", "0.75"):
        listed = source / data / "rq_variations" / "rq3" / f"{task}_test{threshold}.csv"
        with listed.open(newline="", encoding="utf-8") as handle:
            members = list(csv.reader(handle))
        shifted = [members[0]] + [
            [str(copy * len(body) + int(m[0])), *m[1:]]
            for copy in range(scale)
            for m in members[1:]
        ]
        (target / "rq_variations" / "rq3").mkdir(parents=True, exist_ok=True)
        with (target / "rq_variations" / "rq3" / f"{task}_test{threshold}.csv").open(
            "w", newline="", encoding="utf-8"
        ) as handle:
            csv.writer(handle).writerows(shifted)
    _jsonl(out / "predictions.jsonl", predictions)
    return Workload(
        "PARADISE",
        f"paradise-{task}",
        "test",
        scale,
        out,
        out / "predictions.jsonl",
        len(written) - 1,
    )


# -- ProPara (leaderboard) ------------------------------------------------------------------------
PROPARA_ANSWERS = Path("propara", "aristo-leaderboard", "propara", "data", "test", "answers.tsv")
PROPARA_GRIDS = Path("propara", "propara", "data", "emnlp18", "grids.v1.test.tsv")
PID_STRIDE = 100_000


def _shift_pid_rows(lines: list[str], copy: int) -> list[str]:
    """TSV lines whose first field is a process id, with the id moved to copy ``copy``."""
    out = []
    for line in lines:
        head, sep, rest = line.partition("\t")
        out.append(
            f"{int(head) + copy * PID_STRIDE}{sep}{rest}" if head.strip().isdigit() else line
        )
    return out


def propara(source: Path, out: Path, scale: int, rng: random.Random) -> Workload:
    """Copies of the test processes (ids shifted); predictions are the gold action file with some
    MOVE destinations and NONE locations changed to other real locations (still valid rows)."""
    gold_lines = (source / PROPARA_ANSWERS).read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in gold_lines]
    locations = sorted({r[5] for r in rows if r[5] not in ("", "-", "?")}) or ["somewhere"]
    scaled, predicted = [], []
    for copy in range(scale):
        for line in _shift_pid_rows(gold_lines, copy):
            scaled.append(line)
            fields = line.split("\t")
            if fields[3] == "MOVE" and rng.random() < 0.3:
                fields[5] = rng.choice(locations)
            elif (
                fields[3] == "NONE"
                and fields[4] == fields[5]
                and fields[4] not in ("-", "")
                and rng.random() < 0.2
            ):
                fields[4] = fields[5] = rng.choice(locations)
            predicted.append("\t".join(fields))
    (out / PROPARA_ANSWERS).parent.mkdir(parents=True, exist_ok=True)
    (out / PROPARA_ANSWERS).write_text("\n".join(scaled) + "\n", encoding="utf-8")
    if (source / PROPARA_GRIDS).is_file():
        grid_lines = (source / PROPARA_GRIDS).read_text(encoding="utf-8").splitlines()
        (out / PROPARA_GRIDS).parent.mkdir(parents=True, exist_ok=True)
        (out / PROPARA_GRIDS).write_text(
            "\n".join(line for copy in range(scale) for line in _shift_pid_rows(grid_lines, copy))
            + "\n",
            encoding="utf-8",
        )
    (out / "predictions.tsv").write_text("\n".join(predicted) + "\n", encoding="utf-8")
    processes = len({r[0] for r in rows}) * scale
    return Workload("ProPara", "propara", "test", scale, out, out / "predictions.tsv", processes)


# -- ProPara NAACL'18 -----------------------------------------------------------------------------
NAACL_DIR = Path("propara", "propara", "tests", "fixtures", "eval")


def propara_naacl18(source: Path, out: Path, scale: int, rng: random.Random) -> Workload:
    """Copies of the test paragraphs in all three evaluation files; predictions take each
    participant's most likely location from the gold label grid, and the runner-up 20% of the time."""
    para_ids = [
        line
        for line in (source / NAACL_DIR / "para_id.test.txt").read_text().splitlines()
        if line.strip()
    ]
    labels = (source / NAACL_DIR / "gold_labels.test.tsv").read_text(encoding="utf-8").splitlines()
    moves = (
        (source / NAACL_DIR / "all-moves.full-grid.tsv").read_text(encoding="utf-8").splitlines()
    )
    target = out / NAACL_DIR
    target.mkdir(parents=True, exist_ok=True)
    (target / "para_id.test.txt").write_text(
        "\n".join(str(int(p) + c * PID_STRIDE) for c in range(scale) for p in para_ids) + "\n"
    )
    (target / "gold_labels.test.tsv").write_text(
        "\n".join(line for c in range(scale) for line in _shift_pid_rows(labels, c)) + "\n",
        encoding="utf-8",
    )
    header, body = moves[0], moves[1:]
    (target / "all-moves.full-grid.tsv").write_text(
        "\n".join([header, *(line for c in range(scale) for line in _shift_pid_rows(body, c))])
        + "\n",
        encoding="utf-8",
    )
    grids = source / PROPARA_GRIDS
    if grids.is_file():
        (out / PROPARA_GRIDS).parent.mkdir(parents=True, exist_ok=True)
        grid_lines = grids.read_text(encoding="utf-8").splitlines()
        (out / PROPARA_GRIDS).write_text(
            "\n".join(line for c in range(scale) for line in _shift_pid_rows(grid_lines, c)) + "\n",
            encoding="utf-8",
        )
    states: dict[tuple[str, str, str], dict[str, str]] = {}
    for line in labels:
        fields = line.split("\t")
        ranked = [fields[i] for i in range(4, len(fields), 2) if fields[i]]
        choice = ranked[1] if len(ranked) > 1 and rng.random() < 0.2 else ranked[0]
        states.setdefault((fields[0], fields[1], fields[2]), {})[fields[3]] = choice
    predicted = [
        f"{int(pid) + c * PID_STRIDE}\t{sid}\t{participant}\t{state.get('before', 'unk')}\t{state.get('after', 'unk')}"
        for c in range(scale)
        for (pid, sid, participant), state in states.items()
    ]
    (out / "predictions.tsv").write_text("\n".join(predicted) + "\n", encoding="utf-8")
    return Workload(
        "ProPara NAACL'18",
        "propara-naacl18",
        "test",
        scale,
        out,
        out / "predictions.tsv",
        len(para_ids) * scale,
    )


# -- PAGED -----------------------------------------------------------------------------------------
PAGED_DIR = Path("paged", "dataset", "procedural_graph_extraction")


def perturbed_flow_line(line: str, pool: list[str], rng: random.Random) -> str | None:
    """A predicted line made from a gold PAGED line: a flow (``->``) is dropped (None), swapped for
    one from ``pool``, or loses some words; every other line is kept."""
    roll = rng.random()
    if "->" in line and roll < 0.2:
        return None
    if "->" in line and roll < 0.3:
        return rng.choice(pool)
    if "->" in line and roll < 0.4:
        return " ".join(w for w in line.split(" ") if w == "->" or rng.random() > 0.15)
    return line


def paged(source: Path, out: Path, scale: int, rng: random.Random) -> Workload:
    """Copies of the test documents (dev where test is not staged); each prediction is the gold
    graph text with ~20% of its edge lines dropped, ~10% replaced by lines of other documents and
    some words dropped, as an imperfect extractor would write it."""
    from procbench.runners.paged.gold import document_from_record

    split = "test" if (source / PAGED_DIR / "test.json").is_file() else "dev"
    records = json.loads((source / PAGED_DIR / f"{split}.json").read_text(encoding="utf-8"))
    texts = [document_from_record(r).text.splitlines() for r in records]
    pool = [line for lines in texts for line in lines if "->" in line]
    stride = 10 ** len(str(max(int(r["file_index"]) for r in records)))
    scaled, predictions = [], []
    for copy in range(scale):
        for record, lines in zip(records, texts):
            file_index = int(record["file_index"]) + copy * stride
            scaled.append({**record, "file_index": file_index})
            output = [
                p for p in (perturbed_flow_line(line, pool, rng) for line in lines) if p is not None
            ]
            predictions.append({"id": file_index, "graph": "\n".join(output)})
    (out / PAGED_DIR).mkdir(parents=True, exist_ok=True)
    (out / PAGED_DIR / f"{split}.json").write_text(json.dumps(scaled), encoding="utf-8")
    _jsonl(out / "predictions.jsonl", predictions)
    return Workload("PAGED", "paged", split, scale, out, out / "predictions.jsonl", len(scaled))


# -- PM-LLM-Benchmark ------------------------------------------------------------------------------
PMLLM = Path("pm-llm-benchmark")


def pmllm(source: Path, out: Path, scale: int, rng: random.Random) -> Workload:
    """Copies of the 57 questions (question numbers shifted); each answer and verdict is a real
    model's answer and judge verdict for that question, from a randomly chosen staged model."""
    questions = sorted(
        p for p in (source / PMLLM / "questions").iterdir() if p.suffix in (".txt", ".png")
    )
    answers_dir = source / PMLLM / "answers"
    verdicts = sorted((source / PMLLM).glob("evaluation-*"))
    verdict_dir = verdicts[0] if verdicts else None
    by_question: dict[str, list[tuple[str, str | None]]] = {}
    for answer in sorted(answers_dir.glob("*_cat*.txt")) if answers_dir.is_dir() else []:
        model, _, rest = answer.name.partition("_cat")
        qid = "cat" + rest.split(".")[0]
        verdict = verdict_dir / answer.name if verdict_dir is not None else None
        text = answer.read_text(encoding="utf-8", errors="replace")
        judged = (
            verdict.read_text(encoding="utf-8", errors="replace")
            if verdict is not None and verdict.is_file()
            else None
        )
        by_question.setdefault(qid, []).append((text, judged))
    target = out / PMLLM / "questions"
    target.mkdir(parents=True, exist_ok=True)
    predictions = []
    for copy in range(scale):
        for question in questions:
            category, number, slug = question.stem.split("_", 2)
            qid = question.stem if copy == 0 else f"{category}_{int(number) + copy * 100}_{slug}"
            shutil.copyfile(question, target / f"{qid}{question.suffix}")
            options = by_question.get(question.stem) or [("(no answer)", "5.0/10 fallback verdict")]
            answer_text, verdict_text = rng.choice(options)
            predictions.append(
                {
                    "id": qid,
                    "answer": answer_text,
                    "verdict": verdict_text if verdict_text is not None else "5.0/10",
                }
            )
    _jsonl(out / "predictions.jsonl", predictions)
    return Workload(
        "PM-LLM-Benchmark",
        "pm-llm-benchmark",
        "main",
        scale,
        out,
        out / "predictions.jsonl",
        len(predictions),
    )


GENERATORS: dict[str, Callable[[Path, Path, int, random.Random], Workload]] = {
    "openpi": openpi,
    "propara": propara,
    "propara-naacl18": propara_naacl18,
    "paged": paged,
    "paradise-tip": paradise,
    "pm-llm-benchmark": pmllm,
}


def generate(name: str, source: Path, out: Path, scale: int, seed: int = 0) -> Workload:
    """Build workload ``name`` at ``scale`` under ``out`` (emptied first), seeded by name, scale and seed."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rng = random.Random(f"{name}:{scale}:{seed}")
    return GENERATORS[name](source, out, scale, rng)


def describe(workload: Workload) -> str:
    size = workload.predictions.stat().st_size
    buffer = io.StringIO()
    buffer.write(
        f"{workload.task}/{workload.split} x{workload.scale}: {workload.n_items} items, predictions {size / 1e6:.2f} MB"
    )
    return buffer.getvalue()

"""Validating a PM-LLM-Benchmark submission: one model's answers, with the judge's verdicts if any.

Two layouts:

* JSON lines ``{"id": "<question id>", "answer": "...", "verdict": "..."}`` (``verdict`` optional or
  null; other keys are ignored);
* upstream's layout: a folder of ``<model>_<question id>.txt`` answers (or a benchmark root holding
  ``answers/``), with verdicts read the same way from an ``evaluation-<judge>/`` folder beside it.

Questions without an answer are allowed: upstream simply sums what it has (docs/metrics.md §4.5).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from procbench.runners.runtime._types import (
    GoldSet,
    InvalidPredictions,
    PredictionWarning,
    Problem,
    ProblemList,
)
from procbench.runners.pmllm.naming import judge_folder, parse_result_file_name
from procbench.runners.pmllm.textio import read_text
from procbench.runners.runtime.predictions import EMPTY_FILE, ExtraFields, json_objects, listed_ids
from procbench.runners.runtime.registry import component


@dataclass(frozen=True)
class Answer:
    """A model's answer to one question and, once judged, the judge's verdict text."""

    question_id: str
    answer: str
    verdict: str | None = None

    @property
    def is_empty(self) -> bool:
        """Upstream does not judge empty answers; whitespace-only counts as empty here."""
        return not self.answer.strip()


def _read_json_lines(
    path: Path, known: set[str], problems: ProblemList, extra: ExtraFields
) -> dict[str, Answer]:
    answers: dict[str, Answer] = {}
    first_line: dict[str, int] = {}
    any_record = False
    for number, record, error in json_objects(path, '{"id": ..., "answer": ..., "verdict": ...}'):
        if error is not None:
            problems.append(Problem(number, error))
            continue
        any_record = True
        extra.see(number, record)
        qid, answer, verdict = record.get("id"), record.get("answer"), record.get("verdict")
        line_problems = []
        if not isinstance(qid, str):
            line_problems.append(
                f"id must be a question id string such as 'cat01_01_case_id_inference', got {qid!r}"
            )
        elif qid not in known:
            line_problems.append(f"unknown question id {qid!r}")
        if not isinstance(answer, str):
            line_problems.append(
                f"answer must be a string, got {answer!r}"
                if "answer" in record
                else "missing key 'answer'"
            )
        if verdict is not None and not isinstance(verdict, str):
            line_problems.append(f"verdict must be a string or null, got {verdict!r}")
        item_id = qid if isinstance(qid, str) and qid in known else None
        if not line_problems and item_id is not None and item_id in first_line:
            line_problems.append(
                f"duplicate id {item_id!r} (first given on line {first_line[item_id]})"
            )
        if (
            line_problems
            or item_id is None
            or not isinstance(answer, str)
            or not (verdict is None or isinstance(verdict, str))
        ):  # (any of the last three is a problem listed above)
            problems.extend(Problem(number, message, item_id) for message in line_problems)
            continue
        first_line[item_id] = number
        answers[item_id] = Answer(item_id, answer, verdict)
    if (
        not any_record and not problems
    ):  # issue #30: an empty file is refused as one, not scored 0 on every question
        problems.append(Problem(None, EMPTY_FILE))
    return answers


def _result_files(folder: Path, problems: ProblemList) -> dict[str, dict[str, Path]]:
    """Model -> question id -> file, for every ``<model>_<question id>.txt`` in the folder."""
    by_model: dict[str, dict[str, Path]] = defaultdict(dict)
    for path in sorted(folder.iterdir()):
        if "__init__" in path.name or path.name.startswith(".") or not path.is_file():
            continue
        parsed = parse_result_file_name(path.name)
        if parsed is None or path.suffix != ".txt":
            problems.append(Problem(None, f"{path.name}: not named <model>_<question id>.txt"))
            continue
        by_model[parsed.model][parsed.question_id] = path
    return by_model


def _pick_model(
    by_model: dict[str, dict[str, Path]], model: str, folder: Path, problems: ProblemList
) -> str | None:
    if model:
        if model not in by_model:
            problems.append(
                Problem(
                    None,
                    f"no answers of model {model!r} in {folder} (models there: {', '.join(sorted(by_model)) or 'none'})",
                )
            )
            return None
        return model
    if len(by_model) > 1:
        problems.append(
            Problem(
                None,
                f"{folder} holds answers of {len(by_model)} models ({', '.join(sorted(by_model))}): choose one with the parameter model",
            )
        )
        return None
    return next(iter(by_model), None)


def _verdict_folder(answers_dir: Path, judge: str, problems: ProblemList) -> Path | None:
    if judge:
        folder = answers_dir.parent / judge_folder(judge)
        if not folder.is_dir():
            problems.append(Problem(None, f"verdict folder {folder} not found"))
            return None
        return folder
    candidates = sorted(p for p in answers_dir.parent.glob("evaluation-*") if p.is_dir())
    if len(candidates) > 1:
        problems.append(
            Problem(
                None,
                f"several verdict folders beside {answers_dir} ({', '.join(p.name for p in candidates)}): choose one with the parameter judge",
            )
        )
        return None
    return candidates[0] if candidates else None


def _read_folder(
    path: Path, known: set[str], model: str, judge: str, problems: ProblemList
) -> dict[str, Answer]:
    answers_dir = path / "answers" if (path / "answers").is_dir() else path
    by_model = _result_files(answers_dir, problems)
    chosen = _pick_model(by_model, model, answers_dir, problems)
    if chosen is None:
        return {}
    answer_files = by_model[chosen]
    verdict_dir = _verdict_folder(answers_dir, judge, problems)
    verdict_files = (
        _result_files(verdict_dir, problems).get(chosen, {}) if verdict_dir is not None else {}
    )
    for qid, file in {**answer_files, **verdict_files}.items():
        if qid not in known:
            problems.append(Problem(None, f"{file.name}: unknown question id {qid!r}"))
    judged_only = sorted(q for q in verdict_files if q in known and q not in answer_files)
    if judged_only:
        warnings.warn(
            PredictionWarning(
                f"{len(judged_only)} verdicts without an answer file (scored 0: an empty answer scores 0 whatever its verdict): {', '.join(judged_only)}"
            )
        )
    answers = {}
    for qid in sorted(set(answer_files) | set(verdict_files)):
        if qid in known:
            answer = read_text(answer_files[qid]) if qid in answer_files else ""
            verdict = read_text(verdict_files[qid]) if qid in verdict_files else None
            answers[qid] = Answer(qid, answer, verdict)
    return answers


def read_submission(
    path: Path, gold_ids: list[str], *, model: str = "", judge: str = ""
) -> dict[str, Answer]:
    """Question id -> Answer (in gold order); raises InvalidPredictions listing every problem."""
    path = Path(path)
    known = set(gold_ids)
    problems = ProblemList()
    extra = ExtraFields(("id", "answer", "verdict"))
    if path.is_dir():
        answers = _read_folder(path, known, model, judge, problems)
    else:
        answers = _read_json_lines(path, known, problems, extra)
    if problems:
        raise InvalidPredictions(problems, str(path))
    extra.warn()
    missing = [qid for qid in gold_ids if qid not in answers]
    if missing:
        warnings.warn(
            PredictionWarning(
                f"{len(missing)} of {len(gold_ids)} questions have no answer and contribute 0: {listed_ids(missing)}"
            )
        )
    return {qid: answers[qid] for qid in gold_ids if qid in answers}


@component(
    "predictions",
    "pmllm.answers",
    fields={"question_id": "str", "answer": "str", "verdict": "optional(str)"},
)
def read_answers(
    path: Path, gold: GoldSet, *, model: str = "", judge: str = ""
) -> dict[str, Answer]:
    """A model's answers (JSON lines, or upstream's ``<model>_<question id>.txt`` folder) with optional verdicts.

    ``model`` picks one model in a folder holding several; ``judge`` picks the ``evaluation-<judge>``
    verdict folder beside it (default: the only one there, if any). Missing questions are allowed
    (warning); unknown ids, duplicates and wrong types are rejected with their line numbers.
    """
    return read_submission(Path(path), list(gold.items), model=model, judge=judge)

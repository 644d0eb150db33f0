"""Reading Inspect evaluation logs: ``.eval`` (a ZIP archive) or ``.json`` (one EvalLog object).

An ``.eval`` archive holds ``header.json`` (the EvalLog without samples; ``_journal/start.json``
while the run is still going) and one ``samples/<id>_epoch_<n>.json`` per sample and epoch (a
sample written twice is two members of one name: the last wins, as Inspect reads it).  A ``.json``
log has the samples inline under ``"samples"``.  Each sample (EvalSample) has ``id``, ``epoch``,
``input``, ``choices`` (multiple choice), ``target``, ``output`` (ModelOutput: ``completion`` and
``choices[].message.content``), ``scores`` (scorer name -> ``{value, answer, explanation}``),
``metadata`` and, when it failed, ``error``.

Inspect writes the archive's members with Zstandard (ZIP method 93), which Python 3.11's ``zipfile``
cannot decompress; those members are read raw and decompressed with the ``zstandard`` package
(:mod:`procbench.imports.zipped`).  Deflated and stored members go through ``zipfile`` as usual.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from procbench.imports.logged import (
    ImportFailed,
    ImportProblem,
    LoggedOutput,
    loads_log_json,
    object_or_empty,
)
from procbench.imports.zipped import ArchiveTooLarge, Budget, MemberError, read_member

SAMPLE_MEMBER = re.compile(r"^samples/.+_epoch_\d+\.json$")


def _content_text(content: Any) -> str | None:
    """ChatMessage content: a string, or a list of parts of which the text ones are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and p.get("type", "text") == "text"
        ]
        return "".join(parts) if parts else None
    return None


def completion(sample: dict[str, Any]) -> str | None:
    """``output.completion``, else the first output choice's message text."""
    output = sample.get("output") or {}
    if isinstance(output.get("completion"), str) and output["completion"]:
        return output["completion"]
    choices = output.get("choices") or []
    if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        return _content_text(choices[0]["message"].get("content"))
    return output.get("completion") if isinstance(output.get("completion"), str) else None


def stated_answer(sample: dict[str, Any]) -> str | None:
    """The answer a scorer extracted (``scores.<name>.answer``), preferring Inspect's ``choice`` scorer."""
    scores = sample.get("scores") or {}
    ordered = sorted(scores.items(), key=lambda kv: kv[0] != "choice")
    for _, score in ordered:
        if (
            isinstance(score, dict)
            and isinstance(score.get("answer"), str)
            and score["answer"].strip()
        ):
            return score["answer"].strip()
    return None


def _samples_from_zip(path: Path) -> Iterator[tuple[str, Any]]:
    budget = Budget.from_env()
    with zipfile.ZipFile(path) as archive:
        latest: dict[str, zipfile.ZipInfo] = {}
        for info in archive.infolist():  # the last member of a name wins
            if SAMPLE_MEMBER.match(info.filename):
                latest[info.filename] = info
        for name, info in latest.items():
            try:
                yield name, loads_log_json(read_member(archive, info, budget).decode("utf-8"))
            except (
                ValueError,
                MemberError,
            ) as exc:  # JSON, UTF-8 and too-deep errors: this sample's problem
                if isinstance(exc, ArchiveTooLarge):
                    raise
                yield (
                    name,
                    ValueError(str(exc)),
                )  # the message only: a JSON error holds the whole document


def _samples_from_json(path: Path) -> Iterator[tuple[str, Any]]:
    log = loads_log_json(Path(path).read_text(encoding="utf-8"))
    if not isinstance(log, dict) or "eval" not in log:
        raise ValueError("not an Inspect EvalLog (no 'eval' key)")
    samples = log.get("samples")
    if not samples:
        raise ValueError("the log has no samples (was it written with --no-log-samples?)")
    if not isinstance(samples, list):
        raise ValueError(f"'samples' is {type(samples).__name__}, not a list of samples")
    for position, sample in enumerate(samples):
        yield f"samples[{position}]", sample


def run_counts(path: Path) -> tuple[int, int] | None:
    """(completed, total) samples as the run's own log states them (``results.completed_samples`` / ``total_samples``), or None.

    Read from the archive's ``header.json`` (small), or from a ``.json`` log's top level; a log that does not say is None.
    """
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
                if "header.json" not in names:
                    return None
                header = loads_log_json(
                    read_member(archive, archive.getinfo("header.json"), Budget.from_env()).decode(
                        "utf-8"
                    )
                )
        else:
            header = loads_log_json(Path(path).read_text(encoding="utf-8"))
    except (ValueError, OSError, zipfile.BadZipFile, MemberError):
        return None
    results = header.get("results") if isinstance(header, dict) else None
    if not isinstance(results, dict):
        return None
    completed, total = results.get("completed_samples"), results.get("total_samples")
    if (
        isinstance(completed, int)
        and isinstance(total, int)
        and not isinstance(completed, bool)
        and not isinstance(total, bool)
        and 0 <= completed <= total
    ):
        return completed, total
    return None


def read_log(path: Path, *, epoch: int = 1) -> list[LoggedOutput]:
    """The samples of one epoch of an Inspect log; raises ImportFailed listing every problem.

    Samples are taken one at a time as they are decompressed: only what each one yields is kept, so the memory a log
    takes is about one sample's beside the outputs (the archive's limits bound what is decompressed in all)."""
    source = str(path)
    problems: list[ImportProblem] = []
    outputs: list[LoggedOutput] = []
    epochs: set[int] = set()
    try:
        for where, sample in (
            _samples_from_zip(path) if zipfile.is_zipfile(path) else _samples_from_json(path)
        ):
            _take(where, sample, epoch, problems, outputs, epochs)
    except ArchiveTooLarge as exc:
        raise ImportFailed([ImportProblem("file", str(exc))], source) from None
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise ImportFailed(
            [ImportProblem("file", f"cannot read an Inspect log: {exc}")], source
        ) from None
    if not outputs and not problems:
        problems.append(
            ImportProblem(
                "file",
                f"no samples of epoch {epoch} (epochs in the log: {', '.join(map(str, sorted(epochs))) or 'none'})",
            )
        )
    if problems:
        raise ImportFailed(problems, source)
    return outputs


def _take(
    where: str,
    sample: Any,
    epoch: int,
    problems: list[ImportProblem],
    outputs: list[LoggedOutput],
    epochs: set[int],
) -> None:
    """One sample (or the error reading it) into ``outputs`` or ``problems``; the epochs seen into ``epochs``."""
    if isinstance(sample, Exception):
        problems.append(ImportProblem(where, f"not valid JSON: {sample}"))
        return
    if not isinstance(sample, dict) or "id" not in sample:
        problems.append(ImportProblem(where, "not an Inspect sample (no 'id')"))
        return
    sample_epoch, problem = _epoch(sample.get("epoch", 1))
    if problem is None:
        problem = _shape_problem(sample)
    if problem is not None:
        problems.append(ImportProblem(where, problem))
        return
    epochs.add(sample_epoch)
    if sample_epoch != epoch:
        return
    metadata = object_or_empty(sample.get("metadata"))
    if sample.get(
        "error"
    ):  # ImportOptions.errored decides: a problem (refuse), a wrong answer, or left out (skip)
        error = sample["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        outputs.append(
            LoggedOutput(
                where,
                sample["id"],
                metadata,
                error=str(message)[:120] or "error",
                fields_root="metadata",
            )
        )
        return
    options = tuple(str(c) for c in sample.get("choices") or ())
    text, answer = completion(sample), stated_answer(sample)
    chosen = _letter_index(answer) if answer is not None else None
    outputs.append(
        LoggedOutput(
            where,
            sample["id"],
            metadata,
            text=text if text is not None else answer,
            choice_texts=options,
            choice=chosen,
            fields_root="metadata",
        )
    )


def _epoch(value: Any) -> tuple[int, str | None]:
    """A sample's ``epoch``: a whole number from 1 (Inspect counts from 1), or the problem with it."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value, None
    return 0, f"'epoch' must be a whole number from 1, got {json.dumps(value)[:40]}"


_JSON_KINDS = {list: "a list", dict: "an object", str: "a string", type(None): "null"}


def _shape_problem(sample: dict[str, Any]) -> str | None:
    """What in a sample's layout the reader cannot use (a field of the wrong JSON type), or None."""
    expected: dict[str, tuple[type, ...]] = {
        "choices": (list, type(None)),
        "output": (dict, type(None)),
        "scores": (dict, type(None)),
        "metadata": (dict, type(None)),
        "error": (dict, str, type(None)),
    }
    for key, kinds in expected.items():
        if key in sample and not isinstance(sample[key], kinds):
            return f"'{key}' is {json.dumps(sample[key])[:40]}: not {' or '.join(_JSON_KINDS[k] for k in kinds)}"
    if not isinstance(sample["id"], (str, int)) or isinstance(sample["id"], bool):
        return f"'id' is {json.dumps(sample['id'])[:40]}: not a string or a whole number"
    choices = (sample.get("output") or {}).get("choices")
    if choices is not None and not isinstance(choices, list):
        return "'output.choices' is not a list"
    return None


def _letter_index(answer: str) -> int | None:
    """'B' -> 1; anything that is not a single letter -> None (left for the task mapping to parse)."""
    letter = answer.strip().strip("()").strip()
    return ord(letter.upper()) - ord("A") if len(letter) == 1 and letter.isalpha() else None

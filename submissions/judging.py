"""Who judged a submission's verdicts (issue #17): the submitter ("self") or the board's own judge.

A task graded by an LLM judge (PM-LLM) reads verdicts from the prediction file when the file carries
them.  Those verdicts are the submitter's word, so intake records ``judge = "self"`` in the
submission's metadata, and the board ranks such rows apart from rows judged by the board's own
judge (``procbench.leaderboard.boardview``).  The ``judge`` key is intake's alone: whatever a submitter puts
under it in their metadata is dropped, so nobody can claim the board's judge graded their file.

The board's own judge (:class:`BoardJudge`, configured by the board's operator through
``PROCBENCH_BOARD_JUDGE_*``): when one is configured, intake discards the verdicts a file carries
for a task whose spec declares a ``judge`` template, grades the answers itself with the spec's
prompts, and records ``judge = <judge model>``.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# SHA-256 without OpenSSL for small inputs (issue #31)
from procbench.runners.runtime import digests
from procbench.runners.runtime._types import GoldSet
from procbench.runners.runtime.judge_terms import JUDGE, JUDGE_IMAGE, JudgeError

if TYPE_CHECKING:  # the judge's client (Jinja2, the PM-LLM package) is imported when a judge grades
    from procbench.dsl.model import TaskSpec
    from procbench.runners.pmllm.judge import JudgeSettings

JUDGE_KEY = "judge"
SELF = "self"  # the verdicts came with the prediction file

ENV_URL = "PROCBENCH_BOARD_JUDGE_URL"  # an OpenAI-compatible base URL (…/v1)
ENV_MODEL = "PROCBENCH_BOARD_JUDGE_MODEL"
ENV_KEY = "PROCBENCH_BOARD_JUDGE_KEY"  # optional
ENV_CACHE = "PROCBENCH_BOARD_JUDGE_CACHE"  # optional; default: ``<store>.judge`` beside the store
ENV_TIMEOUT = "PROCBENCH_BOARD_JUDGE_TIMEOUT"  # optional; seconds, overall deadline of one request


@dataclass(frozen=True)
class BoardJudge:
    """The board's own judge, asked at intake.  Its own variables, apart from the ``procbench judge``
    command's ``PROCBENCH_JUDGE_*`` (a submitter's tool): grading at intake is the operator's choice."""

    base_url: str
    model: str
    api_key: str = ""
    cache_dir: Path | None = None  # None: ``<store>.judge`` beside the store
    timeout_s: float = 120.0
    max_retries: int = 3
    concurrency: int = 4
    backoff_s: float = 2.0

    @classmethod
    def from_env(cls) -> BoardJudge | None:
        """The configured judge, None when neither URL nor model is set; JudgeError for a half or bad configuration."""
        url, model = os.environ.get(ENV_URL, "").strip(), os.environ.get(ENV_MODEL, "").strip()
        if not url and not model:
            return None
        if not url or not model:
            raise JudgeError(
                f"the board's judge is half configured: set both {ENV_URL} and {ENV_MODEL}, or neither"
            )
        if model == SELF:
            raise JudgeError(f"{ENV_MODEL} may not be {SELF!r} (the mark of self-judged rows)")
        timeout = os.environ.get(ENV_TIMEOUT, "").strip()
        try:
            timeout_s = float(timeout) if timeout else cls.timeout_s
        except ValueError:
            raise JudgeError(
                f"{ENV_TIMEOUT} must be a number of seconds, got {timeout!r}"
            ) from None
        if not timeout_s > 0:
            raise JudgeError(f"{ENV_TIMEOUT} must be positive, got {timeout!r}")
        cache = os.environ.get(ENV_CACHE, "").strip()
        return cls(
            base_url=url,
            model=model,
            api_key=os.environ.get(ENV_KEY, ""),
            cache_dir=Path(cache) if cache else None,
            timeout_s=timeout_s,
        )

    def settings(self, spec: TaskSpec) -> JudgeSettings:
        """Client settings with the spec's ``judge`` / ``judge_image`` prompts."""
        from procbench.runners.pmllm.judge import JudgeSettings

        text, image = spec.template(JUDGE), spec.template(JUDGE_IMAGE)
        if text is None:
            raise JudgeError(
                f"task {spec.name!r} declares no {JUDGE!r} template: no judge grades it"
            )
        settings = JudgeSettings(
            base_url=self.base_url,
            model=self.model,
            api_key=self.api_key,
            concurrency=self.concurrency,
            max_retries=self.max_retries,
            backoff_s=self.backoff_s,
            timeout_s=self.timeout_s,
            template=text,
        )
        # without a judge_image template, image questions keep the client's default prompt
        return settings if image is None else dataclasses.replace(settings, image_template=image)

    def grade(
        self,
        spec: TaskSpec,
        gold: GoldSet,
        records: Mapping[str, Any],
        metadata: Mapping[str, Any],
        *,
        db_path: Path | None,
    ) -> dict[str, Any]:
        """``records`` with the submitter's verdicts discarded and every non-empty answer graded by this judge.

        The verdict cache is ``cache_dir``, else ``<store>.judge`` beside ``db_path`` (never the
        ``procbench judge`` command's cache, which a submitter's runs fill), else none kept.
        Raises JudgeError (the endpoint refused or kept failing; nothing is half graded)."""
        from procbench.runners.pmllm.judge import judge_answers

        answers = {qid: without_verdict(record) for qid, record in records.items()}
        cot = wants_cot(
            metadata
        )  # the prompt's chain-of-thought sentence, as `procbench judge --cot`
        with tempfile.TemporaryDirectory(prefix="procbench-judge-") as scratch:
            cache = self.cache_dir or (
                Path(db_path).with_name(Path(db_path).name + ".judge")
                if db_path is not None
                else Path(scratch)
            )
            return judge_answers(
                gold.items, answers, self.settings(spec), cot=cot, cache_dir=cache
            ).answers


def regrade_for_rescore(
    spec: TaskSpec, gold: GoldSet, records: Mapping[str, Any], metadata: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The records a re-scoring job scores: those of a row the board's judge graded at intake are graded
    again by that judge (its verdicts are not in the stored file, which may carry the submitter's own);
    JudgeError when this process has no such judge configured, so the row fails rather than being
    re-scored with the submitter's verdicts under the board judge's name."""
    judge = judged_by(metadata)
    if not judge or judge == SELF or not judged_task(spec):
        return records
    board = BoardJudge.from_env()
    if board is None or board.model != judge:
        raise JudgeError(
            f"graded by the board's judge {judge!r} at intake, whose verdicts are not in the stored file: re-scoring needs that judge ({ENV_URL} and "
            f"{ENV_MODEL}={judge}); the stored row keeps the verdicts it was scored with"
        )
    return board.grade(spec, gold, records, metadata, db_path=None)


def wants_cot(metadata: Mapping[str, Any]) -> bool:
    """Whether the judge's prompt carries the chain-of-thought sentence (metadata ``cot``, as ``procbench judge --cot``)."""
    return metadata.get("cot") in (True, "true", "True", 1)


def prompt_digest(spec: TaskSpec, metadata: Mapping[str, Any]) -> str:
    """sha256 of what the board's judge is prompted with for a submission (issue #34): the spec's ``judge`` and
    ``judge_image`` templates and whether the chain-of-thought sentence is on; '' for a task no judge grades.

    The templates are spec text, so they are also in the task's fingerprint; the judge's model is not (it is
    the operator's configuration), and is recorded as the row's ``judge`` metadata instead."""
    if not judged_task(spec):
        return ""
    parts = [
        spec.template(JUDGE) or "",
        spec.template(JUDGE_IMAGE) or "",
        f"cot={wants_cot(metadata)}",
    ]
    return digests.sha256("\x1f".join(parts).encode()).hexdigest()


def board_prompt_digest(spec: TaskSpec, metadata: Mapping[str, Any]) -> str:
    """The row's ``judge_prompt_digest``: :func:`prompt_digest` where the board's own judge graded it (metadata
    ``judge`` names a model); '' for self-judged rows (the submitter's prompts are unknown) and rows no judge graded."""
    return prompt_digest(spec, metadata) if judged_by(metadata) not in ("", SELF) else ""


def judged_task(spec: TaskSpec) -> bool:
    """Whether a task's answers are graded by an LLM judge: its spec declares a ``judge`` template."""
    return spec.template(JUDGE) is not None


def without_verdict(record: Any) -> Any:
    """A record with its ``verdict`` discarded (None); records without one are returned as they are."""
    if isinstance(record, Mapping):
        return {**record, "verdict": None} if "verdict" in record else record
    if (
        dataclasses.is_dataclass(record)
        and not isinstance(record, type)
        and any(f.name == "verdict" for f in dataclasses.fields(record))
    ):
        return dataclasses.replace(record, verdict=None)
    return record


def carries_verdicts(records: Mapping[str, Any]) -> bool:
    """Whether a reader's records hold verdicts read from the file (a ``verdict`` that is not None)."""
    for record in records.values():
        verdict = (
            record.get("verdict")
            if isinstance(record, Mapping)
            else getattr(record, "verdict", None)
        )
        if verdict is not None:
            return True
    return False


def mark(
    metadata: Mapping[str, Any], records: Mapping[str, Any], *, board_judge: str = ""
) -> dict[str, Any]:
    """``metadata`` with ``judge`` set by intake: ``board_judge`` when the board's own judge graded the
    answers (the file's verdicts discarded, :meth:`BoardJudge.grade`), else ``"self"`` when the file
    carried verdicts, else absent."""
    marked = {k: v for k, v in metadata.items() if k != JUDGE_KEY}
    if board_judge:
        marked[JUDGE_KEY] = board_judge
    elif carries_verdicts(records):
        marked[JUDGE_KEY] = SELF
    return marked


def judged_by(metadata: Mapping[str, Any]) -> str:
    """The stored mark: ``"self"``, the board judge's name, or ``""`` (no verdicts involved)."""
    value = metadata.get(JUDGE_KEY)
    return value if isinstance(value, str) else ""

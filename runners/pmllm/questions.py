"""The PM-LLM-Benchmark questions (``pm-llm-benchmark/questions/``) as a GoldSet.

Text questions are ``catNN_MM_<slug>.txt``; the visual ones (cat07) are ``.png`` images whose
answering prompt is a fixed sentence. Item id = question id = file name without extension. Items
come in sorted question-id order, the order the sums are taken in (docs/metrics.md §4.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from procbench.runners.runtime._types import GoldSet
from procbench.runners.pmllm.naming import CATEGORIES, QUESTION_ID, category_of, is_vision
from procbench.runners.pmllm.textio import read_text
from procbench.runners.runtime.registry import component

QUESTIONS_DIR = Path("pm-llm-benchmark", "questions")
SPLIT = "main"
IMAGE_PROMPT = "Can you describe the provided visualization?"
SUFFIXES = {".txt": "text", ".png": "vision"}

Modality = Literal["text", "vision"]
# The contract: Question's attributes and the slice labels (category = "cat" + two digits, as read_questions writes it).
QUESTION_FIELDS = {
    "question_id": "str",
    "category": "int",
    "modality": "enum(text, vision)",
    "text": "str",
    "image": "optional(any)",
}
LABEL_VALUES = {
    "category": tuple(f"cat{c:02d}" for c in CATEGORIES),
    "modality": get_args(Modality),
}


@dataclass(frozen=True)
class Question:
    """One benchmark question: the prompt text for text questions, the image path for visual ones."""

    question_id: str
    category: int
    modality: Modality
    text: str
    image: Path | None = None

    @property
    def answering_prompt(self) -> str:
        """What the answering model receives (with the image, for visual questions)."""
        return IMAGE_PROMPT if self.image is not None else self.text


def load_questions(data_root: Path) -> dict[str, Question]:
    """Question id -> Question, sorted by question id; a .txt and a .png with one id is an error."""
    folder = Path(data_root) / QUESTIONS_DIR
    if not folder.is_dir():
        raise FileNotFoundError(f"PM-LLM-Benchmark questions folder not found: {folder}")
    questions: dict[str, Question] = {}
    for path in sorted(folder.iterdir()):
        modality = SUFFIXES.get(path.suffix.lower())
        if modality is None or not QUESTION_ID.fullmatch(path.stem):
            continue
        if path.stem in questions:
            raise ValueError(f"two question files for {path.stem} in {folder}")
        if modality == "vision" and not is_vision(path.stem):
            raise ValueError(f"image question outside category 7: {path}")
        text, image = (
            (read_text(path), None) if modality == "text" else (IMAGE_PROMPT, path.resolve())
        )
        questions[path.stem] = Question(path.stem, category_of(path.stem), modality, text, image)  # type: ignore[arg-type]
    if not questions:
        raise FileNotFoundError(f"no catNN_MM_*.txt/.png question files in {folder}")
    return dict(sorted(questions.items()))


@component("reader", "pmllm.questions", fields=QUESTION_FIELDS, labels=LABEL_VALUES)
def read_questions(data_root: Path, split: str) -> GoldSet:
    """All PM-LLM-Benchmark questions (one split, ``main``); slices ``category`` (cat01..cat08) and ``modality`` (text/vision)."""
    if split != SPLIT:
        raise ValueError(
            f"unknown split {split!r} for PM-LLM-Benchmark; the only split is {SPLIT!r}"
        )
    questions = load_questions(Path(data_root))
    labels = {
        qid: {"category": f"cat{q.category:02d}", "modality": q.modality}
        for qid, q in questions.items()
    }
    return GoldSet(items=questions, labels=labels)

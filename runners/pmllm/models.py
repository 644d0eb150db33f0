"""Model metadata for PM-LLM-Benchmark: reasoning / chain-of-thought flags, open source, size class.

The reasoning predicates reproduce the name rules of docs/metrics.md §4.4 for models not yet on the
published leaderboards; for staged models, prefer the materialised lists read from the published
files (``leaderboard_lrms_cot_gpt-5.4.md`` for the CoT penalty, the OS column of
``leaderboard_gpt-5.4.md`` for open source), which include upstream's manual overrides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

BENCHMARK_DIR = "pm-llm-benchmark"
COT_LEADERBOARD = "leaderboard_lrms_cot_gpt-5.4.md"
MAIN_LEADERBOARD = "leaderboard_gpt-5.4.md"
MODEL_INFO = Path("hallucinations", "model_info.json")
MODEL_IS_OS = Path("hallucinations", "model_is_os.json")

_SECTION = re.compile(r"^### (.+?)\s+=>")
_NOT_REASONING = ("non-reasoning", "nothink", "no-think", "-none")
_REASONING_WORDS = (
    "reason", "think", "qwq", "qvq", "cogito", "exaone", "gpt-oss", "grok-code", "magistral", "glm", "kimi-k",
    "marco", "mimo-v", "minimax-m", "nemotron", "olmo-", "step-", "trinity", "intellect-",
)  # fmt: skip
_O_SERIES = re.compile(r"(?:^|-)o\d+(?=-|$)")
_GPT = re.compile(r"(?:^|-)(?:chat)?gpt-(\d+)(?=[.-]|$)")
_GEMINI_25_PRO = re.compile(r"(?:^|-)gemini-2\.[5-9].*pro")
_GEMINI = re.compile(r"(?:^|-)gemini-(\d+)")
_GROK = re.compile(r"(?:^|-)grok-(\d+)")
_GEMMA = re.compile(r"(?:^|-)gemma-?(\d+)")
_DEEPSEEK = re.compile(r"deepseek.*(?:r\d|v[4-9]|\d\d)")
_HIDDEN_PREFIX = re.compile(r"(?:^|-)(?:claude-|gemini-|gemma)")


@dataclass(frozen=True)
class ManualConfig:
    """The parts of an upstream ``models_config.json`` "manual" entry that the predicates look at."""

    provider: str = ""
    reasoning_effort: str | None = None
    thinking_tokens: int = 0
    payload_requests_reasoning: bool = False

    def enables_reasoning(self) -> bool:
        effort = (self.reasoning_effort or "none").lower()
        return effort != "none" or self.thinking_tokens > 0 or self.payload_requests_reasoning


def normalised_name(name: str) -> str:
    """Lower case with '/', ':', '_' and spaces turned into '-'."""
    return re.sub(r"[/:_ ]", "-", name.lower())


def _major_at_least(pattern: re.Pattern[str], n: str, minimum: int) -> bool:
    return any(int(m.group(1)) >= minimum for m in pattern.finditer(n))


def _is_qwen_reasoning(n: str) -> bool:
    return "qwen" in n and "instruct" not in n


def is_large_reasoning_model(name: str, manual: ManualConfig | None = None) -> bool:
    """LRM(n) of docs/metrics.md §4.4 (the leaderboard's LRM column)."""
    n = normalised_name(name)
    if any(word in n for word in _NOT_REASONING):
        return False
    if manual is not None and manual.enables_reasoning():
        return True
    if _is_qwen_reasoning(n) or any(word in n for word in _REASONING_WORDS):
        return True
    return (
        bool(_O_SERIES.search(n))
        or _major_at_least(_GPT, n, 5)
        or bool(_GEMINI_25_PRO.search(n))
        or _major_at_least(_GEMINI, n, 3)
        or _major_at_least(_GROK, n, 4)
        or _major_at_least(_GEMMA, n, 4)
        or bool(_DEEPSEEK.search(n))
    )


def _hides_reasoning(n: str) -> bool:
    """Families whose APIs return only the final answer (claude, gemini, gemma, o-series, GPT >= 5, grok >= 4)."""
    return (
        bool(_HIDDEN_PREFIX.search(n))
        or bool(_O_SERIES.search(n))
        or _major_at_least(_GPT, n, 5)
        or _major_at_least(_GROK, n, 4)
    )


def shows_chain_of_thought(name: str, manual: ManualConfig | None = None) -> bool:
    """CoT(n) of docs/metrics.md §4.4: an LRM whose visible answer includes its reasoning (rule for new models)."""
    if not is_large_reasoning_model(name, manual):
        return False
    n = normalised_name(name)
    manual_visible = (
        manual is not None
        and manual.provider.lower() not in ("claude", "google", "openai")
        and manual.payload_requests_reasoning
    )
    return _is_qwen_reasoning(n) or manual_visible or not _hides_reasoning(n)


def _section_names(path: Path) -> tuple[str, ...]:
    if not path.is_file():
        raise FileNotFoundError(f"PM-LLM-Benchmark leaderboard not found: {path}")
    names = (_SECTION.match(line) for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(m.group(1) for m in names if m)


@lru_cache(maxsize=8)
def published_cot_models(data_root: Path) -> frozenset[str]:
    """The materialised CoT-penalised models: the per-model sections of ``leaderboard_lrms_cot_gpt-5.4.md``."""
    return frozenset(_section_names(Path(data_root) / BENCHMARK_DIR / COT_LEADERBOARD))


def cot_penalised(
    name: str, data_root: Path | None = None, manual: ManualConfig | None = None
) -> bool:
    """Whether the CoT penalty applies: the published list when the model is on the leaderboard, else the rule."""
    if data_root is not None:
        leaderboard = Path(data_root) / BENCHMARK_DIR / MAIN_LEADERBOARD
        if leaderboard.is_file() and name in _section_names(leaderboard):
            return name in published_cot_models(Path(data_root))
    return shows_chain_of_thought(name, manual)


@lru_cache(maxsize=8)
def published_flags(data_root: Path) -> Mapping[str, tuple[bool, bool]]:
    """Full model name -> (OS, LRM) as printed in the main leaderboard table (rows follow the sections)."""
    lines = (
        (Path(data_root) / BENCHMARK_DIR / MAIN_LEADERBOARD)
        .read_text(encoding="utf-8")
        .splitlines()
    )
    names = [m.group(1) for m in map(_SECTION.match, lines) if m]
    table_end = next(i for i, line in enumerate(lines) if line.startswith("### "))
    rows = [
        line
        for line in lines[:table_end]
        if line.startswith("| ") and not line.startswith(("| Model", "| ---"))
    ]
    if len(rows) != len(names):
        raise ValueError(
            f"{MAIN_LEADERBOARD}: {len(rows)} table rows but {len(names)} model sections"
        )
    flags = {}
    for name, row in zip(names, rows):
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        flags[name] = ("white_check_mark" in cells[2], "white_check_mark" in cells[3])
    return flags


# Fallback for models on no published list: families with open weights (an approximation of
# upstream's ``is_open_source``, whose code is not available here; see open_source()).
_OPEN_WEIGHT_FAMILIES = (
    "qwen", "deepseek", "kimi", "glm", "minimax", "llama", "gemma", "phi", "granite", "gpt-oss", "mistral-small",
    "mistral-large", "ministral", "nemotron", "hermes", "intellect", "trinity", "olmo", "step-", "mimo",
)  # fmt: skip


def open_source(name: str, data_root: Path | None = None) -> bool:
    """OS flag: the leaderboard's OS column, else ``model_is_os.json``, else an open-weight family match."""
    if data_root is not None:
        root = Path(data_root)
        if (root / BENCHMARK_DIR / MAIN_LEADERBOARD).is_file():
            published = published_flags(root)
            if name in published:
                return published[name][0]
        listed = root / BENCHMARK_DIR / MODEL_IS_OS
        if listed.is_file():
            flags = json.loads(listed.read_text(encoding="utf-8"))
            if name in flags:
                return bool(flags[name])
    n = normalised_name(name)
    return any(family in n for family in _OPEN_WEIGHT_FAMILIES)


SizeClass = Literal[
    "commercial", "big open-source", "small (<=8 GB)", "tiny (<=4 GB)", "open-source (size unknown)"
]
# Memory footprint taken as 1 GB per billion parameters (8-bit weights): "<= 8 GB" means at most 8 B
# total parameters and "<= 4 GB" at most 4 B. The classes are disjoint: tiny, then small, then big.
TINY_MAX_PARAMS_B = 4.0
SMALL_MAX_PARAMS_B = 8.0


def parameter_count(name: str, model_info: Mapping[str, list[float]]) -> float | None:
    """Total parameters (billions): the first element of ``model_info.json`` for the name.

    Exact key first, else the substring match upstream uses for its small leaderboard (a key inside
    the name, or the name inside a key, e.g. ``GPT-5.5-Pro`` in ``ChatGPT-5.5-Pro-20260422``); the
    longest matching key wins. ``None`` when absent or listed without numbers.
    """
    values = model_info.get(name)
    if values is None:
        matches = sorted(
            (key for key in model_info if key in name or name in key), key=len, reverse=True
        )
        values = model_info[matches[0]] if matches else None
    return float(values[0]) if values else None


def load_model_info(data_root: Path) -> dict[str, list[float]]:
    path = Path(data_root) / BENCHMARK_DIR / MODEL_INFO
    if not path.is_file():
        raise FileNotFoundError(f"PM-LLM-Benchmark model info not found: {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def size_class(name: str, *, is_open_source: bool, params_b: float | None) -> SizeClass:
    """Commercial (closed weights) or, for open-weight models, tiny / small / big by parameter count."""
    if not is_open_source:
        return "commercial"
    if params_b is None:
        return "open-source (size unknown)"
    if params_b <= TINY_MAX_PARAMS_B:
        return "tiny (<=4 GB)"
    if params_b <= SMALL_MAX_PARAMS_B:
        return "small (<=8 GB)"
    return "big open-source"


def model_size_class(name: str, data_root: Path) -> SizeClass:
    """``size_class`` with the OS flag and parameter count looked up in the staged metadata."""
    return size_class(
        name,
        is_open_source=open_source(name, data_root),
        params_b=parameter_count(name, load_model_info(data_root)),
    )

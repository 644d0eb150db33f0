"""Process prompts (topics) from the EMNLP'18 grids TSV: the only source of the prompt slice (docs/metrics.md §2A.9).

Each paragraph block has a row ``pid <empty> PROMPT: <prompt> ...``; column 1 is the paragraph id,
which is the leaderboard process id and the NAACL'18 paragraph id.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

PROMPT_MARKER = "PROMPT:"
UNKNOWN_PROMPT = "unknown"


def read_prompts(path: Path) -> dict[str, str]:
    """Paragraph id (str) -> prompt text; an empty mapping (with a warning) when the file is absent."""
    if not path.is_file():
        warnings.warn(f"no grids file at {path}: the prompt slice is not available", stacklevel=2)
        return {}
    prompts: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if PROMPT_MARKER not in line:  # most lines of a grid (one in eight or so has a prompt)
            continue
        fields = line.split("\t")
        if len(fields) >= 3 and fields[2].startswith(PROMPT_MARKER):
            pid = fields[0].strip()
            prompts[str(int(pid)) if pid.isdigit() else pid] = fields[2][
                len(PROMPT_MARKER) :
            ].strip()
    return prompts


def prompt_labels(item_ids: Iterable[str], prompts: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """``{"prompt": ...}`` per item; "unknown" where the grids have no prompt for it; none without grids."""
    if not prompts:
        return {item: {} for item in item_ids}
    return {item: {"prompt": prompts.get(item, UNKNOWN_PROMPT)} for item in item_ids}

"""Executable docs: the files and expected outputs a guide marks with ``<!-- file: ... -->`` / ``<!-- expected: ... -->``."""

from __future__ import annotations

import re
from pathlib import Path

BLOCK = re.compile(r"<!-- (file|expected): (\S+) -->\n```[a-z]*\n(.*?)```", re.S)


def extract(doc: Path, root: Path) -> dict[str, str]:
    """Write every file block of ``doc`` under ``root``; return the expected blocks by name."""
    expected = {}
    for kind, name, body in BLOCK.findall(doc.read_text()):
        if kind == "file":
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body)
        else:
            expected[name] = body
    return expected

"""Reading a user's text file into lines exactly as upstream's ``for line in open(path)`` would."""

from __future__ import annotations

import io
from pathlib import Path

from procbench.runners.runtime._types import Problem


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split like Python text-mode iteration (universal newlines only:
    LF, CR, CRLF; unlike ``str.splitlines`` a form feed or U+2028 inside a cell does not split)."""
    return list(io.StringIO(text, newline=None))


def decode_text(path: Path) -> tuple[str, Problem | None]:
    """The file's text, or no text and a problem naming the first line that is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        return "", Problem(line, f"not valid UTF-8 text ({err.reason})")


def read_lines(path: Path) -> tuple[list[str], Problem | None]:
    """The file's lines, or no lines and a problem naming the first line that is not UTF-8."""
    text, problem = decode_text(path)
    return ([], problem) if problem is not None else (split_lines(text), None)

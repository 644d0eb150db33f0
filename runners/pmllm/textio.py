"""Reading upstream text files: UTF-8, falling back to Windows-1252 (docs/metrics.md §4.2)."""

from __future__ import annotations

from pathlib import Path


def decode(data: bytes) -> str:
    """UTF-8, else Windows-1252; the five bytes cp1252 leaves undefined become U+FFFD instead of failing."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def read_text(path: Path) -> str:
    return decode(Path(path).read_bytes())

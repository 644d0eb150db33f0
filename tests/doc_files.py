"""Executable docs: the files, expected outputs and commands a guide marks with ``<!-- file: ... -->``,
``<!-- expected: ... -->`` and ``<!-- run -->``."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
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


# A guide's commands: a ```sh block after ``<!-- run -->`` (each command must exit 0) or ``<!-- run: exit N -->``.
RUN = re.compile(r"<!-- run(?:: exit (\d+))? -->\n```sh\n(.*?)```", re.S)
# Files a later step of a guide adds (``<!-- ship-file: path -->``): :func:`extract` leaves them out.
LATER_FILE = re.compile(r"<!-- ship-file: (\S+) -->\n```[a-z]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Command:
    """One command of a guide, as written: its words (continuations joined, comments dropped) and the exit status it must have."""

    argv: tuple[str, ...]
    exit: int
    text: str


def commands(doc: Path) -> list[Command]:
    """Every command of the guide's run blocks, in order."""
    out = []
    for status, body in RUN.findall(doc.read_text()):
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                out.append(Command(tuple(words), int(status or 0), line.strip()))
    return out


def extract_later(doc: Path, root: Path) -> list[Path]:
    """Write the files a later step adds (``ship-file`` blocks) under ``root``; returns them."""
    written = []
    for name, body in LATER_FILE.findall(doc.read_text()):
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
        written.append(target)
    return written

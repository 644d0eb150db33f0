"""Spec errors as a compiler would show them: ``file:line:col``, the line, a caret, a hint."""

from __future__ import annotations

from dataclasses import dataclass, field

from procbench.dsl.spans import Span


_MAX_SHOWN = 160  # characters of the offending line shown under an error


@dataclass(frozen=True)
class Diagnostic:
    path: str
    span: Span
    message: str
    hint: str = ""
    severity: str = "error"  # or "warning"
    # the text of ``path`` when the diagnostic knows it (a file beside the spec, a parent spec):
    # rendered in preference to the source a caller passes, which is the checked spec's
    file_text: str | None = field(default=None, compare=False, repr=False)

    def render(self, source: str | None = None) -> str:
        source = self.file_text if self.file_text is not None else source
        head = f"{self.path}:{self.span.line}:{self.span.column}: {self.severity}: {self.message}"
        lines = [head]
        if source is not None and self.span.line >= 1:
            text_lines = source.splitlines()
            if self.span.line <= len(text_lines):
                text = text_lines[self.span.line - 1].expandtabs(1)
                width = 1
                if self.span.end_line == self.span.line and self.span.end_column > self.span.column:
                    width = self.span.end_column - self.span.column
                column = max(self.span.column - 1, 0)
                if (
                    len(text) > _MAX_SHOWN
                ):  # a hostile spec's line can be 512 KiB: show a window around the caret
                    start = max(column - _MAX_SHOWN // 4, 0)
                    shown = text[start : start + _MAX_SHOWN]
                    text = (
                        ("…" if start else "")
                        + shown
                        + ("…" if start + _MAX_SHOWN < len(text) else "")
                    )
                    column = column - start + (1 if start else 0)
                    width = min(width, _MAX_SHOWN - (column - (1 if start else 0)))
                gutter = f"{self.span.line:>4} | "
                lines.append(gutter + text)
                lines.append(" " * (len(gutter) + column) + "^" + "~" * (max(width, 1) - 1))
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)


class SpecError(Exception):
    """One or more errors in a spec; ``str()`` is the full, user-facing report."""

    def __init__(self, diagnostics: list[Diagnostic], source: str | None = None):
        self.diagnostics = diagnostics
        self.source = source
        super().__init__("\n".join(d.render(source) for d in diagnostics))

    @property
    def first(self) -> Diagnostic:
        return self.diagnostics[0]

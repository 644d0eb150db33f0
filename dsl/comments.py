"""Attach the comments the lexer saw to the syntax tree, so that ``procbench fmt`` can print them back.

The grammar ignores comments; the parser collects them with their positions and this module hangs
each on the nearest thing the printer lays out on its own line.  Within a sequence (a file or block
body, a list's items, an object's pairs) a comment is

- the *trailing* comment of the item that ends on its line (``a = 1  # why``, ``},  # why``);
- else the *open* comment of the sequence when it sits on the line of the opening bracket (``data {  # why``);
- else a *leading* comment of the next item (the lines above it);
- else an *end* comment of the sequence (the lines before its closing bracket).

A comment inside an item goes into that item's own sequences (a block's body, a list value's items);
where the item has none at that spot (between a call's arguments, between a key and its ``=``) it
becomes the last leading comment of the item, so it keeps its order and its statement but moves above
(a call's comments move together, so that none overtakes another).
Blank lines between the comments above an item, and between them and the item, are kept as one
blank line (``""`` in ``Comments.leading``); the comments before the first statement of the file are
its header, kept as written.
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass
from typing import Sequence

from procbench.dsl import syntax as s


@dataclass(frozen=True)
class Comment:
    line: int
    column: int
    text: str

    @property
    def pos(self) -> tuple[int, int]:
        return (self.line, self.column)


def _start(span: s.Span) -> tuple[int, int]:
    return (span.line, span.column)


def _end(span: s.Span) -> tuple[int, int]:
    return (span.end_line, span.end_column)


def _inside(c: Comment, span: s.Span) -> bool:
    return _start(span) <= c.pos < _end(span)


@dataclass
class _Spread:
    """Where the comments of one sequence went (see the module docstring)."""

    inside: list[list[Comment]]
    leading: list[tuple[str, ...]]
    trailing: list[str | None]
    open: str | None
    end: tuple[str, ...]


def _with_blanks(
    group: Sequence[Comment], previous_line: int | None, next_line: int | None
) -> tuple[str, ...]:
    """Comment texts with "" wherever blank lines separated them (from what precedes and what follows)."""
    out: list[str] = []
    for c in group:
        if previous_line is not None and c.line > previous_line + 1:
            out.append("")
        out.append(c.text)
        previous_line = c.line
    if (
        out
        and next_line is not None
        and previous_line is not None
        and next_line > previous_line + 1
    ):
        out.append("")
    return tuple(out)


def _spread(spans: Sequence[s.Span], comments: Sequence[Comment], open_line: int | None) -> _Spread:
    n = len(spans)
    inside: list[list[Comment]] = [[] for _ in range(n)]
    before: list[list[Comment]] = [[] for _ in range(n)]
    trailing: list[str | None] = [None] * n
    opening: str | None = None
    end: list[Comment] = []
    for c in sorted(comments, key=lambda c: c.pos):
        holder = next((i for i, span in enumerate(spans) if _inside(c, span)), None)
        if holder is not None:
            inside[holder].append(c)
            continue
        last = max((i for i, span in enumerate(spans) if _end(span) <= c.pos), default=None)
        if last is not None and spans[last].end_line == c.line and trailing[last] is None:
            trailing[last] = c.text
        elif last is None and open_line is not None and c.line == open_line and opening is None:
            opening = c.text
        else:
            following = next((i for i, span in enumerate(spans) if _start(span) > c.pos), None)
            (before[following] if following is not None else end).append(c)
    leading = [
        _with_blanks(group, spans[i - 1].end_line if i else None, spans[i].line) if group else ()
        for i, group in enumerate(before)
    ]
    end_texts = _with_blanks(end, spans[-1].end_line if spans else None, None)
    return _Spread(inside, leading, trailing, opening, end_texts)


class Attacher:
    """Rebuilds a parsed tree with the comments attached; needs the source to find blocks' opening braces."""

    def __init__(self, source: str, comments: Sequence[Comment]):
        self.source = source
        self.comments = sorted(comments, key=lambda c: c.pos)
        self.line_starts = [0]
        for i, char in enumerate(source):
            if char == "\n":
                self.line_starts.append(i + 1)

    def file(
        self, body: tuple[s.Attribute | s.Block, ...]
    ) -> tuple[tuple[s.Attribute | s.Block, ...], tuple[str, ...], tuple[str, ...]]:
        """(body with comments, header lines, comments after the last statement)."""
        lines = self.source.split(
            "\n"
        )  # lines as the lexer counts them (str.splitlines also splits at \x0c, \u2028, ...)
        first = body[0].span.line if body else len(lines) + 1
        header = _header(lines[: first - 1])
        rest = [c for c in self.comments if c.line >= first]
        spread = _spread([st.span for st in body], rest, None)
        body = self._statements(body, spread)
        if body and body[0].comments.leading:
            # moved up from inside the first statement (`task x  # why` before its '{'): printed above it, it would
            # read back as header, so it is header now
            header = _header([*header, "", *body[0].comments.leading])
            body = (
                dataclasses.replace(body[0], comments=s.Comments((), body[0].comments.trailing)),
                *body[1:],
            )
        return body, header, spread.end

    # --- statements -------------------------------------------------------------------------------

    def _statements(
        self, body: tuple[s.Attribute | s.Block, ...], spread: _Spread
    ) -> tuple[s.Attribute | s.Block, ...]:
        out: list[s.Attribute | s.Block] = []
        for stmt, inside, leading, trailing in zip(
            body, spread.inside, spread.leading, spread.trailing
        ):
            stmt, hoisted = self._statement(stmt, inside)
            comments = s.Comments(leading + tuple(c.text for c in hoisted), trailing)
            out.append(dataclasses.replace(stmt, comments=comments) if comments else stmt)
        return tuple(out)

    def _statement(
        self, stmt: s.Attribute | s.Block, comments: list[Comment]
    ) -> tuple[s.Attribute | s.Block, list[Comment]]:
        if not comments:
            return stmt, []
        if isinstance(stmt, s.Attribute):
            value, hoisted = self._expr(
                stmt.value, [c for c in comments if _inside(c, stmt.value.span)]
            )
            elsewhere = [c for c in comments if not _inside(c, stmt.value.span)]
            return dataclasses.replace(stmt, value=value), sorted(
                hoisted + elsewhere, key=lambda c: c.pos
            )
        brace = self._opening_brace(stmt)
        outside = [c for c in comments if c.pos < brace]
        spread = _spread(
            [st.span for st in stmt.body], [c for c in comments if c.pos > brace], brace[0]
        )
        body = self._statements(stmt.body, spread)
        return dataclasses.replace(
            stmt, body=body, open_comment=spread.open, end_comments=spread.end
        ), outside

    def _opening_brace(self, block: s.Block) -> tuple[int, int]:
        """(line, column) of a block's '{': the first one after its type and labels that is not in a comment."""
        after = (
            _end(block.label_spans[-1])
            if block.label_spans
            else (block.span.line, block.span.column + len(block.type))
        )
        i = self.line_starts[after[0] - 1] + after[1] - 1
        while i < len(self.source) and self.source[i] != "{":
            if self.source[i] == "#":
                i = self.source.find("\n", i)
                if i < 0:
                    break
            i += 1
        line = bisect.bisect_right(self.line_starts, i) - 1
        return (line + 1, i - self.line_starts[line] + 1)

    # --- expressions ------------------------------------------------------------------------------

    def _expr(self, e: s.Expr, comments: list[Comment]) -> tuple[s.Expr, list[Comment]]:
        """The expression with what fits attached, and the comments it has no place for (in order)."""
        if not comments:
            return e, []
        if isinstance(e, s.ListExpr):
            spread = _spread([item.span for item in e.items], comments, e.span.line)
            items: list[s.Expr] = []
            notes: list[s.Comments] = []
            for item, inside, leading, trailing in zip(
                e.items, spread.inside, spread.leading, spread.trailing
            ):
                item, hoisted = self._expr(item, inside)
                items.append(item)
                notes.append(s.Comments(leading + tuple(c.text for c in hoisted), trailing))
            item_comments = tuple(notes) if any(notes) else ()
            return dataclasses.replace(
                e,
                items=tuple(items),
                item_comments=item_comments,
                open_comment=spread.open,
                end_comments=spread.end,
            ), []
        if isinstance(e, s.ObjectExpr):
            spread = _spread([p.span for p in e.pairs], comments, e.span.line)
            pairs: list[s.Pair] = []
            for pair, inside, leading, trailing in zip(
                e.pairs, spread.inside, spread.leading, spread.trailing
            ):
                value, hoisted = self._expr(
                    pair.value, [c for c in inside if _inside(c, pair.value.span)]
                )
                hoisted = sorted(
                    hoisted + [c for c in inside if not _inside(c, pair.value.span)],
                    key=lambda c: c.pos,
                )
                pairs.append(
                    dataclasses.replace(
                        pair,
                        value=value,
                        comments=s.Comments(leading + tuple(c.text for c in hoisted), trailing),
                    )
                )
            return dataclasses.replace(
                e, pairs=tuple(pairs), open_comment=spread.open, end_comments=spread.end
            ), []
        if isinstance(e, s.Call):
            # all or nothing: moving one comment above the statement while others stay inside would reorder them
            args: list[s.Expr] = []
            kwargs: list[s.KwArg] = []
            placed = 0
            for arg in e.args:
                mine = [c for c in comments if _inside(c, arg.span)]
                arg, lost = self._expr(arg, mine)
                args.append(arg)
                placed += len(mine) if not lost else 0
            for kwarg in e.kwargs:
                mine = [c for c in comments if _inside(c, kwarg.value.span)]
                value, lost = self._expr(kwarg.value, mine)
                kwargs.append(dataclasses.replace(kwarg, value=value))
                placed += len(mine) if not lost else 0
            if placed < len(comments):
                return e, list(comments)
            return dataclasses.replace(e, args=tuple(args), kwargs=tuple(kwargs)), []
        return e, list(comments)


def _header(lines: list[str]) -> tuple[str, ...]:
    """The lines before the first statement (all comments or blank): comments flush left, one blank line per run."""
    out: list[str] = []
    for line in lines:
        text = line.strip()
        if text or (out and out[-1]):
            out.append(text)
    while out and not out[-1]:
        out.pop()
    return tuple(out)


def in_order(spec: s.SpecFile) -> list[str]:
    """Every comment of the tree in the order the printer writes them (the source order, when nothing was lost)."""
    out = [line for line in spec.header if line]
    for stmt in spec.body:
        _statement_comments(stmt, out)
    out += [text for text in spec.end_comments if text]
    return out


def _statement_comments(stmt: s.Attribute | s.Block, out: list[str]) -> None:
    out += [text for text in stmt.comments.leading if text]
    if isinstance(stmt, s.Attribute):
        _expr_comments(stmt.value, out)
    else:
        out += [stmt.open_comment] if stmt.open_comment else []
        for child in stmt.body:
            _statement_comments(child, out)
        out += [text for text in stmt.end_comments if text]
    out += [stmt.comments.trailing] if stmt.comments.trailing else []


def _expr_comments(e: s.Expr, out: list[str]) -> None:
    if isinstance(e, s.ListExpr):
        out += [e.open_comment] if e.open_comment else []
        for i, item in enumerate(e.items):
            note = e.item_comments[i] if e.item_comments else s.NO_COMMENTS
            out += [text for text in note.leading if text]
            _expr_comments(item, out)
            out += [note.trailing] if note.trailing else []
        out += [text for text in e.end_comments if text]
    elif isinstance(e, s.ObjectExpr):
        out += [e.open_comment] if e.open_comment else []
        for pair in e.pairs:
            out += [text for text in pair.comments.leading if text]
            _expr_comments(pair.value, out)
            out += [pair.comments.trailing] if pair.comments.trailing else []
        out += [text for text in e.end_comments if text]
    elif isinstance(e, s.Call):
        for arg in e.args:
            _expr_comments(arg, out)
        for kwarg in e.kwargs:
            _expr_comments(kwarg.value, out)

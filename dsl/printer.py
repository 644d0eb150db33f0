"""Canonical formatting of a syntax tree (``procbench fmt``): parse → print → parse is the identity.

Comments ride on the tree (see ``procbench.dsl.comments`` for which statement each belongs to) and are printed
where they were: above their statement, at the end of its line, after an opening bracket or before a
closing one.  Layout is fixed: two-space indents, ``=`` aligned within a body, blocks of up to four
statements on one line when they fit, lists and objects one item per line when they would run past
:data:`WIDTH` columns or hold comments.  Keys and labels are bare when they are names (labels: when
written bare, since there quoting means text), else quoted; an object quotes all its keys or none;
a path quotes the segments after its first that are not names (``step."ordered?"``).  Blank lines are the printer's (between attributes and blocks,
around multi-line blocks), plus one wherever the source separated comments by blank lines.
"""

from __future__ import annotations

import json
import re

from procbench.dsl import syntax as s

INDENT = "  "
WIDTH = 100
# A block stays on one line with at most this many statements (attributes, or blocks of attributes
# that are one line themselves) when the line fits the width: a measure reads as one sentence (metric, gold,
# prediction, aggregate), and so does `predictions { format  id  schema { ... } }`.
FLAT_STATEMENTS = 4
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _key(name: str) -> str:
    """An attribute or object key: bare when the grammar reads it back as a name, else quoted."""
    return name if _NAME.fullmatch(name) and name not in ("true", "false") else _string(name)


def _keys(e: s.ObjectExpr) -> list[str]:
    """An object's keys as printed: all quoted when one must be, so that a table's row names line up."""
    keys = [_key(p.key) for p in e.pairs]
    return (
        keys
        if all(k == p.key for k, p in zip(keys, e.pairs))
        else [_string(p.key) for p in e.pairs]
    )


def ref(e: s.Ref) -> str:
    """A dotted path: segments after the first quoted when they are not names (``step."ordered?"``)."""
    return ".".join(
        [e.parts[0], *(part if _NAME.fullmatch(part) else _string(part) for part in e.parts[1:])]
    )


def _label(text: str, bare: bool) -> str:
    return text if bare and _NAME.fullmatch(text) else _string(text)


def expr(e: s.Expr) -> str:
    """The expression on one line, without its comments."""
    if isinstance(e, s.Str):
        return f'"""{e.value}"""' if e.long else _string(e.value)
    if isinstance(e, s.Bool):
        return "true" if e.value else "false"
    if isinstance(e, s.Num):
        return repr(e.value)
    if isinstance(e, s.Ref):
        return ref(e)
    if isinstance(e, s.Call):
        args = [expr(a) for a in e.args] + [f"{k.name} = {expr(k.value)}" for k in e.kwargs]
        return f"{ref(e.callee)}({', '.join(args)})"
    if isinstance(e, s.ListExpr):
        return "[" + ", ".join(expr(i) for i in e.items) + "]"
    if isinstance(e, s.ObjectExpr):
        pairs = [f"{key} = {expr(p.value)}" for key, p in zip(_keys(e), e.pairs)]
        return "{ " + ", ".join(pairs) + " }" if pairs else "{}"
    raise TypeError(e)


def _has_comments(e: s.Expr) -> bool:
    if isinstance(e, s.ListExpr):
        return bool(e.open_comment or e.end_comments or any(e.item_comments)) or any(
            _has_comments(i) for i in e.items
        )
    if isinstance(e, s.ObjectExpr):
        return bool(e.open_comment or e.end_comments) or any(
            p.comments or _has_comments(p.value) for p in e.pairs
        )
    if isinstance(e, s.Call):
        return any(_has_comments(a) for a in e.args) or any(
            _has_comments(k.value) for k in e.kwargs
        )
    return False


def _value(e: s.Expr, depth: int, column: int, suffix: int) -> str:
    """The expression as it starts at ``column`` of a line indented ``depth`` deep, ``suffix`` characters before the line ends."""
    if isinstance(e, (s.ListExpr, s.ObjectExpr)):
        flat = expr(e)
        items = e.items if isinstance(e, s.ListExpr) else e.pairs
        if _has_comments(e) or (items and column + len(flat) + suffix > WIDTH):
            return "\n".join(_multiline(e, depth))
        return flat
    if isinstance(e, s.Call) and _has_comments(e):
        args = [_value(a, depth, 0, 0) if _has_comments(a) else expr(a) for a in e.args]
        args += [
            f"{k.name} = {_value(k.value, depth, 0, 0) if _has_comments(k.value) else expr(k.value)}"
            for k in e.kwargs
        ]
        return f"{ref(e.callee)}({', '.join(args)})"
    return expr(e)


def _comment_lines(texts: tuple[str, ...], pad: str, out: list[str], floor: int = 0) -> None:
    """Append comment lines; "" is a blank line, never two in a row nor among the first ``floor`` lines (an opening bracket's)."""
    for text in texts:
        if text:
            out.append(pad + text)
        elif len(out) > floor and out[-1]:
            out.append("")


def _with_trailing(text: str, comment: str | None) -> str:
    return f"{text}  {comment}" if comment else text


def _multiline(e: s.ListExpr | s.ObjectExpr, depth: int) -> list[str]:
    """One item per line (each followed by ','), comments in place; the first line is the opening bracket."""
    pad = INDENT * (depth + 1)
    opening, closing = ("[", "]") if isinstance(e, s.ListExpr) else ("{", "}")
    lines = [_with_trailing(opening, e.open_comment)]
    if isinstance(e, s.ListExpr):
        notes = e.item_comments or (s.NO_COMMENTS,) * len(e.items)
        entries = [(note, "", item) for note, item in zip(notes, e.items)]
    else:
        entries = [(p.comments, f"{key} = ", p.value) for key, p in zip(_keys(e), e.pairs)]
    for note, head, value in entries:
        _comment_lines(note.leading, pad, lines, floor=1)
        rendered = head + _value(value, depth + 1, len(pad) + len(head), 1) + ","
        lines.append(_with_trailing(pad + rendered, note.trailing))
    _comment_lines(e.end_comments, pad, lines, floor=1)
    while lines[-1] == "":
        lines.pop()
    return [*lines, INDENT * depth + closing]


def _head(a: s.Attribute) -> str:
    return _key(a.name) + (f": {expr(a.type)}" if a.type is not None else "")


def _block_has_inner_comments(b: s.Block) -> bool:
    return bool(b.open_comment or b.end_comments) or any(st.comments for st in b.body)


def _attributes_only(stmt: s.Attribute | s.Block) -> bool:
    """An attribute, or a block of attributes: what a one-line block may hold (braces nest once on a line)."""
    return isinstance(stmt, s.Attribute) or all(isinstance(x, s.Attribute) for x in stmt.body)


def _statement(stmt: s.Attribute | s.Block, depth: int, width: int) -> list[str]:
    """The statement's lines (an item may hold newlines: long strings, multi-line values), its trailing comment included."""
    pad = INDENT * depth
    if isinstance(stmt, s.Attribute):
        prefix = f"{pad}{_head(stmt).ljust(width)} = "
        return [
            _with_trailing(
                prefix + _value(stmt.value, depth, len(prefix), 0), stmt.comments.trailing
            )
        ]
    bare = (
        stmt.bare_labels
        if len(stmt.bare_labels) == len(stmt.labels)
        else (False,) * len(stmt.labels)
    )  # a tree built by hand: quote
    opener = f"{pad}{stmt.type}" + "".join(
        f" {_label(label, b)}" for label, b in zip(stmt.labels, bare)
    )
    trailing = stmt.comments.trailing
    inner_comments = _block_has_inner_comments(stmt)
    if not stmt.body and not inner_comments:
        return [_with_trailing(f"{opener} {{}}", trailing)]
    if (
        not inner_comments
        and len(stmt.body) <= FLAT_STATEMENTS
        and all(_attributes_only(x) for x in stmt.body)
    ):
        flat = [_statement(x, 0, 0) for x in stmt.body]
        one_line = f"{opener} {{ " + "  ".join(x[0] for x in flat) + " }"
        if all(len(x) == 1 for x in flat) and len(one_line) <= WIDTH and "\n" not in one_line:
            return [_with_trailing(one_line, trailing)]
    lines = [_with_trailing(f"{opener} {{", stmt.open_comment), *body(stmt.body, depth + 1)]
    _comment_lines(stmt.end_comments, INDENT * (depth + 1), lines, floor=1)
    while lines[-1] == "":
        lines.pop()
    return [*lines, _with_trailing(f"{pad}}}", trailing)]


def body(statements: tuple[s.Attribute | s.Block, ...], depth: int = 0) -> list[str]:
    lines: list[str] = []
    pad = INDENT * depth
    width = max((len(_head(st)) for st in statements if isinstance(st, s.Attribute)), default=0)
    previous_kind = None
    for stmt in statements:
        kind = "attr" if isinstance(stmt, s.Attribute) else "block"
        rendered = _statement(stmt, depth, width if kind == "attr" else 0)
        multi = kind == "block" and len(rendered) > 1
        leading = stmt.comments.leading
        if lines and (kind != previous_kind or multi or leading[:1] == ("",)):
            lines.append("")
        _comment_lines(leading, pad, lines)
        lines.extend(rendered)
        previous_kind = "multi" if multi else kind
    return lines


def format_file(spec: s.SpecFile) -> str:
    lines = body(spec.body)
    _comment_lines(spec.end_comments, "", lines)
    text = "\n".join(lines) + "\n" if lines else ""
    header = "\n".join(spec.header)
    if not header:
        return text or "\n"
    return header + "\n\n" + text if text else header + "\n"

"""Canonical formatting of a syntax tree (``procbench fmt``): parse → print → parse is the identity.

Comments are not part of the tree, so ``fmt`` keeps the comment lines that precede the task block
(the file header) and refuses to rewrite files with comments elsewhere unless told to drop them.
"""

from __future__ import annotations

import json

from dsl import syntax as s

INDENT = "  "


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def expr(e: s.Expr) -> str:
    if isinstance(e, s.Str):
        return f'"""{e.value}"""' if e.long else _string(e.value)
    if isinstance(e, s.Bool):
        return "true" if e.value else "false"
    if isinstance(e, s.Num):
        return repr(e.value)
    if isinstance(e, s.Ref):
        return e.dotted
    if isinstance(e, s.Call):
        args = [expr(a) for a in e.args] + [f"{k.name} = {expr(k.value)}" for k in e.kwargs]
        return f"{e.callee.dotted}({', '.join(args)})"
    if isinstance(e, s.ListExpr):
        inner = [expr(i) for i in e.items]
        flat = "[" + ", ".join(inner) + "]"
        return flat
    if isinstance(e, s.ObjectExpr):
        pairs = [f"{p.key if p.key.isidentifier() else _string(p.key)} = {expr(p.value)}" for p in e.pairs]
        return "{ " + ", ".join(pairs) + " }" if pairs else "{}"
    raise TypeError(e)


def _list_multiline(e: s.ListExpr, depth: int) -> str:
    pad = INDENT * (depth + 1)
    return "[\n" + "".join(f"{pad}{expr(i)},\n" for i in e.items) + INDENT * depth + "]"


def _statement(stmt: s.Attribute | s.Block, depth: int, width: int) -> list[str]:
    pad = INDENT * depth
    if isinstance(stmt, s.Attribute):
        value = expr(stmt.value)
        if isinstance(stmt.value, s.ListExpr) and len(pad) + len(stmt.name) + 3 + len(value) > 100 and stmt.value.items:
            value = _list_multiline(stmt.value, depth)
        return [f"{pad}{stmt.name.ljust(width)} = {value}"]
    labels = "".join(f" {_string(label)}" for label in stmt.labels)
    if not stmt.body:
        return [f"{pad}{stmt.type}{labels} {{}}"]
    inner = body(stmt.body, depth + 1)
    flat = [_statement(x, 0, 0)[0] for x in stmt.body] if all(isinstance(x, s.Attribute) for x in stmt.body) else []
    one_line = f"{pad}{stmt.type}{labels} {{ " + "  ".join(flat) + " }"
    if flat and len(flat) <= 3 and len(one_line) <= 100 and "\n" not in "".join(flat):
        return [one_line]
    return [f"{pad}{stmt.type}{labels} {{", *inner, f"{pad}}}"]


def body(statements: tuple[s.Attribute | s.Block, ...], depth: int = 0) -> list[str]:
    lines: list[str] = []
    width = max((len(st.name) for st in statements if isinstance(st, s.Attribute)), default=0)
    previous_kind = None
    for stmt in statements:
        kind = "attr" if isinstance(stmt, s.Attribute) else "block"
        multi = isinstance(stmt, s.Block) and len(_statement(stmt, depth, width)) > 1
        if lines and (kind != previous_kind or multi):
            lines.append("")
        lines.extend(_statement(stmt, depth, width if kind == "attr" else 0))
        previous_kind = "multi" if multi else kind
    return lines


def format_file(spec: s.SpecFile) -> str:
    header = []
    for line in spec.source.splitlines():
        if line.startswith("#") or not line.strip():
            header.append(line.rstrip())
        else:
            break
    while header and not header[-1]:
        header.pop()
    text = "\n".join(body(spec.body)) + "\n"
    return ("\n".join(header) + "\n\n" + text) if header else text


def inner_comment_line(spec: s.SpecFile) -> int | None:
    """The first line holding a comment after the file header (fmt would drop it), if any."""
    lines = spec.source.splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        i += 1
    in_long = False
    for number, line in enumerate(lines[i:], i + 1):
        if line.count('"""') % 2 == 1:
            in_long = not in_long
            continue
        if not in_long and _has_comment(line):
            return number
    return None


def _has_comment(line: str) -> bool:
    in_string = escaped = False
    for char in line:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "#":
            return True
    return False

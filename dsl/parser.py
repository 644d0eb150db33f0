"""Text → syntax tree (``procbench.dsl.syntax``), with errors that point at the offending character.

The grammar ignores comments; the lexer hands each one to :func:`_collect` on the way past, and
``procbench.dsl.comments`` attaches them to the tree (see there for the rules) so that ``fmt`` can keep them.
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
import re
from pathlib import Path

from lark import Lark, Token, Transformer, Tree, v_args
from lark.tree import Meta
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from procbench.dsl import syntax as s
from procbench.dsl.comments import Attacher, Comment
from procbench.dsl.errors import Diagnostic, SpecError
from procbench.runners.runtime.paths import resource

GRAMMAR_PATH = resource("dsl", "procbench.lark")  # package data (procbench.runners.runtime.paths)

# Limits on spec text, which is untrusted input like any upload: a spec is a few KiB (the largest shipped
# one is under 7 KiB), so these refuse only hostile or broken files, with an error at the offending character,
# before any work that grows with them (Lark's tree transform and the checker recurse once per nesting level;
# Python refuses to convert integers of more than 4300 digits).
MAX_SPEC_BYTES = 512 * 1024
MAX_NESTING = 64  # brackets of any kind ({ } blocks and objects, [ ] lists, ( ) calls) open at once
MAX_NUMBER_CHARS = 40  # a number literal, sign and exponent included

# the tokens that can hold brackets that do not nest (strings, comments), a quote that starts no string (the
# grammar reports it), then the brackets themselves; strings as the grammar's STRING and LONG_STRING terminals
# (possessive, so an unterminated string costs one pass, not a backtracking search)
_BRACKETS = re.compile(r'"""[\s\S]*?"""|"(?:[^"\\\n]++|\\.)*+"|"|#[^\n]*|[\[\](){}]')
_OPENERS = frozenset("[({")

_FRIENDLY = {
    "NAME": "a name",
    "STRING": "a string",
    "LONG_STRING": 'a """long string"""',
    "NUMBER": "a number",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LPAR": "'('",
    "RPAR": "')'",
    "EQUAL": "'='",
    "COMMA": "','",
    "DOT": "'.'",
    "TRUE": "true",
    "FALSE": "false",
    "$END": "end of file",
}


# the comments of the parse under way (the Lark instance is shared, so the callback cannot hold the list)
_comments: contextvars.ContextVar[list[Comment] | None] = contextvars.ContextVar(
    "procbench_spec_comments", default=None
)


def _collect(token: Token) -> Token:
    sink = _comments.get()
    if (
        sink is not None
    ):  # None: a parse that did not come through parse() (nothing will attach them)
        span = _token_span(token)
        sink.append(Comment(span.line, span.column, str(token).rstrip()))
    return token


@functools.cache
def _lark() -> Lark:
    return Lark(
        GRAMMAR_PATH.read_text(encoding="utf-8"),
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
        lexer_callbacks={"COMMENT": _collect},
    )


def _token_span(token: Token) -> s.Span:
    """A lexed token's span (Lark types a token's positions as optional: the lexer always sets them)."""
    line, column, end_line, end_column = token.line, token.column, token.end_line, token.end_column
    if line is None or column is None or end_line is None or end_column is None:
        return s.NOWHERE
    return s.Span(line, column, end_line, end_column)


def _span(meta_or_token: Meta | Token) -> s.Span:
    if isinstance(meta_or_token, Token):
        return _token_span(meta_or_token)
    m = meta_or_token
    return s.NOWHERE if m.empty else s.Span(m.line, m.column, m.end_line, m.end_column)


class _TokenError(ValueError):
    """A token the lexer accepts whose value is refused; raised inside the transformer, reported at the token."""

    def __init__(self, token: Token, message: str, hint: str):
        super().__init__(message)
        self.token, self.message, self.hint = token, message, hint


def _unquote(token: Token) -> str:
    try:
        value = json.loads(token)
    except json.JSONDecodeError:
        raise _TokenError(
            token,
            "invalid escape sequence in string",
            'use \\" \\\\ \\n \\t or \\uXXXX; or a """long string""" for raw text',
        ) from None
    return value


def _number(token: Token) -> int | float:
    text = str(token)
    if len(text) > MAX_NUMBER_CHARS:
        raise _TokenError(
            token,
            f"number literal too long ({len(text)} characters; at most {MAX_NUMBER_CHARS})",
            "write the number with fewer digits",
        )
    value = float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise _TokenError(
            token, "number out of range", "a number must be finite (at most about 1.8e308)"
        )
    return value


@v_args(meta=True)
class _ToSyntax(Transformer):
    def start(self, meta, children):
        return children[0]

    def body(self, meta, children):
        return tuple(children)

    def attribute(self, meta, children):
        if len(children) == 3:
            name, type_, value = children
        else:
            (name, value), type_ = children, None
        return s.Attribute(name, value, _span(meta), type_)

    def key(self, meta, children):
        (token,) = children
        return _unquote(token) if token.type == "STRING" else str(token)

    def block(self, meta, children):
        type_token, *labels, body = children
        return s.Block(
            str(type_token),
            tuple(text for text, _, _ in labels),
            body,
            _span(meta),
            tuple(bare for _, bare, _ in labels),
            tuple(span for _, _, span in labels),
        )

    def label(self, meta, children):
        (token,) = children
        span = _span(token)
        if token.type == "LONG_STRING":
            return str(token)[3:-3], False, span
        if token.type == "STRING":
            return _unquote(token), False, span
        return str(token), True, span

    def string(self, meta, children):
        return s.Str(_unquote(children[0]), _span(meta))

    def long_string(self, meta, children):
        return s.Str(str(children[0])[3:-3], _span(meta), long=True)

    def number(self, meta, children):
        return s.Num(_number(children[0]), _span(meta))

    def true(self, meta, children):
        return s.Bool(True, _span(meta))

    def false(self, meta, children):
        return s.Bool(False, _span(meta))

    def ref(self, meta, children):
        return s.Ref(
            tuple(_unquote(c) if c.type == "STRING" else str(c) for c in children), _span(meta)
        )

    def call(self, meta, children):
        callee, *arguments = children
        args = tuple(a for a in arguments if not isinstance(a, s.KwArg))
        kwargs = tuple(a for a in arguments if isinstance(a, s.KwArg))
        return s.Call(callee, args, kwargs, _span(meta))

    def kwarg(self, meta, children):
        name, value = children
        return s.KwArg(str(name), value, _span(meta))

    def list(self, meta, children):
        return s.ListExpr(tuple(children), _span(meta))

    def object(self, meta, children):
        return s.ObjectExpr(tuple(children), _span(meta))

    def pair(self, meta, children):
        key, value = children
        return s.Pair(_unquote(key) if key.type == "STRING" else str(key), value, _span(meta))


def parse(source: str, path: str = "<spec>") -> s.SpecFile:
    """Parse spec text; raises :class:`SpecError` with a position on any syntax error."""
    _check_limits(source, path)
    comments: list[Comment] = []
    reset = _comments.set(comments)
    try:
        tree: Tree = _lark().parse(source)
        body = _ToSyntax().transform(tree)
    except UnexpectedInput as exc:
        raise SpecError([_diagnose(exc, source, path)], source) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, _TokenError):
            error = exc.orig_exc
            span = _token_span(error.token)
            raise SpecError([Diagnostic(path, span, error.message, error.hint)], source) from None
        raise
    finally:
        _comments.reset(reset)
    if body and isinstance(body[0], tuple):  # pragma: no cover - defensive: transformer shape
        body = body[0]
    body, header, end_comments = Attacher(source, comments).file(tuple(body))
    return s.SpecFile(path, source, body, header, end_comments, tuple(c.text for c in comments))


def _check_limits(source: str, path: str) -> None:
    """Refuse a spec over the size or nesting limits before Lark sees it (one regex pass, no recursion)."""
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > MAX_SPEC_BYTES:
        raise SpecError([_too_big(path, size)])
    depth = 0
    for match in _BRACKETS.finditer(source):
        char = match.group()
        if char == '"':
            return  # an unterminated string: Lark stops there with its own error, so nothing after it matters
        if len(char) != 1 or char == "#":
            continue  # a string or a comment
        if char in _OPENERS:
            depth += 1
            if depth > MAX_NESTING:
                pos = match.start()
                line = source.count("\n", 0, pos) + 1
                column = pos - (source.rfind("\n", 0, pos) + 1) + 1
                span = s.Span(line, column, line, column + 1)
                message = f"nesting too deep (more than {MAX_NESTING} brackets open at once)"
                raise SpecError(
                    [
                        Diagnostic(
                            path,
                            span,
                            message,
                            "flatten the value; a spec nests blocks, lists, objects and calls a few levels deep",
                        )
                    ],
                    source,
                )
        else:
            depth = max(depth - 1, 0)  # an unbalanced closer is the grammar's error to report


def _too_big(path: str, size: int) -> Diagnostic:
    return Diagnostic(
        path,
        s.Span(1, 1, 1, 1),
        f"spec file too large ({size} bytes; at most {MAX_SPEC_BYTES})",
        "a spec is a few KiB; keep data in files beside it",
    )


def parse_file(path: str | Path) -> s.SpecFile:
    p = Path(path)
    with p.open(
        "rb"
    ) as handle:  # read at most one byte past the limit, whatever the file is (a FIFO, /dev/zero)
        raw = handle.read(MAX_SPEC_BYTES + 1)
    if len(raw) > MAX_SPEC_BYTES:
        raise SpecError([_too_big(str(p), p.stat().st_size if p.is_file() else len(raw))])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            [
                Diagnostic(
                    str(p),
                    s.Span(1, 1, 1, 1),
                    f"the file is not UTF-8 ({exc.reason})",
                    "save the spec as UTF-8",
                )
            ]
        ) from None
    return parse(text, str(p))


def _expected(exc: UnexpectedInput) -> list[str]:
    names = sorted(getattr(exc, "expected", None) or getattr(exc, "allowed", None) or [])
    return [
        _FRIENDLY.get(n, n.lower())
        for n in names
        if not n.startswith("_") and n not in ("COMMENT", "WS")
    ]


def _diagnose(exc: UnexpectedInput, source: str, path: str) -> Diagnostic:
    expected = _expected(exc)
    hint = f"expected {', '.join(expected)}" if expected else ""
    if isinstance(exc, UnexpectedEOF) or (
        isinstance(exc, UnexpectedToken) and exc.token.type == "$END"
    ):
        lines = source.splitlines() or [""]
        span = s.Span(len(lines), len(lines[-1]) + 1, len(lines), len(lines[-1]) + 1)
        missing = "'}'" if source.count("{") > source.count("}") else hint.removeprefix("expected ")
        return Diagnostic(
            path,
            span,
            "unexpected end of file",
            f"a block is probably missing its closing '}}' ({hint})" if "'}'" in missing else hint,
        )
    line, column = exc.line, exc.column
    if isinstance(exc, UnexpectedCharacters):
        # (Lark declares pos_in_stream as None on the base class; UnexpectedCharacters sets the offset)
        pos = getattr(exc, "pos_in_stream", None)
        char = source[pos] if isinstance(pos, int) and 0 <= pos < len(source) else "?"
        if char == '"':
            return Diagnostic(
                path,
                s.Span(line, column, line, column + 1),
                "unterminated string",
                'close the string with " on the same line, or use """…""" for text over several lines',
            )
        return Diagnostic(
            path,
            s.Span(line, column, line, column + 1),
            f"unexpected character {char!r}",
            hint or "names start with a letter or _; strings use double quotes",
        )
    if not isinstance(exc, UnexpectedToken):  # Lark raises only the three kinds handled here
        return Diagnostic(path, s.Span(line, column, line, column + 1), "syntax error", hint)
    token = exc.token
    width = max(len(str(token)), 1) if "\n" not in str(token) else 1
    text = str(token) if len(str(token)) <= 40 else str(token)[:37] + "..."
    message = f"unexpected {text!r}"
    if (
        token.type == "DOT" and "'.'" not in expected
    ):  # "gold".answers, 1.x: only a name starts a path
        hint = (
            'a path starts with a bare name; quote only the segments after it, e.g. step."ordered?"'
        )
    elif token.type == "EQUAL" and "'{'" in expected:
        hint = "a block is written `name \"label\" { ... }`; an attribute `name = value` has a single name before '='"
    elif token.type in ("NAME", "STRING") and "'='" in expected:
        hint = "an attribute needs '=' between its name and value (`name = value`)"
    elif "','" in expected and token.type not in ("RPAR", "RSQB", "RBRACE"):
        hint = f"separate items with ',' ({hint})"
    return Diagnostic(path, s.Span(line, column, line, column + width), message, hint)

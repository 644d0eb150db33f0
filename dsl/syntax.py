"""The syntax tree of a spec file: frozen dataclasses with source spans.

This is the parser's output and the printer's input.  It knows nothing about what a task means;
``procbench.dsl.checker`` turns it into the typed model in ``procbench.dsl.model``.

Comments (``# ...``) ride on the tree so that ``procbench fmt`` can keep them: a statement (or a list
item, or an object pair) carries the comment lines just above it and the comment ending its line;
a block, list or object carries the comment after its opening bracket and those before its closing one.
Comment fields are excluded from equality, so two trees that differ only in comments compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from procbench.dsl.spans import NOWHERE as NOWHERE
from procbench.dsl.spans import Span as Span


@dataclass(frozen=True)
class Comments:
    """The comments around one statement, list item or object pair.

    ``leading`` holds the lines above it, each the comment as written (``"# why"``) or ``""`` for a
    blank line separating them (a run of blank lines is one ``""``); ``trailing`` is the comment at
    the end of its (last) line.
    """

    leading: tuple[str, ...] = ()
    trailing: str | None = None

    def __bool__(self) -> bool:
        return bool(self.leading) or self.trailing is not None


NO_COMMENTS = Comments()


@dataclass(frozen=True)
class Str:
    value: str
    span: Span = NOWHERE
    long: bool = False


@dataclass(frozen=True)
class Num:
    value: int | float
    span: Span = NOWHERE


@dataclass(frozen=True)
class Bool:
    value: bool
    span: Span = NOWHERE


@dataclass(frozen=True)
class Ref:
    parts: tuple[str, ...]
    span: Span = NOWHERE

    @property
    def dotted(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class KwArg:
    name: str
    value: Expr
    span: Span = NOWHERE


@dataclass(frozen=True)
class Call:
    callee: Ref
    args: tuple[Expr, ...] = ()
    kwargs: tuple[KwArg, ...] = ()
    span: Span = NOWHERE


@dataclass(frozen=True)
class ListExpr:
    items: tuple[Expr, ...]
    span: Span = NOWHERE
    # per item (empty when no item has any); `open_comment` follows '[', `end_comments` precede ']'
    item_comments: tuple[Comments, ...] = field(default=(), compare=False)
    open_comment: str | None = field(default=None, compare=False)
    end_comments: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Pair:
    key: str
    value: Expr
    span: Span = NOWHERE
    comments: Comments = field(default=NO_COMMENTS, compare=False)


@dataclass(frozen=True)
class ObjectExpr:
    pairs: tuple[Pair, ...]
    span: Span = NOWHERE
    open_comment: str | None = field(default=None, compare=False)  # after '{'
    end_comments: tuple[str, ...] = field(default=(), compare=False)  # before '}'


Expr = Union[Str, Num, Bool, Ref, Call, ListExpr, ObjectExpr]


@dataclass(frozen=True)
class Attribute:
    name: str
    value: Expr
    span: Span = NOWHERE
    type: Expr | None = None  # `name: list(str) = gold.answers` (typed data fields)
    comments: Comments = field(default=NO_COMMENTS, compare=False)


@dataclass(frozen=True)
class Block:
    type: str
    labels: tuple[str, ...]
    body: tuple[Attribute | Block, ...]
    span: Span = NOWHERE
    # per label: True when written as a bare name (`metric exact_p`), False when quoted text
    bare_labels: tuple[bool, ...] = ()
    label_spans: tuple[Span, ...] = ()
    comments: Comments = field(
        default=NO_COMMENTS, compare=False
    )  # trailing: after the closing '}'
    open_comment: str | None = field(default=None, compare=False)  # after the opening '{'
    end_comments: tuple[str, ...] = field(
        default=(), compare=False
    )  # at the end of the body, before '}'

    def attributes(self) -> list[Attribute]:
        return [s for s in self.body if isinstance(s, Attribute)]

    def blocks(self, type_: str | None = None) -> list[Block]:
        return [s for s in self.body if isinstance(s, Block) and (type_ is None or s.type == type_)]

    def attribute(self, name: str) -> Attribute | None:
        return next((a for a in self.attributes() if a.name == name), None)


@dataclass(frozen=True)
class SpecFile:
    path: str
    source: str
    body: tuple[Attribute | Block, ...]
    # the lines before the first statement (comments flush left, "" for a blank line) and the comments after the last
    header: tuple[str, ...] = field(default=(), compare=False)
    end_comments: tuple[str, ...] = field(default=(), compare=False)
    comments: tuple[str, ...] = field(
        default=(), compare=False
    )  # every comment of the source, in order (as lexed)

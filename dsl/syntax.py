"""The syntax tree of a spec file: frozen dataclasses with source spans.

This is the parser's output and the printer's input.  It knows nothing about what a task means;
``dsl.checker`` turns it into the typed model in ``dsl.model``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int


NOWHERE = Span(0, 0, 0, 0)


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


@dataclass(frozen=True)
class Pair:
    key: str
    value: Expr
    span: Span = NOWHERE


@dataclass(frozen=True)
class ObjectExpr:
    pairs: tuple[Pair, ...]
    span: Span = NOWHERE


Expr = Union[Str, Num, Bool, Ref, Call, ListExpr, ObjectExpr]


@dataclass(frozen=True)
class Attribute:
    name: str
    value: Expr
    span: Span = NOWHERE


@dataclass(frozen=True)
class Block:
    type: str
    labels: tuple[str, ...]
    body: tuple[Attribute | Block, ...]
    span: Span = NOWHERE

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

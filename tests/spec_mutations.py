"""Seeded single-name typos of a spec, for the mutation test (``tests/test_spec_mutations.py``).

A mutant is the spec's own text with exactly one NAME token (a block type, bare label, attribute
name, one part of a dotted reference, a call or keyword-argument name, an object key, a type name)
replaced by a one-edit typo of it.  The typo is chosen so that it cannot accidentally mean something:
it is not a name the spec (or its parents) already uses, not a registered component, not a type,
not a keyword and not a word of the language.  Such a typo must therefore be either refused by the
checker or have no effect at all; anything else is a hole in the checker.

The generator works on the lexer's tokens only, so it keeps working while the grammar and the
checker change: whatever the language calls a NAME gets mutated.
"""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Iterable
from dataclasses import dataclass

from lark import Lark, Token

from procbench.dsl.parser import GRAMMAR_PATH

KEYWORDS = frozenset({"true", "false"})
TYPE_NAMES = frozenset({"str", "int", "float", "bool", "any", "list", "optional", "enum"})
_FIRST = string.ascii_letters + "_"
_REST = string.ascii_lowercase + string.digits + "_"
_ATTEMPTS = (
    200  # typo draws per mutant before a token is given up (short names have few fresh typos)
)


@functools.cache
def _lexer() -> Lark:
    # The project's grammar, without the parser's lexer callbacks (they collect comments into
    # per-parse state that a bare lex() does not set up).
    return Lark(GRAMMAR_PATH.read_text(encoding="utf-8"), parser="lalr")


@dataclass(frozen=True)
class Mutant:
    """One token of ``spec`` replaced: ``original`` at ``line:column`` (1-based) becomes ``mutated``."""

    spec: str
    index: int  # position in the deterministic list of this spec's mutants
    line: int
    column: int
    start: int  # character offsets of the token in the unmutated text
    end: int
    original: str
    mutated: str

    def apply(self, source: str) -> str:
        if source[self.start : self.end] != self.original:
            raise ValueError(
                f"{self.spec}:{self.line}:{self.column}: the text there is not {self.original!r}; mutants apply to the text they were made from"
            )
        return source[: self.start] + self.mutated + source[self.end :]

    def describe(self) -> str:
        return f"{self.spec}:{self.line}:{self.column} {self.original} -> {self.mutated}"


def name_tokens(source: str) -> list[Token]:
    """Every NAME token of ``source`` in order, keywords excluded (raises lark errors on text that does not lex)."""
    return [t for t in _lexer().lex(source) if t.type == "NAME" and str(t) not in KEYWORDS]


def names_in(source: str) -> set[str]:
    return {str(t) for t in name_tokens(source)}


def lexes_as_one_name(word: str) -> bool:
    """True when ``word`` alone lexes as a single NAME token (so it is a name, not a keyword or a number)."""
    try:
        tokens = list(_lexer().lex(word))
    except Exception:  # noqa: BLE001 - lark raises several error types for text that is not a token
        return False
    return len(tokens) == 1 and tokens[0].type == "NAME" and str(tokens[0]) == word


def is_identifier(word: str) -> bool:
    """Letters, digits and ``_``, not starting with a digit (the typos never add any other character)."""
    return (
        bool(word)
        and word[0] in _FIRST
        and all(c in string.ascii_letters + string.digits + "_" for c in word)
    )


def language_vocabulary() -> frozenset[str]:
    """Registered component names, type names, keywords and, where the checker exposes it, its block and attribute names.

    A typo landing on one of these could be a meaningful (if wrong) spec rather than an unknown
    name, so the generator never produces them.  The checker's schema is read defensively: it is
    being rewritten, and the test must keep working whatever shape it takes.
    """
    from procbench.runners.runtime import registry

    components = {c.name for c in registry.all_components()}
    # dotted names (propara.answers) are separate NAME tokens in a spec, so their parts count too
    words = (
        set(KEYWORDS)
        | set(TYPE_NAMES)
        | components
        | {part for name in components for part in name.split(".")}
        | set(registry.KINDS)
    )
    try:
        from procbench.dsl import checker

        for block_type, schema in dict(getattr(checker, "SCHEMA", {}) or {}).items():
            words.add(str(block_type))
            for part in ("attrs", "blocks"):
                words.update(str(k) for k in dict(getattr(schema, part, {}) or {}) if k != "*")
    except Exception:  # noqa: BLE001 - vocabulary is best effort; the component/type/keyword lists above always apply
        pass
    return frozenset(words)


def typo(word: str, rng: random.Random) -> str:
    """One random edit of ``word``: delete, insert, substitute or transpose one character."""
    ops = (
        ["insert", "substitute"]
        + (["delete"] if len(word) > 1 else [])
        + (["transpose"] if len(word) > 1 else [])
    )
    op = rng.choice(ops)
    if op == "delete":
        i = rng.randrange(len(word))
        return word[:i] + word[i + 1 :]
    if op == "insert":
        i = rng.randrange(len(word) + 1)
        return word[:i] + rng.choice(_FIRST if i == 0 else _REST) + word[i:]
    if op == "substitute":
        i = rng.randrange(len(word))
        return word[:i] + rng.choice(_FIRST if i == 0 else _REST) + word[i + 1 :]
    i = rng.randrange(len(word) - 1)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _roles(source: str) -> list[list[Token]]:
    """NAME tokens grouped by role - the word with the kinds of token before and after it - in file order.

    ``display`` in fifty metric blocks is one role, so a spec's mutants go to fifty different
    things rather than to fifty copies of the same attribute name; ``category`` as a slice's name
    and as the label it reads are two roles.
    """
    tokens = list(_lexer().lex(source))
    groups: dict[tuple[str, str, str], list[Token]] = {}
    for i, token in enumerate(tokens):
        if token.type == "NAME" and str(token) not in KEYWORDS:
            before = tokens[i - 1].type if i else "^"
            after = tokens[i + 1].type if i + 1 < len(tokens) else "$"
            groups.setdefault((str(token), before, after), []).append(token)
    return list(groups.values())


def _spread(roles: list[list[Token]], count: int, rng: random.Random) -> list[Token]:
    """Tokens to mutate: one role per equal stretch of the file's roles when there are enough, else every role in turn.

    Each pick takes a random occurrence of its role.
    """
    n = len(roles)
    if n == 0:
        return []
    picks = (
        [rng.randrange(i * n // count, (i + 1) * n // count) for i in range(count)]
        if n >= count
        else [i % n for i in range(count)]
    )
    return [rng.choice(roles[i]) for i in picks]


def mutants(
    source: str, spec: str, *, seed: int | str, count: int, forbidden: Iterable[str] = ()
) -> list[Mutant]:
    """Up to ``count`` distinct mutants of ``source``, the same list for the same (source, seed, count, forbidden).

    ``forbidden`` adds words no typo may produce (the parents' names, the language's vocabulary);
    the spec's own names are always forbidden.  A spec with fewer fresh typos than ``count`` yields fewer.
    """
    rng = random.Random(f"{seed}:{spec}")
    banned = names_in(source) | set(forbidden) | KEYWORDS | TYPE_NAMES
    made: list[Mutant] = []
    seen: set[tuple[int, str]] = set()
    for token in _spread(_roles(source), count, rng):
        word = str(token)
        for _ in range(_ATTEMPTS):
            new = typo(word, rng)
            if (
                new == word
                or new in banned
                or (token.start_pos, new) in seen
                or not is_identifier(new.replace("-", "_"))
                or not lexes_as_one_name(new)
            ):
                continue
            seen.add((token.start_pos, new))
            made.append(
                Mutant(
                    spec,
                    len(made),
                    token.line,
                    token.column,
                    token.start_pos,
                    token.end_pos,
                    word,
                    new,
                )
            )
            break
    return made


def targeted_mutants(
    source: str, spec: str, *, seed: int | str, forbidden: Iterable[str] = ()
) -> list[Mutant]:
    """One mutant per token where maintainers' typos change data silently: every key and label of a ``map()``
    (its labels and default are strings: the typo goes inside the quotes), and the names in ``key = ...``
    and ``id = ...`` statements (a join key, an item id path).  Typos follow :func:`typo`; names avoid
    ``forbidden`` and the spec's own names, as :func:`mutants` does.
    """
    rng = random.Random(f"{seed}:{spec}:targeted")
    banned = names_in(source) | set(forbidden) | KEYWORDS | TYPE_NAMES
    tokens = list(_lexer().lex(source))
    picked: list[Token] = []
    depth = 0  # parentheses open inside a map( ... ) call
    for i, token in enumerate(tokens):
        if depth < 0:
            depth = 1
        elif depth:
            depth += {"(": 1, ")": -1}.get(str(token), 0)
            if depth and (
                token.type == "STRING"
                or (token.type == "NAME" and i + 1 < len(tokens) and str(tokens[i + 1]) == "=")
            ):
                picked.append(token)  # a map key (NAME or quoted) or a label / the default (STRING)
        elif (
            token.type == "NAME"
            and str(token) == "map"
            and i + 1 < len(tokens)
            and str(tokens[i + 1]) == "("
        ):
            depth = -1  # the "(" that follows opens it
        elif (
            token.type == "NAME"
            and str(token) in ("key", "id")
            and i + 2 < len(tokens)
            and str(tokens[i + 1]) == "="
            and tokens[i + 2].type == "NAME"
        ):
            j = i + 2  # the reference after `=`: each of its dotted parts
            while j < len(tokens) and tokens[j].type == "NAME":
                picked.append(tokens[j])
                j += 2 if j + 1 < len(tokens) and str(tokens[j + 1]) == "." else len(tokens)
    made: list[Mutant] = []
    for token in picked:
        word = str(token)
        quoted = token.type == "STRING"
        inner = word[1:-1] if quoted else word
        for _ in range(_ATTEMPTS):
            new = typo(inner, rng) if inner else rng.choice(_FIRST)
            if new == inner or new in banned:
                continue
            if not quoted and (
                not is_identifier(new.replace("-", "_")) or not lexes_as_one_name(new)
            ):
                continue
            made.append(
                Mutant(
                    spec,
                    len(made),
                    token.line,
                    token.column,
                    token.start_pos,
                    token.end_pos,
                    word,
                    f'"{new}"' if quoted else new,
                )
            )
            break
    return made

"""spaCy's English tokens for many short texts, fast, without changing a single token.

How spaCy's tokenizer works (spacy/tokenizer.pyx, ``Tokenizer.__call__``): it cuts the text at
whitespace into *chunks*, tokenises every chunk on its own (exceptions, prefixes, suffixes,
infixes, URLs; cached by chunk), then runs one matcher over the whole token sequence for the
exceptions whose text contains punctuation (``a.m.``, ``:)``, ``'s`` ...) and merges what it finds.
So the tokens of a text are the concatenation of the tokens of its chunks, each tokenised alone,
unless a match of that matcher spans two chunks.

This module tokenises each distinct chunk once, by spaCy itself, and assembles a text from its
chunks when that is provably what spaCy would return:

* the text is *plain*: printable (so its only whitespace is the ASCII space), no leading,
  trailing or double space; its chunks are then exactly ``text.split(" ")``;
* no match of a matcher pattern can span a chunk boundary: the patterns are the exceptions
  tokenised without exceptions (spaCy's ``add_special_case``), and tokens are substrings of their
  chunk, so such a match needs the text before the boundary (spaces removed) to end with the
  pattern's first tokens and the text after it to start with the rest. :class:`Boundaries`
  checks that on strings, conservatively (every exception counts as a pattern, not only those
  spaCy puts into its matcher); a text that fails goes to spaCy whole.

Every other text goes to spaCy whole too. Chunks are tokenised in batches: many chunks joined by a
separator character that belongs to no pattern, so that no match can reach across it. A chunk of
ASCII letters that is no exception is one token without asking spaCy, when none of its splitting
expressions can match letters (:mod:`procbench.runners.paged.letters`; true of English).

The tokenizer used here has a vocabulary without lexical attribute getters (is_stop, like_num,
norm ...): spaCy's tokenizer never reads them, and computing them is most of the cost of a new
word. Lower-casing is ``str.lower`` on the token text, which is what spaCy's ``LOWER`` attribute
getter does. The test suite checks every token against ``spacy.blank("en")`` itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, count, islice
from operator import and_, attrgetter
from typing import Any, TypeGuard

from procbench.runners.paged.letters import may_match_letters

SEPARATOR = "\ue000"  # a private-use character: no exception contains it (checked on load)
BATCH_CHARACTERS = 20_000  # chunks per spaCy call, in characters (one Doc per batch)
CHUNK_CACHE_LIMIT = 2_000_000  # distinct chunks kept; the cache is emptied beyond that


@dataclass(frozen=True, slots=True, eq=False)
class Chunk:
    """One whitespace-free piece of text: its spaCy tokens and how a pattern could run across its ends."""

    lower: tuple[str, ...]
    numbers: tuple[int, ...]  # the same tokens as numbers (``ChunkTokenizer.number``)
    follow: int  # bit set of the pattern tokens that may follow, in some pattern, a token this chunk ends with
    starts: int  # bit set of the pattern tokens (that follow another in some pattern) this chunk starts with


_FOLLOW = attrgetter("follow")
_LOWER = attrgetter("lower")
_NUMBERS = attrgetter("numbers")
_STARTS = attrgetter("starts")


def _all_found(chunks: list[Chunk | None]) -> TypeGuard[list[Chunk]]:
    """Whether every piece's chunk was cached (a chunk is always true)."""
    return all(chunks)


class Boundaries:
    """spaCy's special-case patterns, to tell whether a match could run across a chunk boundary.

    A match across the boundary between two chunks covers the last tokens of the text before it
    and the first tokens of the text after it: for some pattern split in two there, the text
    before (spaces removed) ends with the first part and the text after starts with the second.
    Tokens are substrings of their chunk, so this test on strings can only err on the safe side.
    Each chunk carries bit sets of the pattern tokens it could end before / start with, so that
    most boundaries are cleared by one ``&``.
    """

    def __init__(self, patterns: Iterable[Sequence[str]]):
        followers: dict[
            str, set[str]
        ] = {}  # pattern token -> the tokens that follow it in some pattern
        self._sides: dict[
            str, list[tuple[str, str]]
        ] = {}  # token after a split -> (before, after) texts
        for tokens in patterns:
            for k in range(1, len(tokens)):
                x, y = tokens[k - 1], tokens[k]
                followers.setdefault(x, set()).add(y)
                sides = ("".join(tokens[:k]), "".join(tokens[k:]))
                if sides not in self._sides.setdefault(y, []):
                    self._sides[y].append(sides)
        self._bit = {y: 1 << i for i, y in enumerate(sorted(self._sides))}
        self._follow_bits = {x: sum(self._bit[y] for y in ys) for x, ys in followers.items()}
        # pattern tokens by their last / first character: a chunk is compared with a handful only
        self._lefts: dict[str, tuple[str, ...]] = {}
        self._rights: dict[str, tuple[str, ...]] = {}
        for x in sorted(followers):
            self._lefts[x[-1]] = (*self._lefts.get(x[-1], ()), x)
        for y in sorted(self._sides):
            self._rights[y[0]] = (*self._rights.get(y[0], ()), y)

    def follow(self, chunk: str) -> int:
        """Bit set of the pattern tokens that could come right after this chunk inside a match."""
        found = 0
        for x in self._lefts.get(chunk[-1], ()) if chunk else ():
            if chunk.endswith(x):
                found |= self._follow_bits[x]
        return found

    def starts(self, chunk: str) -> int:
        """Bit set of the pattern tokens (that follow another in some pattern) this chunk starts with."""
        found = 0
        for y in self._rights.get(chunk[0], ()) if chunk else ():
            if chunk.startswith(y):
                found |= self._bit[y]
        return found

    def crossed(self, pieces: Sequence[str], chunks: Sequence[Chunk]) -> bool:
        """True when some pattern could match across a boundary between these chunks (``pieces``: their texts)."""
        if not any(map(and_, map(_FOLLOW, chunks), map(_STARTS, islice(chunks, 1, None)))):
            return False
        for i in range(len(chunks) - 1):
            if not chunks[i].follow & chunks[i + 1].starts:
                continue
            before, after = "".join(pieces[: i + 1]), "".join(pieces[i + 1 :])
            for y, bit in self._bit.items():
                if bit & chunks[i + 1].starts and any(
                    before.endswith(first) and after.startswith(rest)
                    for first, rest in self._sides[y]
                ):
                    return True
        return False


class ChunkTokenizer:
    """spaCy English tokens (lower-cased) of texts, assembled from cached chunk tokens where exact."""

    def __init__(self, spacy_tokenizer: Any):
        from spacy.tokenizer import Tokenizer
        from spacy.vocab import Vocab

        settings = {
            "prefix_search": spacy_tokenizer.prefix_search,
            "suffix_search": spacy_tokenizer.suffix_search,
            "infix_finditer": spacy_tokenizer.infix_finditer,
            "token_match": spacy_tokenizer.token_match,
            "url_match": spacy_tokenizer.url_match,
        }
        rules = spacy_tokenizer.rules
        self._spacy = Tokenizer(
            Vocab(), rules=rules, faster_heuristics=spacy_tokenizer.faster_heuristics, **settings
        )
        # spaCy's matcher patterns are the exceptions tokenised without exceptions (add_special_case)
        without_exceptions = Tokenizer(Vocab(), **settings)
        patterns = [[token.orth_ for token in without_exceptions(text)] for text in rules]
        self.boundaries = Boundaries(patterns)
        if any(SEPARATOR in token for tokens in patterns for token in tokens) or self._orths(
            SEPARATOR
        ) != [SEPARATOR]:
            raise RuntimeError(
                "the chunk separator takes part in a spaCy exception: batching would not be exact"
            )
        self._chunks: dict[str, Chunk] = {}
        self._numbers: dict[str, int] = {}
        self._next_number = count()
        # a letters-only chunk that is no exception is one token when no splitting rule can match letters
        self._exceptions = frozenset(rules)
        splitters = (
            settings["prefix_search"],
            settings["suffix_search"],
            settings["infix_finditer"],
            settings["url_match"],
        )
        self.letters_alone = settings["token_match"] is None and not any(
            may_match_letters(getattr(splitter, "__self__", None))
            for splitter in splitters
            if splitter is not None
        )

    def _orths(self, text: str) -> list[str]:
        doc = self._spacy(text)
        strings = self._spacy.vocab.strings
        return [strings[h] for h in doc.to_array("ORTH").tolist()] if len(doc) else []

    def whole(self, text: str) -> tuple[str, ...]:
        """spaCy's tokens of the whole text in one call (the definition)."""
        return tuple(orth.lower() for orth in self._orths(text))

    def number(self, token: str) -> int:
        """A number per distinct (lower-cased) token; two tokens never share one, even across threads."""
        found = self._numbers.get(token)
        if found is None:
            found = self._numbers.setdefault(token, next(self._next_number))
        return found

    def _single_token(self, piece: str) -> bool:
        """A chunk spaCy keeps whole without looking: ASCII letters only, not an exception (see ``letters_alone``)."""
        return (
            self.letters_alone
            and piece.isascii()
            and piece.isalpha()
            and piece not in self._exceptions
        )

    def _chunk(self, text: str, orths: Iterable[str]) -> Chunk:
        lower = tuple(orth.lower() for orth in orths)
        return Chunk(
            lower,
            tuple(map(self.number, lower)),
            self.boundaries.follow(text),
            self.boundaries.starts(text),
        )

    def prepare(self, texts: Iterable[str]) -> None:
        """Tokenise the chunks of these texts that are not cached yet, in batches (one spaCy call each)."""
        pieces: set[str] = set()
        for text in set(texts):
            if text and text.isprintable():
                pieces.update(text.split(" "))
        todo = sorted(piece for piece in pieces if piece and piece not in self._chunks)
        if len(self._chunks) + len(todo) > CHUNK_CACHE_LIMIT:
            self._chunks.clear()
        for piece in todo:
            if self._single_token(piece):
                self._chunks[piece] = self._chunk(piece, (piece,))
        todo = [piece for piece in todo if piece not in self._chunks]
        batch: list[str] = []
        size = 0
        for piece in todo:
            batch.append(piece)
            size += len(piece) + 3
            if size >= BATCH_CHARACTERS:
                self._tokenise_batch(batch)
                batch, size = [], 0
        if batch:
            self._tokenise_batch(batch)

    def _tokenise_batch(self, pieces: list[str]) -> None:
        glue = f" {SEPARATOR} "
        doc = self._spacy(glue.join(pieces))
        strings = self._spacy.vocab.strings
        columns = doc.to_array(["ORTH", "IDX"]).tolist()
        position = 0
        at = 0
        for piece in pieces:
            end = position + len(piece)
            orths = []
            while at < len(columns) and columns[at][1] < end:
                if columns[at][1] >= position:
                    orths.append(strings[columns[at][0]])
                at += 1
            if (
                "".join(orths) != piece
            ):  # cannot happen (spaCy tokens cover a chunk); never trust a batch blindly
                orths = self._orths(piece)
            self._chunks[piece] = self._chunk(piece, orths)
            position = end + len(glue)

    def chunk(self, piece: str) -> Chunk:
        found = self._chunks.get(piece)
        if found is None:
            if len(self._chunks) >= CHUNK_CACHE_LIMIT:
                self._chunks.clear()
            found = self._chunks[piece] = self._chunk(
                piece, (piece,) if self._single_token(piece) else self._orths(piece)
            )
        return found

    def _assembly(self, text: str) -> list[Chunk] | None:
        """The chunks of a non-empty text whose tokens are exactly its chunks' tokens; None: tokenise it whole."""
        if not text.isprintable():
            return None
        pieces = text.split(" ")
        if "" in pieces:
            return None
        found = list(map(self._chunks.get, pieces))
        chunks = (
            found
            if _all_found(found)
            else [chunk or self.chunk(piece) for chunk, piece in zip(found, pieces)]
        )
        if len(chunks) > 1 and self.boundaries.crossed(pieces, chunks):
            return None
        return chunks

    def __call__(self, text: str) -> tuple[str, ...]:
        """spaCy's lower-cased tokens of the text."""
        if not text:
            return ()
        chunks = self._assembly(text)
        if chunks is None:
            return self.whole(text)
        return (
            chunks[0].lower if len(chunks) == 1 else tuple(chain.from_iterable(map(_LOWER, chunks)))
        )

    def numbers(self, text: str) -> tuple[int, ...]:
        """The same tokens as numbers (:meth:`number`), repeats kept."""
        if not text:
            return ()
        chunks = self._assembly(text)
        if chunks is None:
            return tuple(map(self.number, self.whole(text)))
        return (
            chunks[0].numbers
            if len(chunks) == 1
            else tuple(chain.from_iterable(map(_NUMBERS, chunks)))
        )

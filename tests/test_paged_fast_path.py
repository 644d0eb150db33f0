"""PAGED's fast path gives exactly what the plain definitions give, on the real dev split and on odd text.

* tokens: :class:`procbench.runners.paged.tokenizer.ChunkTokenizer` (chunks tokenised once, batched, texts
  assembled from chunks) against ``token.lower_`` of ``spacy.blank("en")`` called on each whole text;
* statistics: the scorer (batched tokenisation, matrices, caches, indexed registry) against
  ``procbench.bench.reference.paged.document_statistics``, the plain per-pair port of upstream, per document.
"""

from __future__ import annotations

import functools
import json
import random
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.bench.generate import perturbed_flow_line
from procbench.bench.reference import paged as reference
from procbench.runners.paged import tokens
from procbench.runners.paged.gold import GoldDocument
from procbench.runners.paged.parse import parse_text
from procbench.runners.paged.reader import read_graphs
from procbench.runners.paged.scoring import gold_spans, lexical_scorer
from procbench.runners.paged.tokenizer import ChunkTokenizer


@pytest.fixture(scope="module")
def spacy_tokenizer() -> Any:
    """A separate, standard ``blank("en")`` tokenizer: the definition."""
    import spacy

    return spacy.blank("en").tokenizer


def _spacy_lower(tokenizer: Any, text: str) -> tuple[str, ...]:
    return tuple(token.lower_ for token in tokenizer(text))


@pytest.fixture(scope="module")
def dev(data_root: Path) -> dict[str, GoldDocument]:
    return read_graphs(data_root, "dev").items


def _perturbed(documents: dict[str, GoldDocument], seed: int) -> dict[str, str]:
    """Each gold text with lines dropped, swapped in from other documents and words dropped (as procbench.bench.generate does)."""
    rng = random.Random(seed)
    texts = {item_id: document.text.splitlines() for item_id, document in documents.items()}
    pool = [line for lines in texts.values() for line in lines if "->" in line]
    outputs = {}
    for item_id, lines in texts.items():
        kept = []
        for line in lines:
            predicted = perturbed_flow_line(line, pool, rng)
            if predicted is None:
                continue
            if rng.random() > 0.95:
                predicted = predicted.replace(" ", "  ", 1).replace(
                    "(", "( ", 1
                )  # double spaces: the whole-text path
            kept.append(predicted)
        outputs[item_id] = "\n".join(kept)
    return outputs


def _every_text(documents: dict[str, GoldDocument], outputs: dict[str, str]) -> Iterator[str]:
    for item_id, document in documents.items():
        yield document.paragraph  # newlines: spaCy whole
        yield " ".join(
            document.paragraph.split()
        )  # the same prose single-spaced: assembled from chunks
        spans = gold_spans(document.lines) + list(parse_text(outputs.get(item_id, "")).spans)
        for span in spans:
            yield span.line
            yield span.agent
            if span.edge.parsed:
                yield span.edge.condition
                yield from (end.text for end in (span.edge.head, span.edge.tail) if end is not None)


def test_printable_text_has_no_whitespace_but_the_space() -> None:
    """The chunk path relies on it: a printable text splits at " " exactly where spaCy splits it."""
    assert [c for c in map(chr, range(sys.maxunicode + 1)) if c.isprintable() and c.isspace()] == [
        " "
    ]


def test_tokens_equal_spacy_on_every_text_of_the_dev_split(
    dev: dict[str, GoldDocument], spacy_tokenizer: Any
) -> None:
    texts = sorted(set(_every_text(dev, _perturbed(dev, seed=1))))
    assert len(texts) > 10_000
    batched, one_by_one = ChunkTokenizer(spacy_tokenizer), ChunkTokenizer(spacy_tokenizer)
    batched.prepare(texts)
    wrong = [
        t for t in texts if not batched(t) == one_by_one(t) == _spacy_lower(spacy_tokenizer, t)
    ]
    assert wrong == []
    assert all(
        tokens.tokens(t) == _spacy_lower(spacy_tokenizer, t) for t in texts[::7]
    )  # the module's cached entry point


FRAGMENTS = [
    "a.m.",
    "p.m.",
    ":)",
    ":",
    ")",
    "(",
    "-",
    "->",
    "'s",
    "'",
    "’s",
    "n't",
    "don't",
    "It",
    "it",
    "a",
    ".",
    "..",
    "...",
    "e.g.",
    "Mr.",
    "U.S.",
    "10km",
    "$5",
    "5%",
    "x",
    "(yes)",
    "XOR1",
    "End(x)",
    "DataObject(form)",
    "http://example.com",
    "o.O",
    "<3",
    ":-)",
    "x:)",
    "a:(",
    "8-)",
    "=)",
    "and/or",
    "w/o",
    "Check",
    "the",
    "form",
    "co.",
    "vs.",
    "°C.",
    "’",
    "—",
    "(:",
    ";)",
    "^_^",
    "ಠ_ಠ",
]
SEPARATORS = [" ", " ", " ", "", "  ", "\t", "\n", "\xa0", " \n "]


@pytest.fixture(scope="module")
def odd_tokenizer() -> ChunkTokenizer:
    """One fast tokenizer for all examples: its chunk cache grows as they come, as in a long-running server."""
    return ChunkTokenizer(tokens._spacy_tokenizer())


@given(
    parts=st.lists(st.tuples(st.sampled_from(FRAGMENTS), st.sampled_from(SEPARATORS)), max_size=12),
    batched=st.booleans(),
)
def test_tokens_equal_spacy_on_odd_text(
    odd_tokenizer: ChunkTokenizer, parts: list[tuple[str, str]], batched: bool
) -> None:
    text = "".join(fragment + separator for fragment, separator in parts).strip(" ")
    definition = tokens._spacy_tokenizer()
    if batched:
        odd_tokenizer.prepare([text, text[::-1]])
    for candidate in (text, text[::-1]):
        assert (
            odd_tokenizer(candidate)
            == _spacy_lower(definition, candidate)
            == tokens.tokens(candidate)
        )


@pytest.mark.parametrize(
    "text",
    [
        "x:) )",
        "a:( (",
        "x:-) )",
        "Check:) ) -> End",
        ": )",
        "x :) )",
        "Send it 's",
        "at 10 a.m. .",
        "(: )",
        ":)) )",
        "a. m.",
        "A -> B :) -> C",
    ],
)
def test_special_cases_across_chunks_go_through_spacy_whole(text: str) -> None:
    definition = tokens._spacy_tokenizer()
    assert ChunkTokenizer(definition)(text) == _spacy_lower(definition, text)


@pytest.mark.parametrize(
    "variant", ["perturbed, whole split", "gold and others' lines, some missing"]
)
def test_scorer_equals_plain_reference_on_the_dev_split(
    dev: dict[str, GoldDocument], variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from procbench.runners.runtime._types import GoldSet

    # the reference computes every pair from scratch (spaCy, NLTK); remembering its answers keeps this test short
    for kernel in ("tokens", "lexical_f1", "bleu1"):
        monkeypatch.setattr(reference, kernel, functools.cache(getattr(reference, kernel)))
    documents = dev
    outputs = _perturbed(dev, seed=1)
    if variant.startswith(
        "gold"
    ):  # a subset: the gold-as-prediction parity fixture covers the rest
        documents = dict(list(dev.items())[:150])
        texts = [document.text for document in documents.values()]
        outputs = {
            item_id: text + "\n" + texts[(i * 7) % len(texts)]
            for i, (item_id, text) in enumerate(zip(documents, texts))
            if i % 10
        }
        outputs[next(iter(outputs))] = ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        items = lexical_scorer(GoldSet(documents, {}), outputs)
    assert len(items) == len(documents)
    for item in items:
        document = documents[item.item_id]
        expected, aligned_predicted, aligned_gold = reference.document_statistics(
            gold_spans(document.lines), list(parse_text(outputs.get(item.item_id) or "").spans)
        )
        # the bounded variant's counts (bleu_*_once.*) are not the official scorer's: tests/test_paged_bounded.py checks them
        got = {
            key: value
            for key, value in item.values.items()
            if "." in key and value and "_once." not in key
        }
        assert got == expected, item.item_id
        assert (item.values["aligned_predicted_lines"], item.values["aligned_gold_lines"]) == (
            aligned_predicted,
            aligned_gold,
        ), item.item_id


def test_fingerprinted_fields_are_the_record(dev: dict[str, GoldDocument], data_root: Path) -> None:
    """The gold fields (what the fingerprint hashes) are the record as read; graph and lines are derived."""
    import dataclasses

    records = json.loads(
        (data_root / "paged/dataset/procedural_graph_extraction/dev.json").read_text(
            encoding="utf-8"
        )
    )
    first = dev[str(records[0]["file_index"])]
    assert [f.name for f in dataclasses.fields(first)] == ["file_index", "paragraph", "record"]
    assert json.loads(first.record) == records[0]
    rebuilt = GoldDocument(
        first.file_index, first.paragraph, first.record
    )  # views derived lazily from the record
    assert rebuilt == first and rebuilt.graph == first.graph and rebuilt.lines == first.lines


@given(
    st.lists(st.sampled_from(FRAGMENTS + ["order", "Order", "order order"]), max_size=5).map(
        " ".join
    ),
    st.lists(st.sampled_from(FRAGMENTS + ["order", "Order"]), max_size=5).map(" ".join),
)
def test_same_tokens_is_lexical_f1_of_one(a: str, b: str) -> None:
    assert tokens.same_tokens(a, b) == (tokens.lexical_f1(a, b) >= 1.0)
    assert tokens.same_tokens(a, a) == (tokens.lexical_f1(a, a) >= 1.0)


def _plain_sum(documents: list[dict[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for stats in documents:
        for key, value in stats.items():
            total[key] = total.get(key, 0) + value
    return total


@given(
    st.lists(
        st.lists(
            st.one_of(st.integers(0, 5), st.floats(0, 3, allow_nan=False)), min_size=3, max_size=3
        ),
        max_size=30,
    ),
    st.booleans(),
)
def test_sum_statistics_adds_in_document_order(rows: list[list[float]], reorder_one: bool) -> None:
    from procbench.runners.paged.metrics import sum_statistics

    documents = [dict(zip(("a.p_sum", "b.p_num", "c.r_sum"), row)) for row in rows]
    if reorder_one and documents:  # another key order: the general path
        documents[-1] = dict(reversed(list(documents[-1].items())))
    got, want = sum_statistics(iter(documents)), _plain_sum(documents)
    assert got == want and list(got) == list(want)
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]

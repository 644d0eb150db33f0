"""The vectorised OpenPI kernels give bit-identical values to the scalar ones they replace."""

from __future__ import annotations

import string

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from procbench.runners.runtime._types import GoldSet
from procbench.runners.library.generic import MatchScorer, MatchStage
from procbench.runners.library import matching
from procbench.runners.library.matching import BestMatch, PairBatch, PairMemo, PairScorer
from procbench.runners.library.similarity import CocoBleu, CocoRougeL, Exact, TokenF1, _lcs_length
from procbench.runners.library.text import (
    Pipeline,
    delete_chars,
    drop_words,
    lowercase,
    squeeze_whitespace,
    stem,
    strip,
)

WORDS = [
    "oven",
    "rack",
    "racks",
    "hot",
    "cold",
    "water",
    "pan",
    "in",
    "on",
    "sink",
    "the",
    "was",
    "and",
    "dry",
    "x",
    "",
]
text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=9).map(" ".join)
long_text = st.lists(st.sampled_from(WORDS[:6]), min_size=60, max_size=90).map(
    " ".join
)  # past one 63-bit word
texts = st.lists(st.one_of(text, text, text, long_text), min_size=1, max_size=25, unique=True)

CONTENT = Pipeline.of(
    [
        strip(),
        lowercase(),
        delete_chars(string.punctuation),
        squeeze_whitespace(),
        drop_words(["and", "was", "is", "before", "afterwards", "after", "of"]),
    ]
)
STEMMED = Pipeline.of(
    [strip(), lowercase(), delete_chars(string.punctuation), squeeze_whitespace(), stem()]
)
KERNELED = [Exact(), CocoBleu(n=2), CocoBleu(n=4), CocoRougeL(beta=1.2)]


@pytest.mark.parametrize("similarity", KERNELED, ids=lambda s: f"{s.name}{getattr(s, 'n', '')}")
@given(strings=texts, data=st.data())
def test_pair_kernel_equals_scalar_score(
    similarity, strings: list[str], data: st.DataObject
) -> None:
    kernel = similarity.kernel()
    half = len(strings) // 2
    kernel.extend(strings[:half])  # strings arrive in two calls, as they do across chunks
    kernel.extend(strings[half:])
    pairs = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(strings) - 1), st.integers(0, len(strings) - 1)),
            min_size=1,
            max_size=60,
        )
    )
    gold = np.array([g for g, _ in pairs], dtype=np.int64)
    prediction = np.array([p for _, p in pairs], dtype=np.int64)
    got = kernel.score_pairs(gold, prediction).tolist()
    prepared = [similarity.prepare(s) for s in strings]
    assert got == [similarity.score(prepared[g], prepared[p]) for g, p in pairs]


@given(st.lists(st.integers(0, 5), max_size=80), st.lists(st.integers(0, 5), max_size=80))
def test_bit_parallel_lcs_equals_dynamic_programme(a: list[int], b: list[int]) -> None:
    kernel = CocoRougeL().kernel()
    texts_ = [" ".join(f"w{x}" for x in a), " ".join(f"w{x}" for x in b)]
    kernel.extend(texts_)
    value = kernel.score_pairs(np.array([1]), np.array([0]))[0]
    prepared = [tuple(t.split(" ")) for t in texts_]
    assert _lcs_length(prepared[0], prepared[1]) == _lcs_length(prepared[1], prepared[0])
    assert value == CocoRougeL().score(prepared[1], prepared[0])


answers = st.lists(
    st.one_of(text, st.sampled_from(["There will be no change.", "X.", "x", "  "])), max_size=7
)


@pytest.mark.parametrize("dedup", [False, True])
@pytest.mark.parametrize("threshold", [0.0, 0.3])
@given(items=st.lists(st.tuples(answers, answers), min_size=1, max_size=12))
def test_score_many_equals_item_by_item(
    dedup: bool, threshold: float, items: list[tuple[list[str], list[str]]]
) -> None:
    matcher = BestMatch(dedup=dedup, threshold=threshold)
    golds, predictions = [g for g, _ in items], [p for _, p in items]
    for similarity in KERNELED + [TokenF1()]:
        batched = matcher.score_many(golds, predictions, PairScorer(similarity, CONTENT, STEMMED))
        scalar = [matcher(g, p, PairScorer(similarity, CONTENT, STEMMED)) for g, p in items]
        assert batched == scalar, similarity.name


@given(items=st.lists(st.tuples(answers, answers), min_size=1, max_size=10))
def test_shared_batch_equals_separate_scorers(items: list[tuple[list[str], list[str]]]) -> None:
    matcher = BestMatch()
    golds, predictions = [g for g, _ in items], [p for _, p in items]
    scorers = [PairScorer(s, CONTENT, STEMMED) for s in (Exact(), CocoBleu(n=2), CocoRougeL())]
    shared = matcher.score_shared(golds, predictions, PairBatch(scorers))
    for scorer, column in zip(scorers, shared):
        assert column == [
            matcher(g, p, PairScorer(scorer.similarity, CONTENT, STEMMED)) for g, p in items
        ]


def test_batches_refuse_scorers_with_different_normalisers() -> None:
    with pytest.raises(ValueError, match="share their normalisers"):
        PairBatch([PairScorer(Exact(), CONTENT, STEMMED), PairScorer(CocoBleu(), STEMMED, STEMMED)])
    with pytest.raises(ValueError, match="pair kernel"):
        PairBatch([PairScorer(TokenF1(), CONTENT, STEMMED)])


def test_match_scorer_groups_stages_and_keeps_their_order() -> None:
    """Three stages over the same answers share a batch; a fourth with other answers stands alone."""
    stages = tuple(
        MatchStage(
            "answers",
            field_name,
            (),
            PairScorer(similarity, CONTENT, STEMMED),
            BestMatch(),
            (f"{name}_p", f"{name}_r", f"{name}_f1"),
        )
        for name, similarity, field_name in (
            ("exact", Exact(), "answers"),
            ("bleu", CocoBleu(n=2), "answers"),
            ("rouge", CocoRougeL(), "answers"),
            ("other", Exact(), "other"),
        )
    )
    gold = GoldSet(
        items={
            "a": {"answers": ["pan was hot", "oven rack"]},
            "b": {"answers": []},
            "c": {"answers": ["x"]},
        }
    )
    predictions = {
        "a": {"answers": ["pan was hot", "racks"], "other": ["oven rack"]},
        "b": {"answers": ["y"], "other": []},
    }
    scorer = MatchScorer(stages)
    scored = scorer(gold, predictions)
    assert list(scorer._batches) == [(0, 1, 2)]
    assert [list(i.values) for i in scored][0] == [
        f"{n}_{k}" for n in ("exact", "bleu", "rouge", "other") for k in ("p", "r", "f1")
    ]
    for stage in stages:
        for item in scored:
            record = predictions.get(item.item_id, {})
            want = stage.matcher(
                gold.items[item.item_id]["answers"],
                record.get(stage.prediction_field, []),
                PairScorer(stage.pairs.similarity, CONTENT, STEMMED),
            )
            assert (
                item.values[stage.outputs[0]],
                item.values[stage.outputs[1]],
                item.values[stage.outputs[2]],
            ) == (want.precision, want.recall, want.f1)


def test_rescoring_the_same_pairs_reuses_remembered_values() -> None:
    scorer = PairScorer(CocoRougeL(), CONTENT, STEMMED)
    golds, predictions = [["pan was hot", "oven rack"]] * 3, [["pan hot", "rack"]] * 3
    first = BestMatch().score_many(golds, predictions, scorer)
    remembered = scorer.batch().memos[0].size
    again = BestMatch().score_many(golds, predictions, scorer)
    assert first == again and remembered == scorer.batch().memos[0].size == 4


@pytest.mark.parametrize("enabled", [True, False])
def test_evaluation_leaves_the_cyclic_collector_as_it_found_it(enabled: bool) -> None:
    import gc

    from procbench.api import load_task
    from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
    from procbench.runners.runtime.runner import cyclic_gc_paused

    _, runner = load_task("openpi")
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with cyclic_gc_paused():
            assert not gc.isenabled()
            with cyclic_gc_paused():  # nested stages re-enable once, at the outermost exit
                pass
            assert not gc.isenabled()
        runner.evaluate(
            SAMPLE_DATA_ROOT, "test", SAMPLE_SUBMISSIONS_DIR / "openpi" / "strong-model.jsonl"
        )
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


@given(st.lists(st.lists(st.integers(0, 2**40), max_size=30), max_size=8), st.integers(1, 60))
def test_pair_memo_remembers_like_a_dict_until_full(chunks: list[list[int]], capacity: int) -> None:
    memo, remembered = PairMemo(), {}
    original = matching.MAX_REMEMBERED_PAIRS
    matching.MAX_REMEMBERED_PAIRS = capacity
    try:
        for chunk in chunks:
            keys = np.unique(np.asarray(chunk, dtype=np.int64))
            values, found = memo.lookup(keys)
            assert found.tolist() == [k in remembered for k in keys.tolist()]
            assert values.tolist() == [remembered.get(k, 0.0) for k in keys.tolist()]
            fresh = keys[~found]
            if len(remembered) + len(fresh) > capacity:
                remembered = {}
            memo.add(fresh, fresh / 7.0)
            remembered.update({k: k / 7.0 for k in fresh.tolist()})
            assert memo.keys.tolist() == sorted(remembered) and memo.size == len(remembered)
    finally:
        matching.MAX_REMEMBERED_PAIRS = original

"""procbench.runners.library.porter and procbench.runners.library.edit_distance against NLTK as the oracle (issue #19: no NLTK at start-up).

ProPara and OpenPI stem with NLTK's Porter (NLTK_EXTENSIONS) and NAACL'18 aligns with unit-cost edit
distance; procbench computes both without importing NLTK.  Every token of the real ProPara and OpenPI
files (and of the bundled samples, always) must stem as NLTK stems it, in all three modes, and
generated words and strings must agree too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.library.edit_distance import edit_distance
from procbench.runners.library.porter import MODES, PorterStemmer

nltk_porter = pytest.importorskip("nltk.stem.porter")
nltk_distance = pytest.importorskip("nltk.metrics.distance")

_TEXT_SUFFIXES = {".tsv", ".jsonl", ".json", ".txt", ".csv"}


def _vocabulary(*roots: Path) -> set[str]:
    """Every whitespace token (lower-cased, and with punctuation stripped) of the text files under ``roots``."""
    words: set[str] = set()
    for root in roots:
        for path in root.rglob("*") if root.is_dir() else []:
            if (
                path.is_file()
                and path.suffix in _TEXT_SUFFIXES
                and path.stat().st_size < 50_000_000
            ):
                for token in path.read_text(encoding="utf-8", errors="replace").lower().split():
                    words.add(token)
                    words.add(token.strip("\"'.,;:()[]{}"))
    words.discard("")
    return words


def _assert_same_stems(words: set[str]) -> None:
    for mode in MODES:
        ours, theirs = PorterStemmer(mode), nltk_porter.PorterStemmer(mode=mode)
        differ = sorted(w for w in words if ours.stem(w) != theirs.stem(w))
        assert not differ, (
            mode,
            len(differ),
            [(w, ours.stem(w), theirs.stem(w)) for w in differ[:10]],
        )


def test_porter_matches_nltk_on_the_sample_vocabulary() -> None:
    words = _vocabulary(SAMPLE_DATA_ROOT / "propara", SAMPLE_DATA_ROOT / "openpi")
    assert len(words) > 500
    _assert_same_stems(words)


def test_porter_matches_nltk_on_the_real_propara_and_openpi_vocabularies(data_root: Path) -> None:
    words = _vocabulary(data_root / "propara", data_root / "openpi")
    if len(words) < 5_000:
        pytest.skip(f"only {len(words)} tokens under {data_root}: ProPara or OpenPI data absent")
    _assert_same_stems(words)


def test_known_departures_of_nltk_extensions() -> None:
    # words where the three modes differ (NLTK's pool, -ies/-ied of four letters, -logi, -bli, y after a consonant)
    stems = {mode: PorterStemmer(mode) for mode in MODES}
    for word in (
        "dying",
        "skies",
        "ties",
        "died",
        "analogi",
        "possibly",
        "happy",
        "by",
        "generously",
        "fully",
        "is",
        "a",
    ):
        for mode, ours in stems.items():
            assert ours.stem(word) == nltk_porter.PorterStemmer(mode=mode).stem(word), (mode, word)


@settings(max_examples=400)
@given(st.text(alphabet=st.sampled_from("aeiouybcdlgmnrstwxzAEY-'é1"), min_size=0, max_size=14))
def test_porter_matches_nltk_on_generated_words(word: str) -> None:
    for mode in MODES:
        assert PorterStemmer(mode).stem(word) == nltk_porter.PorterStemmer(mode=mode).stem(word), (
            mode,
            word,
        )


@settings(max_examples=300)
@given(st.text(alphabet="abcxyz ", max_size=12), st.text(alphabet="abcxyz ", max_size=12))
def test_edit_distance_matches_nltk(a: str, b: str) -> None:
    assert edit_distance(a, b) == nltk_distance.edit_distance(a, b)


def test_edit_distance_matches_nltk_on_real_location_pairs(data_root: Path) -> None:
    words = sorted(
        w for w in _vocabulary(data_root / "propara") if re.fullmatch(r"[a-z][a-z-]*", w)
    )
    if len(words) < 200:
        pytest.skip("ProPara data absent")
    sample = words[:: max(1, len(words) // 150)]
    for a in sample:
        for b in sample[:60]:
            assert edit_distance(a, b) == nltk_distance.edit_distance(a, b), (a, b)


def test_an_unknown_mode_is_refused_with_a_hint() -> None:
    with pytest.raises(ValueError, match="hint: one of NLTK_EXTENSIONS"):
        PorterStemmer("nltk")

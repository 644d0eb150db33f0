"""The model page's selector does not grow with the store: above ``overview.MODEL_CHOICES_CAP`` model names it lists at
most that many, found by a server-side search, and always the address's ``?model=``.

Every option of a ``st.selectbox`` is sent to and drawn by the browser: 100 000 names cost 3.3 s of a warm view and
5.4 s of browser CPU.  ``overview.model_choices`` is checked against a plain oracle on any names; the page, on a store
with more models than a cap set small here, and unchanged (every name, no search box) under the real cap.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from procbench.bench.site_stores import generate
from procbench.leaderboard import overview, ui
from procbench.paths import PROJECT_ROOT
from tests.site_app import page

N_MODELS = 24  # generate() names its submissions' models model-00000, model-00001, …
CAP = 5


def _matches(names: list[str], query: str) -> list[str]:
    return [n for n in names if query.strip().lower() in n.lower()]


NAMES = st.lists(st.text(max_size=8), unique=True, max_size=40)


@given(NAMES, st.text(max_size=3), st.one_of(st.none(), st.text(max_size=8)), st.integers(1, 12))
def test_choices_are_the_first_matches_in_order_plus_the_asked_model(
    names: list[str], query: str, asked: str | None, cap: int
) -> None:
    choices, matched = overview.model_choices(names, query, asked, cap)
    matches = _matches(names, query)
    assert matched == len(matches)
    assert len(choices) <= cap and len(set(choices)) == len(choices)
    places = [names.index(c) for c in choices]
    assert places == sorted(places)  # names's order: best-ranked first
    if asked in names and asked not in matches[:cap]:
        assert choices == sorted([*matches[: cap - 1], asked], key=names.index)
    else:
        assert choices == matches[:cap]  # an unknown asked model is no option


ASCII_NAMES = st.lists(st.text(st.characters(codec="ascii"), max_size=8), unique=True, min_size=1)


# ASCII only: str.lower is not per character everywhere (a Greek final sigma), nor undone by upper ("ß" -> "SS")
@given(ASCII_NAMES.flatmap(lambda names: st.tuples(st.just(names), st.sampled_from(names))))
def test_a_names_own_text_finds_it_whatever_its_case(pair: tuple[list[str], str]) -> None:
    names, name = pair
    for query in (name, f" {name} ", name.upper(), name.lower()):
        choices, matched = overview.model_choices(names, query, None, len(names))
        assert name in choices and matched >= 1
    for query in {n[:3] for n in names}:
        assert overview.model_choices(names, query.upper(), None, 3) == overview.model_choices(
            names, query.lower(), None, 3
        )


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        overview.model_choices(["a"], "", None, 0)


# -- the page --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("model-page-search") / "board.duckdb"
    generate(db, N_MODELS, seed=3, log=lambda _: None)
    assert overview.model_count(db) == N_MODELS > CAP
    return db


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overview, "MODEL_CHOICES_CAP", CAP)


def test_a_store_with_more_models_than_the_cap_lists_the_first_and_says_so(
    store: Path, monkeypatch: pytest.MonkeyPatch, small_cap: None
) -> None:
    at = page(store, monkeypatch, "model")
    box = at.selectbox(key="model-search")
    assert box.options == overview.models(store)[:CAP] and box.value is None
    assert len(at.text_input) == 1 and at.text_input(key="q").value == ""
    caption = " ".join(c.value for c in at.caption)
    assert f"{N_MODELS} models" in caption and f"only the first {CAP}" in caption


def test_the_asked_model_is_selectable_even_below_the_first_cap(
    store: Path, monkeypatch: pytest.MonkeyPatch, small_cap: None
) -> None:
    last = overview.models(store)[-1]  # ranked last: never among the first CAP
    at = page(store, monkeypatch, "model", model=last)
    box = at.selectbox(key="model-search")
    assert box.value == last and last in box.options and len(box.options) <= CAP
    assert (
        not at.error and at.header[0].value == ui.escape(last) and at.dataframe
    )  # its boards are shown
    missing = page(store, monkeypatch, "model", model="no-such-model")
    assert any("no-such-model" in e.value for e in missing.error)
    assert len(missing.selectbox(key="model-search").options) <= CAP


def test_search_narrows_the_choices_and_keeps_the_asked_model(
    store: Path, monkeypatch: pytest.MonkeyPatch, small_cap: None
) -> None:
    at = page(store, monkeypatch, "model", model="model-00003")
    at.text_input(key="q").input("MODEL-0001").run()  # model-00010 … model-00019: more than CAP
    box = at.selectbox(key="model-search")
    assert len(box.options) <= CAP and box.value == "model-00003" and "model-00003" in box.options
    assert all("model-0001" in o for o in box.options if o != "model-00003")
    assert "10 models match" in " ".join(c.value for c in at.caption)
    at.text_input(key="q").input("00017").run()
    box = at.selectbox(key="model-search")
    assert sorted(box.options) == ["model-00003", "model-00017"]
    assert "1 model matches" in " ".join(c.value for c in at.caption)
    box.select("model-00017").run()
    assert at.query_params["model"] in ("model-00017", ["model-00017"])
    assert at.header[0].value == ui.escape("model-00017")


def test_the_search_in_the_address_is_the_one_shown(
    store: Path, monkeypatch: pytest.MonkeyPatch, small_cap: None
) -> None:
    """`q` in a link is the search the page opens with (a shared link shows the same choices).

    The page is run on its own, as a browser opening /model?q=… does: ``page`` runs Home first, whose own search
    box (also `q`) takes the address's value before the switch to the model page."""
    monkeypatch.setenv("PROCBENCH_DB", str(store))
    at = AppTest.from_file(str(PROJECT_ROOT / "leaderboard" / "site_pages" / "model.py"))
    at.query_params["q"] = "00017"
    at.run(timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key="q").value == "00017"
    assert at.selectbox(key="model-search").options == ["model-00017"]


def test_a_store_under_the_cap_lists_every_model_without_a_search_box(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert overview.MODEL_CHOICES_CAP >= N_MODELS
    at = page(store, monkeypatch, "model", model="model-00020")
    box = at.selectbox(key="model-search")
    assert box.options == overview.models(store) and box.value == "model-00020"
    assert not at.text_input and not any("only the first" in c.value for c in at.caption)

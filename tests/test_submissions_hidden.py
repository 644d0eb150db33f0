"""Hidden splits (``data { hidden = ["test"] }``): aggregates only for everyone but admins."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT
from procbench.submissions import queries
from tests.test_submissions_support import (
    STRONG,
    dev_predictions,
    hidden_test_spec,
    query,
    submit_openpi,
)

cli = CliRunner()


@pytest.fixture(scope="module")
def store_with_hidden(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    folder = tmp_path_factory.mktemp("hidden")
    db = folder / "board.duckdb"
    spec_file = hidden_test_spec(folder)
    hidden = submit_openpi(db, STRONG, spec_file=spec_file, split="test")
    public = submit_openpi(db, dev_predictions(folder), spec_file=spec_file, split="dev")
    return db, hidden.submission_id, public.submission_id


def test_item_scores_of_a_hidden_split_are_refused_to_non_admins(
    store_with_hidden: tuple[Path, str, str],
) -> None:
    db, hidden, public = store_with_hidden
    with pytest.raises(PermissionError, match="hidden split"):
        queries.item_scores(db, hidden)
    admin_view = queries.item_scores(db, hidden, admin=True)
    assert admin_view.height == 22 * 9
    assert queries.item_scores(db, public).height > 0  # the public split is open


def test_public_views_carry_no_per_item_rows_of_hidden_splits(
    store_with_hidden: tuple[Path, str, str],
) -> None:
    db, hidden, public = store_with_hidden
    assert query(
        db, "SELECT count(*) FROM public_item_scores WHERE submission_id = ?", [hidden]
    ) == [(0,)]
    assert (
        query(db, "SELECT count(*) FROM public_item_scores WHERE submission_id = ?", [public])[0][0]
        > 0
    )  # type: ignore[operator]


def test_hidden_split_shows_aggregates_but_no_small_slices(tmp_path: Path) -> None:
    """The sample dev split has 4 items, so every slice of it is small: only whole-split rows are public."""
    db = tmp_path / "board.duckdb"
    hidden = submit_openpi(
        db, dev_predictions(tmp_path), spec_file=hidden_test_spec(tmp_path, "dev"), split="dev"
    ).submission_id
    board = query(
        db, "SELECT slice, slice_n_items, hidden_split FROM board WHERE submission_id = ?", [hidden]
    )
    assert board and all(
        row == ("", 4, True) for row in board
    )  # the whole-split aggregates, one per metric
    stored_small = query(
        db, "SELECT count(*) FROM aggregates WHERE submission_id = ? AND slice <> ''", [hidden]
    )[0][0]
    assert stored_small > 0  # the slices are in the store (for admins) ...
    frame = queries.aggregates(db, hidden)
    assert set(frame["slice"].to_list()) == {""}  # ... but not for the public
    assert queries.aggregates(db, hidden, admin=True).height == frame.height + stored_small


def test_the_split_is_recorded_hidden(store_with_hidden: tuple[Path, str, str]) -> None:
    db, _, _ = store_with_hidden
    assert queries.split_is_hidden(db, "openpi", "test") and not queries.split_is_hidden(
        db, "openpi", "dev"
    )


def test_cli_items_refuses_a_hidden_split_without_admin(
    store_with_hidden: tuple[Path, str, str],
) -> None:
    db, hidden, _ = store_with_hidden
    refused = cli.invoke(app, ["admin", "items", hidden, "--db", str(db)])
    assert (
        refused.exit_code == 5
        and "hidden split" in refused.output
        and "www.wikihow.com" not in refused.output
    )
    allowed = cli.invoke(app, ["admin", "items", hidden, "--admin", "--db", str(db)])
    assert allowed.exit_code == 0 and allowed.output.count("\n") == 22 * 9


def test_cli_submit_to_a_hidden_split_prints_aggregates_only(tmp_path: Path) -> None:
    spec_file = hidden_test_spec(tmp_path)
    result = cli.invoke(
        app,
        [
            "submit",
            str(spec_file),
            "--split",
            "test",
            "--predictions",
            str(STRONG),
            "--model",
            "m",
            "--db",
            str(tmp_path / "b.duckdb"),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "rouge_f1=" in result.output and "www.wikihow.com" not in result.output


def test_hidden_and_deleted_submissions_do_not_exist_for_non_admins(
    store_with_hidden: tuple[Path, str, str], tmp_path: Path
) -> None:
    db = tmp_path / "b.duckdb"
    sid = submit_openpi(db, STRONG).submission_id
    from procbench.submissions.admin import apply

    apply(db, sid, "hide", reason="test")
    for call in (
        queries.submission,
        queries.item_scores,
        queries.aggregates,
        queries.status_history,
    ):
        with pytest.raises(LookupError):
            call(db, sid)
    assert queries.submission(db, sid, admin=True)["hidden"] is True


# -- the site's queries apply the same rule (issue #17) --------------------------------------------------------


def test_the_site_shows_no_small_slices_of_a_hidden_split(tmp_path: Path) -> None:
    """The Submission page (and its downloads) read procbench.leaderboard.queries.aggregates: the same rows as the board view
    and procbench.submissions.queries.aggregates, so the 1-4 item slices of the hidden sample dev split are not among them."""
    from procbench.leaderboard import queries as site

    db = tmp_path / "board.duckdb"
    hidden = submit_openpi(
        db, dev_predictions(tmp_path), spec_file=hidden_test_spec(tmp_path, "dev"), split="dev"
    ).submission_id
    assert (
        query(
            db,
            "SELECT count(*) FROM aggregates WHERE submission_id = ? AND slice <> '' AND n_items < 5",
            [hidden],
        )[0][0]
        > 0
    )  # type: ignore[operator]
    shown = site.aggregates(db, hidden)
    assert set(shown["slice"].to_list()) == {""}
    board = query(
        db, "SELECT slice, slice_value, metric FROM board WHERE submission_id = ?", [hidden]
    )
    assert sorted(zip(shown["slice"], shown["slice_value"], shown["metric"])) == sorted(board)
    assert shown.equals(
        queries.aggregates(db, hidden)
        .sort(["slice", "slice_value", "metric"])
        .select(shown.columns)
    )


def test_the_site_item_score_query_refuses_a_hidden_split(
    store_with_hidden: tuple[Path, str, str],
) -> None:
    from procbench.leaderboard import queries as site

    db, hidden, public = store_with_hidden
    with pytest.raises(PermissionError, match="hidden split"):
        site.item_scores(db, [hidden])
    with pytest.raises(PermissionError, match="hidden split"):
        site.item_scores(
            db, [public, hidden]
        )  # one hidden submission among others refuses the read
    assert len(site.item_scores(db, [public])[public]) > 0
    # what the intervals and tests read: only aggregates over >= 5 items are published from it
    assert len(site.item_scores(db, [hidden], for_aggregates=True)[hidden]) == 22


def test_a_split_hidden_later_hides_the_items_of_its_earlier_submissions(tmp_path: Path) -> None:
    from procbench.leaderboard import queries as site

    db = tmp_path / "board.duckdb"
    earlier = submit_openpi(
        db, dev_predictions(tmp_path), split="dev"
    ).submission_id  # dev public under this fingerprint
    assert queries.item_scores(db, earlier).height > 0
    submit_openpi(
        db, dev_predictions(tmp_path), spec_file=hidden_test_spec(tmp_path, "dev"), split="dev"
    )  # the spec now hides dev
    with pytest.raises(PermissionError, match="hidden split"):
        queries.item_scores(db, earlier)
    with pytest.raises(PermissionError, match="hidden split"):
        site.item_scores(db, [earlier])
    assert set(site.aggregates(db, earlier)["slice"].to_list()) == {""}

"""The task board as a table: filter, sort, rank, intervals and the leader's tie group.

Pure of Streamlit so the board page, the downloads page and the benchmark all build the same view.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from procbench.leaderboard import analysis, cache, metadata, queries, semantics, sitedata
from procbench.leaderboard.model import MetricInfo, SliceInfo, TaskInfo
from procbench.runners.runtime.stats import PairedResult
from procbench.submissions.external import is_external
from procbench.submissions.judging import SELF, judged_by


@dataclass(frozen=True)
class BoardFilters:
    """Keep rows whose facet is among the chosen values; an empty tuple keeps everything."""

    kinds: tuple[str, ...] = ()
    access: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()  # size classes as the site words them (metadata.SIZE_LABELS)
    contamination: tuple[
        str, ...
    ] = ()  # issue #34: the card's mark as the site words it (metadata.CONTAMINATION_WORDS)
    run_by: tuple[str, ...] = ()  # who ran the model (metadata.RUN_BY_WORDS)
    judged: tuple[str, ...] = ()  # who judged the verdicts (JUDGED_WORDS)


@dataclass(frozen=True)
class BoardView:
    table: pl.DataFrame  # what the page shows (display units, one column per shown metric)
    export: pl.DataFrame  # the same rows with raw values, intervals and ids (downloads)
    sort_metric: MetricInfo
    leader: str | None = None
    tied: dict[str, PairedResult] = field(default_factory=dict)
    n_rows: int = 0
    interval_rows: int = 0  # submitted rows bootstrapped (intervals and the tie test)
    facets: dict[str, list[str]] = field(
        default_factory=dict
    )  # every value of each facet before filtering
    covered_rows: int = 0  # rows of the board, of every kind, down to the last bootstrapped one (what "top N" counts)
    ci_notes: dict[str, str] = field(
        default_factory=dict
    )  # submission id -> why its row shows no interval
    provenance: queries.BoardProvenance | None = (
        None  # what every row was scored on (the board's title says it)
    )
    # issue #30: the metric asked for when it is not defined on this slice (the view is ranked by ``sort_metric`` instead)
    requested: str = ""
    undefined: tuple[
        str, ...
    ] = ()  # metrics not defined on this slice value (no item they are computed over): shown empty
    shared: dict[int, int] = field(
        default_factory=dict
    )  # rank -> rows sharing it (equal values: competition ranking, 1, 1, 3)
    # partial rows left unranked because the view is not ranked by the primary metric, the one a spec with
    # rank_partial ranks them by (0 where the spec does not rank partial rows, or the view ranks them)
    partial_unranked: int = 0

    @property
    def scope(self) -> str:
        """What the tie caption counts, in words: 'the top 5 rows (3 submitted rows bootstrapped)'."""
        rows = f"the top {self.covered_rows} row{'s' if self.covered_rows != 1 else ''}"
        return f"{rows} ({self.interval_rows} submitted row{'s' if self.interval_rows != 1 else ''} with per-item scores, bootstrapped)"


VERDICTS_BY_KEYS = (
    "verdicts_by",
    "judge_model",
)  # metadata naming the model whose verdicts a self-judged file carries


def grader(metadata_row: dict[str, object]) -> str:
    """The model that graded a file's verdicts, as its metadata names it ('' when it does not)."""
    for key in VERDICTS_BY_KEYS:
        value = metadata_row.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def judges(view: BoardView) -> list[str]:
    """Every distinct judging mark of a board's rows, in words ('judge: X', 'self-judged (verdicts by Y)')."""
    if "Judged by" not in view.table.columns:
        return []
    return [j for j in dict.fromkeys(view.table["Judged by"].to_list()) if j]


def beside_bounded(info: TaskInfo, columns: Sequence[str]) -> list[str]:
    """The metric columns among ``columns`` in the spec's order, each corrected (bounded) variant right after the figure it corrects.

    Issue #16: a score above 100 % is shown as the official scorer reports it *with* its bounded variant beside
    it; in the spec's order PAGED's variants come after all forty official columns, far off screen.
    """
    by_display = {m.display: m for m in info.metrics}
    shown = [c for c in columns if c in by_display]
    names = {by_display[c].name: c for c in shown}
    variants = {
        names[queries.bounded_variant(by_display[c].name)]
        for c in shown
        if queries.bounded_variant(by_display[c].name) in names
    }
    out: list[str] = []
    for column in shown:
        if column in variants:
            continue
        out.append(column)
        variant = names.get(queries.bounded_variant(by_display[column].name))
        if variant is not None:
            out.append(variant)
    return out + [c for c in shown if c not in out]


FACETS = (
    "kind",
    "access",
    "family",
    "size",
    "team",
    "contamination",
    "run_by",
    "judged",
)  # what the board filters on
# issue #34: who judged a row's verdicts, as the Judged-by filter words it (the stored `judge` mark: a model, "self" or none)
JUDGED_WORDS = {"board": "the board's judge", SELF: "self-judged", "": "no judge"}


def judged_word(judge: str) -> str:
    return JUDGED_WORDS[judge] if judge in ("", SELF) else JUDGED_WORDS["board"]


# What a row's card is made of (metadata.card reads these and nothing else).
CARD_INPUTS = (
    "metadata_json",
    "is_reference",
    "weights",
    "method_family",
    "size_class",
    "paper_url",
    "code_url",
    "description",
    "contamination",
    "contamination_source",
    "run_by",
)
# Issue #31: after a write Home builds the touched board again; its rows' cards and metadata are what they were
# (a stored row's card columns and metadata are written once), so they are read from these memos instead of parsed
# again (at 100 000 submissions: ~11 000 cards and ~44 000 JSON parses per write).  Keyed by the inputs
# themselves, so an edited row is a new key; bounded (an entry is a few hundred bytes).
ROW_MEMO_SIZE = 1 << 16


@functools.lru_cache(maxsize=ROW_MEMO_SIZE)
def _card(inputs: tuple[object, ...]) -> metadata.Card:
    return metadata.card(dict(zip(CARD_INPUTS, inputs)))


@functools.lru_cache(maxsize=ROW_MEMO_SIZE)
def _metadata_facts(metadata_json: str | None) -> tuple[str, str, bool]:
    """(judged_by, grader, says external) of one metadata object."""
    parsed = metadata.parse(metadata_json)
    return judged_by(parsed), grader(parsed), is_external(True, parsed)


STORED_PREFIX = (
    "_stored_"  # a row's stored submission columns (sitedata.cards) while its facets are made
)


def _distinct(frame: pl.DataFrame) -> tuple[list[tuple[object, ...]], pl.Series]:
    """The distinct rows of ``frame`` in order of first appearance, and each row's index among them (nulls equal)."""
    distinct = frame.unique(maintain_order=True)
    at = frame.join(
        distinct.with_row_index("_distinct"),
        on=frame.columns,
        how="left",
        nulls_equal=True,
        maintain_order="left",
    )["_distinct"]
    return distinct.rows(), at


def _with_facets(frame: pl.DataFrame, stored: pl.DataFrame) -> pl.DataFrame:
    """The model card of every row (metadata.card: card columns, else metadata keys), one reading for every page; with
    each row's judging facts and coverage.

    A row's card inputs are its stored submission's (``sitedata.cards``) where it has one, else the board row's (None
    where the board has no such column).  Issue #31: each card and each metadata's facts are made once per distinct
    input, not per row (a board of 11 000 rows has a handful), and set on the rows by their index among the distinct
    ones.  Columns beginning with an underscore are the build's own (``_grader``, ``_external``, ``_answered``,
    ``_split_items``): what the view reads of each row, not shown.
    """
    present = [c for c in CARD_INPUTS if c in frame.columns]
    carried = (*CARD_INPUTS, "judge_prompt_digest", "n_answered", "n_items")
    right = stored.select(
        "submission_id",
        *[pl.col(c).alias(STORED_PREFIX + c) for c in carried],
        pl.lit(True).alias("_known"),
    )
    joined = frame.select("submission_id", *present).join(
        right, on="submission_id", how="left", maintain_order="left"
    )
    inputs = joined.select(
        pl.when(pl.col("_known"))
        .then(pl.col(STORED_PREFIX + c))
        .otherwise(pl.col(c) if c in present else pl.lit(None))
        .alias(c)
        for c in CARD_INPUTS
    )
    distinct, at = _distinct(inputs)
    cards = [_card(row) for row in distinct]
    facets = pl.DataFrame(
        {
            "kind": [c.kind for c in cards],
            "access": [c.access for c in cards],
            "family": [c.family for c in cards],
            "size": [c.size_class for c in cards],
            "parameters": [c.parameters for c in cards],
            "paper": [c.paper_url for c in cards],
            "code": [c.code_url for c in cards],
            "contamination": [
                metadata.CONTAMINATION_WORDS.get(c.contamination, c.contamination) for c in cards
            ],
            "contamination_mark": [c.contamination_mark for c in cards],
            "run_by": [metadata.RUN_BY_WORDS.get(c.run_by, c.run_by) for c in cards],
        },
        schema=dict.fromkeys(
            (
                "kind",
                "access",
                "family",
                "size",
                "parameters",
                "paper",
                "code",
                "contamination",
                "contamination_mark",
                "run_by",
            ),
            pl.String,
        ),
    )
    # the judging facts are the board row's own metadata's (not the stored one's)
    metas, meta_at = _distinct(frame.select("metadata_json"))
    facts = [_metadata_facts(m) for (m,) in metas]
    judging = pl.DataFrame(
        {
            "judge": [f[0] for f in facts],
            "_grader": [f[1] for f in facts],
            "_external": [f[2] for f in facts],
            "judged": [judged_word(f[0]) for f in facts],
        },
        schema={
            "judge": pl.String,
            "_grader": pl.String,
            "_external": pl.Boolean,
            "judged": pl.String,
        },
    )
    known = pl.col("_known").fill_null(False)
    stored_facts = joined.select(
        pl.col(STORED_PREFIX + "judge_prompt_digest")
        .cast(pl.String)
        .fill_null("")
        .alias("judge_prompt_digest"),
        # (answered, items of the split) as the store has them (_coverage words a row's); unknown without the submission
        pl.when(known)
        .then(pl.col(STORED_PREFIX + "n_answered"))
        .otherwise(None)
        .cast(pl.Int64)
        .alias("_answered"),
        pl.when(known)
        .then(pl.col(STORED_PREFIX + "n_items"))
        .otherwise(0)
        .cast(pl.Int64)
        .alias("_split_items"),
    )
    cards_of_rows, judging_of_rows = facets[at], judging[meta_at]
    return frame.with_columns(
        *cards_of_rows.select(
            "kind", "access", "family", "size", "parameters", "paper", "code"
        ).get_columns(),
        judging_of_rows["judge"],
        *cards_of_rows.select("contamination", "contamination_mark", "run_by").get_columns(),
        stored_facts["judge_prompt_digest"],
        judging_of_rows["judged"],
        judging_of_rows["_grader"],
        judging_of_rows["_external"],
        stored_facts["_answered"],
        stored_facts["_split_items"],
    )


def _filtered(frame: pl.DataFrame, filters: BoardFilters) -> pl.DataFrame:
    for column, chosen in (
        ("kind", filters.kinds),
        ("access", filters.access),
        ("family", filters.families),
        ("size", filters.sizes),
        ("team", filters.teams),
        ("contamination", filters.contamination),
        ("run_by", filters.run_by),
        ("judged", filters.judged),
    ):
        if chosen:
            frame = frame.filter(pl.col(column).is_in(list(chosen)))
    return frame


def _fmt_interval(metric: MetricInfo, low: float, high: float) -> str:
    return f"{metric.shown(low):.2f} – {metric.shown(high):.2f}"


def _group_ranks(
    self_judged: Sequence[bool], keys: Sequence[Sequence[float | None]]
) -> list[int | None]:
    """Competition ranks within each rank group of the sorted rows (board-judged first, then self-judged): equal values share a rank (1, 1, 3).

    ``keys``: each row's ranking values (the ranking metric, then the spec's tie-breaks where it ranks by the primary).
    A row without a value of the ranking metric (a paper that did not report it) gets no rank (None) and takes no place:
    it is listed, not ranked.
    """
    compared = [
        None if not k or k[0] is None or k[0] != k[0] else tuple(k) for k in keys
    ]  # missing or NaN: not ranked
    return semantics.competition_ranks([bool(f) for f in self_judged], compared)


def _answered(
    stored: dict[str, tuple[int | None, int]], ids: Sequence[str], reference: Sequence[bool]
) -> list[tuple[int, int] | None]:
    """Each row's (answered, items of the split); None for a reported row (no file) and rows stored before coverage was kept."""
    out: list[tuple[int, int] | None] = []
    for sid, ref in zip(ids, reference):
        answered, total = stored.get(sid, (None, 0))
        out.append(_coverage(answered, total, ref))
    return out


def _coverage(answered: int | None, total: int, reference: bool) -> tuple[int, int] | None:
    """One row's (answered, items of the split) from its stored counts; None for a reported row and unknown coverage."""
    return None if reference or answered is None else (answered, total)


def _rows_coverage(wide: pl.DataFrame) -> list[tuple[int, int] | None]:
    """Each row's (answered, items of the split), from the counts :func:`_with_facets` set on the rows."""
    return [
        _coverage(a, t, r)
        for a, t, r in zip(
            wide["_answered"].to_list(),
            wide["_split_items"].to_list(),
            wide["is_reference"].to_list(),
        )
    ]


def row_coverage(
    db: Path, task: str, split: str, submission_id: str, is_reference: bool
) -> tuple[int, int] | None:
    """One row's (answered, items of the split) as the board reads it (:func:`coverage_text` words it); the Submission, Compare and
    Model pages' (issue #33: a partial file's coverage on every page)."""
    return _answered(sitedata.coverage(db, task, split), [submission_id], [is_reference])[0]


def is_partial(answered: tuple[int, int] | None) -> bool:
    """Whether a row's file answered fewer items than its split has (issue #33); unknown coverage is not partial."""
    return answered is not None and answered[0] < answered[1]


def coverage_text(answered: tuple[int, int] | None) -> str:
    """A row's coverage as the board shows it: '8 / 8' (items with a prediction / items of the split), '7 / 8 · partial' where the
    file left items out (issue #33: a --limit run stored whole says so); '' where not known."""
    if answered is None:
        return ""
    return f"{answered[0]} / {answered[1]}" + (" · partial" if is_partial(answered) else "")


def short_reason(reason: str) -> str:
    """The empty interval cell's word for why (the caption under the table gives the whole sentence); the board's and Compare's."""
    if not reason:
        return ""
    if reason == analysis.NO_ITEMS_REPORTED:
        return "none: reported"
    if reason == analysis.NOT_BOOTSTRAPPED:
        return "none: below top N"
    if reason == analysis.ANSWER_LABEL_SLICE:
        return "none: this slice"
    if reason.startswith("only "):
        return "none: too few items"
    if reason == analysis.DIFFERENT_ITEMS:
        return "none: other items"
    if reason.startswith(analysis.NO_SPREAD_PREFIX):
        return "none: no spread"
    return "none (see below)"


def view(
    db: Path,
    info: TaskInfo,
    *,
    sl: SliceInfo | None = None,
    slice_value: str = "",
    groups: Sequence[str] = (),
    filters: BoardFilters = BoardFilters(),
    sort_metric: str = "",
    interval_rows: int = 10,
) -> BoardView:
    """:func:`build`, kept per store version and the page's choices (``cache.memo``): a warm view builds nothing.

    Issue #19: a Board view built the board twice (facets, then the view), each rounding every figure and
    reading every model card again (a 10 000-submission store: ~52,000 values, ~6,000 cards). The interval
    floor (``analysis.min_interval_items``, an operator's setting) is part of the key: it decides what the view shows.
    The result is shared between sessions: read-only.
    """
    choices = (
        info.task,
        info.split,
        info.fingerprint,
        sl.name if sl else "",
        slice_value if sl else "",
        tuple(groups),
        filters,
        sort_metric,
        int(interval_rows),
        analysis.min_interval_items(),
    )
    return cache.memo(
        db,
        "boardview.build",
        choices,
        lambda: build(
            db,
            info,
            sl=sl,
            slice_value=slice_value,
            groups=groups,
            filters=filters,
            sort_metric=sort_metric,
            interval_rows=interval_rows,
        ),
    )


def build(
    db: Path,
    info: TaskInfo,
    *,
    sl: SliceInfo | None = None,
    slice_value: str = "",
    groups: Sequence[str] = (),
    filters: BoardFilters = BoardFilters(),
    sort_metric: str = "",
    interval_rows: int = 10,
    display: bool = True,
) -> BoardView:
    """The board of one task and split (or one slice value), ranked by ``sort_metric`` (default: primary).

    ``display=False`` (Home's ranks, procbench.leaderboard.overview) leaves the page's table empty and the export
    without ``above_range``: the per-row formatting a page shows, which Home does not (issue #31).

    Issue #30: on a slice value a metric is not defined on (no item it is computed over: PM-LLM's text-only Score on the
    image questions) its cells are empty and the view is ranked by the next of the spec's rank metrics defined there
    (``semantics.rank_metric``; ``requested`` names the one asked for).
    """
    requested = sort_metric or info.primary
    sitedata.prefetch_board(
        db, info.task, info.split, sl.name if sl else "", slice_value if sl else ""
    )  # the reads below (and the provenance at the end), together
    defined = (
        {m.name: analysis.covers(db, info, m.name, sl, slice_value) for m in info.metrics}
        if sl is not None
        else {}
    )
    metric = info.metric(semantics.rank_metric(info, requested, defined))
    undefined = tuple(name for name, ok in defined.items() if not ok)
    wide = sitedata.board(
        db, info.task, info.split, sl.name if sl else "", slice_value if sl else ""
    )  # cached per store version
    if wide.is_empty():
        return BoardView(pl.DataFrame(), pl.DataFrame(), metric)
    wide = wide.with_columns(
        [pl.lit(None, dtype=pl.Float64).alias(name) for name in undefined if name in wide.columns]
    )
    wide = _with_facets(wide, sitedata.cards(db, info.task, info.split))
    facets = {c: sorted(set(wide[c].to_list())) for c in FACETS}
    wide = _filtered(wide, filters)
    if metric.name not in wide.columns:
        wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(metric.name))
    # Ranking by the primary metric uses the spec's tie-breaks (rank_by), e.g. PM-LLM's (Score, total, C1..C5).
    keys = [metric] + (
        [info.metric(name) for name in info.rank_by if name in wide.columns]
        if metric.name == info.primary
        else []
    )
    # issue #17: rows whose verdicts the submitter supplied (judge "self") are ranked apart, after the
    # rows the board's own judge graded (or that need no judge): their own rank group, numbered from 1.
    wide = wide.with_columns((pl.col("judge") == SELF).alias("self_judged"))
    # issue #33: a partial file (fewer items answered than the split's) is listed with its coverage, unranked and after the
    # full rows of its rank group, unless the spec ranks partial rows (`rank_partial = true`) and the view is ranked by the
    # primary metric: the one the spec ranks them by (PM-LLM's text score, which its text-only files answer in full).
    # Ranked by another metric (a slice's fallback, "Rank by"), a partial row's unanswered items would count as its
    # answers (issue #30: text-only models sharing rank 8 on the image questions at 0.00, questions they never saw).
    ranks_partial = info.rank_partial and metric.name == info.primary
    unranked = [not ranks_partial and is_partial(a) for a in _rows_coverage(wide)]
    wide = wide.with_columns(pl.Series("unranked_partial", unranked, dtype=pl.Boolean))
    wide = wide.sort(
        ["self_judged", "unranked_partial"] + [k.name for k in keys] + ["created_at"],
        descending=[False, False] + [k.higher_is_better for k in keys] + [False],
        nulls_last=True,
    )
    ids = wide["submission_id"].to_list()
    ranking = list(zip(*(wide[k.name].to_list() for k in keys)))
    # an external row (an Every Eval Ever record's figures, procbench.submissions.external) is listed with its source, never ranked;
    # so is a partial row (above)
    ranking = [
        () if part or (ref and external) else k
        for k, ref, external, part in zip(
            ranking,
            wide["is_reference"].to_list(),
            wide["_external"].to_list(),
            wide["unranked_partial"].to_list(),
        )
    ]
    ranks = _group_ranks(wide["self_judged"].to_list(), ranking)
    with_items = [sid for sid, ref in zip(ids, wide["is_reference"]) if not ref]
    bootstrapped = with_items[: max(0, interval_rows)]
    # one call per row: the interval, or the reason there is none (reported row, few items, ...)
    found = {
        sid: analysis.uncertainty(db, info, sid, metric.name, sl=sl, value=slice_value)
        for sid in bootstrapped
    }
    intervals = {sid: u.interval for sid, u in found.items()}
    ci_notes = {sid: u.reason for sid, u in found.items() if u.interval is None}
    for sid, ref in zip(ids, wide["is_reference"]):
        if sid not in found:
            ci_notes[sid] = analysis.NO_ITEMS_REPORTED if ref else analysis.NOT_BOOTSTRAPPED
    covered = ids.index(bootstrapped[-1]) + 1 if bootstrapped else 0
    group = dict(zip(ids, wide["self_judged"]))
    partial = dict(zip(ids, wide["unranked_partial"]))
    ranked_boot = [
        sid for sid in bootstrapped if not partial[sid]
    ]  # an unranked partial row is in no tie group
    contenders = (
        [sid for sid in ranked_boot if group[sid] == group[ranked_boot[0]]] if ranked_boot else []
    )  # a tie group never mixes judges
    leader, tied = (
        analysis.tie_group(db, info, contenders, metric.name, sl, slice_value)
        if contenders
        else (None, {})
    )
    judged = any(wide["judge"])
    graders = wide["_grader"].to_list()
    judge_text = [
        (f"self-judged (verdicts by {g})" if g else "self-judged")
        if j == SELF
        else (f"judge: {j}" if j else "")
        for j, g in zip(wide["judge"], graders)
    ]

    shown = [
        m
        for m in info.metrics
        if (not groups or m.group in groups) and m.name in wide.columns and m.name != metric.name
    ]
    low = [intervals.get(sid).low if intervals.get(sid) else None for sid in ids]  # type: ignore[union-attr]
    high = [intervals.get(sid).high if intervals.get(sid) else None for sid in ids]  # type: ignore[union-attr]
    p_leader = [tied[sid].p_value if sid in tied else None for sid in ids]
    # "leader" only where the best bootstrapped row is the board's first row; below a paper's row it is the best submitted one
    leader_word = "leader" if leader is not None and ids and ids[0] == leader else "best submitted"
    tie_mark = [leader_word if sid == leader else ("tied" if sid in tied else "") for sid in ids]
    ci_text = [
        _fmt_interval(metric, lo, hi)
        if lo is not None and hi is not None
        else short_reason(ci_notes.get(sid, ""))
        for sid, lo, hi in zip(ids, low, high)
    ]
    items = [n if not ref else None for n, ref in zip(wide["n_items"], wide["is_reference"])]
    answered = _rows_coverage(wide)
    described = {
        m.name: semantics.describe(info, m) for m in info.metrics if m.name in wide.columns
    }
    # issue #30: every value above its metric's range, named per row (the page's caption explains, the bounded variant beside)
    above = (
        [
            "; ".join(name for name, sem in described.items() if sem.above(row.get(name)))
            for row in wide.select(list(described)).iter_rows(named=True)
        ]
        if described and display
        else [""] * len(ids)
    )

    table = (
        _table(
            wide,
            metric,
            shown,
            ids,
            ranks,
            tie_mark,
            items,
            answered,
            ci_text,
            judge_text if judged else None,
        )
        if display
        else pl.DataFrame()
    )
    export = pl.DataFrame(
        {
            "rank": pl.Series(ranks, dtype=pl.Int64),
            "submission_id": ids,
            "model": wide["model"],
            "team": wide["team"],
            "kind": wide["kind"],
            "access": wide["access"],
            "family": wide["family"],
            "size_class": wide["size"],
            "parameters": wide["parameters"],
            "paper_url": wide["paper"],
            "code_url": wide["code"],
            **({"judge": wide["judge"]} if judged else {}),
            "judge_prompt_digest": wide["judge_prompt_digest"],
            "contamination": wide["contamination"],
            "contamination_mark": wide["contamination_mark"],
            "run_by": wide["run_by"],
            "n_items": pl.Series(items, dtype=pl.Int64),
            "n_answered": pl.Series([a[0] if a else None for a in answered], dtype=pl.Int64),
            "coverage": [coverage_text(a) for a in answered],
            "task": [info.task] * len(ids),
            "split": [info.split] * len(ids),
            "slice": [sl.name if sl else ""] * len(ids),
            "slice_value": [slice_value if sl else ""] * len(ids),
            "slice_value_label": [sl.value_labels.get(slice_value, "") if sl else ""]
            * len(ids),  # the spec's label; the raw value stays
            "sort_metric": [metric.name] * len(ids),
            "ci_low": pl.Series(low, dtype=pl.Float64),
            "ci_high": pl.Series(high, dtype=pl.Float64),
            "tie_group": tie_mark,
            "p_vs_leader": pl.Series(p_leader, dtype=pl.Float64),
            "ci_note": [ci_notes.get(sid, "") for sid in ids],
            **(
                {"above_range": above} if display else {}
            ),  # metrics whose value lies above their range (the official scorer's; the *_bounded columns correct them)
            "source": wide["source"] if "source" in wide.columns else [""] * len(ids),
            **{m.name: wide[m.name] for m in info.metrics if m.name in wide.columns},
            "created_at": wide["created_at"],
        },
        strict=False,
    )
    return BoardView(
        table,
        export,
        metric,
        leader,
        tied,
        len(ids),
        len(bootstrapped),
        facets,
        covered,
        ci_notes,
        sitedata.board_provenance(db, info.task, info.split),
        requested if requested != metric.name else "",
        undefined,
        semantics.shared_ranks(ranks),
        sum(unranked) if info.rank_partial and not ranks_partial else 0,
    )


def _table(
    wide: pl.DataFrame,
    metric: MetricInfo,
    shown: list[MetricInfo],
    ids: list[str],
    ranks: list[int | None],
    tie_mark: list[str],
    items: list[int | None],
    answered: list[tuple[int, int] | None],
    ci_text: list[str],
    judge_text: list[str] | None,
) -> pl.DataFrame:
    """What the board page shows of a built view: display units, one column per shown metric."""
    return pl.DataFrame(
        {
            "Rank": pl.Series(ranks, dtype=pl.Int64),
            "Tie group": tie_mark,
            "Model": wide["model"],
            "Team": wide["team"],
            "Kind": wide["kind"],
            "Weights": wide["access"],
            "Family": wide["family"],
            "Size class": wide["size"],
            "Parameters": wide["parameters"],
            "Paper": wide["paper"],
            "Code": wide["code"],
            "Source": wide["source"] if "source" in wide.columns else [""] * len(ids),
            "Contamination": wide["contamination_mark"],
            "Run by": wide["run_by"],
            "Items": pl.Series(items, dtype=pl.Int64),
            "Coverage": [coverage_text(a) for a in answered],
            metric.display: [metric.shown(v) for v in wide[metric.name]],
            f"{metric.display} 95% CI": ci_text,
            **({"Judged by": judge_text} if judge_text is not None else {}),
            **{m.display: [m.shown(v) for v in wide[m.name]] for m in shown},
            "Submitted": wide["created_at"].dt.strftime("%Y-%m-%d"),
            "Details": [f"submission?id={sid}" for sid in ids],
        },
        strict=False,
    )

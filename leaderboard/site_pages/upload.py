"""Upload: a live validation report with line numbers, a progress bar while scoring, the new rank.

Same intake as ``procbench submit``: the site only ever writes through ``submissions.submit``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import streamlit as st

from procbench.leaderboard import config, intake_form, metadata, sitedata, ui
from procbench.submissions.details import METHOD_FAMILIES, SIZE_CLASSES, WEIGHTS
from procbench.api import all_spec_paths, load_task
from procbench.runners.runtime._types import InvalidPredictions

db = config.database()
ui.check_params(("task", "split"))
st.header("Upload a prediction file")
st.caption(
    "Validated, scored and stored exactly as `procbench submit` does; nothing is stored unless the whole file validates and scores."
)

# issue #30: by task name ("openpi" before its variant "openpi-head"; sorting the file names put "openpi-head.spec" first),
# the first task that has a board chosen by default
names = sorted(p.stem for p in all_spec_paths())
on_boards = set(sitedata.tasks(db)["task"].to_list()) if db.exists() else set()
left, right = st.columns(2)
task = ui.url_choice(
    left,
    "Task",
    names,
    key="task",
    index=next((i for i, n in enumerate(names) if n in on_boards), 0),
)
spec, _ = load_task(task)
# default to a split that already has a board (an upload elsewhere would start a board of its own)
boards = (
    set(sitedata.tasks(db).filter(pl.col("task") == task)["split"].to_list())
    if db.exists()
    else set()
)
splits = list(spec.data.splits)
with_board = [i for i, s in enumerate(splits) if s in boards]
split = ui.url_choice(
    right,
    "Split",
    splits,
    key="split",
    index=with_board[0] if with_board else 0,
    format_func=lambda s: s + ("" if s in boards else " (no board yet)"),
    help="hidden splits: " + (", ".join(spec.data.hidden) or "none"),
)
token = left.text_input(
    "Team token",
    type="password",
    help="the token printed by `procbench team create`",
)
team = right.text_input(
    "Team",
    placeholder="your team's name (or leave empty to use the token's team)",
)
model = left.text_input("Model name", placeholder="shown on the board")

with st.expander("Model card and metadata"):
    a, b, c = st.columns(3)
    weights = a.selectbox(
        "Weights",
        list(WEIGHTS),
        help="open: the weights can be downloaded; closed: an API or a private model",
    )
    family = b.selectbox("Method family", list(METHOD_FAMILIES))
    size = c.selectbox(
        "Size class",
        list(SIZE_CLASSES),
        format_func=metadata.size_label,
        help="the PM-LLM-Benchmark classes (commercial, big open-source, small ≤ 8 GB, tiny ≤ 4 GB) or parameter-count classes",
    )
    paper = a.text_input("Paper URL")
    code = b.text_input("Code URL")
    parameters = c.text_input(
        "Parameters",
        placeholder="e.g. 7B",
        help="the model's parameter count, as you would write it",
    )
    description = st.text_area("Description")
    extra = st.text_area(
        "Extra metadata (JSON object)",
        placeholder='{"cot": true}',
        help="passed to the scorer where the task reads metadata (e.g. PM-LLM's `cot`)",
    )


def show_problems(problems: pl.DataFrame) -> None:
    """Every problem, its message in full (a wide column, and as text: a long message is never cut)."""
    ui.table(
        problems,
        column_config={"Problem": st.column_config.TextColumn("Problem", width="large")},
        key="problems",
    )
    st.code(
        "\n".join(
            f"line {line}: {message}" if line is not None else message
            for line, message in zip(problems["Line"], problems["Problem"])
        ),
        language=None,
        wrap_lines=True,
    )


def receipt_note(exc: BaseException) -> str:
    """`` (receipt …)`` for an intake error carrying its ``failures`` row's receipt (submissions/errors.py), else ''."""
    receipt = getattr(exc, "receipt", "")
    return f" (receipt {ui.code(receipt)})" if receipt else ""


upload = st.file_uploader("Prediction file", key="upload")
if upload is None:
    st.stop()
content = upload.getvalue()
digest = hashlib.sha256(content).hexdigest()
cache_key = (digest, upload.name, task, split, str(db))  # the name is checked and staged too
report = st.session_state.get("validation", {}).get(cache_key)
if report is None:
    with intake_form.scratch() as folder, st.spinner("Validating…"):
        report = intake_form.validate(
            db,
            task,
            split,
            intake_form.stage_upload(content, upload.name, Path(folder)),
            filename=upload.name,
        )
    st.session_state["validation"] = {cache_key: report}

st.subheader("Validation")
if report.error:
    st.error(ui.escape(report.error))
    st.stop()
if not report.ok:
    st.error(
        f"{len(report.problems)} problem{'s' if len(report.problems) != 1 else ''} in {ui.escape(upload.name)}: nothing can be stored until every one is fixed."
    )
    show_problems(report.problem_table())
    st.stop()
st.success(f"{ui.escape(upload.name)} is valid: {report.n_records} prediction records.")
for warning in report.warnings:
    st.warning(ui.escape(warning))

try:
    extra_metadata = intake_form.parse_metadata(extra)
except ValueError as exc:
    st.error(f"Extra metadata: {ui.escape(exc)}")
    st.stop()
if parameters.strip():
    extra_metadata.setdefault(
        "parameters", parameters.strip()
    )  # no card column for it yet: kept as metadata (procbench.leaderboard.metadata reads it)
ready = bool(model.strip()) and (bool(team.strip()) or bool(token))
if not model.strip():
    st.caption("Name the model to submit.")
if not st.button("Submit", type="primary", disabled=not ready):
    st.stop()

progress = st.progress(0.0, text="Checking the file…")
card = {
    "weights": weights,
    "method_family": family,
    "size_class": size,
    "paper_url": paper.strip(),
    "code_url": code.strip(),
    "description": description,
}
try:
    with intake_form.scratch() as folder:
        path = intake_form.stage_upload(content, upload.name, Path(folder))
        progress.progress(0.2, text="Scoring every item and storing the submission…")
        placed = intake_form.send(
            db,
            task=task,
            split=split,
            path=path,
            filename=upload.name,
            model=model.strip(),
            team=team.strip(),
            token=token,
            metadata=extra_metadata,
            card=card,
        )
    progress.progress(1.0, text="Scored and ranked.")
except InvalidPredictions as exc:
    progress.empty()
    st.error(f"{len(exc.problems)} problem(s): nothing was stored.")
    show_problems(intake_form.ValidationReport(False, problems=tuple(exc.problems)).problem_table())
    st.stop()
except (ValueError, FileNotFoundError, TimeoutError, PermissionError) as exc:
    progress.empty()
    st.error(f"Not stored: {ui.escape(exc)}" + receipt_note(exc))
    st.stop()
except Exception as exc:  # noqa: BLE001 - scoring failures are reported, not raised at the visitor
    progress.empty()
    st.error(
        f"Scoring failed: {ui.escape(type(exc).__name__)}: {ui.escape(exc)}" + receipt_note(exc)
    )
    st.stop()

for warning in placed.warnings:
    st.warning(ui.escape(warning))
state = "Stored" if placed.created else "Already stored (same file, task, split and team)"
if not placed.created:
    stored = sitedata.submission(db, placed.submission_id)
    if stored is not None and stored["model"] != model.strip():
        # the submission's id hashes the file, task, split and team: a second upload is the same submission, under its first name
        st.warning(
            f"This file was already submitted by this team as {ui.code(stored['model'])}; it was **not** stored again, and the name "
            f"{ui.code(model.strip())} was not applied. A submission keeps the name it was first stored under; "
            "to list another system, upload its own predictions."
        )
rank = f"rank **#{placed.rank}** of {placed.n_rows}" if placed.rank else "not on the current board"
if placed.extra.get("judge") == "self":  # issue #17: the file carried its own verdicts
    rank += " among self-judged rows (the verdicts came with the file; ranked apart from rows graded by the board's judge)"
st.success(f"{state}: {rank} on {ui.code(task)} / {ui.code(split)}.")
st.metric(
    f"Rank on {task} / {split}",
    f"#{placed.rank}" if placed.rank else "–",
    help=f"primary metric {spec.primary}",
)
st.page_link(
    "site_pages/board.py", label="See it on the board", query_params={"task": task, "split": split}
)
st.page_link(
    "site_pages/submission.py",
    label="Open the submission",
    query_params={"id": placed.submission_id},
)
if placed.receipt:
    st.caption(f"receipt {ui.code(placed.receipt)} · submission {ui.code(placed.submission_id)}")

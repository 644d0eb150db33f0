"""Task: the spec rendered (description, licence, citation, metrics), the prediction-file schema and a sample."""

from __future__ import annotations

import json

import polars as pl
import streamlit as st

from procbench.dsl import SpecError
from procbench.dsl.model import MeasureSpec
from procbench.leaderboard import ui
from procbench.leaderboard.model import MetricInfo
from procbench.api import all_spec_paths, load_task
from procbench.paths import SAMPLE_SUBMISSIONS_DIR
from procbench.submissions.schema import prediction_schema

names = [p.stem for p in all_spec_paths()]
# `split` arrives with every link from a board (the other pages keep task and split in the address): known here, and checked
ui.check_params(("task", "split", "sample"))
task = ui.url_choice(st.sidebar, "Task", names, key="task", strict=True)
try:
    spec, _ = load_task(task)
except SpecError as exc:
    st.error(f"The spec of {ui.code(task)} does not check: {ui.escape(exc)}")
    st.stop()
split = st.query_params.get("split")
if split and split not in spec.data.splits:
    st.warning(
        f"Unknown split {ui.code(split)} in the address: {ui.code(spec.name)} has {', '.join(ui.code(s) for s in spec.data.splits)}."
    )

st.header(spec.title)
st.caption(
    f"task {ui.code(spec.name)} · benchmark {ui.escape(spec.benchmark or spec.name)} · version {ui.escape(spec.version)}"
)
st.markdown(spec.description)
facts = pl.DataFrame(
    {
        "": [
            "Data licence",
            "Upstream",
            "Splits",
            "Hidden splits",
            "Prediction format",
            "Primary metric",
        ],
        "value": [
            spec.license or "n/a",
            spec.url or "n/a",
            ", ".join(spec.data.splits),
            ", ".join(spec.data.hidden) or "none",
            spec.predictions.format
            + (f" (read by {spec.predictions.reader.name})" if spec.predictions.reader else ""),
            (primary.display if (primary := spec.metric(spec.primary)) else spec.primary),
        ],
    }
)
ui.table(facts, key="facts")

st.subheader("Metrics")
ui.table(
    pl.DataFrame(
        {
            "Name": [m.name for m in spec.metrics],
            "Shown as": [m.display for m in spec.metrics],
            "Group": [m.group for m in spec.metrics],
            "Higher is better": [m.higher_is_better for m in spec.metrics],
            "Shown in %": [m.percent for m in spec.metrics],
        }
    ),
)
st.markdown(ui.definition_lines(MetricInfo.from_spec(m) for m in spec.metrics))


def _measure_text(ms: MeasureSpec) -> str:
    """One measure in words: what it computes (a library metric, a scorer's value, counts, a formula) and how it aggregates (issue #30: never 'None ()')."""
    what = (
        f"`{ms.metric.name}`"
        if ms.metric
        else f"value `{ms.value}`"
        if ms.value
        else f"counts of {', '.join(f'`{c}`' for c in ms.counts)}"
        if ms.counts
        else "a formula over measures"
    )
    return f"`{ms.name}`: {what}" + (f" ({ms.aggregate})" if ms.aggregate else "")


_how = [f"aggregated with `{spec.score.aggregate.name}`"] if spec.score.aggregate else []
_how += [f"scored by `{spec.score.scorer.name}`"] if spec.score.scorer else []
_how += (
    ["measured with " + ", ".join(_measure_text(ms) for ms in spec.score.measures)]
    if spec.score.measures
    else []
)
_text = "; ".join(_how)
st.caption(_text[:1].upper() + _text[1:] + ".")
if spec.slices:
    st.subheader("Slices")
    ui.table(
        pl.DataFrame(
            {
                "Slice": [s.name for s in spec.slices],
                "Kind": [s.kind for s in spec.slices],
                "Description": [s.display for s in spec.slices],
            }
        ),
    )
if spec.reported:
    st.subheader("Reported rows")
    ui.table(
        pl.DataFrame(
            {
                "System": [r.system for r in spec.reported],
                "Split": [r.split for r in spec.reported],
                "Source": [r.source for r in spec.reported],
                "Values": [", ".join(f"{k} = {v:g}" for k, v in r.values) for r in spec.reported],
            }
        ),
    )
if spec.citation:
    st.subheader("Citation")
    st.code(spec.citation.strip(), language="bibtex")

st.subheader("Prediction file")
schema = json.dumps(prediction_schema(spec), indent=2)
st.download_button(
    "Download the JSON Schema",
    schema,
    file_name=f"{spec.name}.predictions.schema.json",
    mime="application/schema+json",
)
with st.expander("JSON Schema"):
    st.code(schema, language="json")
folder = SAMPLE_SUBMISSIONS_DIR / spec.name
samples = (
    sorted(p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".meta.json"))
    if folder.is_dir()
    else []
)
if samples:
    chosen = st.selectbox(
        "Sample file", [p.name for p in samples], key="sample", bind="query-params"
    )
    path = folder / chosen
    st.download_button("Download the sample", path.read_bytes(), file_name=chosen)
    with st.expander("First lines of the sample"):
        st.code(
            "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[:8]),
            language=None,
        )
else:
    st.caption("No sample file ships with this task.")

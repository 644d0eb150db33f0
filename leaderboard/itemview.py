"""One item shown with its gold and one or more predictions (Compare and the Items page; public splits only).

PAGED items are drawn as graphs (``procbench.runners.paged.dot``), full width: either one tab per graph (the
default, each as wide as the page; Streamlit's fullscreen button on a graph zooms it further) or side
by side, with the legend of what the colours mean.  The colours follow one of two matchings, chosen
beside the graphs: soft (the default), the one the headline scores use (BLEU-1), or strict, the one the
strict counts use; the legend names the one shown.  Other tasks show the records as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from procbench.leaderboard import evidence, ui
from procbench.leaderboard.model import TaskInfo

LEGEND = (
    "Colours: :green[**matched**] (in the gold and in the prediction) · :red[**missed**] (in the gold, not predicted) · "
    ":orange[**spurious**] (predicted, not in the gold). Use a graph's fullscreen button to zoom."
)
MATCHINGS = (
    "soft",
    "strict",
)  # procbench.runners.paged.dot.Matching values; soft first: the headline scores' matching
MATCHING_LABELS = {
    "soft": "soft (as the headline scores)",
    "strict": "strict (as the strict counts)",
}
MATCHING_LEGEND = {
    "soft": (
        "Matched by **soft** matching, as the headline scores (Actor, Action, constraints, flows) count: an actor, action or "
        "constraint is matched when an element of the same kind has BLEU-1 ≥ 0.5 with it (hover for its best BLEU-1); start and "
        "end nodes by kind; a flow when its two ends match so; a gateway when one of its flows does."
    ),
    "strict": (
        "Matched by **strict** matching, as the strict counts (the `… (strict)` metrics and the gateway scores) count: the same "
        "words (start, end and OR nodes by kind); a flow when its type, condition and both ends do; a gateway when one of its flows does."
    ),
}
NO_PREDICTION = "(no prediction: scored as empty)"
LAYOUTS = ("one at a time", "side by side")


def is_graph_task(info: TaskInfo) -> bool:
    return info.benchmark == "PAGED"


def show(
    info: TaskInfo,
    item_id: str,
    gold_item: Any | None,
    predictions: Mapping[str, Any | None],
    scores: Mapping[str, Mapping[str, float]],
) -> None:
    """Gold and every named prediction of ``item_id`` (``predictions[name]`` is None when the store kept no raw file)."""
    if is_graph_task(info) and gold_item is not None:
        _graphs(item_id, gold_item, predictions)
        with st.expander("Document text"):
            st.text(getattr(gold_item, "paragraph", ""))
    else:
        columns = st.columns(1 + len(predictions))
        columns[0].markdown("**Gold**")
        _text(
            columns[0], evidence.as_text(gold_item) if gold_item is not None else "(not available)"
        )
        for column, (name, preds) in zip(columns[1:], predictions.items()):
            if preds is not None:
                column.markdown(f"**{ui.escape(name)}**")
                _text(column, evidence.as_text(preds.get(item_id, NO_PREDICTION)))
                continue
            # no prediction file kept: the item's statistics stand in, labelled as such (and folded when long: PAGED has ~100 counts)
            column.markdown(f"**{ui.escape(name)}**: item statistics (no prediction file kept)")
            stats = [f"{k} = {v:g}" for k, v in scores.get(name, {}).items()]
            target = column.expander(f"{len(stats)} statistics") if len(stats) > 12 else column
            target.code("\n".join(stats) or "(no item scores)", language=None, wrap_lines=True)


LONG_TEXT_CHARS = 2000  # longer texts (PM-LLM's answers) scroll in a box of their own instead of stretching the page
TEXT_BOX_PX = 560


def _text(column: Any, text: str) -> None:
    target = (
        column.container(height=TEXT_BOX_PX)
        if len(text) > LONG_TEXT_CHARS or text.count("\n") > 40
        else column
    )
    target.code(text, language=None, wrap_lines=True)


def _graphs(item_id: str, gold_item: Any, predictions: Mapping[str, Any | None]) -> None:
    from procbench.runners.paged.dot import Matching, draw_document, to_dot
    from procbench.runners.paged.parse import graph_of_gold_lines

    layout = st.radio("Graph layout", LAYOUTS, horizontal=True, key="layout", bind="query-params")
    # the matching lives in the address (`matching`, its raw value) like every other choice, so a strict view is shared
    asked = st.query_params.get("matching")
    if asked is not None and asked not in MATCHINGS:
        st.warning(
            f"Unknown matching {ui.code(asked)} in the address (`matching`): showing {ui.code(MATCHINGS[0])} instead "
            f"(one of {', '.join(ui.code(m) for m in MATCHINGS)})."
        )
    chosen = (
        st.radio(
            "Colours by",
            MATCHINGS,
            index=MATCHINGS.index(asked) if asked in MATCHINGS else 0,
            horizontal=True,
            key="matching",
            format_func=MATCHING_LABELS.__getitem__,
        )
        or MATCHINGS[0]
    )
    if chosen != MATCHINGS[0] or "matching" in st.query_params:
        st.query_params["matching"] = chosen
    st.markdown(LEGEND)
    st.markdown(MATCHING_LEGEND[chosen])
    # titles are markdown (tab labels and headings both render it): the name, a model's on the Items page, is escaped
    panels: list[tuple[str, str]] = [
        ("Gold", to_dot(graph_of_gold_lines(gold_item.lines), title="gold"))
    ]
    for name, preds in predictions.items():
        if preds is None:
            continue
        gold_dot, predicted_dot = draw_document(
            gold_item, preds.get(item_id) or "", matching=Matching(chosen)
        )
        safe = ui.escape(name)
        panels.append((f"{safe}: prediction", predicted_dot))
        panels.append((f"{safe}: gold, coloured by what {safe} missed", gold_dot))
    if layout == LAYOUTS[1]:
        for start in range(0, len(panels), 2):
            columns = st.columns(2)
            for column, (title, dot) in zip(columns, panels[start : start + 2]):
                column.markdown(f"**{title}**")
                column.graphviz_chart(dot, width="stretch")
    else:
        for tab, (title, dot) in zip(st.tabs([t for t, _ in panels]), panels):
            tab.graphviz_chart(dot, width="stretch")

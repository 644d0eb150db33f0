"""The procbench leaderboard (Streamlit, multipage).  Reads the store only; uploads go through intake.

Run with ``procbench leaderboard --db FILE`` (or ``PROCBENCH_DB=FILE streamlit run leaderboard/app.py``).
Each page lives in ``leaderboard/site_pages/`` (not ``pages/``: that name would turn on Streamlit's automatic page list)
and takes its view from URL query parameters.
"""

from __future__ import annotations

import streamlit as st
from streamlit import config as _config

# Streamlit runs a full gc.collect(2) after every script run by default.  The site keeps its store reads
# cached in the process (many long-lived objects), so that walk cost most of a warm view's server CPU
# (0.11 of 0.17 s on the demo board, more on a large store; `make bench-site`).  Python's own generational
# collection still runs.  An operator's explicit `runner.postScriptGC` setting is left as it is.
if _config.get_where_defined("runner.postScriptGC") == _config.ConfigOption.DEFAULT_DEFINITION:
    _config.set_option("runner.postScriptGC", False, "leaderboard/app.py")

st.set_page_config(page_title="procbench leaderboard", layout="wide")

PAGES = [
    st.Page("site_pages/home.py", title="Home", url_path="home", default=True),
    st.Page("site_pages/board.py", title="Board", url_path="board"),
    st.Page("site_pages/charts.py", title="Charts", url_path="charts"),
    st.Page("site_pages/compare.py", title="Compare", url_path="compare"),
    st.Page("site_pages/submission.py", title="Submission", url_path="submission"),
    st.Page("site_pages/model.py", title="Model", url_path="model"),
    st.Page("site_pages/items.py", title="Items", url_path="items"),
    st.Page("site_pages/upload.py", title="Upload", url_path="upload"),
    st.Page("site_pages/task.py", title="Task", url_path="task"),
    st.Page("site_pages/downloads.py", title="Downloads", url_path="downloads"),
    st.Page("site_pages/ledger.py", title="Ledger", url_path="ledger"),
]

st.navigation(PAGES, position="top").run()

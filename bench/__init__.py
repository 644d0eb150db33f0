"""procbench's benchmarks: a checkout tool, the top layer, not in the wheel (pyproject excludes it).

``python -m procbench.bench.run`` (``make bench``) writes docs/performance.md:

* ``procbench.bench.generate``  synthetic but realistic gold and predictions at 1x, 10x, 100x a test split;
* ``procbench.bench.stores``    stores of 100 / 1 000 / 10 000 submissions in the real schema;
* ``procbench.bench.reference`` plain, textbook implementations of each metric (per pair, no caching);
* ``procbench.bench.process`` / ``procbench.bench.worker``  the measurements (each in a fresh subprocess for an honest peak RSS);
* ``procbench.bench.report``    the Markdown report.

``python -m procbench.bench.site`` (``make bench-site``, ``make screenshots``) measures the site:

* ``procbench.bench.site_stores``   a copy of a board plus 10 000 generated submissions;
* ``procbench.bench.browserbench``  whole pages in headless Chromium (its section of docs/performance.md);
* ``procbench.bench.streamclient``  viewers without a browser, over Streamlit's websocket protocol;
* ``procbench.bench.screenshots``   full-page screenshots of a store.
"""

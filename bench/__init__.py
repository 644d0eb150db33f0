"""procbench's benchmarks: a checkout tool, the top layer, not in the wheel (pyproject excludes it).

``python -m procbench.bench.run`` (``make bench``) writes docs/performance.md:

* ``bench.generate``  synthetic but realistic gold and predictions at 1x, 10x, 100x a test split;
* ``bench.stores``    stores of 100 / 1 000 / 10 000 submissions in the real schema;
* ``bench.reference`` plain, textbook implementations of each metric (per pair, no caching);
* ``bench.process`` / ``bench.worker``  the measurements (each in a fresh subprocess for an honest peak RSS);
* ``bench.report``    the Markdown report.

``python -m procbench.bench.site`` (``make bench-site``, ``make screenshots``) measures the site:

* ``bench.site_stores``   a copy of a board plus 10 000 generated submissions;
* ``bench.browserbench``  whole pages in headless Chromium (its section of docs/performance.md);
* ``bench.streamclient``  viewers without a browser, over Streamlit's websocket protocol;
* ``bench.screenshots``   full-page screenshots of a store.
"""

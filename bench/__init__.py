"""procbench's benchmark suite: ``python -m bench.run`` (``make bench``) writes docs/performance.md.

* ``bench.generate``  synthetic but realistic gold and predictions at 1x, 10x, 100x a test split;
* ``bench.stores``    stores of 100 / 1 000 / 10 000 submissions in the real schema;
* ``bench.reference`` plain, textbook implementations of each metric (per pair, no caching);
* ``bench.measure``   the measurements (each in a fresh subprocess for an honest peak RSS);
* ``bench.report``    the Markdown report.
"""

"""Plain reference implementations of each benchmark's metric, as docs/metrics.md states it.

Written the textbook way on purpose: every pair is normalised, stemmed and scored from scratch, with
no caching and no vectorisation. The bench times procbench against them on the same input and
asserts the results agree (``procbench.bench.compare``).
"""

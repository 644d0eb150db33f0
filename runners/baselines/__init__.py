"""Reference baselines that write real prediction files (random, majority, sentence embeddings).

Nothing heavy is imported here: torch and transformers load only when an embedding baseline runs.
"""

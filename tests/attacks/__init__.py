"""The attack suite: one module per class of hostile input or failure (issue "Nothing lost, nothing run").

Each case asserts a clear refusal (a one-line message and the documented exit code), a consistent store
and unchanged board rows.
"""

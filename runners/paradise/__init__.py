"""PARADISE (Findings of ACL 2024): warning and tip inference as 4-way multiple choice.

Importing this package registers its components: the reader ``paradise.choices``, the prediction
validator ``paradise.labels``, the scorer and the aggregator ``paradise.accuracy``, and the import
check ``paradise.same_item``.
"""

from procbench.runners.paradise import data, imports, metrics, predictions  # noqa: F401  (registration side effects)
from procbench.runners.paradise.data import ParadiseItem, load_split
from procbench.runners.paradise.metrics import weighted_prf

__all__ = ["ParadiseItem", "load_split", "weighted_prf"]

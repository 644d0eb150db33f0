"""Whether a split read for scoring lacks something ``check --data`` looks for across splits (docs/language.md, "Against the data").

``procbench score`` and ``submit`` refuse what ``check --data`` refuses about the split they score
(``dsl.datacheck.scoring_refusals``).  Most of it is the reader's own strictness, which scoring
already meets; the rest holds across splits: a ``map()`` key, a slice's label or answer label that no
item has.  This is the test on the split already read, in one pass over its labels, that tells
whether the other splits need reading at all; a rebuilt runner answers it without the spec language.
"""

from __future__ import annotations

from runners._types import GoldSet
from runners.runner import TaskRunner


def lacks_something(runner: TaskRunner, gold: GoldSet) -> bool:
    """True when a ``map()`` key matched no item of ``gold``, or a slice's label or answer label is on none."""
    if any(gold.unmatched_map_keys.values()):
        return True
    wanted = {sl.key for sl in runner.slices if sl.kind == "label"}
    if wanted:
        for labels in gold.labels.values():
            wanted.difference_update(labels)
            if not wanted:
                break
    return bool(wanted) or any(sl.kind == "answer_label" and not gold.answer_views.get(sl.key) for sl in runner.slices)

"""Whether a split read for scoring lacks something ``check --data`` looks for across splits (docs/language.md, "Against the data").

``procbench score`` and ``submit`` refuse what ``check --data`` refuses about the split they score
(``procbench.dsl.datacheck.scoring_refusals``).  Most of it is the reader's own strictness, which scoring
already meets; the rest holds across splits: a ``map()`` key, a slice's label or answer label that no
item has.  This is the test on the split already read, in one pass over its labels, that tells
whether the other splits need reading at all; a rebuilt runner answers it without the spec language.
Where the split lacks something for good (OpenPI's dev split has no Health topic, which the test split
has), the check across splits passes; :func:`passed_mark` remembers that, so it runs once per state
of the files rather than on every scoring run.
"""

from __future__ import annotations

from pathlib import Path

from procbench.runners.runtime import digests
from procbench.runners.runtime._types import GoldSet
from procbench.runners.runtime.runner import TaskRunner


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
    return bool(wanted) or any(
        sl.kind == "answer_label" and not gold.answer_views.get(sl.key) for sl in runner.slices
    )


def passed_mark(
    runner: TaskRunner, data_root: Path, split: str, folder: Path | None, code: str
) -> Path | None:
    """The file whose presence says the check across splits passed for ``split``, for this spec (its digest),
    this checker (``code``, the spec cache's code signature) and every split's source files as they are
    (size and modification time; stat only).  None where that cannot be told: no cache folder, a reader
    component (its files are its own), a file absent.
    """
    sources = getattr(runner.read_gold, "sources", None)
    if folder is None or not sources:
        return None
    digest = digests.sha256(
        f"{runner.spec_digest}\0{code}\0{Path(data_root).resolve()}\0{split}\n".encode()
    )
    for each in runner.splits:
        for source in sources:
            if source.splits and each not in source.splits:
                continue
            path = Path(data_root) / source.path.format(split=each)
            try:
                stat = path.stat()
            except OSError:
                return None
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return folder / "datacheck" / digest.hexdigest()


def remember_passed(mark: Path | None) -> None:
    """Leave the mark (a cache folder that cannot be written only costs the next run the check)."""
    if mark is None:
        return
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        pass

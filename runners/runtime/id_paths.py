"""The reserved id paths of a spec's ``data`` block, as plain constants (procbench.runners.runtime.tables reads them).

Apart from the gold readers so that the spec model (procbench.dsl.model: an explode's default id) names
them without importing the readers: ``procbench submit`` of a task whose gold no table reader reads
loads the spec, not the readers (issue #31).
"""

from __future__ import annotations

ROW_INDEX = ("#row",)  # id path meaning "0-based position of the record in the primary source"
KEY_ID = "#key"  # id path ("#key", <primary source>): the record's key in a json source written as {id: record}
EXPLODE_INDEX = ("#index",)  # explode id: the element's 0-based position
EXPLODE_KEY = ("#key",)  # explode id: the element's key in a mapping
EXPLODE_JOIN = "#join"  # explode id ("#join", path, ...): the values at several paths into the element, joined by the separator

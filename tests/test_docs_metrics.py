"""docs/metrics.md is the only metrics reference: every citation of it resolves, and nothing cites a document outside the repository.

Citations come in two forms: links ``docs/metrics.md#<anchor>`` (GitHub's heading anchors) and section numbers
``docs/metrics.md §2A.5`` (ranges such as ``§4.3-4.8`` and lists such as ``§2B.1, 2B.7`` cite every number named). The
comments of tests/parity/ (which may not be edited) cite ``metrics.md 3.4`` without the prefix; they must resolve too.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "metrics.md"
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)
SECTION = r"\d+[A-Z]?(?:\.\d+)?"
NUMBERED = re.compile(rf"^({SECTION})\.?\s")
ANCHOR = re.compile(r"(?:docs/)?metrics\.md#([\w-]+)")
CITATION = re.compile(
    rf"metrics\.md(?P<refs>(?:\s*(?:§\s?|sections?\s+|,\s?|and\s+|[-–]\s?)?{SECTION}\b)+)"
)
# A metrics document outside the repository: the steering folder's docs, papers and parity notes.
OUTSIDE = re.compile(
    r"shared/(?:docs|papers)\b|shared/parity/\S*README|parity README|parity notes", re.I
)
# ``metrics.md`` not written as the repository path (a markdown link from inside docs/ may be relative).
BARE = re.compile(r"(?<![\w./(-])metrics\.md")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower-case, punctuation other than ``-``/``_`` removed, each space a ``-``."""
    return "".join(c for c in heading.strip().lower() if c.isalnum() or c in " -_").replace(
        " ", "-"
    )


def headings(text: str) -> list[str]:
    """The heading texts of a markdown document, outside fenced code blocks."""
    unfenced = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return [m.group(2) for m in HEADING.finditer(unfenced)]


def anchors(text: str) -> set[str]:
    """Every heading anchor, with GitHub's ``-1``, ``-2`` suffixes for repeated headings."""
    seen: dict[str, int] = {}
    out = set()
    for heading in headings(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def section_numbers(text: str) -> dict[str, str]:
    """Section number (upper-case, no trailing dot) -> heading text, for the numbered headings."""
    numbers: dict[str, str] = {}
    for heading in headings(text):
        if match := NUMBERED.match(heading):
            numbers[match.group(1).upper()] = heading
    return numbers


def cited_sections(text: str) -> list[str]:
    """Every section number cited after a ``metrics.md`` mention, in order."""
    return [
        ref.upper() for m in CITATION.finditer(text) for ref in re.findall(SECTION, m.group("refs"))
    ]


def unresolved(text: str, doc_text: str) -> list[str]:
    """The citations in ``text`` that name no heading of ``doc_text``."""
    numbers, known = section_numbers(doc_text), anchors(doc_text)
    bad = [f"§{n}" for n in cited_sections(text) if n not in numbers]
    return bad + [f"#{a}" for a in ANCHOR.findall(text) if a not in known]


def repository_files() -> list[str]:
    """Tracked files plus new ones not ignored (what the next commit can hold)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the repository's files cannot be listed")
    return sorted({name for name in listed.splitlines() if (ROOT / name).is_file()})


def text_of(name: str) -> str | None:
    """A file's text, or None for binary files."""
    data = (ROOT / name).read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@pytest.fixture(scope="module")
def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    found = {name: text_of(name) for name in repository_files()}
    return {name: text for name, text in found.items() if text is not None}


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("2B. NAACL'18 sentence-level evaluator", "2b-naacl18-sentence-level-evaluator"),
        ("2A.10 Upstream test cases", "2a10-upstream-test-cases"),
        ("6. Appendix: stemmers and libraries", "6-appendix-stemmers-and-libraries"),
        ("1.1 Two scorers: openpi and openpi-head", "11-two-scorers-openpi-and-openpi-head"),
        (
            "Official metrics, and how procbench reproduces them",
            "official-metrics-and-how-procbench-reproduces-them",
        ),
    ],
)
def test_slug_is_githubs_anchor(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_one_numbered_section_per_benchmark_in_the_cited_order(doc_text: str) -> None:
    numbers = section_numbers(doc_text)
    tops = [numbers[n] for n in ("1", "2", "3", "4", "5")]
    assert [t.split(" ", 1)[1] for t in tops] == [
        "OpenPI",
        "ProPara",
        "PARADISE",
        "PM-LLM-Benchmark",
        "PAGED",
    ]
    assert {"2A", "2B"} <= numbers.keys()


def test_section_numbers_are_unique(doc_text: str) -> None:
    found = [NUMBERED.match(h).group(1).upper() for h in headings(doc_text) if NUMBERED.match(h)]
    assert len(found) == len(set(found)), sorted(n for n in found if found.count(n) > 1)


# What the comments of tests/parity/ cite each number for: the heading there must be about that.
PARITY_TOPICS = {
    "2A.10": "test cases",
    "2B.3": "alignment",
    "3.2": "metrics",
    "3.4": "slices",
    "4.3": "grade",
    "4.8": "rounding",
}


def test_parity_citations_point_to_their_topic(doc_text: str, texts: dict[str, str]) -> None:
    numbers = section_numbers(doc_text)
    cited = {
        n
        for name, text in texts.items()
        if name.startswith("tests/parity/")
        for n in cited_sections(text)
    }
    assert set(PARITY_TOPICS) <= cited | {
        "3.2"
    }  # 3.2 is named in a docstring as "the worked examples of 3.2"
    for number, topic in PARITY_TOPICS.items():
        assert topic in numbers[number].lower(), (
            f"§{number} is {numbers[number]!r}, cited for {topic!r}"
        )


def test_every_citation_resolves(doc_text: str, texts: dict[str, str]) -> None:
    bad = {
        name: found
        for name, text in texts.items()
        if name != THIS and (found := unresolved(text, doc_text))
    }
    assert not bad, f"citations of docs/metrics.md naming no heading there: {bad}"


def test_the_check_catches_a_broken_citation(doc_text: str) -> None:
    text = "see docs/metrics.md §2A.11 and docs/metrics.md#no-such-heading; metrics.md 4.3-4.9 too"
    assert unresolved(text, doc_text) == ["§2A.11", "§4.9", "#no-such-heading"]


def test_contents_links_resolve(doc_text: str) -> None:
    links = re.findall(r"\]\(#([\w-]+)\)", doc_text)
    assert links and not set(links) - anchors(doc_text)


@given(
    data=st.data(),
    form=st.sampled_from(["§", "§ ", "section ", "", "sections "]),
    tail=st.sampled_from([")", ": x", ".", " table", ", item 4"]),
)
def test_any_cited_section_is_read_back(data: st.DataObject, form: str, tail: str) -> None:
    numbers = sorted(section_numbers(DOC.read_text(encoding="utf-8")))
    first, last = data.draw(st.sampled_from(numbers)), data.draw(st.sampled_from(numbers))
    assert cited_sections(f"(docs/metrics.md {form}{first}{tail}") == [first]
    assert cited_sections(f"docs/metrics.md {form}{first}–{last}{tail}") == [first, last]


def test_no_file_cites_a_document_outside_the_repository(texts: dict[str, str]) -> None:
    offenders = []
    for name, text in texts.items():
        if name.startswith("tests/parity/") or name == THIS:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line) or BARE.search(line):
                offenders.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not offenders, "cite docs/metrics.md (or the spec) instead:\n" + "\n".join(offenders)

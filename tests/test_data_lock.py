"""Fetch lock files (procbench.dsl.lock, ``procbench data lock``): expansion, writing, reading back, staleness, safety.

Files are laid out under tmp data roots; downloads go to a loopback server (never the network).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import Result
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from procbench.dsl.checker import check_file
from procbench.dsl.lock import (
    FetchOrigin,
    LockError,
    declarations_only,
    expand,
    glob_match,
    lock_entries,
    lock_path,
    lock_text,
    origin_problems,
    read_lock,
    write_lock,
)
from procbench import data as fetching
from procbench.cli import app
from procbench.paths import PROJECT_ROOT, SAMPLE_DATA_ROOT
from tests.test_data_fetch import Loopback, server  # noqa: F401 - `server` is test_data_fetch's loopback fixture, shared

BASE = "https://raw.example.org/org/bench/0123456789abcdef0123456789abcdef01234567/"
SPLITS = ("dev", "test")


def _put(root: Path, relative: str, content: bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def _sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@pytest.fixture
def bench_root(tmp_path: Path) -> Path:
    """A data root holding one small benchmark: per-split files, question files and a Hub file."""
    root = tmp_path / "data"
    for split in SPLITS:
        _put(root, f"bench/data/{split}/gold.jsonl", f'{{"id": "{split}-1"}}\n'.encode())
    _put(root, "bench/questions/q1.txt", b"first question\n")
    _put(root, "bench/questions/q2.txt", b"second question\n")
    _put(root, "bench/questions/.q3.txt.swp", b"an editor's swap file\n")
    _put(root, "bench/questions/figure.png", b"\x89PNG not really\n")
    _put(root, "bench/questions/more/q4.txt", b"a nested question\n")
    _put(root, "bench/hub/labels_dev.csv", b"id,label\ndev-1,0\n")
    return root


GOLD = FetchOrigin(url=BASE, into="bench/", files=("data/{split}/gold.jsonl",))
QUESTIONS = FetchOrigin(name="questions", url=BASE, into="bench/", files=("questions/*.txt",))
HUB = FetchOrigin(
    name="hub",
    hub_repo="org/bench",
    revision="abc1234",
    into="bench/hub/",
    files=("labels_{split}.csv",),
    splits=("dev",),
)


# -- expansion ----------------------------------------------------------------------------------


def test_split_placeholder_expands_over_the_task_or_the_block_splits() -> None:
    files = expand(GOLD, SPLITS)
    assert [(f.path, f.url, f.splits) for f in files] == [
        ("bench/data/dev/gold.jsonl", BASE + "data/dev/gold.jsonl", ("dev",)),
        ("bench/data/test/gold.jsonl", BASE + "data/test/gold.jsonl", ("test",)),
    ]
    (hub,) = expand(HUB, SPLITS)
    assert (
        hub.path,
        hub.hub_repo,
        hub.hub_file,
        hub.revision,
        hub.repo_type,
        hub.url,
        hub.splits,
    ) == (
        "bench/hub/labels_dev.csv",
        "org/bench",
        "labels_dev.csv",
        "abc1234",
        "dataset",
        "",
        ("dev",),
    )
    # A file without {split} belongs to every split (no splits recorded) or to the block's, in the task's order.
    shared = FetchOrigin(url=BASE, into="bench", files=("README.md",))
    assert [(f.path, f.splits) for f in expand(shared, SPLITS)] == [("bench/README.md", ())]
    some = FetchOrigin(url=BASE, into="bench", files=("subset.csv",), splits=("test", "dev"))
    assert [f.splits for f in expand(some, ("dev", "extra", "test"))] == [("dev", "test")]


def test_a_file_name_is_quoted_in_its_url_but_not_in_its_path() -> None:
    (item,) = expand(
        FetchOrigin(url=BASE.rstrip("/"), into="b/", files=("with space#1.csv",)), SPLITS
    )
    assert item.url == BASE + "with%20space%231.csv" and item.path == "b/with space#1.csv"


def test_globs_expand_against_the_local_copy_and_skip_dot_files(bench_root: Path) -> None:
    assert [f.path for f in expand(QUESTIONS, SPLITS, bench_root)] == [
        "bench/questions/q1.txt",
        "bench/questions/q2.txt",
    ]
    nested = FetchOrigin(url=BASE, into="bench/", files=("questions/**/*.txt",))
    assert [f.file for f in expand(nested, SPLITS, bench_root)] == [
        "questions/more/q4.txt",
        "questions/q1.txt",
        "questions/q2.txt",
    ]
    every = FetchOrigin(url=BASE, into="bench/", files=("questions/*",))
    assert [f.file for f in expand(every, SPLITS, bench_root)] == [
        "questions/figure.png",
        "questions/q1.txt",
        "questions/q2.txt",
    ]
    with pytest.raises(LockError, match="is a glob; it expands against a local copy"):
        expand(QUESTIONS, SPLITS)
    with pytest.raises(LockError, match=r"'questions/\*\.csv' matches no file under bench/"):
        expand(FetchOrigin(url=BASE, into="bench/", files=("questions/*.csv",)), SPLITS, bench_root)


@given(st.lists(st.sampled_from(["a", "b", ".c", "d.txt", "e.txt"]), min_size=1, max_size=4))
def test_glob_match_keeps_wildcards_within_one_folder(parts: list[str]) -> None:
    path = "/".join(parts)
    assert glob_match(path, path)  # a literal pattern matches itself
    assert glob_match("*", path) == (len(parts) == 1 and not parts[0].startswith("."))
    assert glob_match("**/*", path) == (not any(p.startswith(".") for p in parts))
    assert glob_match("*/" * (len(parts) - 1) + "*.txt", path) == (
        parts[-1].endswith(".txt") and not any(p.startswith(".") for p in parts)
    )


# -- safety -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("into", "file", "complaint"),
    [
        ("../elsewhere/", "gold.jsonl", "contains '..'"),
        ("bench/", "../../etc/passwd", "contains '..'"),
        ("bench/", "data/../../outside.csv", "contains '..'"),
        ("/var/data/", "gold.jsonl", "is absolute"),
        ("bench/", "/etc/passwd", "is absolute"),
        ("C:/data/", "gold.jsonl", "is absolute"),
        ("bench\\data", "gold.jsonl", "backslash"),
        ("bench/", "data\\gold.jsonl", "backslash"),
        ("bench/", "data//gold.jsonl", "empty or '.' segment"),
    ],
)
def test_paths_that_would_leave_the_data_root_are_refused(
    tmp_path: Path, into: str, file: str, complaint: str
) -> None:
    origin = FetchOrigin(url=BASE, into=into, files=(file,))
    with pytest.raises(LockError, match=complaint):
        expand(origin, SPLITS)
    with pytest.raises(LockError, match=complaint):
        write_lock("bench", [origin], SPLITS, tmp_path, tmp_path / "bench.lock")
    assert not (tmp_path / "bench.lock").exists()


_SEGMENT = st.lists(
    st.sampled_from(["a", "b", ".", "..", "-", "_", "/", "\\", ":", "~"]), min_size=1, max_size=12
).map("".join)


@given(into=_SEGMENT, file=_SEGMENT)
def test_every_accepted_path_stays_under_the_data_root(into: str, file: str) -> None:
    origin = FetchOrigin(url=BASE, into=into, files=(file,))
    if origin_problems(origin, SPLITS):
        return
    root = Path("/srv/data-root")
    for item in expand(origin, SPLITS):
        resolved = (root / item.path).resolve()
        assert resolved.is_relative_to(root) and resolved != root
        assert (
            fetching.destination(
                root, fetching.FetchSpec(name="x", path=item.path, sha256="0" * 64, size=0)
            )
            == root / item.path
        )


def test_block_mistakes_are_all_reported() -> None:
    problems = origin_problems(
        FetchOrigin(
            url="ftp://example.org/",
            hub_repo="",
            revision="v1",
            into="b/{split}/",
            files=("a.csv", "a.csv", "b_{lang}.csv"),
            splits=("dev", "train"),
        ),
        SPLITS,
    )
    text = "\n".join(problems)
    for expected in (
        "must be an http(s) address",
        "revision applies to hub_repo",
        "into 'b/{split}/' must be a plain folder",
        "lists 'a.csv' 2 times",
        "uses {lang}",
        "'train', which is not a split",
    ):
        assert expected in text
    assert "needs exactly one origin" in "\n".join(
        origin_problems(FetchOrigin(into="b/", files=("a",)), SPLITS)
    )
    assert "needs exactly one origin" in "\n".join(
        origin_problems(FetchOrigin(url=BASE, hub_repo="o/r", into="b/", files=("a",)), SPLITS)
    )


# -- writing and reading ------------------------------------------------------------------------


def test_a_lock_written_from_a_data_root_reads_back_as_fetch_specs(
    bench_root: Path, tmp_path: Path
) -> None:
    target = tmp_path / "bench.lock"
    origins = [GOLD, QUESTIONS, HUB]
    lock = write_lock("bench", origins, SPLITS, bench_root, target)
    text = target.read_text()
    assert "procbench data lock bench" in json.loads(text)["generated"] and text == lock_text(lock)
    assert [e["path"] for e in json.loads(text)["files"]] == sorted(
        e["path"] for e in lock["files"]
    )

    specs = {s.path: s for s in read_lock(target, origins, SPLITS)}
    assert sorted(specs) == [
        "bench/data/dev/gold.jsonl",
        "bench/data/test/gold.jsonl",
        "bench/hub/labels_dev.csv",
        "bench/questions/q1.txt",
        "bench/questions/q2.txt",
    ]
    for path, spec in specs.items():
        content = (bench_root / path).read_bytes()
        assert (spec.sha256, spec.size) == (_sha(content), len(content))
    assert specs["bench/data/test/gold.jsonl"].url == BASE + "data/test/gold.jsonl" and specs[
        "bench/data/test/gold.jsonl"
    ].splits == ("test",)
    assert (
        specs["bench/questions/q1.txt"].splits == ()
        and specs["bench/questions/q1.txt"].name == "questions/q1.txt"
    )
    hub = specs["bench/hub/labels_dev.csv"]
    assert (hub.hub_repo, hub.hub_file, hub.revision, hub.repo_type, hub.url) == (
        "org/bench",
        "labels_dev.csv",
        "abc1234",
        "dataset",
        "",
    )

    # Regenerating from unchanged files changes no byte; a changed file changes its digest only.
    write_lock("bench", origins, SPLITS, bench_root, target)
    assert target.read_text() == text
    _put(bench_root, "bench/questions/q2.txt", b"second question, revised\n")
    write_lock("bench", origins, SPLITS, bench_root, target)
    changed = [line for line in target.read_text().splitlines() if line not in text.splitlines()]
    assert len(changed) == 2 and '"size"' in changed[0] and '"sha256"' in changed[1]


def test_every_missing_file_is_named_and_no_lock_is_written(
    bench_root: Path, tmp_path: Path
) -> None:
    (bench_root / "bench/data/test/gold.jsonl").unlink()
    (bench_root / "bench/hub/labels_dev.csv").unlink()
    with pytest.raises(LockError) as failure:
        write_lock("bench", [GOLD, QUESTIONS, HUB], SPLITS, bench_root, tmp_path / "bench.lock")
    assert failure.value.problems == (
        "missing: bench/data/test/gold.jsonl",
        "missing: bench/hub/labels_dev.csv",
    )
    assert "--data-dir" in failure.value.hint and not (tmp_path / "bench.lock").exists()
    with pytest.raises(LockError, match="nothing to lock"):
        write_lock("bench", [], SPLITS, bench_root)


def test_a_stale_lock_is_refused_naming_what_changed(bench_root: Path, tmp_path: Path) -> None:
    target = tmp_path / "bench.lock"
    write_lock("bench", [GOLD, QUESTIONS], SPLITS, bench_root, target)

    added = FetchOrigin(url=BASE, into="bench/", files=(*GOLD.files, "questions/more/q4.txt"))
    with pytest.raises(LockError) as failure:
        read_lock(target, [added, QUESTIONS], SPLITS)
    assert "is stale" in str(failure.value) and failure.value.problems == (
        "added: bench/questions/more/q4.txt (in the fetch blocks, not in the lock)",
    )
    assert "procbench data lock bench" in failure.value.hint

    only_q1 = FetchOrigin(name="questions", url=BASE, into="bench/", files=("questions/q1.txt",))
    with pytest.raises(LockError) as failure:
        read_lock(target, [GOLD, only_q1], SPLITS)
    assert failure.value.problems == (
        "removed: bench/questions/q2.txt (in the lock, no longer in the fetch blocks)",
    )

    dev_only = FetchOrigin(url=BASE, into="bench/", files=GOLD.files, splits=("dev",))
    moved = FetchOrigin(
        name="questions", url=BASE.replace("0123", "4567"), into="bench/", files=QUESTIONS.files
    )
    with pytest.raises(LockError) as failure:
        read_lock(target, [dev_only, moved], SPLITS)
    problems = "\n".join(failure.value.problems)
    assert "removed: bench/data/test/gold.jsonl" in problems
    assert (
        "changed: bench/questions/q1.txt (url" in problems
        and "changed: bench/questions/q2.txt (url" in problems
    )

    with pytest.raises(
        LockError, match=r"'questions/\*\.md' matches no file"
    ):  # a glob with nothing locked under it
        read_lock(
            target,
            [
                GOLD,
                QUESTIONS,
                FetchOrigin(name="docs", url=BASE, into="bench/", files=("questions/*.md",)),
            ],
            SPLITS,
        )


def test_missing_and_malformed_locks_are_refused(bench_root: Path, tmp_path: Path) -> None:
    target = tmp_path / "bench.lock"
    assert read_lock(target, [], SPLITS) == ()  # no fetch blocks: no lock needed
    with pytest.raises(LockError, match="bench.lock is missing") as failure:
        read_lock(target, [GOLD], SPLITS)
    assert "procbench data lock bench" in failure.value.hint

    target.write_text("{ not json")
    with pytest.raises(LockError, match="not a readable lock file"):
        read_lock(target, [GOLD], SPLITS)

    lock = write_lock("bench", [GOLD], SPLITS, bench_root)
    lock["files"][0]["sha256"] = "ABC"
    lock["files"][1]["path"] = "../escape.jsonl"
    del lock["files"][1]["size"]
    target.write_text(json.dumps(lock))
    with pytest.raises(LockError, match="is malformed") as failure:
        read_lock(target, [GOLD], SPLITS)
    problems = "\n".join(failure.value.problems)
    assert (
        "files[0] (bench/data/dev/gold.jsonl): sha256 'ABC' is not 64 lowercase hex digits"
        in problems
    )
    assert (
        "files[1] (../escape.jsonl) path '../escape.jsonl' contains '..'" in problems
        and "size None is not a byte count" in problems
    )
    with pytest.raises(LockError, match="is malformed"):
        lock_entries(target)


def test_declarations_only_records_what_the_checker_asked_for(tmp_path: Path) -> None:
    with declarations_only() as found:
        assert read_lock(tmp_path / "absent.lock", [GOLD], SPLITS) == ()
    assert (
        list(found.values())[0].origins == (GOLD,) and list(found.values())[0].task_splits == SPLITS
    )
    with pytest.raises(LockError, match="is missing"):  # outside the block the lock is read again
        read_lock(tmp_path / "absent.lock", [GOLD], SPLITS)
    assert lock_path("specs/openpi.spec") == Path("specs/openpi.lock")


# -- fetching against the lock ------------------------------------------------------------------


def _mirror(loopback: Loopback, specs: tuple[fetching.FetchSpec, ...], root: Path) -> None:
    """Lay the upstream files out as a mirror serves them: <mirror>/<host>/<path>."""
    for spec in specs:
        parts = urlsplit(spec.url)
        _put(loopback.root, parts.netloc + unquote(parts.path), (root / spec.path).read_bytes())


def test_fetch_from_a_mirror_verifies_against_the_lock(
    server: Loopback,  # noqa: F811 - the fixture
    bench_root: Path,
    tmp_path: Path,
) -> None:
    origins = [GOLD, QUESTIONS]
    write_lock("bench", origins, SPLITS, bench_root, tmp_path / "bench.lock")
    specs = read_lock(tmp_path / "bench.lock", origins, SPLITS)
    _mirror(server, specs, bench_root)
    items = [fetching.FetchItem(spec, ("bench",)) for spec in specs]

    report = fetching.fetch_all(
        items, tmp_path / "fetched", cache_dir=tmp_path / "cache", mirror=server.url
    )
    assert report.ok and [r.source for r in report.results] == ["downloaded"] * 4
    for spec in specs:
        assert (tmp_path / "fetched" / spec.path).read_bytes() == (
            bench_root / spec.path
        ).read_bytes()

    # Upstream now serves other bytes of the same size: the lock's digest refuses them.
    served = (
        server.root
        / "raw.example.org/org/bench/0123456789abcdef0123456789abcdef01234567/questions/q1.txt"
    )
    served.write_bytes(b"FIRST QUESTION\n")
    q1 = next(item for item in items if item.spec.path.endswith("q1.txt"))
    with pytest.raises(fetching.IntegrityError) as failure:
        fetching.fetch_file(
            q1.spec, tmp_path / "again", cache_dir=tmp_path / "cache-2", mirror=server.url
        )
    assert f"sha256 {_sha(b'FIRST QUESTION' + bytes([10]))}, expected {q1.spec.sha256}" in str(
        failure.value
    )
    assert not (tmp_path / "again" / q1.spec.path).exists()


# -- the command line and the shipped locks -----------------------------------------------------


def _cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def openpi_copy(tmp_path: Path) -> tuple[Path, Path]:
    """openpi.spec copied beside no lock, and a data root holding the sample OpenPI files."""
    spec_file = tmp_path / "spec" / "openpi.spec"
    spec_file.parent.mkdir()
    shutil.copyfile(PROJECT_ROOT / "specs" / "openpi.spec", spec_file)
    data = tmp_path / "data"
    shutil.copytree(SAMPLE_DATA_ROOT / "openpi", data / "openpi")
    return spec_file, data


def test_cli_writes_a_first_lock_beside_a_spec(openpi_copy: tuple[Path, Path]) -> None:
    spec_file, data = openpi_copy
    unlocked = _cli("data", "lock", "--check", str(spec_file))
    assert unlocked.exit_code == 3 and "openpi.lock is missing" in unlocked.stderr, unlocked.output
    wrote = _cli("data", "lock", str(spec_file), "--data-dir", str(data))
    assert wrote.exit_code == 0 and "wrote" in wrote.stdout, wrote.output
    entries = {e.path: e for e in lock_entries(spec_file.with_suffix(".lock"))}
    assert len(entries) == 6
    assert entries["openpi/data/gold/dev/id_answers.jsonl"].sha256 == _sha(
        (data / "openpi/data/gold/dev/id_answers.jsonl").read_bytes()
    )


def test_cli_relocks_checks_and_names_added_and_missing_files(
    openpi_copy: tuple[Path, Path],
) -> None:
    spec_file, data = openpi_copy
    lock_file = spec_file.with_suffix(".lock")
    shutil.copyfile(
        PROJECT_ROOT / "specs" / "openpi.lock", lock_file
    )  # the real lock: the samples have other digests
    wrote = _cli("data", "lock", str(spec_file), "--data-dir", str(data))
    assert wrote.exit_code == 0, wrote.output
    entries = {e.path: e for e in lock_entries(lock_file)}
    assert len(entries) == 6 and entries["openpi/data/gold/test/id_answers.jsonl"].sha256 == _sha(
        (data / "openpi/data/gold/test/id_answers.jsonl").read_bytes()
    )
    checked = _cli("data", "lock", "--check", str(spec_file))
    assert checked.exit_code == 0 and "ok" in checked.stdout, checked.output

    # The spec now declares one more file: the lock is stale, and locking needs the file.
    text = spec_file.read_text()
    names = ("id_answers", "id_answers_metadata", "id_question_metadata", "id_question")
    files = "[" + ", ".join(f'"data/gold/{{split}}/{name}.jsonl"' for name in names) + "]"
    spec_file.write_text(
        text.replace('into = "openpi/"', f'into = "openpi/"  files = {files}', 1)
    )  # the three it reads, and one more
    stale = _cli("data", "lock", "--check", str(spec_file))
    assert (
        stale.exit_code == 3 and "added: openpi/data/gold/dev/id_question.jsonl" in stale.stderr
    ), stale.output
    (data / "openpi/data/gold/test/id_question.jsonl").unlink()
    missing = _cli("data", "lock", str(spec_file), "--data-dir", str(data))
    assert (
        missing.exit_code == 4
        and "missing: openpi/data/gold/test/id_question.jsonl" in missing.stderr
    ), missing.output
    assert "id_question.jsonl" not in lock_file.read_text()  # the old lock was left alone
    assert _cli("data", "lock", "--check", str(spec_file)).exit_code == 3


def test_every_shipped_lock_is_current_and_canonical() -> None:
    result = _cli("data", "lock", "--check")
    assert result.exit_code == 0, result.output
    locks = sorted((PROJECT_ROOT / "specs").glob("*.lock"))
    # a lock pins what fetch blocks download: every spec with fetch blocks has one, a spec without none (`data lock --check`: "no lock needed")
    fetched = [
        p.stem
        for p in (PROJECT_ROOT / "specs").glob("*.spec")
        if check_file(p, search=[p.parent]).spec.fetch
    ]
    assert sorted(p.stem for p in locks) == sorted(fetched)
    for path in locks:
        assert path.read_text() == lock_text(json.loads(path.read_text()))


def test_every_shipped_lock_matches_the_staged_files(data_root: Path) -> None:
    for path in sorted((PROJECT_ROOT / "specs").glob("*.lock")):
        for entry in lock_entries(path):
            local = data_root / entry.path
            assert (local.stat().st_size, _sha(local.read_bytes())) == (entry.size, entry.sha256), (
                entry.path
            )

"""Syntax tree → typed :class:`procbench.dsl.model.TaskSpec`, or every error found, each with a position.

The pipeline for one file: parse; merge the task it ``extends``; substitute ``params.x`` and
``{x}`` in strings; give every ``match`` block the score block's ``defaults``; bind the task block
against the model's dataclasses (:mod:`procbench.dsl.binding`, one pass that validates and constructs);
expand the written forms (metric families, reported tables, fetch origins + lock file, normaliser
reuse); then resolve every name the spec used against what it declares and what its components'
contracts promise, and check the types that flow between them.  One mistake gives one error.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from pathlib import Path

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import Binder, literal
from procbench.dsl.checker_expand import (
    FILE_ATTRIBUTES,
    REPORTED_SUFFIX,
    RUNTIME_PLACEHOLDERS,
    Substitution,
    apply_match_defaults,
    load_with_extends,
    pop_reported_file,
)
from procbench.dsl.checker_read_data import DataReads
from procbench.dsl.checker_read_report import ReportReads
from procbench.dsl.checker_read_score import ScoreReads
from procbench.dsl.checker_read_similarity import SimilarityReads
from procbench.dsl.checker_fields import LIST_OF_TEXT, TEXT
from procbench.dsl.checker_resolve import resolve
from procbench.dsl.errors import Diagnostic, SpecError
from procbench.dsl.parser import parse, parse_file
from procbench.runners.runtime import registry


@dataclass
class CheckResult:
    spec: m.TaskSpec
    warnings: list[Diagnostic]
    source: str


class _Checker(DataReads, SimilarityReads, ScoreReads, ReportReads):
    """A :class:`Binder` with the language's value shapes (``parse_*``) and expansions (``after_*``), one block's
    readers per module."""


def _reported_beside(path: str, checker: _Checker) -> tuple[_Checker, tuple[m.ReportedRow, ...]]:
    """The reported blocks of a file beside the spec, bound by a checker of their own (its errors name that file)."""
    side = _Checker(path, "", checker.params)
    try:
        side_file = parse_file(path)
    except SpecError as exc:
        side.errors.extend(replace(d, file_text=exc.source) for d in exc.diagnostics)
        return side, ()
    side.source = side_file.source
    tables = []
    for stmt in side_file.body:
        if isinstance(stmt, s.Block) and stmt.type == "reported":
            table = side.bind(m.ReportedTable, stmt, side)
            if table is not None:
                tables.append(table)
        else:
            side.error(
                stmt.span,
                'a reported file holds only `reported "source" { ... }` blocks',
                "the task's other statements belong in its spec",
            )
    return side, side.after_TaskSpec_reported(tuple(tables))


def check_text(source: str, path: str = "<spec>", search: list[Path] | None = None) -> CheckResult:
    """Parse and check spec text; raises :class:`SpecError` listing every error."""
    return _check(parse(source, path), search or [])


def check_file(path: str | Path, search: list[Path] | None = None) -> CheckResult:
    return _check(parse_file(path), search or [])


def _fail(checker: Binder, spec_file: s.SpecFile) -> SpecError:
    # one error per place: a family's three names, or a call's two complaints about one argument, are one mistake there
    errors: list[Diagnostic] = []
    for e in checker.errors:
        if not any((e.path, e.span) == (kept.path, kept.span) for kept in errors):
            errors.append(e)
    return SpecError(
        errors or [Diagnostic(spec_file.path, s.Span(1, 1, 1, 1), "invalid spec")], spec_file.source
    )


def _check(spec_file: s.SpecFile, search: list[Path]) -> CheckResult:
    _load_components_beside(Path(spec_file.path))
    loader = Binder(spec_file.path, spec_file.source)
    introduced: dict[
        str, tuple[s.Span, str, list[str]]
    ] = {}  # params a variant adds to its parent's
    task = load_with_extends(spec_file, loader, search, introduced=introduced)
    if task is None or loader.errors:
        raise _fail(loader, spec_file)
    task, reported_file = pop_reported_file(task)
    params_blocks = task.blocks("params")
    params = {a.name: a.value for a in params_blocks[0].attributes()} if params_blocks else {}
    checker = _Checker(spec_file.path, spec_file.source, params)
    checker.quiet_names = Binder.stray_names(
        m.TaskSpec, task
    )  # `paams { dedup = ... }`: one error, at the block
    checker.warnings.extend(loader.warnings)
    for name, value in params.items():
        if isinstance(value, (s.Ref, s.Call)):
            checker.error(
                value.span,
                f"parameter {name!r} must be a literal value (text, number, true/false, list or object)",
            )
    substitution = Substitution(params, checker)
    task = replace(task, body=substitution.body(task.body))
    task = apply_match_defaults(task, checker)
    if checker.errors:
        raise _fail(checker, spec_file)
    # every similarity block declared, bound or not: a reference to one that has an error stays silent
    checker.similarity_blocks = {
        st.labels[0]
        for st in task.body
        if isinstance(st, s.Block) and st.type == "similarity" and st.labels
    }
    checker.normaliser_blocks = {
        st.labels[0]
        for st in task.body
        if isinstance(st, s.Block) and st.type == "normaliser" and st.labels
    }
    spec = checker.bind(m.TaskSpec, task, checker)
    side = _reported_beside(reported_file, checker) if reported_file else None
    if spec is not None and not checker.errors:
        spec = resolve(replace(spec, path=spec_file.path), checker, side)
    if side is not None:
        checker.errors.extend(side[0].errors)
        checker.warnings.extend(side[0].warnings)
    for name, value in params.items():
        if (
            name not in substitution.used and name in introduced
        ):  # a variant setting a param its parent lacks: a typo, never a no-op
            span, parent, declared = introduced[name]
            close = difflib.get_close_matches(name, declared, n=1)
            checker.error(
                span,
                f"unknown param {name!r} ({parent} declares: {', '.join(declared) or 'none'})",
                (f"did you mean {close[0]!r}? " if close else "")
                + "a variant sets its parent's params; a param of its own must be used (params.x or {x})",
            )
        elif name not in substitution.used:
            checker.warn(
                value.span,
                f"parameter {name!r} is never used",
                "remove it or refer to it as params." + name,
            )
    if checker.errors or spec is None:
        raise _fail(checker, spec_file)
    return CheckResult(spec, checker.warnings, spec_file.source)


def _load_components_beside(spec_path: Path) -> None:
    """The component folders the operator allowed (``--components``, PROCBENCH_COMPONENTS); never the spec's own.

    A ``components/`` folder beside the spec is only noted: a name the spec uses that a file there defines
    is then reported with that file and the flag that allows it (docs/submissions.md, threat model).
    """
    if spec_path.is_file():  # text checked in memory has no folder of its own
        registry.note_folder_beside_spec(spec_path.parent)
    try:
        registry.load_operator_components()
    except (
        registry.ComponentLoadError
    ) as exc:  # the line is in the .py file, not the spec: no source to show
        raise SpecError(
            [
                Diagnostic(
                    p.path or p.origin,
                    s.Span(p.line or 1, p.column or 1, p.line or 1, p.column or 1),
                    p.message,
                    p.hint,
                )
                for p in exc.problems
            ]
        ) from None


__all__ = [
    "FILE_ATTRIBUTES",
    "LIST_OF_TEXT",
    "REPORTED_SUFFIX",
    "RUNTIME_PLACEHOLDERS",
    "TEXT",
    "CheckResult",
    "check_file",
    "check_text",
    "literal",
]

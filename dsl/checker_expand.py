"""Rewrites of the syntax tree before binding: ``extends`` merged, ``params`` substituted, ``match`` defaults given,
files beside the spec read in place (``citation = file(...)``), the task block found."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from procbench.dsl import syntax as s
from procbench.dsl.binding import Binder
from procbench.dsl.errors import SpecError
from procbench.dsl.parser import parse_file

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
RUNTIME_PLACEHOLDERS = ("split",)  # filled in when the task runs, not by params

# ---------------------------------------------------------------------------------------------
# extends, params, defaults: rewrites of the syntax tree before binding


def _merge(
    parent: tuple[s.Attribute | s.Block, ...], child: tuple[s.Attribute | s.Block, ...]
) -> tuple[s.Attribute | s.Block, ...]:
    """Child statements override the parent's: attributes by name, blocks by (type, labels), recursively."""
    out: list[s.Attribute | s.Block] = list(parent)

    def index_of(stmt: s.Attribute | s.Block) -> int | None:
        for i, existing in enumerate(out):
            if (
                isinstance(stmt, s.Attribute)
                and isinstance(existing, s.Attribute)
                and existing.name == stmt.name
            ):
                return i
            if (
                isinstance(stmt, s.Block)
                and isinstance(existing, s.Block)
                and (existing.type, existing.labels) == (stmt.type, stmt.labels)
            ):
                return i
        return None

    for stmt in child:
        i = index_of(stmt)
        if i is None:
            out.append(stmt)
        elif isinstance(stmt, s.Block) and isinstance(inherited := out[i], s.Block):
            out[i] = replace(stmt, body=_merge(inherited.body, stmt.body))
        else:
            out[i] = stmt
    return tuple(out)


class Substitution:
    """``params.x`` → the parameter's value; ``{x}`` in a "string" → its text. Unknown names are errors."""

    def __init__(self, params: dict[str, s.Expr], checker: Binder):
        self.params = params
        self.checker = checker
        self.used: set[str] = set()

    def expr(self, e: s.Expr) -> s.Expr:
        if isinstance(e, s.Ref) and e.parts[0] == "params":
            if len(e.parts) == 2 and e.parts[1] in self.params:
                self.used.add(e.parts[1])
                return self.params[e.parts[1]]
            self.checker.unknown(e.span, "parameter", ".".join(e.parts[1:]), list(self.params))
            return e
        if isinstance(e, s.Str) and not e.long and "{" in e.value:
            return replace(e, value=_PLACEHOLDER.sub(lambda mt: self._placeholder(mt, e), e.value))
        if isinstance(e, s.Call):
            return replace(
                e,
                args=tuple(self.expr(a) for a in e.args),
                kwargs=tuple(replace(k, value=self.expr(k.value)) for k in e.kwargs),
            )
        if isinstance(e, s.ListExpr):
            return replace(e, items=tuple(self.expr(i) for i in e.items))
        if isinstance(e, s.ObjectExpr):
            return replace(e, pairs=tuple(replace(p, value=self.expr(p.value)) for p in e.pairs))
        return e

    def _placeholder(self, match: re.Match[str], e: s.Str) -> str:
        name = match.group(1)
        if name in RUNTIME_PLACEHOLDERS:
            return match.group(0)
        value = self.params.get(name)
        if isinstance(value, (s.Str, s.Num)):
            self.used.add(name)
            return str(value.value)
        column = e.span.column + 1 + match.start()  # the opening quote, then the text
        span = (
            s.Span(e.span.line, column, e.span.line, column + len(match.group(0)))
            if e.span.line == e.span.end_line
            else e.span
        )
        self.checker.unknown(
            span,
            "parameter in {...}",
            name,
            [k for k, v in self.params.items() if isinstance(v, (s.Str, s.Num))]
            + list(RUNTIME_PLACEHOLDERS),
        )
        return match.group(0)

    def body(self, body: tuple[s.Attribute | s.Block, ...]) -> tuple[s.Attribute | s.Block, ...]:
        out: list[s.Attribute | s.Block] = []
        for stmt in body:
            if isinstance(stmt, s.Attribute):
                out.append(replace(stmt, value=self.expr(stmt.value)))
            elif stmt.type in (
                "params",
                "template",
            ):  # templates are Jinja2: their braces are theirs
                out.append(stmt)
            else:
                out.append(replace(stmt, body=self.body(stmt.body)))
        return tuple(out)


def apply_match_defaults(task: s.Block, checker: Binder) -> s.Block:
    """Every ``match`` block of ``score`` gets the attributes of ``score { defaults { ... } }`` it does not set."""
    body = []
    for stmt in task.body:
        if isinstance(stmt, s.Block) and stmt.type == "score":
            defaults = stmt.blocks("defaults")
            if len(defaults) > 1:
                checker.error(defaults[1].span, "a score block has one defaults block")
            if defaults:
                d = defaults[0]
                if d.labels:
                    checker.error(
                        d.span, "a defaults block takes no name", "write `defaults { ... }`"
                    )
                inner: list[s.Attribute | s.Block] = []
                for st in stmt.body:
                    if isinstance(st, s.Block) and st.type == "match":
                        own = {a.name for a in st.attributes()}
                        inherited = tuple(
                            a for a in d.body if isinstance(a, s.Attribute) and a.name not in own
                        )
                        inner.append(replace(st, body=inherited + st.body))
                    elif st is not d and not (isinstance(st, s.Block) and st.type == "defaults"):
                        inner.append(st)
                for st in d.body:
                    if isinstance(st, s.Block):
                        checker.error(
                            st.span, "defaults hold attributes of match blocks, not blocks"
                        )
                stmt = replace(stmt, body=tuple(inner))
        body.append(stmt)
    return replace(task, body=tuple(body))


def _find_parent(name: str, near: Path, search: list[Path]) -> Path | None:
    for folder in [near.parent, *search]:
        candidate = folder / f"{name}.spec"
        if candidate.is_file():
            return candidate
    return None


def _task_block(spec_file: s.SpecFile, checker: Binder) -> s.Block | None:
    tasks = [b for b in spec_file.body if isinstance(b, s.Block) and b.type == "task"]
    for stmt in spec_file.body:
        if not (isinstance(stmt, s.Block) and stmt.type == "task"):
            checker.error(
                stmt.span,
                "only a `task name { ... }` block may appear at the top level of a spec",
                "move this inside the task block",
            )
    if len(tasks) != 1:
        if not tasks and spec_file.body:
            return None  # a misspelt `task`: reported above, once
        span = tasks[1].span if len(tasks) > 1 else s.Span(1, 1, 1, 1)
        checker.error(
            span,
            "a spec file holds exactly one task block" if tasks else "the spec has no task block",
            "write `task name { ... }`",
        )
        return None
    return tasks[0]


# ---------------------------------------------------------------------------------------------
# files beside the spec: `citation = file("openpi.bib")`, `reported = file("openpi.reported")`

FILE_ATTRIBUTES = (
    "description",
    "citation",
    "reported",
)  # the task attributes a file beside the spec may hold
REPORTED_SUFFIX = ".reported"  # by convention; `procbench fmt` formats these beside the specs


def _beside_files(task: s.Block, spec_path: Path, search: list[Path], binder: Binder) -> s.Block:
    """The task's ``name = file("...")`` attributes, resolved in the folder of the file that wrote them.

    Done before ``extends`` merges a parent, so a parent's files are found beside the parent.
    ``description`` and ``citation`` take the file's text; ``reported`` keeps the call with the
    file's path, bound by :func:`_reported_beside` under that file's name.  A file that is not there
    is a warning, as a missing lock is: a spec copied elsewhere to try something out still checks.
    """
    body: list[s.Attribute | s.Block] = []
    for stmt in task.body:
        if (
            isinstance(stmt, s.Attribute)
            and isinstance(stmt.value, s.Call)
            and stmt.value.callee.dotted == "file"
        ):
            resolved = _file_value(stmt, stmt.value, spec_path, search, binder)
            if resolved is not None:
                body.append(resolved)
        else:
            body.append(stmt)
    return replace(task, body=tuple(body))


def _file_value(
    stmt: s.Attribute, call: s.Call, spec_path: Path, search: list[Path], binder: Binder
) -> s.Attribute | None:
    usage = (
        'e.g. citation = file("openpi.bib") or reported = file("openpi.reported"), beside the spec'
    )
    if stmt.name not in FILE_ATTRIBUTES:
        binder.error(
            call.span,
            f"{stmt.name} cannot be read from a file",
            f"file() gives the text of {' and '.join(FILE_ATTRIBUTES[:2])}, and the rows of reported",
        )
        return None
    if len(call.args) != 1 or call.kwargs or not isinstance(call.args[0], s.Str):
        binder.error(call.span, "file() takes one file name in double quotes", usage)
        return None
    arg = call.args[0]
    name = arg.value
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        binder.error(
            arg.span,
            f"file() names a file in the spec's folder, got {name!r}",
            "a plain file name: no folders, no '..'",
        )
        return None
    found = next(
        (folder / name for folder in [spec_path.parent, *search] if (folder / name).is_file()), None
    )
    if found is None:
        left_out = "its paper rows are" if stmt.name == "reported" else f"the {stmt.name} is"
        binder.warn(
            arg.span,
            f"no file {name!r} beside the spec: {left_out} left out",
            f"put {name} in the spec's folder",
        )
        return None
    if stmt.name == "reported":
        return replace(stmt, value=replace(call, args=(replace(arg, value=str(found)),)))
    try:
        text = found.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        binder.error(arg.span, f"cannot read {name!r}: {exc}", "save it as UTF-8 text")
        return None
    return replace(
        stmt, value=s.Str(text, call.span, long=True)
    )  # long: its braces are not {param}s


def pop_reported_file(task: s.Block) -> tuple[s.Block, str | None]:
    """The task without its ``reported = file(...)`` attribute, and that file's path."""
    for stmt in task.body:
        if (
            isinstance(stmt, s.Attribute)
            and stmt.name == "reported"
            and isinstance(stmt.value, s.Call)
            and stmt.value.callee.dotted == "file"
            and stmt.value.args
            and isinstance(path := stmt.value.args[0], s.Str)  # as file() checked it
        ):
            return replace(task, body=tuple(st for st in task.body if st is not stmt)), path.value
    return task, None


def load_with_extends(
    spec_file: s.SpecFile,
    checker: Binder,
    search: list[Path],
    chain: tuple[str, ...] = (),
    introduced: dict[str, tuple[s.Span, str, list[str]]] | None = None,
) -> s.Block | None:
    """The task block with its parents merged in; ``introduced`` collects the params a variant adds to its parent's."""
    task = _task_block(spec_file, checker)
    if task is None:
        return None
    here = Path(spec_file.path)
    if here.suffix == ".spec" and here.is_file() and task.labels and task.labels[0] != here.stem:
        # `extends`, `procbench score NAME` and the board find a task by its file's name
        span = task.label_spans[0] if task.label_spans else task.span
        checker.error(
            span,
            f"task {task.labels[0]!r} is written in {here.name}: a task is named after its file",
            f"write `task {here.stem} {{ ... }}`, or rename the file to {task.labels[0]}.spec",
        )
    task = _beside_files(task, here, search, checker)
    extends = task.attribute("extends")
    if extends is None:
        return task
    if isinstance(extends.value, s.Str):
        checker.error(
            extends.value.span,
            "extends names a task: write it without quotes",
            f"extends = {extends.value.value}",
        )
        return None
    if not isinstance(extends.value, s.Ref) or len(extends.value.parts) != 1:
        checker.error(extends.value.span, "extends names another task", "e.g. extends = openpi")
        return None
    parent_name = extends.value.parts[0]
    own = task.labels[0] if task.labels else "?"
    if parent_name in chain or parent_name == own:
        checker.error(
            extends.value.span,
            f"extends cycle: {' -> '.join([*chain, own, parent_name])}",
            "a task cannot extend itself, directly or through others",
        )
        return None
    parent_path = _find_parent(parent_name, Path(spec_file.path), search)
    if parent_path is None:
        beside = [p.stem for p in Path(spec_file.path).parent.glob("*.spec")]
        checker.unknown(extends.value.span, "task to extend", parent_name, beside)
        return None
    try:
        parent_file = parse_file(parent_path)
    except SpecError as exc:
        checker.errors.extend(exc.diagnostics)
        return None
    parent_checker = Binder(str(parent_path), parent_file.source)
    parent = load_with_extends(parent_file, parent_checker, search, (*chain, own))
    checker.errors.extend(parent_checker.errors)
    checker.warnings.extend(parent_checker.warnings)
    if parent is None:
        return None
    if introduced is not None:
        declared = [a.name for b in parent.blocks("params") for a in b.attributes()]
        for a in (
            a for b in task.blocks("params") for a in b.attributes() if a.name not in declared
        ):
            introduced[a.name] = (a.span, parent_name, declared)
    body = _merge(
        tuple(
            st for st in parent.body if not (isinstance(st, s.Attribute) and st.name == "extends")
        ),
        task.body,
    )
    return replace(task, body=body)

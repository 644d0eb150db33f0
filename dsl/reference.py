"""The component reference, generated from the registry (signatures, contracts and doc lines), and the
block reference, generated from the spec model (each block's attributes and their roles).

One source for ``procbench components`` and for the two sections of ``docs/language.md`` between the
markers below, so the documentation cannot drift from the code (tests compare them; ``make docs``
rewrites the sections)::

    python -m procbench.dsl.reference --write     # regenerate the section in docs/language.md
    python -m procbench.dsl.reference --check     # exit 1 when it is out of date
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from procbench.dsl import model
from procbench.runners.runtime import registry
from procbench.runners.runtime.paths import PROJECT_ROOT

BEGIN = "<!-- components:begin -->"
END = "<!-- components:end -->"
BLOCKS_BEGIN = "<!-- blocks:begin -->"
BLOCKS_END = "<!-- blocks:end -->"
DOC_PATH = PROJECT_ROOT / "docs" / "language.md"  # a checkout's docs (not in the wheel)
REGENERATE = "make docs"


# ---------------------------------------------------------------------------------------------
# one component, as a spec writer sees it


def type_spelling(annotation: Any) -> str:
    """A parameter's type in the spelling of spec types (``list(str)``, ``optional(int)``, ``enum("a", "b")``)."""
    if annotation in registry.NAME_PARAMS:
        return registry.NAME_PARAMS[annotation]
    if annotation is Any or annotation is inspect.Parameter.empty:
        return "any"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return "enum(" + ", ".join(json.dumps(a) for a in args) + ")"
    if origin in (list, tuple, Sequence):
        return f"list({type_spelling(args[0]) if args else 'any'})"
    if origin is dict or annotation is dict:
        return "object"
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        present = [a for a in args if a is not type(None)]
        spelled = " | ".join(type_spelling(a) for a in present)
        return f"optional({spelled})" if len(present) < len(args) else spelled
    return getattr(annotation, "__name__", str(annotation))


def value_spelling(value: Any, annotation: Any = None) -> str:
    """A default value as a spec writes it (``true``, ``"porter"``, ``[", "]``; a name param's default bare)."""
    if annotation in registry.NAME_PARAMS and isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_spelling(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + "  ".join(f"{k} = {value_spelling(v)}" for k, v in value.items()) + " }"
    return repr(value)


def param_spelling(param: registry.Param) -> str:
    """``name: type`` (required), ``name: type = default``, or ``name: optional(type)`` (unset by default)."""
    text = f"{param.name}: {type_spelling(param.type)}"
    if param.required or param.default is None:
        return text
    return f"{text} = {value_spelling(param.default, param.type)}"


def signature(comp: registry.Component) -> str:
    """``name(param: type = default, ...)``: how a spec calls the component."""
    return f"{comp.name}({', '.join(param_spelling(p) for p in comp.params)})"


def first_paragraph(doc: str) -> str:
    """The docstring's first paragraph on one line, reStructuredText literals and roles as Markdown code."""
    paragraph = doc.strip().split("\n\n", 1)[0] if doc.strip() else ""
    text = " ".join(line.strip() for line in paragraph.splitlines()).replace("``", "`")
    return re.sub(r":[a-z]+:(`[^`]+`)", r"\1", text)  # :mod:`x` -> `x`


def describe(comp: registry.Component) -> dict[str, Any]:
    """A JSON-ready description (``procbench components --json``)."""
    params = []
    for p in comp.params:
        entry: dict[str, Any] = {
            "name": p.name,
            "type": type_spelling(p.type),
            "required": p.required,
        }
        if not p.required:
            entry["default"] = p.default if _is_json(p.default) else repr(p.default)
        params.append(entry)
    return {
        "kind": comp.kind,
        "name": comp.name,
        "signature": signature(comp),
        "params": params,
        "contract": comp.contract.describe(),
        "version": comp.version,
        "origin": comp.origin,
        "doc": first_paragraph(comp.doc),
    }


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


# ---------------------------------------------------------------------------------------------
# the generated section of docs/language.md


def render_reference(components: Sequence[registry.Component] | None = None) -> str:
    """The Markdown between the markers: every built-in component, per kind, in the order of KINDS.

    Only built-ins: an installed plugin or a test's components must not change the shipped docs.
    """
    shipped = [
        c
        for c in (registry.all_components() if components is None else components)
        if c.origin == registry.BUILTIN_ORIGIN
    ]
    out = [
        f"<!-- Generated from the component registry by `{REGENERATE}` (python -m procbench.dsl.reference --write): edit the docstrings, not this text. -->",
        "",
        "### Component reference",
        "",
        "Every shipped component, as `procbench components` lists it. A parameter reads `name: type = default`;",
        "one without a default is required, an `optional(...)` one is unset unless given. Parameters typed",
        "`gold field`, `prediction field` or `per-item value` take a bare name that the spec declares.",
        "The contract says what a component takes and gives, the fields and labels it provides or needs,",
        "and the values it emits.",
    ]
    for kind in registry.KINDS:
        of_kind = sorted((c for c in shipped if c.kind == kind), key=lambda c: c.name)
        if not of_kind:
            continue
        out += ["", f"#### {kind}", ""]
        for comp in of_kind:
            doc = first_paragraph(comp.doc)
            out.append(
                f"- `{signature(comp)}` (version {comp.version})"
                + (f": {_markdown(doc)}" if doc else "")
            )
            out += [f"  - {contract_line(line)}" for line in comp.contract.describe()]
            if comp.preset_of is not None:
                name, arguments = comp.preset_of
                out.append(
                    f"  - preset of `{name}({', '.join(f'{k} = {json.dumps(v)}' for k, v in arguments)})`: checked and fingerprinted as that call"
                )
    return "\n".join(out) + "\n"


MAX_NAMES = (
    16  # a contract line listing more names than this is cut in the docs (the CLI lists all)
)


def contract_line(line: str) -> str:
    """A contract line for the docs: on one line, a very long list of names cut short."""
    title, sep, rest = " ".join(line.split()).partition(": ")
    names = rest.split(", ") if sep else []
    if len(names) > MAX_NAMES:
        rest = (
            ", ".join(names[:MAX_NAMES])
            + f" and {len(names) - MAX_NAMES} more (`procbench components` lists them)"
        )
    return _markdown(f"{title}{sep}{rest}")


def _markdown(text: str) -> str:
    """Text safe in Markdown: outside `code`, ``*`` and a ``<`` that would open a tag are escaped (``q<n>_tp``)."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(
        part
        if part.startswith("`")
        else re.sub(r"<(?=[A-Za-z/!?])", "&lt;", part).replace("*", "\\*")
        for part in parts
    )


# ---------------------------------------------------------------------------------------------
# the block reference: every block of the language, its attributes and their roles (dsl/model.py)

# Blocks whose written form is another class than the one the checked spec keeps (procbench.dsl.binding.WRITTEN_AS).
_WRITTEN_AS = {
    "metric": model.MetricBlock,
    "reported": model.ReportedTable,
    "fetch": model.FetchBlock,
}


def _block_class(cls: type, f: Any) -> type:
    """The model class of a nested block field (its written form where that differs)."""
    if f.metadata["tag"] in _WRITTEN_AS:
        return _WRITTEN_AS[f.metadata["tag"]]
    hint = typing.get_type_hints(cls)[f.name]
    inner = [a for a in typing.get_args(hint) if a is not type(None) and a is not Ellipsis]
    return inner[0] if inner else hint


def blocks_of(cls: type = model.TaskSpec, path: str = "task") -> list[tuple[str, type]]:
    """Every block of the language under ``cls`` (depth first, in declaration order): (path, class)."""
    out = [(path, cls)]
    for f in dataclasses.fields(cls):
        if f.metadata.get("syntax") in ("block", "blocks"):
            out += blocks_of(_block_class(cls, f), f"{path} > {f.metadata['tag']}")
    return out


def _label(cls: type) -> str:
    """How a block's label is written: ``<name>`` (a declaration), ``"<text>"``, or nothing."""
    label = next((f for f in dataclasses.fields(cls) if f.metadata.get("syntax") == "label"), None)
    if label is None:
        return ""
    spelled = "<name>" if label.metadata.get("name") else '"<text>"'
    return f" [{spelled}]" if label.metadata.get("optional") else f" {spelled}"


def _written(f: Any, inner: type | None = None) -> str:
    """How an attribute is written, in a few words."""
    meta = f.metadata
    syntax = meta.get("syntax")
    if syntax == "label":
        return "the block's label" + (" (optional)" if meta.get("optional") else "")
    if syntax == "attr":
        key = meta.get("key") or f.name
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        return f"`{key} = ...`" + (" (required)" if required else "")
    if syntax == "block":
        return f"`{meta['tag']} {{ ... }}`" + (" (required)" if meta.get("required") else "")
    if syntax == "blocks":
        return f"`{meta['tag']}{_label(inner) if inner else ''} {{ ... }}`, repeated"
    if syntax == "entries":
        return f"`{meta.get('tag') or f.name} {{ name = value ... }}`"
    return "filled in by `check`"


def render_blocks() -> str:
    """The Markdown between the block markers: the roles, then every block's attributes with their role."""
    out = [
        f"<!-- Generated from dsl/model.py by `{REGENERATE}` (python -m procbench.dsl.reference --write): edit the model, not this text. -->",
        "",
        "### Block reference",
        "",
        "Every attribute of the model declares its role (`dsl/model.py`, `ROLES`); the fingerprint keeps exactly",
        "the attributes whose role is fingerprinted, and the board and the exports read a metric's display and",
        "ranking settings from the spec last registered under its fingerprint. A model attribute without a role",
        "is refused (tests/test_field_roles.py).",
        "",
        "| role | fingerprinted | what it is |",
        "| --- | --- | --- |",
    ]
    out += [
        f"| {r.name} | {'yes' if r.fingerprinted else 'no'} | {_markdown(r.meaning)} |"
        for r in model.ROLES.values()
    ]
    for path, cls in blocks_of():
        out += ["", f"#### {path}", ""]
        roles = model.field_roles(cls) or {}
        for f in dataclasses.fields(cls):
            if f.metadata.get("syntax") in (None, "where"):
                continue
            doc = f.metadata.get("doc") or ""
            inner = _block_class(cls, f) if f.metadata["syntax"] == "blocks" else None
            out.append(
                f"- `{f.name}` · {roles[f.name]} · {_written(f, inner)}"
                + (f": {_markdown(doc)}" if doc else "")
            )
    return "\n".join(out) + "\n"


def section_of(text: str, begin: str = BEGIN, end: str = END) -> str | None:
    """What lies between the markers (None when they are missing)."""
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        return None
    return text[start + len(begin) : stop].strip("\n") + "\n"


def with_section(text: str, section: str, begin: str = BEGIN, end: str = END) -> str:
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ValueError(
            f"{begin} ... {end} markers not found: put them where the generated reference belongs"
        )
    return text[: start + len(begin)] + "\n" + section + text[stop:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m procbench.dsl.reference",
        description="Generate the component and block references in docs/language.md.",
    )
    parser.add_argument(
        "--write", action="store_true", help="rewrite the section between the markers"
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when the section is out of date"
    )
    parser.add_argument(
        "--doc", type=Path, default=DOC_PATH, help="the Markdown file (default: docs/language.md)"
    )
    args = parser.parse_args(argv)
    problems = registry.load_problems()
    if problems:  # a broken module would silently drop its components from the docs
        print("\n".join(p.render() for p in problems), file=sys.stderr)
        return 1
    section, block_section = render_reference(), render_blocks()
    if not (args.write or args.check):
        sys.stdout.write(section + "\n" + block_section)
        return 0
    text = args.doc.read_text(encoding="utf-8")
    updated = with_section(text, section)
    if section_of(updated, BLOCKS_BEGIN, BLOCKS_END) is not None:  # (docs/language.md has both)
        updated = with_section(updated, block_section, begin=BLOCKS_BEGIN, end=BLOCKS_END)
    if args.check:
        if updated != text:
            print(
                f"{args.doc}: the component or block reference is out of date; run `{REGENERATE}`",
                file=sys.stderr,
            )
            return 1
        return 0
    if updated != text:
        args.doc.write_text(updated, encoding="utf-8")
        print(f"updated the component and block references in {args.doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

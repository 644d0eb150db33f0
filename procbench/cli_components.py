"""``procbench components``: every registered component with its signature, contract, version and origin."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from procbench.exit_codes import EXIT_FINDINGS, EXIT_USAGE


def components(
    kind: Annotated[
        Optional[str],
        typer.Option(
            "--kind",
            help="only this kind (reader, predictions, scorer, aggregator, normaliser, similarity, ...)",
        ),
    ] = None,
    spec_dir: Annotated[
        Optional[Path],
        typer.Option(
            "--spec-dir",
            help="also import and list the components in SPEC_DIR/components/ (you name it: you trust it)",
        ),
    ] = None,
    folders: Annotated[
        Optional[list[Path]],
        typer.Option(
            "--components",
            help="also import and list the component modules in this folder (as PROCBENCH_COMPONENTS does)",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="print one JSON object: components and load problems")
    ] = False,
) -> None:
    """List components: kind, name, signature, contract, version, origin and the first paragraph of the doc.

    Exits 1 when an entry point or components file failed to load (the problems are printed too).
    """
    from procbench.dsl.reference import describe, signature
    from procbench.runners.runtime import registry

    if kind is not None and kind not in registry.KINDS:
        close = difflib.get_close_matches(kind, registry.KINDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        typer.echo(
            f"error: unknown kind {kind!r}{hint}\n  hint: kinds are {', '.join(registry.KINDS)}",
            err=True,
        )
        raise typer.Exit(EXIT_USAGE)
    problems = list(registry.load_problems())
    # only folders the operator names here or in PROCBENCH_COMPONENTS are imported (docs/submissions.md, threat model)
    if spec_dir is not None or folders:
        registry.allow_folders(
            [*([spec_dir / "components"] if spec_dir is not None else []), *(folders or [])]
        )
    try:
        registry.load_operator_components()
    except registry.ComponentLoadError as exc:
        problems.extend(exc.problems)
    shown = [c for c in registry.all_components() if kind is None or c.kind == kind]
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "components": [describe(c) for c in shown],
                    "problems": [p.render() for p in problems],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        for comp in shown:
            info = describe(comp)
            typer.echo(f"{comp.kind} {comp.name}  (version {comp.version}, {comp.origin})")
            typer.echo(f"  {signature(comp)}")
            for line in info["contract"]:
                typer.echo(f"  {line}")
            if info["doc"]:
                typer.echo(f"  {info['doc']}")
            typer.echo("")
        for problem in problems:
            typer.echo(problem.render(), err=True)
    if problems:
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("components")(components)

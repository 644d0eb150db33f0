"""``procbench score --partial``: the CLI side of partial scoring (procbench.partial does the work)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def score_partial_cli(
    task: str,
    split: str,
    predictions: Path,
    data_root: Path,
    metadata: dict[str, Any],
    as_json: bool,
    data_kind: str = "",
) -> int:
    """``procbench score --partial``: print the metrics over the scored items and the coverage; returns the exit status."""
    import typer

    from procbench.dsl.errors import SpecError
    from procbench.api import score
    from procbench.exit_codes import EXIT_DATA_MISSING, EXIT_INVALID_PREDICTIONS, EXIT_SPEC_ERROR
    from procbench.runners.runtime._types import InvalidPredictions

    try:
        result = score(
            task, predictions, split=split, data_dir=data_root, metadata=metadata, partial=True
        )
    except InvalidPredictions as exc:
        typer.echo(exc.render(), err=True)
        return EXIT_INVALID_PREDICTIONS
    except FileNotFoundError as exc:
        typer.echo(
            f"error: missing data: {exc}\n  hint: point --data-dir or PROCBENCH_DATA at the data root",
            err=True,
        )
        return EXIT_DATA_MISSING
    except (
        SpecError
    ) as exc:  # DataRefused: what check --data refuses about the split, as it says it
        typer.echo(str(exc), err=True)
        return EXIT_SPEC_ERROR
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        return EXIT_INVALID_PREDICTIONS
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        data = result.to_dict()
        data.pop("items")
        if data_kind:  # what the gold is, as a full run's --json says (issue #29)
            data["data_kind"] = data_kind
        typer.echo(json.dumps(data, indent=2))
        return 0
    coverage = result.coverage
    assert coverage is not None
    share = f"{coverage.scored} of {coverage.total} items ({coverage.fraction:.1%})"
    typer.echo(
        f"{result.task} / {result.split}: PARTIAL, {share}  (fingerprint {result.fingerprint[:12]})"
    )
    for name, value in result.metrics.items():
        typer.echo(f"  {name:<24} {value:.6f}")
    return 0

"""The procbench spec language: grammar, parser, typed model, checker and compiler."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsl.checker import CheckResult, check_file, check_text
    from dsl.compiler import compile_spec, explain
    from dsl.errors import Diagnostic, SpecError
    from dsl.model import TaskSpec
    from dsl.parser import parse, parse_file

__all__ = ["CheckResult", "Diagnostic", "SpecError", "TaskSpec", "check_file", "check_text", "compile_spec", "explain", "parse", "parse_file"]

# Imported on first use (PEP 562): a command that takes a checked spec from the cache (dsl.cache) or only
# needs an error class should not import the parser (Lark) and the compiler (the registry, NumPy).
_HOMES = {
    "CheckResult": "dsl.checker", "check_file": "dsl.checker", "check_text": "dsl.checker",
    "compile_spec": "dsl.compiler", "explain": "dsl.compiler",
    "Diagnostic": "dsl.errors", "SpecError": "dsl.errors",
    "TaskSpec": "dsl.model",
    "parse": "dsl.parser", "parse_file": "dsl.parser",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'dsl' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)

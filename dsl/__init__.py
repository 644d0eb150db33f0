"""The procbench spec language: grammar, parser, typed model, checker and compiler."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from procbench.dsl.checker import CheckResult, check_file, check_text
    from procbench.dsl.compiler import compile_spec, explain
    from procbench.dsl.errors import Diagnostic, SpecError
    from procbench.dsl.model import TaskSpec
    from procbench.dsl.parser import parse, parse_file

__all__ = [
    "CheckResult",
    "Diagnostic",
    "SpecError",
    "TaskSpec",
    "check_file",
    "check_text",
    "compile_spec",
    "explain",
    "parse",
    "parse_file",
]

# Imported on first use (PEP 562): a command that takes a checked spec from the cache (procbench.dsl.cache) or only
# needs an error class should not import the parser (Lark) and the compiler (the registry, NumPy).
_HOMES = {
    "CheckResult": "procbench.dsl.checker",
    "check_file": "procbench.dsl.checker",
    "check_text": "procbench.dsl.checker",
    "compile_spec": "procbench.dsl.compiler",
    "explain": "procbench.dsl.compiler",
    "Diagnostic": "procbench.dsl.errors",
    "SpecError": "procbench.dsl.errors",
    "TaskSpec": "procbench.dsl.model",
    "parse": "procbench.dsl.parser",
    "parse_file": "procbench.dsl.parser",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'dsl' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)

"""The procbench spec language: grammar, parser, typed model, checker and compiler."""

from dsl.checker import CheckResult, check_file, check_text
from dsl.compiler import compile_spec, explain
from dsl.errors import Diagnostic, SpecError
from dsl.model import TaskSpec
from dsl.parser import parse, parse_file

__all__ = ["CheckResult", "Diagnostic", "SpecError", "TaskSpec", "check_file", "check_text", "compile_spec", "explain", "parse", "parse_file"]

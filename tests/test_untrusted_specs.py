"""Specs are untrusted input: the parser's limits (size, nesting, number literals) refuse hostile files with a
spec error at the offending character, in bounded memory and time, never a traceback (issue #17)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procbench.dsl import SpecError, parse, parse_file
from procbench.dsl.parser import MAX_NESTING, MAX_NUMBER_CHARS, MAX_SPEC_BYTES
from procbench.paths import PROJECT_ROOT

# each kind of nesting: its opener, where the bracket lies in it, the innermost value, its closer
OPENERS = {
    "list": ("[", 0, "", "]"),
    "call": ("f(", 1, "", ")"),
    "object": ("{a = ", 0, "1", "}"),
    "block": ("b {", 2, "y = 1", "}"),
}


def _nested(kind: str, depth: int) -> tuple[str, int]:
    """A spec whose value nests ``depth`` levels of ``kind``; and the column of the first opener."""
    opener, _, inner, closer = OPENERS[kind]
    prefix = "  " if kind == "block" else "  x = "
    return 'task "t" {\n' + prefix + opener * depth + inner + closer * depth + "\n}\n", len(
        prefix
    ) + 1


def _error(source: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        parse(source, "hostile.spec")
    return info.value


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(OPENERS)), depth=st.integers(MAX_NESTING + 1, 100_000))
def test_deep_nesting_is_a_spec_error_at_the_bracket_past_the_limit(kind: str, depth: int) -> None:
    opener, _, _, closer = OPENERS[kind]
    depth = min(
        depth, (MAX_SPEC_BYTES - 100) // (len(opener) + len(closer))
    )  # under the size limit, which is checked first
    source, first = _nested(kind, depth)
    start = time.perf_counter()
    error = _error(source)
    assert time.perf_counter() - start < 5
    diagnostic = error.first
    assert "nesting too deep" in diagnostic.message
    # the outer `task {` is one level, so the opener that goes past the limit is number MAX_NESTING of the value's
    opener, offset, _, _ = OPENERS[kind]
    assert (diagnostic.span.line, diagnostic.span.column) == (
        2,
        first + (MAX_NESTING - 1) * len(opener) + offset,
    )
    assert str(error).startswith(
        f"hostile.spec:2:{diagnostic.span.column}: error: nesting too deep"
    )
    assert (
        len(str(error)) < 1000
    )  # the offending line is shown as a window around the caret, not whole


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(["list", "call", "object"]), depth=st.integers(1, MAX_NESTING - 1))
def test_nesting_within_the_limit_parses(kind: str, depth: int) -> None:
    source, _ = _nested(kind, depth)
    parse(source, "deep.spec")


@settings(max_examples=30, deadline=None)
@given(
    brackets=st.text(alphabet="[](){}", min_size=MAX_NESTING + 1, max_size=5000),
    where=st.sampled_from(["string", "long string", "comment"]),
)
def test_brackets_inside_strings_and_comments_do_not_count(brackets: str, where: str) -> None:
    text = "[" * (MAX_NESTING + 1) + brackets
    value = {"string": f'"{text}"', "long string": f'"""{text}"""', "comment": f"1 # {text}"}[where]
    tree = parse(f'task "t" {{\n  x = {value}\n}}\n', "ok.spec")
    assert tree.body[0].body[0].name == "x"


@settings(max_examples=30, deadline=None)
@given(
    digits=st.integers(MAX_NUMBER_CHARS + 1, 20_000),
    shape=st.sampled_from(["{}", "-{}", "{}.5", "1.{}", "1e{}"]),
)
def test_long_number_literals_are_a_spec_error_at_the_number(digits: int, shape: str) -> None:
    number = shape.format("7" * digits)
    error = _error(f'task "t" {{\n  x = {number}\n}}\n')
    assert "number literal too long" in error.first.message
    assert (error.first.span.line, error.first.span.column) == (2, 7)


@settings(max_examples=30, deadline=None)
@given(
    number=st.one_of(
        st.integers(-(10**38), 10**38).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
    )
)
def test_numbers_within_the_limit_keep_their_value(number: str) -> None:
    tree = parse(f'task "t" {{\n  x = {number}\n}}\n', "ok.spec")
    value = tree.body[0].body[0].value.value
    assert value == (float(number) if any(c in number for c in ".eE") else int(number))


@pytest.mark.parametrize("number", ["1e400", "-1e999", "9" * 30 + "e300"])
def test_numbers_out_of_float_range_are_a_spec_error(number: str) -> None:
    assert _error(f'task "t" {{ x = {number} }}').first.message == "number out of range"


def test_a_spec_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.spec"
    path.write_text('task "t" { x = "' + "a" * MAX_SPEC_BYTES + '" }\n', encoding="utf-8")
    with pytest.raises(SpecError) as info:
        parse_file(path)
    assert str(info.value).startswith(f"{path}:1:1: error: spec file too large")
    with pytest.raises(SpecError, match="spec file too large"):
        parse(path.read_text(encoding="utf-8"), "huge.spec")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_parse_file_reads_at_most_the_limit() -> None:
    """An endless file (a device, a FIFO) is refused after MAX_SPEC_BYTES + 1 bytes, not read to the end."""
    with pytest.raises(SpecError, match="spec file too large"):
        parse_file("/dev/zero")


@settings(max_examples=20, deadline=None)
@given(body=st.sampled_from(["a", '\\"', "\\\\", "é"]), length=st.integers(1_000, 100_000))
def test_an_unterminated_string_is_refused_in_linear_time(body: str, length: int) -> None:
    """The string terminal is possessive: an unclosed string costs one pass, not a backtracking search."""
    start = time.perf_counter()
    error = _error('task "t" {\n  x = "' + body * length + "\n}\n")
    assert time.perf_counter() - start < 2
    assert error.first.message == "unterminated string"
    assert (error.first.span.line, error.first.span.column) == (2, 7)


def test_a_long_string_parses_in_bounded_memory() -> None:
    """A string just under the size limit used to cost ~380 bytes of regex state per character (a 30 MB string:
    11 GB); now the lexer's memory does not grow with it. Measured in a fresh interpreter (peak RSS)."""
    # VmHWM, the child's own peak: ru_maxrss would start at the forking pytest worker's peak (Linux keeps it
    # across exec), so in a large worker both readings would be the worker's and the growth 0 whatever happened.
    code = (
        "def peak():\n"
        "    return int(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
        "from procbench.dsl.parser import parse, MAX_SPEC_BYTES\n"
        "parse('task \"t\" { x = 1 }')\n"
        "before = peak()\n"
        "for text in ('\"' + 'a' * (MAX_SPEC_BYTES - 100) + '\"', '\"\"\"' + 'a' * (MAX_SPEC_BYTES - 100) + '\"\"\"'):\n"
        "    tree = parse('task \"t\" { x = ' + text + ' }')\n"
        "print(peak() - before)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    grown_kib = int(out.stdout.strip())
    assert grown_kib < 40 * 1024, (
        f"parsing a {MAX_SPEC_BYTES // 1024} KiB string grew the process by {grown_kib} KiB"
    )


@pytest.mark.parametrize(
    "text",
    [
        'task "t" {\n  x = ' + "9" * 5000 + "\n}\n",
        'task "t" {\n  x = ' + "[" * 100_000 + "]" * 100_000 + "\n}\n",
        'task "t" {\n  x = ' + "f(" * 20_000 + ")" * 20_000 + "\n}\n",
    ],
    ids=["5000-digit integer", "100000-deep list", "20000-deep call"],
)
def test_check_exits_3_with_a_position(tmp_path: Path, text: str) -> None:
    """The cases from issue #17 that gave tracebacks: `procbench check` reports a spec error (exit 3)."""
    path = tmp_path / "hostile.spec"
    path.write_text(text, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "procbench.cli", "check", str(path)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 3, out.stderr[-2000:]
    assert f"{path}:2:" in out.stderr and "Traceback" not in out.stderr


# ---------------------------------------------------------------------------------------------
# `procbench export evaluate`: spec strings enter generated Python as literals only

# one line, so that it closes and reopens both the module's and the class's docstring of the old template
HOSTILE_TITLE = (
    'x"""; __import__("pathlib").Path(__import__("os").environ["MARKER"]).write_text("ran"); """'
)
# stand-ins for the packages the module imports, so that importing it runs the module's own top level only
STUBS = (
    "import sys, types\n"
    "evaluate = types.ModuleType('evaluate'); evaluate.Metric = object; evaluate.MetricInfo = dict\n"
    "sys.modules['evaluate'] = evaluate; sys.modules['datasets'] = types.ModuleType('datasets')\n"
    "import importlib.util\n"
    "spec = importlib.util.spec_from_file_location('exported', sys.argv[1])\n"
    "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
    "print(module.__doc__)\n"
)


def test_a_hostile_title_does_not_run_when_the_exported_module_is_imported(tmp_path: Path) -> None:
    from procbench.export.evaluate_module import write_module
    from procbench.paths import SPECS_DIR

    source = (SPECS_DIR / "paradise-tip.spec").read_text(encoding="utf-8")
    hostile = source.replace('"PARADISE: tip inference"', json.dumps(HOSTILE_TITLE), 1)
    assert hostile != source
    spec_file = tmp_path / "specs" / "paradise-tip.spec"
    spec_file.parent.mkdir()
    spec_file.write_text(hostile, encoding="utf-8")
    module = write_module(str(spec_file), tmp_path / "out")
    marker = tmp_path / "marker"
    run = subprocess.run(
        [sys.executable, "-c", STUBS, str(module.script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MARKER": str(marker)},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert not marker.exists(), "importing the exported module ran code from the spec's title"
    assert run.stdout.startswith(HOSTILE_TITLE + ": procbench's official-scorer")


@settings(max_examples=50, deadline=None)
@given(
    title=st.text(min_size=1, max_size=60),
    description=st.text(max_size=60),
    url=st.text(max_size=30),
)
def test_every_spec_string_in_the_exported_module_is_a_literal(
    title: str, description: str, url: str
) -> None:
    """Whatever a spec's texts hold (quotes, backslashes, newlines, surrogate-free unicode), the module is valid
    Python whose docstrings and constants are those texts, and its only statements are the generated ones."""
    import ast
    import dataclasses

    from procbench.export.evaluate_module import render

    spec, runner = _paradise()
    spec = dataclasses.replace(spec, title=title, description=description, url=url)
    script, _ = render(spec, runner.spec_digest, 'specs/x\n\'""".spec', "paradise-tip")
    tree = ast.parse(script)
    assert ast.get_docstring(tree, clean=False).startswith(title + ": procbench")
    constants = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
    }
    assert (
        constants["_DESCRIPTION"] == (description or title).strip()
        and constants["SPEC_FILE"] == 'specs/x\n\'""".spec'
    )
    kinds = [type(node).__name__ for node in tree.body]
    assert kinds == [
        "Expr",
        "Import",
        "Import",
        "ImportFrom",
        *["Assign"] * (len(kinds) - 5),
        "ClassDef",
    ]


def _paradise():  # type: ignore[no-untyped-def]
    from procbench.api import load_task

    return load_task("paradise-tip")


# ---------------------------------------------------------------------------------------------
# spec templates: rendered in the one sandbox, and `check` refuses access beyond the given variables

PAYLOAD = "{{ cycler.__init__.__globals__.os.popen('touch ' ~ marker).read() }}"


def test_a_spec_template_renders_in_the_sandbox(tmp_path: Path) -> None:
    from jinja2.sandbox import SecurityError

    from procbench.runners.pmllm.judge import render_prompt

    marker = tmp_path / "marker"
    with pytest.raises(SecurityError):
        render_prompt(PAYLOAD.replace("marker", repr(str(marker))), question="q", answer="a")
    assert not marker.exists()
    with pytest.raises(SecurityError):
        render_prompt(
            '{{ "x" * 10**9 }}', question="q", answer="a"
        )  # memory, not code: bounded too
    assert (
        render_prompt(
            "{{ question|upper }}: {{ answer.strip() }}{% if severe %}!{% endif %}",
            question="q",
            answer=" a ",
        )
        == "Q: a!"
    )


def _with_judge_template(text: str) -> tuple[str, str]:
    """pm-llm-benchmark.spec with its judge template's text replaced by a long string holding ``text``."""
    from procbench.paths import SPECS_DIR

    source = (SPECS_DIR / "pm-llm-benchmark.spec").read_text(encoding="utf-8")
    start = source.index('"""', source.index("template judge {"))
    end = source.index('"""', start + 3) + 3
    return source[:start] + '"""Grade this.\n' + text + '"""' + source[end:], str(
        SPECS_DIR / "hostile.spec"
    )


@pytest.mark.parametrize(
    ("text", "what", "message"),
    [
        ("{{ cycler.__init__.__globals__ }}", "cycler", "attribute or item access on 'cycler'"),
        (
            "{% for c in [cycler] %}{{ c.__init__ }}{% endfor %}",
            "c",
            "attribute or item access on 'c'",
        ),
        ("{% set a = answer ~ answer %}{{ a }}", "set", "set is not available in spec templates"),
        ("{{ ''.__class__.__mro__[1] }}", None, "attribute or item access on a literal"),
        ("{{ (question|list).pop(0) }}", None, "attribute or item access on a filter's result"),
        ("{{ question.__class__ }}", "__class__", "access to '__class__' is not allowed"),
        ("{{ answer['__len__'] }}", "__len__", "access to '__len__' is not allowed"),
        ("{% include 'other' %}", "include", "include is not available"),
        ("{{ question.ljust(10**9) }}", "ljust", "ljust(...): calls are not available"),
        (
            "{{ answer|upper }} {{ question.center(10**9)|trim }}",
            "center",
            "center(...): calls are not available",
        ),
        (
            "{% for i in range(10) %}{{ question }}{% endfor %}",
            "range",
            "range(...): calls are not available",
        ),
        ("{{ lipsum(10**9) }}", "lipsum", "lipsum(...): calls are not available"),
        ("{% macro m() %}x{% endmacro %}{{ m() }}", "m()", "m(...): calls are not available"),
    ],
)
def test_check_refuses_attribute_access_beyond_the_variables(
    text: str, what: str | None, message: str
) -> None:
    """At the template's line; at the name or underscore attribute at fault (first occurrence), else the line's start."""
    from procbench.dsl import check_text
    from procbench.paths import SPECS_DIR

    source, path = _with_judge_template(text)
    with pytest.raises(SpecError) as info:
        check_text(source, path, [SPECS_DIR])
    (diagnostic,) = info.value.diagnostics  # one mistake, one error
    assert message in diagnostic.message
    line = source[: source.index("Grade this.")].count("\n") + 2  # the template's second line
    column = source.splitlines()[line - 1].find(what) + 1 if what else 1
    assert (diagnostic.span.line, diagnostic.span.column) == (line, column)
    assert str(info.value).startswith(f"{path}:{line}:{column}: error: template 'judge'")


def test_check_accepts_templates_that_read_their_variables() -> None:
    from procbench.dsl import check_text
    from procbench.paths import SPECS_DIR

    source, path = _with_judge_template(
        "{{ question }} {{ answer|trim|upper }} {{ question[0] }} {% for w in answer|list %}{{ w|center(3) }}{% endfor %}"
    )
    check_text(source, path, [SPECS_DIR])


@pytest.mark.parametrize(
    "text",
    [
        "{{ question.ljust(10**9) }}",
        "{{ question.rjust(10**9, 'x') }}",
        "{{ question.center(10**9) }}",
        "{{ question.zfill(10**9) }}",
        "{{ ('\t' * 100).expandtabs(10**8) }}",
        "{{ '{:>1000000000}'.format(question) }}",
        "{{ '{:>{}}'.format(question, 10**9) }}",
        "{{ '%1000000000s' % question }}",
        "{{ '%*s' % (10**9, question) }}",
        "{{ question.replace('', 'x' * 1000000) }}",
        "{{ ('x' * 1000000).join(answer) }}",
        "{{ question|center(10**9) }}",
        "{{ question|indent(10**9, true) }}",
        "{{ '%1000000000s'|format(question) }}",
        "{{ question|replace('', 'x' * 1000000) }}",
        "{{ question|wordwrap(1, wrapstring='x' * 1000000) }}",
        "{{ answer|join('x' * 1000000) }}",
        "{{ question|batch(10**9, 'x')|list }}",
        "{{ question|slice(10**9)|list }}",
        "{{ lipsum(10**9) }}",
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ question }}{% endfor %}{% endfor %}",
    ],
)
def test_the_sandbox_refuses_a_huge_width_or_count_before_building_it(text: str) -> None:
    """The second line of defence, for a template that skipped `check`: each of these would take GiBs (or hours)."""
    from jinja2.sandbox import SecurityError

    from procbench.runners.pmllm.judge import render_prompt

    with pytest.raises(SecurityError, match="may not"):
        render_prompt(text, question="qq", answer="abc")


def test_the_sandbox_still_pads_and_formats_within_bounds() -> None:
    from procbench.runners.runtime.templates import environment

    text = "{{ q|center(6) }}|{{ '%4s' % a }}|{{ '{:>4}'.format(a) }}|{{ q.ljust(4, '.') }}|{{ a|replace('b', 'B') }}|{{ a|join(',') }}|{{ a|indent(2) }}"
    assert (
        environment().from_string(text).render(q="qq", a="abc")
        == "  qq  | abc| abc|qq..|aBc|a,b,c|abc"
    )


NAMES = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(
    root=NAMES,
    chain=st.lists(
        st.tuples(st.booleans(), NAMES | st.from_regex(r"_{1,2}[a-z]{1,6}_{0,2}", fullmatch=True)),
        min_size=1,
        max_size=4,
    ),
)
def test_access_is_refused_exactly_off_the_variables_or_on_underscore_names(
    root: str, chain: list[tuple[bool, str]]
) -> None:
    from procbench.runners.runtime.templates import JUDGE_VARIABLES, access_problems, environment

    expr = root + "".join(f".{name}" if dot else f"[{name!r}]" for dot, name in chain)
    problems = access_problems(environment().parse("{{ " + expr + " }}"), JUDGE_VARIABLES)
    allowed = root in JUDGE_VARIABLES and not any(name.startswith("_") for _, name in chain)
    assert (problems == []) == allowed, expr
    assert len(problems) <= 1  # one chain, one error

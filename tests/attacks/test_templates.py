"""Hostile judge templates: `check` refuses at `file:line:col` what the sandbox would refuse at render, and what only a
render can find (loops over loops, output past the limit) is a one-line `judge` error (exit 5), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import procbench.runners.runtime.templates as templates
from procbench.dsl import check_text
from procbench.dsl.errors import SpecError
from procbench.cli import app
from procbench.paths import SAMPLE_DATA_ROOT, SAMPLE_SUBMISSIONS_DIR, SPECS_DIR
from procbench.runners.pmllm.judge import JudgeError, render_prompt
from tests.test_untrusted_specs import _with_judge_template


@pytest.mark.parametrize(
    ("text", "what", "message", "refused_at_render"),
    [
        # the three of the issue: each passed `check` and raised SecurityError/TypeError in `judge`
        (
            "{{ question|attr('__class__') }}",
            "attr",
            "|attr: access to '__class__' is not allowed",
            True,
        ),
        (
            "{{ '{0.__class__}'|format(question) }}",
            "format",
            "|format: the field {0.__class__} reaches an attribute or item",
            True,
        ),
        (
            "{{ question|center(10**9) }}",
            "center",
            "|center(1000000000): a template may not add over 1000000 characters",
            True,
        ),
        # the same reach through the other filters that take an attribute or a filter's name
        (
            "{{ question|map(attribute='__class__')|list }}",
            "map",
            "|map: access to '__class__' is not allowed",
            False,
        ),
        (
            "{{ question|map('attr', '__class__')|list }}",
            "map",
            "|attr: access to '__class__' is not allowed",
            False,
        ),
        (
            "{{ question|selectattr('__len__')|list }}",
            "selectattr",
            "|selectattr: access to '__len__' is not allowed",
            True,
        ),
        (
            "{{ question|sort(attribute='a.__doc__') }}",
            "sort",
            "|sort: access to '__doc__' is not allowed",
            False,
        ),
        (
            "{{ question|groupby('__class__') }}",
            "groupby",
            "|groupby: access to '__class__' is not allowed",
            False,
        ),
        (
            "{{ question|attr(answer) }}",
            "attr",
            "|attr: the attribute must be written as text",
            True,
        ),
        (
            "{{ question|indent(10**7) }}",
            "indent",
            "|indent(10000000): a template may not add over",
            True,
        ),
        (
            "{{ question|batch(2000000)|list }}",
            "batch",
            "|batch(2000000): a template may not add over",
            True,
        ),
        ("{{ '%2000000s'|format(question) }}", "format", "|format: a width over 1000000", True),
        (
            "{{ '{}'|format(question) }}",
            "format",
            "|format: the text has no %-placeholder for its arguments",
            True,
        ),
        ("{{ 'x' * 2000000 }}", "*", "'*' building a string over 1000000 characters", True),
        ("{{ 2 ** 5000 }}", "**", "a power over 1000", True),
        # a name Jinja2 does not know: was a TemplateAssertionError traceback from `check` itself
        (
            "{{ question|no_such_filter }}",
            "no_such_filter",
            "no filter named 'no_such_filter'",
            True,
        ),
        (
            "{% if question is no_such_test %}x{% endif %}",
            "no_such_test",
            "no test named 'no_such_test'",
            True,
        ),
        (
            "{{ question|select('no_such_test')|list }}",
            "select",
            "no test named 'no_such_test'",
            True,
        ),
        (
            "{{ question|procbench_loop_deadline|list }}",
            "procbench_loop_deadline",
            "no filter named 'procbench_loop_deadline'",
            False,
        ),
    ],
)
def test_check_refuses_what_the_sandbox_would_refuse(
    text: str, what: str, message: str, refused_at_render: bool
) -> None:
    """At the filter (or operator) at fault. Where the sandbox refuses the same template at render, it is asserted too:
    `check` refuses no less; it refuses more only for an underscore attribute that the sandbox reads as undefined."""
    source, path = _with_judge_template(text)
    with pytest.raises(SpecError) as info:
        check_text(source, path, [SPECS_DIR])
    (diagnostic,) = info.value.diagnostics
    assert message in diagnostic.message
    line = source[: source.index("Grade this.")].count("\n") + 2  # the template's second line
    column = source.splitlines()[line - 1].find(what) + 1
    assert (diagnostic.span.line, diagnostic.span.column) == (line, column)
    assert str(info.value).startswith(f"{path}:{line}:{column}: error: template 'judge'")
    if refused_at_render:
        with pytest.raises(JudgeError):
            render_prompt(text, question="a question", answer="an answer")


@pytest.mark.parametrize(
    "text",
    [
        "{{ '%s (%d words)'|format(question, 3) }}",
        "{{ question|center(40) }} {{ answer|indent(4) }} {{ question|batch(3)|list|length }}",
        "{{ answer|map('upper')|join(', ') }} {{ question|select('lower')|list|length }}",
        "{{ question|attr('upper') is defined }} {{ question|sort|join }}",
        "{{ 2 ** 10 }} {{ '-' * 40 }}",
        "{% for a in question|list %}{% for b in answer|list %}{{ a }}{{ b }}{% endfor %}{% endfor %}",
    ],
)
def test_check_and_the_sandbox_accept_filters_within_the_limits(text: str) -> None:
    source, path = _with_judge_template(text)
    check_text(source, path, [SPECS_DIR])
    assert render_prompt(text, question="ab", answer="cd")


def _answers(folder: Path) -> Path:
    source = SAMPLE_SUBMISSIONS_DIR / "pm-llm-benchmark" / "acme-large.jsonl"
    answers = folder / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": r["id"], "answer": r["answer"]}) + "\n"
            for r in map(json.loads, source.read_text().splitlines())
        )
    )
    return answers


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # nothing printed: without a time bound this ran until killed (the gold questions are hundreds of characters)
        (
            "{% for a in question %}{% for b in question %}{% for c in question %}{% endfor %}{% endfor %}{% endfor %}{{ answer }}",
            "may not render for more than 0.2 seconds",
        ),
        # printed text past the output bound, each piece within the size limits
        (
            "{% for a in question %}{% for b in question %}{{ question }}{% endfor %}{% endfor %}",
            "may not render over 16777216 characters",
        ),
        # a filter given the wrong type: check cannot know the variables' types, the render can
        ("{{ question|dictsort }}", "AttributeError"),
    ],
)
def test_a_template_that_fails_at_render_is_a_one_line_judge_error(
    text: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(templates, "MAX_RENDER_SECONDS", 0.2 if "0.2 seconds" in message else 600.0)
    source, _ = _with_judge_template(text)
    spec = tmp_path / "pm-llm-benchmark.spec"
    spec.write_text(source, encoding="utf-8")
    check_text(source, str(spec), [SPECS_DIR])  # these pass check: only a render finds them
    result = CliRunner().invoke(
        app,
        [
            "judge",
            str(spec),
            "--predictions",
            str(_answers(tmp_path)),
            "--out",
            str(tmp_path / "verdicts.jsonl"),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "j",
            "--retries",
            "0",
            "--cache",
            str(tmp_path / "cache"),
            "--data-dir",
            str(SAMPLE_DATA_ROOT),
        ],
    )
    assert isinstance(result.exception, SystemExit) and result.exit_code == 5, result.output
    (error,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert (
        error.startswith("error: the judge template could not be rendered: ") and message in error
    )
    assert not (tmp_path / "verdicts.jsonl").exists()


@pytest.mark.parametrize(
    "text",
    [
        "{% for w in answer|list %}{{ loop.index }}/{{ loop.length }}{{ w }}{% if loop.last %}.{% endif %}{% endfor %}",
        "{% for w in question|list if w != 'b' %}{{ w }}{{ loop.revindex }}{% else %}none{% endfor %}",
        "{% for w in ''|list %}{{ w }}{% else %}empty{% endfor %}",
        "{% for a, b in question|list|batch(2) %}{{ a }}{{ b }}{{ loop.cycle('-', '+') }}{% endfor %}",
        "{% for a in question|list %}{% for b in answer|list %}{{ loop.depth }}{{ a }}{{ b }}{% endfor %}{% endfor %}",
    ],
)
def test_loops_render_as_jinja2_renders_them(text: str) -> None:
    """The deadline check wrapped around every loop's items changes nothing a loop prints (Jinja2's own sandbox: the oracle)."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    oracle = ImmutableSandboxedEnvironment(
        autoescape=False, keep_trailing_newline=True, undefined=jinja2.StrictUndefined
    )
    variables = {"question": "abcd", "answer": "xy", "cot": False, "severe": True}
    assert render_prompt(text, **variables) == oracle.from_string(text).render(**variables)

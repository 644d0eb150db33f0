"""Model metadata rules of docs/metrics.md §4.4 (reasoning, chain of thought) and the size classes."""

from __future__ import annotations

import pytest

from procbench.paths import SAMPLE_DATA_ROOT
from procbench.runners.pmllm.models import (
    ManualConfig,
    is_large_reasoning_model,
    open_source,
    parameter_count,
    shows_chain_of_thought,
    size_class,
)
from procbench.runners.pmllm.naming import (
    clean_model_name,
    display_name,
    judge_folder,
    parse_result_file_name,
)


@pytest.mark.parametrize(
    ("name", "lrm"),
    [
        ("vendor/some-model-non-reasoning", False), ("qwen3-thinking-nothink", False), ("gpt-5.6-sol-NONE", False),
        ("qwen/qwen3-32b", True), ("qwen/qwen3-32b-instruct", False), ("acme:reasoner-2", True), ("QwQ-32B", True),
        ("o3-2025-04-16", True), ("gpt-4o-2024-11-20", False), ("gpt-5-mini", True), ("chatgpt-4o-latest", False),
        ("gemini-2.5-pro", True), ("gemini-2.5-flash", False), ("google/gemini-3-flash", True), ("googlegemini-3-flash", False),
        ("grok-3", False), ("grok-4-0709", True), ("gemma4e2b", True), ("gemma-3-27b", False),
        ("deepseek-r1", True), ("deepseek-v3", False), ("deepseek-v4-flash", True), ("deepseek-chat-0324", True),
        ("mistral-small-2506", False),
    ],
)  # fmt: skip
def test_reasoning_name_rules(name: str, lrm: bool) -> None:
    assert is_large_reasoning_model(name) is lrm


def test_manual_config_enables_reasoning_and_visible_thought() -> None:
    plain = "nousresearch/hermes-4-70b"
    assert not is_large_reasoning_model(plain)
    assert is_large_reasoning_model(plain, ManualConfig(reasoning_effort="high"))
    assert is_large_reasoning_model(plain, ManualConfig(thinking_tokens=1024))
    assert not is_large_reasoning_model(plain, ManualConfig(reasoning_effort="none"))
    assert not is_large_reasoning_model(plain + "-none", ManualConfig(reasoning_effort="high"))
    visible = ManualConfig(provider="openrouter", payload_requests_reasoning=True)
    assert shows_chain_of_thought(plain, visible)
    assert not shows_chain_of_thought(
        "claude-opus-4-8-thinking", ManualConfig(provider="claude", payload_requests_reasoning=True)
    )


@pytest.mark.parametrize(
    ("name", "cot"),
    [("claude-opus-4-8-thinking", False), ("gemini-2.5-pro-thinkhigh", False), ("o4-mini", False), ("gpt-5.5-HIGH", False),
     ("grok-4.3", False), ("gemma4e4b", False), ("gpt-oss-20b", True), ("grok-code-fast-1", True), ("qwen3.54b", True),
     ("mistral-medium-3.5-thinkhigh", True), ("phi4-reasoning", True), ("gpt-4.1", False)],
)  # fmt: skip
def test_chain_of_thought_rule(name: str, cot: bool) -> None:
    assert shows_chain_of_thought(name) is cot


def test_size_classes_are_disjoint_by_parameter_count() -> None:
    assert size_class("x", is_open_source=False, params_b=3) == "commercial"
    assert size_class("x", is_open_source=True, params_b=4) == "tiny (<=4 GB)"
    assert size_class("x", is_open_source=True, params_b=4.5) == "small (<=8 GB)"
    assert size_class("x", is_open_source=True, params_b=8) == "small (<=8 GB)"
    assert size_class("x", is_open_source=True, params_b=8.1) == "big open-source"
    assert size_class("x", is_open_source=True, params_b=None) == "open-source (size unknown)"


def test_parameter_count_lookup_exact_then_substring() -> None:
    info = {"ChatGPT-5.5-Pro-20260422": [1600, 100], "qwen3.54b": [4], "gpt-5.6-sol-XHIGH": []}
    assert parameter_count("GPT-5.5-Pro", info) == 1600
    assert parameter_count("qwen3.54b", info) == 4
    assert parameter_count("gpt-5.6-sol-XHIGH", info) is None
    assert parameter_count("unlisted", info) is None


def test_open_source_falls_back_from_lists_to_families() -> None:
    assert (
        open_source("acme-think-small", SAMPLE_DATA_ROOT) is True
    )  # model_is_os.json of the samples
    assert open_source("acme-large", SAMPLE_DATA_ROOT) is False
    assert (
        open_source("meta-llama/llama-5-70b") is True
        and open_source("some-closed-api-model") is False
    )


def test_naming_rules_of_4_1() -> None:
    assert clean_model_name("qwen/qwen3.7-max") == "qwenqwen3.7-max"
    assert judge_folder("x-ai/grok-4.1-fast") == "evaluation-x-aigrok-4.1-fast"
    parsed = parse_result_file_name("gpt-5.4-mini_2026_cat01_02_activity_context.txt")
    assert parsed is not None and (parsed.model, parsed.question_id) == (
        "gpt-5.4-mini_2026",
        "cat01_02_activity_context",
    )
    assert parse_result_file_name("__init__.py") is None
    assert display_name("a" * 40) == "a" * 34

"""Tests for ``CommandAdapter.tested_versions``: every built-in adapter states what it was tested
with, and ``is_newer_than_tested`` (what ``shellkeep doctor`` warns about) compares numbers."""

from __future__ import annotations

import re

import pytest

from shellkeep.agents.claude import ClaudeAdapter
from shellkeep.agents.copilot import CopilotAdapter
from shellkeep.agents.gemini import GeminiAdapter
from shellkeep.agents.qwen import QwenAdapter
from shellkeep.agents.registry import builtin_adapters


def test_every_builtin_adapter_with_a_program_states_its_tested_versions() -> None:
    for adapter in builtin_adapters():
        if not getattr(adapter, "executables", ()):
            continue
        versions = adapter.tested_versions  # type: ignore[attr-defined]
        assert isinstance(versions, tuple) and versions, adapter
        assert all(re.fullmatch(r"\d+(\.\d+)+", v) for v in versions), (adapter, versions)


def test_gemini_and_qwen_state_the_versions_their_real_tests_run() -> None:
    assert GeminiAdapter.tested_versions == ("0.57.0", "0.61.0")
    assert QwenAdapter.tested_versions == ("0.23.4", "0.24.4")


@pytest.mark.parametrize(
    ("adapter", "version", "known", "newer"),
    [
        (GeminiAdapter(), "0.61.0", True, False),
        (GeminiAdapter(), "0.57.0", True, False),
        (GeminiAdapter(), "0.59.0", False, False),  # between two tested versions
        (GeminiAdapter(), "0.50.1", False, False),  # older
        (GeminiAdapter(), "0.61.1", False, True),
        (GeminiAdapter(), "0.62.0", False, True),
        (GeminiAdapter(), "1.0.0", False, True),
        (GeminiAdapter(), "0.62.0-nightly", False, False),  # not dotted numbers: no claim
        (ClaudeAdapter(), "2.1.332", True, False),
        (ClaudeAdapter(), "2.1.400", False, True),
        (QwenAdapter(), "0.24.4", True, False),
        (QwenAdapter(), "0.24.9", False, True),
        (CopilotAdapter(), "1.0.102", True, False),  # "1.0" covers every 1.0.x
        (CopilotAdapter(), "1.1.0", False, True),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_knows_and_newer_than_tested(adapter: GeminiAdapter, version: str, known: bool, newer: bool) -> None:
    assert adapter.knows_version(version) is known
    assert adapter.is_newer_than_tested(version) is newer

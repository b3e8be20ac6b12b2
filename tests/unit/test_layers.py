"""The import contract: each layer imports only layers below it, and no package has a cycle.

The contract lives in pyproject.toml ([tool.importlinter]); import-linter counts imports made
inside functions, so a cycle dodged with a late import fails here too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contract_is_kept() -> None:
    pytest.importorskip("importlinter")
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "2 kept, 0 broken" in result.stdout

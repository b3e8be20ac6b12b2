"""scripts/rules-vs-gitleaks.py: the redaction rules compared with a gitleaks rule set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "rules-vs-gitleaks.py"
RULES = ROOT / "tests" / "data" / "gitleaks" / "rules.toml"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120, check=False)


def test_a_format_no_rule_covers_is_printed_and_a_covered_one_is_not() -> None:
    result = _run(str(RULES))
    assert result.returncode == 1, result.stderr  # one rule is missing
    lines = result.stdout.splitlines()
    assert lines[0] == "gitleaks rules: 2; covered 1, partly 0, missing 1, no sample 0"  # the path-only rule is not counted
    assert "missing: zzvendor-api-token (0/8) keywords zzv9_" in lines
    assert not any("github-pat" in line for line in lines)


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[[rules]\nid = ")
    for path in (broken, tmp_path / "absent.toml"):
        result = _run(str(path))
        assert result.returncode == 2
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("rules-vs-gitleaks: cannot read")
    empty = tmp_path / "empty.toml"
    empty.write_text('title = "x"\n')
    result = _run(str(empty))
    assert result.returncode == 2 and "has no [[rules]]" in result.stderr

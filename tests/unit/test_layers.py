"""The import contract: each layer imports only layers below it, no package has a cycle,
and each third-party library stays in its layer.

The contract lives in pyproject.toml ([tool.importlinter]); import-linter counts imports made
inside functions, so a cycle dodged with a late import fails here too. Its acyclic check
leaves out imports made only for type checking (as the layers do); the check below counts
them too, so no two modules of a package need each other even for their annotations.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

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
    assert "9 kept, 0 broken" in result.stdout


def test_no_package_has_a_cycle_between_its_modules_annotations_counted() -> None:
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("shellkeep", exclude_type_checking_imports=False)
    packages = sorted(m for m in graph.modules if graph.find_children(m))
    cycles = {package: sorted(graph.nominate_cycle_breakers(package)) for package in packages}
    # Each entry names an import that closes a cycle (often one made for annotations only):
    # the names it brings sit in the wrong module; move them below both, not into a late import.
    assert {package: breakers for package, breakers in cycles.items() if breakers} == {}


def test_each_library_is_forbidden_to_every_other_part_of_shellkeep() -> None:
    # A new top-level package or module is a source of every forbidden contract, or it fails here.
    grimp = pytest.importorskip("grimp")
    children = set(grimp.build_graph("shellkeep").find_children("shellkeep"))
    with open(ROOT / "pyproject.toml", "rb") as fh:
        contracts = tomllib.load(fh)["tool"]["importlinter"]["contracts"]
    forbidden = [c for c in contracts if c["type"] == "forbidden"]
    assert len(forbidden) == 7
    for contract in forbidden:
        missing = children - set(contract["source_modules"])
        assert len(missing) == 1, (contract["name"], sorted(missing))  # the library's own layer
        assert contract.get("allow_indirect_imports") is True

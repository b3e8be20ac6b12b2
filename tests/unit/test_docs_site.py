"""Test the documentation: the MkDocs site builds with --strict, and README.md stays the short front door.

``mkdocs build --strict`` fails on a broken link, a missing anchor, a page left out of the nav or a
missing snippet (``config.example.toml`` and ``bench/RESULTS.md`` are included, not copied), so a
renamed heading or a moved page breaks CI here instead of on a reader's screen.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.commands.build import build
from mkdocs.config import load_config

ROOT = Path(__file__).parents[2]
TEST_COMMAND = "./scripts/test"
README_MAX_LINES = 300


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    config = load_config(config_file=str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True)
    build(config)  # raises mkdocs.exceptions.Abort on any warning in strict mode
    pages = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    assert {"index.html", "commands/index.html", "config/index.html", "security/index.html"} <= pages
    config_page = (tmp_path / "site" / "config" / "index.html").read_text()
    assert "flush_interval_ms" in config_page  # config.example.toml is included whole


def test_every_docs_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [p for p in pages if not re.search(rf":\s*{re.escape(p)}\s*$", nav, re.M)] == []


def test_the_readme_is_short_and_holds_the_exact_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert f"```sh\n{TEST_COMMAND}\n```" in readme
    assert "\n./scripts/test\n" in (ROOT / ".ci" / "run").read_text()  # CI runs the README's command as written


def test_the_readme_links_only_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t]
    assert targets and [t for t in targets if not (ROOT / t).exists()] == []

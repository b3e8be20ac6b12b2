"""``shellkeep doctor``: check the installation, one line per check with ok, warn or fail."""

from __future__ import annotations

import os

import click

from shellkeep.cli.console import printable
from shellkeep.cli.options import cwd, json_option
from shellkeep.cli.output import print_json
from shellkeep.errors import ShellkeepError
from shellkeep.store.paths import resolve_paths


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Check the data folder, free space, index, keys, config, agents and shell integration.

    Each line says ok, warn or fail, what was found and, where there is one, the fix. Exits
    with status 1 when a check failed. Nothing is changed.

    Example: shellkeep doctor
    """
    from shellkeep.app.doctor import run_checks

    report = run_checks(resolve_paths(), cwd(), os.environ)  # a data folder that is a file is a finding here
    if as_json:
        print_json(report)
    else:
        width = max(len(c.check) for c in report.checks)
        for c in report.checks:
            fix = f"; fix: {c.fix}" if c.fix else ""
            click.echo(printable(f"{c.status:<4}  {c.check:<{width}}  {c.detail}{fix}"))
    if report.failed:
        raise ShellkeepError(f"{report.failed} of {len(report.checks)} checks failed; see the fixes above")

"""``shellkeep init bash|zsh|fish``: print or install the shell integration."""

from __future__ import annotations

import click

from shellkeep.cli.options import context
from shellkeep.store.paths import SHELLS


@click.command()
@click.argument("shell", metavar="SHELL", type=click.Choice(SHELLS))
@click.option("--install", is_flag=True, help="Write the snippet to a file and source it from the rc file (fast).")
@click.option("--uninstall", is_flag=True, help="Remove what --install added to the rc file.")
def init(shell: str, install: bool, uninstall: bool) -> None:
    """Print the shell integration: agents recorded when typed, a notice in projects with interrupted sessions.

    \b
    eval "$(shellkeep init bash)"   # in ~/.bashrc (zsh: ~/.zshrc); starts Python at every shell start
    shellkeep init fish | source    # in ~/.config/fish/config.fish
    shellkeep init zsh --install    # fast: the rc file only sources a file, no process at start

    Example: shellkeep init zsh --install
    """
    from shellkeep.app import shellinit

    if install and uninstall:
        raise click.UsageError("give --install or --uninstall, not both")
    ctx = context(strict=install)  # never install from a broken config; printing warns and uses the defaults
    source = _completion_source(shell)
    if not (install or uninstall):
        click.echo(shellinit.snippet(ctx, shell, completion_source=source), nl=False)
        return
    result = shellinit.install(ctx, shell, completion_source=source) if install else shellinit.uninstall(ctx, shell)
    if install and result.changed:
        click.echo(f"added the shell integration to {result.rc_file}; open a new shell to use it", err=True)
    elif install:
        click.echo(f"the shell integration is already in {result.rc_file}; its snippet was rewritten", err=True)
    elif result.changed:
        click.echo(f"removed the shell integration from {result.rc_file}", err=True)
    else:
        click.echo(f"the shell integration was not in {result.rc_file}; nothing to remove", err=True)


def _completion_source(shell: str) -> str:
    """Return the completion script click generates for shellkeep in ``shell`` (what
    ``completions/shellkeep.<shell>`` holds; ``scripts/update-completions`` writes those)."""
    from click.shell_completion import get_completion_class

    root = click.get_current_context().find_root().command
    completion = get_completion_class(shell)
    assert completion is not None  # bash, zsh and fish are click's own
    return completion(root, {}, "shellkeep", "_SHELLKEEP_COMPLETE").source()

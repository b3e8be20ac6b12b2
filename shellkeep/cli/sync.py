"""``shellkeep sync push|pull|status``: copy sessions to object storage and read other machines'."""

from __future__ import annotations

import click

from shellkeep.cli.options import context, json_option, warn
from shellkeep.cli.output import format_size, plural, print_json
from shellkeep.errors import ShellkeepError

_remote_option = click.option("--remote", "remote", metavar="URL", help="The bucket to use instead of sync.url.")


@click.group(name="sync")
def sync() -> None:
    """Copy finished sessions to object storage (S3, GCS, Azure, file://) and read other machines'.

    Example: shellkeep sync push --remote s3://team-bucket/shellkeep
    """


@sync.command(name="push")
@_remote_option
@click.option("--again", is_flag=True, help="Push every session again, sending only the parts the bucket lacks (repairs lost objects).")
@json_option
def push_command(remote: str | None, again: bool, as_json: bool) -> None:
    """Push this machine's finished and interrupted sessions the remote lacks (resumable).

    Example: shellkeep sync push
    """
    from shellkeep.app.sync import push, remote_url

    ctx = context(strict=True)
    url = remote_url(ctx, remote)
    result = push(
        ctx,
        url,
        on_plaintext=lambda: warn(f"encryption is off: {url} will hold your sessions in plaintext (set encryption.encrypt = true to seal them)"),
        again=again,
    )
    if as_json:
        print_json(result)
    else:
        click.echo(
            f"pushed {plural(result.sessions_pushed, 'session')} to {url} ({plural(result.parts_sent, 'part')}, "
            f"{format_size(result.bytes_sent)}; {result.parts_skipped} already there); "
            f"{result.sessions_unchanged} unchanged, {result.running_skipped} running skipped"
            + (f", {result.pruned} pruned" if result.pruned else "")
        )
    for line in result.errors:
        warn(f"could not push {line}")
    if result.errors:
        raise ShellkeepError(f"{plural(len(result.errors), 'session')} could not be pushed; see above")


@sync.command(name="pull")
@_remote_option
@click.option("--machine", metavar="M", help="Only this machine's sessions (its id, an id prefix or its host name).")
@click.option("--all-machines", is_flag=True, help="Every machine's sessions, this machine's own too.")
@json_option
def pull_command(remote: str | None, machine: str | None, all_machines: bool, as_json: bool) -> None:
    """Read other machines' session manifests; recordings are fetched when first used.

    Example: shellkeep sync pull --all-machines && shellkeep ls --remote
    """
    from shellkeep.app.sync import pull, remote_url

    ctx = context(strict=True)
    result = pull(ctx, remote_url(ctx, remote), machine=machine, all_machines=all_machines)
    for line in result.refused:
        warn(line)
    if as_json:
        print_json(result)
    else:
        click.echo(
            f"pulled {plural(result.sessions_pulled, 'session')} from {plural(len(result.machines), 'machine')}"
            f" ({', '.join(result.machines) or 'none'}); {result.sessions_known} already here"
        )


@sync.command(name="status")
@_remote_option
@json_option
def status_command(remote: str | None, as_json: bool) -> None:
    """Show what a push would send and what a pull would read (counts and bytes).

    Example: shellkeep sync status
    """
    from shellkeep.app.sync import remote_url, status

    ctx = context(strict=True)
    result = status(ctx, remote_url(ctx, remote))
    for line in result.refused:
        warn(line)
    if as_json:
        print_json(result)
        return
    click.echo(
        f"to push: {plural(result.to_push, 'session')} ({format_size(result.to_push_bytes)}); "
        f"{result.pushed} pushed before, {result.running_skipped} running (not pushed)"
    )
    for m in result.machines:
        click.echo(f"to pull from {m.host or m.machine} ({m.machine[:12]}): {plural(m.to_pull, 'session')} of {m.sessions} ({format_size(m.to_pull_bytes)})")


@sync.command(name="gc")
@_remote_option
@click.option("--dry-run", is_flag=True, help="Only show what would be removed.")
@json_option
def gc_command(remote: str | None, dry_run: bool, as_json: bool) -> None:
    """Delete this machine's remote sessions older than sync.max_age_days (same as 'gc --remote').

    Example: shellkeep sync gc --dry-run
    """
    from shellkeep.app.sync import gc_remote, remote_url

    ctx = context(strict=True)
    result = gc_remote(ctx, remote_url(ctx, remote), dry_run=dry_run)
    if as_json:
        print_json(result)
    else:
        verb = "would remove" if dry_run else "removed"
        click.echo(f"{verb} {plural(result.sessions_removed, 'session')} and {plural(result.objects_removed, 'object')} from {result.url}")

"""``shellkeep gc``: remove old sessions by the retention limits, or show what would go."""

from __future__ import annotations


import click

from shellkeep.cli.options import context, json_option, warn
from shellkeep.cli.output import format_size, plural, print_json
from shellkeep.errors import ShellkeepError


@click.command()
@click.option("--dry-run", is_flag=True, help="Only show what would be removed.")
@click.option("--project", "this_project", is_flag=True, help="Only this project's sessions.")
@click.option("--remote", "remote", is_flag=True, help="Apply sync.max_age_days to this machine's sessions in sync.url instead.")
@json_option
def gc(dry_run: bool, this_project: bool, remote: bool, as_json: bool) -> None:
    """Remove sessions past the retention limits and print what that frees.

    Limits: retention.max_age_days, max_sessions and max_total_size from your config, and
    for each project those its .shellkeep.toml adds (for its own sessions). Running sessions,
    interrupted ones not yet resumed and pinned ones ('shellkeep pin') always stay.

    Example: shellkeep gc --dry-run
    """
    from shellkeep.app.gc import retention_limits, run_gc
    from shellkeep.app.sync import gc_remote, remote_url

    ctx = context(strict=True)
    if remote:
        done = gc_remote(ctx, remote_url(ctx, None), dry_run=dry_run)
        if as_json:
            print_json(done)
        else:
            verb = "would remove" if dry_run else "removed"
            click.echo(f"{verb} {plural(done.sessions_removed, 'session')} and {plural(done.objects_removed, 'object')} from {done.url}")
        return
    limits = retention_limits(ctx)
    if limits.is_empty and not as_json:
        warn("no retention limits are set (retention.max_age_days, max_sessions, max_total_size); nothing to do")
    result = run_gc(ctx, limits, dry_run=dry_run, this_project=this_project)
    if as_json:
        print_json(result)
    else:
        verb = "would remove" if dry_run else "removed"
        for e in result.removed:
            label = f"{e.session_id} ({e.name})" if e.name else e.session_id
            click.echo(f"{verb} {label}  {e.project}  {format_size(e.size_bytes)}  {e.age_days:.1f} days  [{e.reason}]")
        freed = "would free" if dry_run else "freed"
        protected = f", {result.protected} protected" if result.protected else ""
        click.echo(
            f"{verb} {plural(len(result.removed), 'session')}, {freed} {format_size(result.freed_bytes)}; "
            f"kept {result.kept}{protected}"
        )
    for line in result.errors:
        warn(f"could not remove {line}")
    if result.errors:
        raise ShellkeepError(f"{plural(len(result.errors), 'session')} could not be removed; see above")

"""``shellkeep show``: one session's metadata."""

from __future__ import annotations

import click

from shellkeep.cli.options import cwd, json_option, paths, require_ref, session_argument


@click.command()
@session_argument
@json_option
def show(ref: str | None, last: bool, as_json: bool) -> None:
    """Show one session's metadata.

    SESSION is an id, a unique prefix of one, a name, or --last.

    Example: shellkeep show --last
    """
    from shellkeep.store.paths import project_root_of
    from shellkeep.store.session import resolve_session

    require_ref(ref, last)
    meta = resolve_session(paths(), project_root_of(cwd()), ref, last=last)
    if as_json:
        from shellkeep.cli.output import print_json

        print_json(meta)
        return
    from shellkeep.cli.output import format_duration, format_local_time

    git = meta.git_start or {}
    rows = [
        ("id", meta.id),
        ("name", meta.name or "-"),
        ("command", " ".join(meta.command)),
        ("agent", meta.agent),
        ("status", meta.status + ("" if meta.exit_code is None else f" (exit {meta.exit_code})")),
        ("started", format_local_time(meta.started_at)),
        ("duration", format_duration(meta.duration)),
        ("cwd", meta.cwd),
        ("project", f"{meta.project} ({meta.project_root})"),
        ("git", f"{git.get('branch') or '-'} {str(git.get('commit') or '')[:10]}{' dirty' if git.get('dirty') else ''}"),
        ("terminal", f"{meta.cols}x{meta.rows} {meta.term or ''}"),
        ("recorded", f"{meta.output_bytes} bytes out, {meta.input_bytes} bytes in"),
        ("recording", meta.cast),
    ]
    if meta.recording_error:
        rows.append(("warning", f"recording incomplete: {meta.recording_error}"))
    if meta.parent:
        rows.append(("resumes", meta.parent))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key:<{width}}  {value}")

"""``shellkeep import``: bring a foreign asciicast recording into this project as a session."""

from __future__ import annotations

from pathlib import Path

import click

from shellkeep.app.importer import ImportRequest, import_recording
from shellkeep.cli.options import context, cwd, json_option
from shellkeep.cli.output import print_json


@click.command(name="import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--name", default=None, help="Name the imported session.")
@json_option
def import_(file: Path, name: str | None, as_json: bool) -> None:
    """Import an asciicast v1, v2 or v3 recording as a session of this project.

    A corrupt file is refused and nothing is stored; a cut last line is read up to the
    last whole event. The session id is printed on stdout.

    Example: shellkeep import demo.cast --name demo
    """
    ctx = context()
    meta = import_recording(ctx, ImportRequest(source=file, project_root=ctx.project_root, cwd=cwd(), name=name))
    if as_json:
        print_json(meta)
        return
    click.echo(meta.id)
    click.echo(f"imported {file} as session {meta.id} ({meta.duration or 0:.1f}s); replay it with 'shellkeep replay {meta.id}'", err=True)

"""``shellkeep serve``: the web view of every session, live ones included, in a browser."""

from __future__ import annotations

import os
import sys

import click

from shellkeep.cli.options import cwd, paths, warn

PORT = 8765
"""The default of --port: ``app.serve.DEFAULT_PORT``, written out so that ``serve --help``
loads no app module; tests/unit/test_contract.py checks they agree."""


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: the whole network, with the same token rule).")
@click.option("--port", type=click.IntRange(0, 65535), default=PORT, show_default=True, help="Port to listen on (0: any free one).")
@click.option("--allow-input", is_flag=True, help="Let a viewer with the token type into live sessions (recorded as input, with a marker).")
@click.option("--new-token", is_flag=True, help="Replace the stored token first (URLs given out before stop working).")
@click.option("--open/--no-open", "open_browser", default=None, help="Open the URL in a browser (default: on a desktop, for a local address).")
def serve(host: str, port: int, allow_input: bool, new_token: bool, open_browser: bool | None) -> None:
    """Serve the sessions of every project as a web page: list, search, replay, live view, stats.

    Every request needs the token in the URL printed at start (once; a cookie keeps it).

    Example: shellkeep serve --host 0.0.0.0 --port 8765
    """
    from shellkeep.app.serve import ServeRequest, prepare_serve
    from shellkeep.web.server import qr_text, run_server

    setup = prepare_serve(ServeRequest(host=host, port=port, allow_input=allow_input, new_token=new_token), paths=paths(), cwd=cwd(), warn=warn)

    def ready() -> None:
        click.echo(setup.url)
        if not setup.is_loopback:
            click.echo(qr_text(setup.url), err=True)
        mode = "viewers may type into live sessions" if allow_input else "read-only"
        click.echo(f"serving {setup.origin} ({mode}); Ctrl-C stops", err=True)
        sys.stdout.flush()
        if open_browser or (open_browser is None and setup.is_loopback and _has_desktop()):
            import webbrowser

            webbrowser.open(setup.url)

    run_server(setup, on_ready=ready)


def _has_desktop() -> bool:
    return sys.platform == "darwin" or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))

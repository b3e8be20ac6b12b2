"""Prepare ``shellkeep serve``: the run context, the listening socket, the token and the URL.

The web application itself is ``shellkeep.web`` (a layer above this one); this module builds
what it serves from, once: the ``Context`` (paths, settings, keys), a socket already bound
to the address asked for (so ``--port 0`` knows its port before the server starts), and the
access token. Its vault remembers no key: each request looks its keys up in the stores.

A server bound to every address (``0.0.0.0``, ``::``) is named in its URL by this machine's
LAN address: the source address the kernel picks for a UDP socket "connected" to a
documentation address (``192.0.2.1``, ``2001:db8::1``; connecting sends no packet), else the
host name. ``0.0.0.0`` is no address a phone can open.

The token is 32 random bytes (``secrets.token_urlsafe(32)``: 256 bits), kept in
``Paths.serve_token`` (0600) and reused by every later run, so a bookmarked or scanned URL
keeps working; ``new_token`` replaces it (every browser must then be given the new URL).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from shellkeep.app.context import Context, Warn, open_context
from shellkeep.errors import UserInputError
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.paths import Paths, ensure_dir

__all__ = ["DEFAULT_PORT", "WILDCARD_HOSTS", "ServeRequest", "ServeSetup", "is_loopback", "load_token", "prepare_serve"]

DEFAULT_PORT = 8765
"""The port ``serve`` listens on unless told (0: any free one)."""

WILDCARD_HOSTS = ("0.0.0.0", "::", "")
"""The ``--host`` values that bind every address of this machine."""

_TOKEN_BYTES = 32
_MIN_TOKEN_CHARS = 22  # 128 bits in URL-safe base64


@dataclass(frozen=True, slots=True)
class ServeRequest:
    """What ``shellkeep serve`` was asked for.

    host: the address to bind (a name or an IP literal). port: 0 picks a free one.
    allow_input: authenticated viewers may type into live sessions. new_token: replace the
    stored token before serving.
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    allow_input: bool = False
    new_token: bool = False


@dataclass(frozen=True, slots=True)
class ServeSetup:
    """What the web application serves from.

    ctx: the run context. sock: a listening TCP socket (the caller's to close). host: the
    address bound, as asked (``0.0.0.0`` included). port: the one actually bound. token: the
    access token. allow_input: as requested. url_host: the address the URL names (``host``,
    or this machine's LAN address for a wildcard ``host``; empty: ``host``). url: the address
    to open, token included.
    """

    ctx: Context
    sock: socket.socket
    host: str
    port: int
    token: str
    allow_input: bool
    url_host: str = ""

    @property
    def origin(self) -> str:
        """Return the origin of the URL (``http://url_host:port``), as a browser sends it."""
        named = self.url_host or self.host
        host = f"[{named}]" if ":" in named else named
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        """Return the URL to open, with the token (``http://host:port/?token=...``)."""
        return f"{self.origin}/?token={self.token}"

    @property
    def is_loopback(self) -> bool:
        """Return whether only this machine can reach the server."""
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    """Return whether ``host`` is a loopback address or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_token(paths: Paths, *, new: bool = False) -> str:
    """Return the stored access token, making one (or a new one when ``new``) first.

    The file is ``paths.serve_token``, written atomically with mode 0600. A stored token
    shorter than 128 bits (an edited file) is replaced. Raises OSError when it cannot be
    read or written.
    """
    path = paths.serve_token
    if not new:
        try:
            token = path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            token = ""
        except UnicodeDecodeError:
            token = ""
        if len(token) >= _MIN_TOKEN_CHARS and token.replace("-", "").replace("_", "").isalnum():
            return token
    token = secrets.token_urlsafe(_TOKEN_BYTES)
    ensure_dir(path.parent)
    write_bytes_atomic(path, (token + "\n").encode("ascii"))
    return token


def prepare_serve(
    request: ServeRequest, *, paths: Paths | None = None, cwd: Path | None = None, warn: Warn | None = None
) -> ServeSetup:
    """Build the context, bind the socket and load the token for ``serve``.

    Raises UserInputError (exit 2) when the address cannot be bound (in use, not this
    machine's, a name that does not resolve); OSError when the token cannot be stored.
    """
    ctx = open_context(paths=paths, cwd=cwd, warn=warn)
    # A server runs for days: every request looks its keys up anew, so a key moved away
    # suspends its sessions at once (as for a server started without it).
    ctx = dataclasses.replace(ctx, vault=dataclasses.replace(ctx.vault, remember_keys=False))
    sock = _bind(request.host, request.port)
    try:
        token = load_token(ctx.paths, new=request.new_token)
    except BaseException:
        sock.close()
        raise
    port = int(sock.getsockname()[1])
    url_host = _lan_address(sock.family) if request.host in WILDCARD_HOSTS else request.host
    return ServeSetup(ctx, sock, request.host, port, token, request.allow_input, url_host)


def _lan_address(family: int) -> str:
    """Return the address other machines reach this one at (see the module docstring)."""
    target = ("2001:db8::1", 9) if family == socket.AF_INET6 else ("192.0.2.1", 9)
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(target)  # UDP: no packet is sent, only a route is chosen
            address = str(probe.getsockname()[0])
    except OSError:
        address = ""
    if not address or ipaddress.ip_address(address).is_unspecified:
        return socket.gethostname()
    return address


def _bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UserInputError(f"cannot serve on '{host}': {exc.strerror}; give an address of this machine with --host") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise UserInputError(f"cannot listen on {host}:{port}: {reason.lower()}; pick another --port (0: any free one)") from None
    sock.set_inheritable(True)
    return sock

"""Bring a foreign recording (asciicast v1, v2 or v3) into a project as a session.

The file is read whole first: a corrupt one (a malformed line other than the last, a
negative time, a bad resize, a v1 frame that is not ``[delay, data]``) is refused with
``DataError`` before anything is written. A cut last line ends the recording at its last
whole event. The recording is stored as asciicast v2 (readable by ``asciinema play``),
v3 exit events becoming the session's exit code, in a hidden folder renamed into place
at the end, so an import is either all there or not at all.
"""

from __future__ import annotations

import dataclasses
import getpass
import os
import shlex
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep import __version__
from shellkeep.agents.generic import exchanges_from_recording
from shellkeep.agents.registry import adapter_for
from shellkeep.app.context import Context
from shellkeep.archive.index import index_ended_session
from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.capture.redaction import redactor_for
from shellkeep.errors import DataError, UserInputError
from shellkeep.store.paths import FILE_MODE, ensure_dir
from shellkeep.vault.exchanges import write_exchanges
from shellkeep.vault.recording import open_recording
from shellkeep.vault.scrubber import redact_events, redact_meta
from shellkeep.store.session import CAST_FILE, META_FILE, SessionMeta, Status, host_name, iso, new_session_id, readable_text, utc_now
from shellkeep.store.atomic import write_json_atomic
from shellkeep.vault.crypto import EncryptedWriter

if TYPE_CHECKING:
    from typing import BinaryIO

    from shellkeep.agents.base import Exchange
    from shellkeep.capture.redaction import Redactor
    from shellkeep.vault.crypto import Key
    from shellkeep.asciicast.model import Header
    from shellkeep.asciicast.reader import Cast

__all__ = ["ImportRequest", "import_recording"]


@dataclass(frozen=True, slots=True)
class ImportRequest:
    """What to import: ``source`` (a recording file), into the project rooted at
    ``project_root``, with ``cwd`` recorded as the session's directory and an optional
    session ``name``."""

    source: Path
    project_root: Path
    cwd: Path
    name: str | None = None


@dataclass(frozen=True, slots=True)
class _Summary:
    """What a validating pass over the recording found."""

    version: int
    events: int
    duration: float
    output_bytes: int
    input_bytes: int
    exit_code: int | None


def import_recording(ctx: Context, request: ImportRequest) -> SessionMeta:
    """Validate, convert and store ``request.source`` as a new session, index it, and
    return its metadata. Redaction and sealing follow ``ctx``'s settings, as recording does.

    Raises UserInputError when the file is missing or not a file, DataError when it is not
    a valid asciicast recording (nothing is stored then), OSError when the store cannot be
    written (the half-written folder is removed).
    """
    paths = ctx.paths
    source = request.source
    if not source.exists():
        raise UserInputError(f"no file '{source}'; give the path of an asciicast recording (.cast or .json)")
    if not source.is_file():
        raise UserInputError(f"'{source}' is not a file; give the path of an asciicast recording (.cast or .json)")
    try:
        cast = open_recording(source)
        summary = _validate(cast)
    except DataError as exc:
        raise DataError(f"cannot import {_one_line(str(exc))}; nothing was imported") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"cannot import {source}: not UTF-8 text ({exc.reason}); nothing was imported") from exc
    started = _start_of(cast.header.timestamp, source, summary.duration)
    redactor = redactor_for(ctx.config.redact) if ctx.config.redact.enabled else None
    project_dir = ensure_dir(paths.project_dir(request.project_root))
    staging = project_dir / f".import-{os.getpid()}-{os.urandom(4).hex()}"
    staging.mkdir(mode=0o700)
    try:
        _write_v2(cast, staging / CAST_FILE, redactor, ctx.vault.writing_key())
        exchanges = _exchanges(cast, summary, started)
        write_exchanges(staging, exchanges, ctx.vault, redactor=redactor)
        for _ in range(20):
            final = project_dir / new_session_id(started)
            meta = _meta_for(request, cast.header, summary, final, started, len(exchanges))
            if redactor is not None:
                meta = redact_meta(meta, redactor)
            write_json_atomic(staging / META_FILE, meta.to_json())
            try:
                os.rename(staging, final)
                break
            except OSError:
                if not final.exists():
                    raise
        else:
            raise FileExistsError(17, "no free session id", str(project_dir))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    index_ended_session(paths, meta, vault=ctx.vault)
    return meta


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _validate(cast: Cast) -> _Summary:
    """Read every event once (raises DataError on a corrupt one) and sum it up."""
    events = 0
    last = 0.0
    out_bytes = in_bytes = 0
    exit_code: int | None = None
    for event in cast.events():
        events += 1
        last = event.time
        if event.code == "o":
            out_bytes += len(event.data.encode("utf-8", "surrogatepass"))
        elif event.code == "i":
            in_bytes += len(event.data.encode("utf-8", "surrogatepass"))
        elif event.code == "x":
            try:
                exit_code = int(event.data)
            except ValueError:
                exit_code = None
    return _Summary(cast.header.version, events, last, out_bytes, in_bytes, exit_code)


def _start_of(timestamp: int | None, source: Path, duration: float) -> datetime:
    """The recording's start: its header timestamp, else the file's time less its length."""
    if timestamp is not None and timestamp > 0:
        return datetime.fromtimestamp(timestamp, timezone.utc)
    try:
        return datetime.fromtimestamp(max(0.0, source.stat().st_mtime - duration), timezone.utc)
    except OSError:
        return utc_now()


def _write_v2(cast: Cast, target: Path, redactor: Redactor | None, key: Key | None) -> None:
    """Write the recording as asciicast v2 (``x`` events dropped: v2 has none).

    Secrets are redacted before anything is written, output and input each as one stream
    (so a secret split across two events is caught); a recording without any keeps its
    events exactly as they were. With a ``key`` it is sealed record by record as a
    recording is: nothing of the original reaches the disk in the clear.
    """
    header = dataclasses.replace(cast.header, version=2)
    events: Iterable[tuple[float, str, str]] = ((e.time, e.code, e.data) for e in cast.events() if e.code != "x")
    if redactor is not None:
        redacted_header, redacted, added = redact_events(cast, redactor)
        if added > 0:  # else the events stay exactly as they were (no held text merged)
            header, events = redacted_header, redacted
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    out: BinaryIO = os.fdopen(fd, "wb", buffering=1 << 16)
    if key is not None:
        out = EncryptedWriter(out, key)  # type: ignore[assignment]
    with out:
        out.write(encode_header(header))
        for time, code, data in events:
            out.write(encode_event(time, code, data))
        out.flush()
        os.fsync(out.fileno())


def _meta_for(
    request: ImportRequest,
    header: Header,
    summary: _Summary,
    folder: Path,
    started: datetime,
    exchange_count: int,
) -> SessionMeta:
    from datetime import timedelta

    command = _command_of(header)
    env = header.env
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    size = header.size
    return SessionMeta(
        id=folder.name,
        project=folder.parent.name,
        project_root=readable_text(str(request.project_root)),
        cwd=readable_text(str(request.cwd)),
        command=command,
        agent=_agent_of(command),
        started_at=iso(started),
        name=readable_text(request.name) if request.name else request.name,
        title=header.title,
        host=host_name(),
        user=user,
        term=env.get("TERM"),
        shell=env.get("SHELL"),
        cols=size.cols,
        rows=size.rows,
        ended_at=iso(started + timedelta(seconds=summary.duration)),
        duration=round(summary.duration, 3),
        exit_code=summary.exit_code,
        status=Status.FINISHED.value,
        cast=str(folder / CAST_FILE),
        output_bytes=summary.output_bytes,
        input_bytes=summary.input_bytes,
        exchange_count=exchange_count,
        shellkeep_version=__version__,
        extra={
            "imported_from": str(request.source.resolve()),
            "imported_at": iso(utc_now()),
            "imported_version": summary.version,
        },
    )


_WRAPPERS = frozenset({"env", "exec", "command", "nohup", "nice", "time", "sudo", "doas"})


def _agent_of(command: list[str]) -> str:
    """Return the agent an imported recording's command ran, as a recording would name it.

    The adapter that recognises the command names it (``npx @anthropic-ai/claude-code`` is
    ``claude``); for any other program, the first word after wrappers (``env``, ``sudo``,
    ``VAR=value`` assignments and their options) and a shell's ``-c`` script: ``env TERM=x
    bash -l`` is ``bash``, ``sh -c 'vim notes'`` is ``vim``. "imported" without a command.
    """
    if not command:
        return "imported"
    words = list(command)
    while words and (os.path.basename(words[0]) in _WRAPPERS or "=" in words[0] or words[0].startswith("-")):
        words.pop(0)
    if len(words) >= 3 and os.path.basename(words[0]) in ("sh", "bash", "zsh", "fish", "dash") and words[1] == "-c":
        try:
            script = shlex.split(words[2])
        except ValueError:
            script = []
        return _agent_of(script) if script else os.path.basename(words[0])
    if not words:
        return os.path.basename(command[0])
    return adapter_for(words).agent_name(words)


def _command_of(header: Header) -> list[str]:
    """Return the recorded command as argv (its text as one word when it is not shell syntax)."""
    text = header.command
    try:
        return shlex.split(text) if text else []
    except ValueError:
        return [text] if text else []


def _exchanges(cast: Cast, summary: _Summary, started: datetime) -> list[Exchange]:
    """Rebuild exchanges from typed input, where the recording has any (``i`` events), with the
    screen chrome of the agent the recorded command ran."""
    if summary.input_bytes == 0:
        return []

    size = cast.header.size
    chrome = adapter_for(_command_of(cast.header)).screen_chrome
    return exchanges_from_recording(cast.events(), cols=size.cols, rows=size.rows, started_at=started, chrome=chrome)

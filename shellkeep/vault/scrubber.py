"""Re-apply the current redaction rules to a stored session (``shellkeep redact``).

Rules added after a session was recorded (or a session recorded with ``--no-redact``)
can be applied later: the recording's output and input streams go through a
``StreamRedactor`` each (a secret split across two events is still caught), marker labels
and the header's command and title through the whole-text ``Redactor``; every string value
of ``exchanges.jsonl`` and of the agent transcript copies under ``agent/`` (JSONL, one
JSON value a line; other text files as text); and ``meta.json``'s command, name and title.

Each file is rewritten only when something changed, atomically (temporary file, fsync,
rename), in the form it had: a zstd recording stays compressed, an encrypted file stays
encrypted (with the current key). A copy kept in the chunk store is stored again, streamed,
under its reference; the chunks that held the secrets are swept unless another session's
copy still names them. The session is indexed again afterwards, so the search index no
longer holds what was removed.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.capture.redaction import MARKER_PREFIX, RULES
from shellkeep.errors import ShellkeepError
from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.store.atomic import FileChanged, FileIdentity, file_identity, write_bytes_atomic
from shellkeep.store.chunks import ref_files, ref_name, sweep
from shellkeep.store.session import AGENT_FOLDER, CAST_FILES, SessionMeta, Status, is_interrupted, read_meta, session_lock, write_meta
from shellkeep.vault.copies import copy_ref, rewrite_copy, sealed_with
from shellkeep.vault.crypto import SEARCH_FILE, is_encrypted, key_id_of_file, private_files, split_records, write_records_atomic
from shellkeep.vault.recording import ZSTD_MAGIC, is_compressed
from shellkeep.vault.seekable import compressed_frames
from shellkeep.logs import get_logger
from shellkeep.capture.redaction import StreamRedactor

if TYPE_CHECKING:
    from shellkeep.asciicast.model import Header
    from shellkeep.asciicast.reader import Cast
    from shellkeep.capture.redaction import Redactor
    from shellkeep.vault.access import Vault

log = get_logger(__name__)

_MARK = MARKER_PREFIX


@dataclass(frozen=True, slots=True)
class RedactResult:
    """What ``redact_session`` changed (``redact --json``).

    files: names (relative to the session folder) of the files rewritten; secrets: how
    many markers were added in all; meta_changed: ``meta.json`` was rewritten; reindexed:
    the search index was updated (False when it could not be, see the log).
    """

    session_id: str
    files: tuple[str, ...]
    secrets: int
    meta_changed: bool
    reindexed: bool


class SessionRunning(ShellkeepError):
    """The session is still being recorded; its files cannot be rewritten now (exit 1)."""


def redact_session(vault: Vault, meta: SessionMeta, redactor: Redactor) -> RedactResult:
    """Apply ``redactor`` to every stored file of ``meta``'s session (see the module doc).

    vault: reads and reseals the session's sealed files. The result's ``reindexed`` is
    False: updating the index is the caller's (``app.redact``). Raises SessionRunning for a session still recording, DataError for a damaged file,
    KeyUnavailable when an encrypted file's key is missing (nothing is rewritten before
    the file has been read whole), ShellkeepError when a file cannot be written.
    """
    if meta.status == Status.RUNNING.value and not is_interrupted(meta):
        raise SessionRunning(f"session {meta.id} is still recording; run 'shellkeep redact' once it has ended")
    folder = meta.folder
    try:
        with session_lock(folder):  # the compression after a session renames the recording
            # The recording under the name meta.json gives it now (compressed meanwhile: .zst).
            meta = dataclasses.replace(meta, cast=read_meta(folder).cast)
            return _redact_locked(vault, meta, redactor)
    except OSError as exc:
        raise ShellkeepError(f"cannot rewrite {folder}: {exc.strerror or exc}; nothing else was changed") from exc


def _redact_locked(vault: Vault, meta: SessionMeta, redactor: Redactor) -> RedactResult:
    folder = meta.folder
    changed: list[str] = []
    secrets = 0
    try:
        for path in private_files(folder):
            rel = str(path.relative_to(folder))
            if path.name == SEARCH_FILE:
                continue  # derived; rebuilt below
            is_cast = path.name in CAST_FILES and path.parent == folder
            added = _with_retries(
                lambda: _redact_cast(path, redactor, vault) if is_cast else _redact_text_file(path, redactor, vault)
            )
            if added is not None:
                changed.append(rel)
                secrets += added
        for name in _referenced_copies(folder):
            markers = _redact_copy(vault, folder, name, redactor)
            if markers is not None:
                changed.append(f"{AGENT_FOLDER}/{name}")
                secrets += markers
        new_meta = redact_meta(meta, redactor)
        meta_changed = new_meta != meta
        if meta_changed:
            secrets += _count(json.dumps(new_meta.to_json())) - _count(json.dumps(meta.to_json()))
            write_meta(new_meta)
    except OSError as exc:
        raise ShellkeepError(f"cannot rewrite {folder}: {exc.strerror or exc}; nothing else was changed") from exc
    if changed or meta_changed:
        (folder / SEARCH_FILE).unlink(missing_ok=True)
    if any(rel.startswith(f"{AGENT_FOLDER}/") for rel in changed):
        sweep(vault.paths)  # the unredacted chunks go, unless another session's copy still names them
    return RedactResult(meta.id, tuple(changed), max(0, secrets), meta_changed, False)


def _with_retries(rewrite: Callable[[], int | None], attempts: int = 5) -> int | None:
    """Run a file rewrite again when another process changed the file meanwhile (the
    compression that follows a session runs in the background); its result is redacted again."""
    for attempt in range(attempts):
        try:
            return rewrite()
        except FileChanged:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    return None


def _count(text: str) -> int:
    return text.count(_MARK)


def redact_meta(meta: SessionMeta, redactor: Redactor) -> SessionMeta:
    """Return ``meta`` with its command, name, title and plan (``app.plan``) redacted, marked ``redacted``."""

    def clean(text: str | None) -> str | None:
        return None if text is None else redactor.redact(text)

    return dataclasses.replace(
        meta,
        command=[redactor.redact(arg) for arg in meta.command],
        name=clean(meta.name),
        title=clean(meta.title),
        about=clean(meta.about),
        plan=None if meta.plan is None else json.loads(redact_jsonl_text(json.dumps(meta.plan, ensure_ascii=False), redactor)),
        redacted=True,
    )


# -- the recording ----------------------------------------------------------------------------


def _redact_cast(path: Path, redactor: Redactor, vault: Vault) -> int | None:
    """Rewrite a recording with its secrets redacted; return markers added, None if unchanged."""
    before_id = file_identity(path)
    cast = vault.open_recording(path)
    header, events, added = redact_events(cast, redactor)
    if added <= 0:
        return None
    out = [encode_header(header)]
    out += [encode_event(time, code, data) for time, code, data in events]
    _store_like(path, b"".join(out), vault, line_records=True, expect=before_id)
    return added


def redact_events(cast: Cast, redactor: Redactor) -> tuple[Header, list[tuple[float, str, str]], int]:
    """Return ``cast``'s header (as v2) and events with secrets redacted, and the markers added.

    Events are ``(time, code, data)``, ``x`` events dropped. Output and input are redacted
    as streams: a secret split across two events is caught, and text held back as a possible
    secret joins the next event of its stream, so events change only where a secret was.
    Markers are redacted whole; the header's command and title too.
    """
    header = cast.header
    new_header = dataclasses.replace(
        header,
        version=2,
        command=None if header.command is None else redactor.redact(header.command),
        title=None if header.title is None else redactor.redact(header.title),
    )
    added = _count(str(new_header.command)) + _count(str(new_header.title))
    added -= _count(str(header.command)) + _count(str(header.title))
    known: dict[str, str] = {}  # the same secret gets the same name in both streams
    streams = {"o": StreamRedactor(redactor, keep_columns=True, known=known), "i": StreamRedactor(redactor, known=known)}
    events: list[tuple[float, str, str]] = []
    last = 0.0
    for event in cast.events():
        if event.code == "x":
            continue
        last, text = event.time, event.data
        if event.code in streams:
            text = streams[event.code].feed(text)
        elif event.code == "m":
            text = redactor.redact(text)
        added += _count(text) - _count(event.data)
        if text or event.code not in streams:
            events.append((event.time, event.code, text))
    for code, stream in streams.items():
        rest = stream.flush()
        if rest:
            added += _count(rest)
            events.append((last, code, rest))
    return new_header, events, added


# -- exchanges and transcript copies ----------------------------------------------------------


def _redact_text_file(path: Path, redactor: Redactor, vault: Vault) -> int | None:
    """Redact a JSONL or text file in place; return markers added, None if unchanged or binary."""
    before_id = file_identity(path)
    raw = vault.read_private(path)
    compressed = raw[:4] == ZSTD_MAGIC
    if compressed:
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(raw).read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        log.info("leaving %s alone: not utf-8 text", path)
        return None
    new_text = redact_jsonl_text(text, redactor)
    if new_text == text:
        return None
    data = new_text.encode("utf-8")
    if compressed:
        import zstandard

        data = zstandard.ZstdCompressor(level=9).compress(data)
    _store_like(path, data, vault, line_records=not compressed, expect=before_id)
    return _count(new_text) - _count(text)


def _referenced_copies(folder: Path) -> list[str]:
    """Return the names of a session's copies kept in the chunk store."""
    return [ref_name(folder, path) for path in ref_files(folder)]


def _redact_copy(vault: Vault, folder: Path, name: str, redactor: Redactor) -> int | None:
    """Store a session's copy again redacted, streamed; return markers added, None if unchanged.

    The new chunks are sealed like the old ones (with the current key) or plain.
    """
    ref = copy_ref(folder, name)
    if ref is None:
        return None
    added = 0

    def redact(line: bytes) -> bytes:
        nonlocal added
        new = redact_jsonl_line(line, redactor)
        if new is not line:
            added += new.count(_MARK.encode()) - line.count(_MARK.encode())
        return new

    key = vault.key_for_rewrite(next(iter(sealed_with(vault, ref))) or "") if ref.sealed else None
    if not rewrite_copy(vault, folder, name, redact, key=key):
        return None
    return max(added, 0)


def redact_jsonl_text(text: str, redactor: Redactor) -> str:
    """Return JSONL (or plain) text with every string value of each JSON line redacted.

    Lines that are not JSON are redacted as text; unchanged lines are kept byte for byte,
    changed ones re-encoded in the line's own style (compact or spaced). For exchanges and
    agent transcript copies before they are stored.
    """
    return "".join(_redact_line(line, redactor) for line in text.splitlines(keepends=True))


def redact_jsonl_line(raw: bytes, redactor: Redactor) -> bytes:
    """Return one JSONL line's bytes redacted as ``redact_jsonl_text`` does (the same bytes when clean).

    Bytes that are not UTF-8 are kept as they are around the text that is redacted.
    """
    text = raw.decode("utf-8", "surrogateescape")
    new = _redact_line(text, redactor)
    return raw if new == text else new.encode("utf-8", "surrogateescape")


def _redact_line(line: str, redactor: Redactor) -> str:
    """Redact one line: each string of a JSON value (the rest of the line kept as written), else the text."""
    body = line.rstrip("\r\n")
    end = line[len(body) :]
    try:
        obj = json.loads(body)
    except ValueError:
        return redactor.redact(body) + end
    if _joinable(redactor):
        joined = "\n".join(_strings(obj))
        if redactor.redact(joined) == joined:  # one pass finds no secret in any of them: the line is clean
            return line
    new = _walk(obj, redactor)
    if new == obj:
        return line
    compact = '": ' not in body and '", "' not in body
    separators = (",", ":") if compact else (", ", ": ")
    return json.dumps(new, ensure_ascii=False, separators=separators) + end


_CONTEXT_SENSITIVE = re.compile(r"\^|\$|\\A|\\Z|\(\?<?!")
"""Regex syntax whose match in a string alone may fail once other text and a line break surround it."""

_joinable_cache: dict[int, tuple[Redactor, bool]] = {}


def _joinable(redactor: Redactor) -> bool:
    """Return whether every secret one of a line's strings holds is also found in their join by "\n".

    True when each rule is a built-in one (whose lookarounds treat a line break as they treat
    the end of the text) or uses no anchor and no negative lookaround; then one pass over the
    joined strings tells a clean line (most lines) at the cost of one call, not one a string.
    """
    cached = _joinable_cache.get(id(redactor))
    if cached is not None and cached[0] is redactor:
        return cached[1]
    builtin = {rule.pattern for rule in RULES}
    safe = all(rule.pattern in builtin or not _CONTEXT_SENSITIVE.search(rule.pattern) for rule in redactor.rules)
    _joinable_cache[id(redactor)] = (redactor, safe)
    return safe


def _strings(value: object) -> Iterator[str]:
    """Yield every string of a JSON value (keys are not redacted, so not yielded), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _walk(value: object, redactor: Redactor) -> object:
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_walk(v, redactor) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, redactor) for k, v in value.items()}
    return value


# -- writing back in the file's own form ------------------------------------------------------


def _store_like(path: Path, data: bytes, vault: Vault, *, line_records: bool, expect: FileIdentity) -> None:
    """Replace ``path`` with ``data`` in the form it had: zstd-compressed recording stays
    compressed (for the cast), encrypted stays encrypted; atomically."""
    encrypted = is_encrypted(path)
    if path.name in CAST_FILES and is_compressed(path, vault):
        import zstandard

        compressor = zstandard.ZstdCompressor(level=9, write_checksum=True)
        data = b"".join(compressed_frames(compressor, io.BytesIO(data)))
        line_records = False
    if not encrypted:
        write_bytes_atomic(path, data, expect=expect)
        return
    key = vault.key_for_rewrite(key_id_of_file(path) or "")
    pieces: Iterator[bytes] = split_records(data) if line_records else split_records(data, 1 << 20)
    write_records_atomic(path, pieces, key, expect=expect)

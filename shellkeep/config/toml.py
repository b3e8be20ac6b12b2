"""Read and quote TOML text: tomllib (tomli on Python 3.10) with its errors made one type.

Format: TOML 1.0 (toml.io/en/v1.0.0).
"""

from __future__ import annotations

import re
import stat
import sys
import typing
from pathlib import Path

from shellkeep.errors import ConfigError


class TomlError(Exception):
    """A TOML syntax error, with its 1-based line and column when known."""

    def __init__(self, reason: str, line: int | None, column: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


def toml_loads(text: str) -> dict[str, typing.Any]:
    """Parse TOML text (tomllib on 3.11+, tomli before); raise TomlError on bad syntax
    (nesting too deep for Python's recursion limit included)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise TomlError("arrays or tables nested too deeply", None, None) from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        reason = getattr(exc, "msg", None) or message
        line: int | None = getattr(exc, "lineno", None)
        column: int | None = getattr(exc, "colno", None)
        m = re.search(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)", message)
        if m is not None:
            if m.group(1):
                line, column = int(m.group(1)), int(m.group(2))
            else:
                line, column = text.count("\n") + 1, None
            if reason == message:
                reason = message[: m.start()]
        raise TomlError(reason[:1].lower() + reason[1:], line, column) from None


def parse_document(data: bytes, path: Path, fix: str) -> dict[str, typing.Any]:
    """Return the parsed TOML of a config file's bytes.

    Raises:
        ConfigError: the bytes are not utf-8 or not TOML, naming ``path``; ``fix`` says
            what to do.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file '{path}' is not valid utf-8; {fix}") from None
    try:
        return toml_loads(text)
    except TomlError as exc:
        where = f" at line {exc.line}" if exc.line is not None else ""
        where += f", column {exc.column}" if exc.line is not None and exc.column is not None else ""
        raise ConfigError(f"invalid toml in '{path}'{where}: {exc.reason}; {fix}") from None


def read_bytes(path: Path, fix: str) -> bytes | None:
    """Return the bytes of a config file, or None when it does not exist.

    A FIFO, socket or device in the file's place is refused rather than read (a read would block).

    Raises:
        ConfigError: the file exists but cannot be read; ``fix`` says what to do.
    """
    try:
        if not stat.S_ISREG(path.stat().st_mode) and not path.is_dir():  # a FIFO or device would block the read
            raise ConfigError(f"config file '{path}' is not a regular file; {fix}")
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read config file '{path}': {exc.strerror or exc}; {fix}") from None


def read_document(path: Path, fix: str) -> dict[str, typing.Any] | None:
    """Return the parsed TOML of ``path``, or None when it does not exist.

    Raises:
        ConfigError: the file cannot be read or is not TOML; ``fix`` says what to do.
    """
    data = read_bytes(path, fix)
    return None if data is None else parse_document(data, path, fix)


def toml_string(text: str) -> str:
    """Return a TOML literal string when possible (regexes stay readable), else a basic one."""
    plain = not any(ord(c) < 32 or ord(c) == 127 for c in text)
    if plain and "\\" not in text and '"' not in text:
        return f'"{text}"'
    if plain and "'" not in text:
        return f"'{text}'"
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'

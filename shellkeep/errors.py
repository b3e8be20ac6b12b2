"""Own the error classes of shellkeep and the exit status each one maps to.

Layers raise these; only ``cli/main.py`` turns them into a message and an exit status.
A message is one line: what is wrong, then what to do, lowercase, no trailing period.
"""

from __future__ import annotations


class ShellkeepError(Exception):
    """Base of every error shellkeep reports to the user (exit status 1)."""

    exit_code = 1


class UserInputError(ShellkeepError):
    """The user's input is wrong (exit status 2)."""

    exit_code = 2


class SessionNotFound(UserInputError):
    """No session matches the reference the user gave."""


class AmbiguousSession(UserInputError):
    """More than one session matches the reference the user gave."""


class ConfigError(UserInputError):
    """The configuration is invalid; the message names the file and key."""


class DataError(ShellkeepError):
    """Stored data is corrupt or from a newer version (exit status 3)."""

    exit_code = 3


class KeyUnavailable(ShellkeepError):
    """No key to encrypt with, or the key a file needs is in none of the key stores (exit 1).

    Defined here, not in ``vault.keys``, so that the sealed-file format (``vault.crypto``)
    and the key stores can both raise it without importing each other.
    """


class InternalError(ShellkeepError):
    """A bug in shellkeep (exit status 70)."""

    exit_code = 70


class AgentNotFound(ShellkeepError):
    """The program to run does not exist (exit status 127, like a shell)."""

    exit_code = 127


EXIT_OK = 0
EXIT_INTERRUPTED = 130

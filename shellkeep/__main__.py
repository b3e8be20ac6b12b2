"""Allow ``python -m shellkeep``."""

from shellkeep.cli.entry import entry

entry()

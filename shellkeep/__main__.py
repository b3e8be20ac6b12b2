"""Allow ``python -m shellkeep``."""

from shellkeep.cli.main import entry

entry()

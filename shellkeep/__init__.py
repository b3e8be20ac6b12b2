"""shellkeep: record AI coding-agent sessions in a pty and put them back after a crash."""

__version__ = "0.1.0"

"""Drive real agent CLIs (Claude Code, Codex) against loopback stand-in model servers."""

"""The MCP server of ``shellkeep mcp``: the archive as a read-only Model Context Protocol server.

A reader beside ``tui`` and ``web``: it imports ``app`` and the layers below, and is imported only
by ``cli/mcp.py``, so the ``mcp`` SDK (and what it brings) loads for that command alone.
"""

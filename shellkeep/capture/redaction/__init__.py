"""Replace secrets in recorded text with ``[REDACTED:<name>]``: the rules, engine and redactors.

``rules`` holds the one table of built-in rules with their prefilter keywords, ``engine`` the
compiled rules (keyword prefilter, matching, the hold by the ``regex`` package's partial
matching), ``screen_view`` what a terminal shows of a text and how a marker is drawn in it,
``line_repair`` the redraw of a line whose marker a later edit broke,
``known`` the secrets a session's streams share (one name per secret), ``redactor`` the
``Redactor`` and ``StreamRedactor`` the capture path uses. The public names are re-exported here.
"""

from __future__ import annotations

from shellkeep.capture.redaction.redactor import (
    Redactor,
    StreamRedactor,
    build_redactor,
    default_stream_redactor,
    redactor_for,
)
from shellkeep.capture.redaction.rules import FAKE_HEX, MARKER, MARKER_PREFIX, RULES, RedactionRule, user_rule

__all__ = [
    "FAKE_HEX",
    "MARKER",
    "MARKER_PREFIX",
    "RULES",
    "RedactionRule",
    "Redactor",
    "StreamRedactor",
    "build_redactor",
    "default_stream_redactor",
    "redactor_for",
    "user_rule",
]

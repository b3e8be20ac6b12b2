"""Derived data over the stored sessions: the SQLite index, search, timeline and export formats."""

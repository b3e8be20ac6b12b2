"""The Textual session picker (imported lazily, only by commands that show it)."""

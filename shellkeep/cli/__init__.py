"""The command line: one module per command, thin; the only package that prints."""

"""One module per use case; builds the run context (paths, settings, keys) once per command."""

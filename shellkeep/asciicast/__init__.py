"""Own the asciicast format: a version-neutral model, the v2 encoder, a v1/v2/v3 reader."""

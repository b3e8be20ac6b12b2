"""Own where and how sessions are kept: paths, metadata, listing, recovery."""

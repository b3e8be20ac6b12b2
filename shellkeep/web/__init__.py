"""The web view of ``shellkeep serve``: an ASGI application (Starlette), served by uvicorn.

A front end beside ``tui``: it imports ``app`` and the layers below, and is imported only by
``cli/serve.py``, so Starlette, uvicorn, Jinja2 and segno load for that command alone.
"""

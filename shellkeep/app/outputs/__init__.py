"""The recording session's outputs besides the recording itself, one per module.

Each is a ``capture.output.SessionOutput`` (start, event, close) that ``app.recording``
puts in the session's ``OutputPipeline``: the status file (``live.json``), the waiting watch
(notifiers), the checkpoint watcher (``shellkeep mark``) and the live socket (watch, serve).
"""

"""A loopback OTLP/HTTP traces receiver for the OTLP export tests, and the config they write.

``OtlpReceiver`` is a real ``http.server`` on 127.0.0.1 that accepts ``POST /v1/traces`` and
keeps each body; ``requests`` decodes them with the OpenTelemetry protobuf definitions
(opentelemetry-proto's ``ExportTraceServiceRequest``).
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from shellkeep.store.paths import Paths


class OtlpReceiver:
    """A loopback OTLP/HTTP traces receiver; ``endpoint`` is ``http://127.0.0.1:PORT/v1/traces``.

    statuses: the HTTP statuses of the first answers (then 200). hold: when given, each
    request waits for it before it is answered. port: listen there (a receiver started again
    where a stopped one was); 0 picks a free one. max_body_bytes: a larger request is answered
    413 (Payload Too Large), as a collector's request size limit does.
    """

    def __init__(
        self, statuses: list[int] | None = None, hold: threading.Event | None = None, port: int = 0, max_body_bytes: int = 0
    ) -> None:
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        self.answered = 0
        self._statuses = list(statuses or [])
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with receiver._lock:
                    receiver.bodies.append(body)
                    receiver.paths.append(self.path)
                    status = receiver._statuses.pop(0) if receiver._statuses else 200
                    if max_body_bytes and len(body) > max_body_bytes:
                        status = 413
                if hold is not None:
                    hold.wait(60)
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()
                with receiver._lock:
                    receiver.answered += 1

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def requests(self) -> list[ExportTraceServiceRequest]:
        """Return every body received, decoded."""
        with self._lock:
            bodies = list(self.bodies)
        decoded = []
        for body in bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            decoded.append(request)
        return decoded

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def configure_otlp(paths: Paths, endpoint: str, **more: object) -> None:
    """Write a user config file holding only an ``[export.otlp]`` table."""
    lines = ["[export.otlp]", f'endpoint = "{endpoint}"'] + [f"{k} = {str(v).lower() if isinstance(v, bool) else v}" for k, v in more.items()]
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("\n".join(lines) + "\n")


def value(v: AnyValue) -> object:
    """Return the Python value an OTLP ``AnyValue`` holds."""
    return getattr(v, v.WhichOneof("value"))


def spans(request: ExportTraceServiceRequest) -> list[tuple[str, dict[str, object], bytes, bytes]]:
    """Return (name, attributes, span id, parent span id) of every span in a request."""
    found = []
    for rs in request.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                found.append((span.name, {a.key: value(a.value) for a in span.attributes}, span.span_id, span.parent_span_id))
    return found

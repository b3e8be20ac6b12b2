"""Own what happens between the relay and the disk: queue, coalescing, filtering, redaction."""

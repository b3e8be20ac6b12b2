"""Agent transcripts in the real formats, written line by line, for tests and bench/.

Claude Code 2.1 transcript JSONL (records linked by ``uuid``/``parentUuid``, envelope fields
as 2.1.332 writes them, tool results with their ``toolUseResult``) and Codex 0.171 rollout
JSONL (``{timestamp, type, payload}``), as in /work/shared/reference/agents.md and its
agent-samples. Exchange ``i`` asks ``prompt i`` and is answered ``answer i``, with one
tool call whose result carries ``filler_bytes`` of file content.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

START = datetime(2026, 11, 29, 10, 15, tzinfo=timezone.utc)


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def claude_uuid(i: int, step: int) -> str:
    """Return the uuid of record ``step`` (0-3) of exchange ``i``."""
    return str(uuidlib.UUID(int=(i << 8) | step | (0x4 << 76) | (0x8 << 60)))


def _file_content(size: int) -> str:
    """Return ``size`` characters of numbered source lines (as Claude Code's Read shows them)."""
    lines: list[str] = []
    total = 0
    n = 1
    while total < size:
        lines.append(f"{n}\tline {n} of the file\n")
        total += len(lines[-1])
        n += 1
    return "".join(lines)[:size]


def claude_lines(
    exchanges: int, *, session_id: str, cwd: str, start: datetime = START, filler_bytes: int = 200, first: int = 0
) -> Iterator[bytes]:
    """Yield the lines (with newlines) of a Claude Code transcript of ``exchanges`` exchanges.

    Each exchange is four records: the prompt, an answer starting a Read tool call, the tool
    result (``filler_bytes`` of file content, twice: in the message and ``toolUseResult``),
    and the final answer. first: the number of the first exchange (to continue a transcript).
    """
    envelope = {
        "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id,
        "version": "2.1.332", "gitBranch": "main",
    }  # fmt: skip
    if first == 0:
        yield (json.dumps({"type": "permission-mode", "permissionMode": "default", "sessionId": session_id}) + "\n").encode()
    content = _file_content(filler_bytes)
    for i in range(first, first + exchanges):
        at = start + timedelta(seconds=10 * i)
        parent = claude_uuid(i - 1, 3) if i else None
        records = [
            {"parentUuid": parent, **envelope, "entrypoint": "cli", "type": "user",
             "message": {"role": "user", "content": f"prompt {i}"}, "uuid": claude_uuid(i, 0),
             "timestamp": _iso(at), "promptId": f"p-{i}"},
            {"parentUuid": claude_uuid(i, 0), **envelope,
             "message": {"id": f"msg_{i}a", "type": "message", "role": "assistant", "model": "claude-sonnet-x",
                         "content": [{"type": "text", "text": f"looking {i}"},
                                     {"type": "tool_use", "id": f"toolu_{i}", "name": "Read",
                                      "input": {"file_path": f"{cwd}/f{i}.py"}}],
                         "stop_reason": "tool_use", "stop_sequence": None,
                         "usage": {"input_tokens": 100, "cache_creation_input_tokens": 0,
                                   "cache_read_input_tokens": 50, "output_tokens": 10}},
             "requestId": f"req_{i}a", "type": "assistant", "uuid": claude_uuid(i, 1),
             "timestamp": _iso(at + timedelta(seconds=1))},
            {"parentUuid": claude_uuid(i, 1), **envelope, "type": "user",
             "message": {"role": "user", "content": [{"tool_use_id": f"toolu_{i}", "type": "tool_result",
                                                      "content": content}]},
             "uuid": claude_uuid(i, 2), "timestamp": _iso(at + timedelta(seconds=2)),
             "toolUseResult": {"type": "text", "file": {"filePath": f"{cwd}/f{i}.py", "content": content,
                                                        "numLines": content.count("\n")}}},
            {"parentUuid": claude_uuid(i, 2), **envelope,
             "message": {"id": f"msg_{i}b", "type": "message", "role": "assistant", "model": "claude-sonnet-x",
                         "content": [{"type": "text", "text": f"answer {i}"}], "stop_reason": "end_turn",
                         "stop_sequence": None,
                         "usage": {"input_tokens": 120, "cache_read_input_tokens": 60, "output_tokens": 5}},
             "requestId": f"req_{i}b", "type": "assistant", "uuid": claude_uuid(i, 3),
             "timestamp": _iso(at + timedelta(seconds=3))},
        ]  # fmt: skip
        for record in records:
            yield (json.dumps(record, separators=(",", ":")) + "\n").encode()


def codex_lines(exchanges: int, *, thread_id: str, cwd: str, start: datetime = START, filler_bytes: int = 200) -> Iterator[bytes]:
    """Yield the lines (with newlines) of a Codex rollout of ``exchanges`` exchanges."""

    def line(at: datetime, kind: str, payload: dict[str, object]) -> bytes:
        return (json.dumps({"timestamp": _iso(at), "type": kind, "payload": payload}, separators=(",", ":")) + "\n").encode()

    yield line(start, "session_meta", {
        "id": thread_id, "timestamp": _iso(start), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.171.0",
        "source": "cli", "model_provider": "openai", "base_instructions": None,
    })  # fmt: skip
    output = ("x" * filler_bytes)
    for i in range(exchanges):
        at = start + timedelta(seconds=10 * i + 1)
        yield line(at, "turn_context", {"turn_id": f"turn-{i}", "cwd": cwd, "model": "gpt-x-codex", "effort": "medium"})
        yield line(at, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"prompt {i}"}]})
        yield line(at, "event_msg", {"type": "user_message", "message": f"prompt {i}", "images": []})
        yield line(at, "response_item", {"type": "function_call", "name": "exec_command",
                                         "arguments": json.dumps({"cmd": f"cat f{i}.py"}), "call_id": f"call_{i}"})  # fmt: skip
        yield line(at, "response_item", {"type": "function_call_output", "call_id": f"call_{i}", "output": output})
        yield line(at, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"answer {i}"}]})
        yield line(at, "event_msg", {"type": "agent_message", "message": f"answer {i}"})
        yield line(at, "event_msg", {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 100 * (i + 1), "output_tokens": 10 * (i + 1)},
            "last_token_usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10}}})  # fmt: skip


FAKE_CLAUDE = r'''#!/usr/bin/env python3
"""A stand-in for claude: takes $BENCH_TRANSCRIPT as its conversation, appends an exchange, waits."""
import json, os, re, sys, time, uuid
from datetime import datetime, timezone
args = sys.argv[1:]
sid = args[args.index("--session-id") + 1] if "--session-id" in args else args[args.index("--resume") + 1]
root = os.environ["CLAUDE_CONFIG_DIR"]
folder = os.path.join(root, "projects", re.sub(r"[^a-zA-Z0-9]", "-", os.getcwd()))
os.makedirs(folder, exist_ok=True)
path = os.path.join(folder, sid + ".jsonl")
given = os.environ.get("BENCH_TRANSCRIPT")
if given and os.path.exists(given) and not os.path.exists(path):
    os.rename(given, path)
now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
parent = None
if os.path.exists(path):  # link to the last record, as Claude Code does on --resume
    with open(path, "rb") as fh:
        fh.seek(max(0, os.path.getsize(path) - 65536))
        found = re.findall(rb'"uuid":\s*"([^"]+)"', fh.read())
        parent = found[-1].decode() if found else None
u = str(uuid.uuid4())
with open(path, "a") as fh:
    fh.write(json.dumps({"parentUuid": parent, "type": "user", "uuid": u, "timestamp": now,
                         "sessionId": sid, "message": {"role": "user", "content": "bench prompt " + str(os.getpid())}}) + "\n")
    fh.write(json.dumps({"parentUuid": u, "type": "assistant", "uuid": str(uuid.uuid4()), "timestamp": now,
                         "sessionId": sid, "message": {"id": "m" + u, "role": "assistant", "model": "x",
                         "content": [{"type": "text", "text": "bench answer"}]}}) + "\n")
sys.stdout.write("\x1b[2J\x1b[H" + "%s %s\r\n> " % (os.environ.get("BENCH_SCREEN", "BENCH"), "resumed" if "--resume" in args else "new"))
sys.stdout.flush()
sys.stdin.readline()
with open(os.environ["BENCH_EXIT_FILE"], "w") as fh:
    fh.write(repr(time.time()))
'''
"""A stand-in ``claude`` program (install it as ``claude`` on PATH): with ``--session-id ID``
(shellkeep pre-assigns one) it takes ``$BENCH_TRANSCRIPT`` as that conversation's transcript
under ``$CLAUDE_CONFIG_DIR``; with ``--resume ID`` it goes on with it. Either way it appends
one exchange linked to the last record, draws ``$BENCH_SCREEN``, waits for a line on stdin,
and writes the time it exits to ``$BENCH_EXIT_FILE``."""

"""``shellkeep.mcp.framing`` on the SDK's own message streams, in process: the end of stdin waits
for the replies owed, and only for those (a cancelled request is owed none).

The whole server on a real stdio pipe, stdin closed right after the requests and malformed
lines among them, is tested in tests/e2e/test_mcp_stdio.py.
"""

from __future__ import annotations

import anyio
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from shellkeep.mcp.framing import answer_every_line


def test_the_end_of_stdin_waits_for_each_reply_owed_and_not_for_a_cancelled_request() -> None:
    async def scenario() -> list[str]:
        said: list[str] = []
        to_server, from_stdin = create_context_streams[SessionMessage | Exception](8)
        to_stdout, written = create_context_streams[SessionMessage](8)
        requests, replies = answer_every_line(from_stdin, to_stdout)
        for n in (1, 2):
            await to_server.send(SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=n, method="tools/list")))
        cancel = {"requestId": 2, "reason": "the user pressed Esc"}
        await to_server.send(SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=cancel)))
        await to_server.aclose()  # stdin ends
        for _ in range(3):
            await requests.receive()

        async def read_to_the_end() -> None:
            try:
                await requests.receive()
            except anyio.EndOfStream:
                said.append("end")

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_to_the_end)
            await anyio.wait_all_tasks_blocked()
            said.append("reply")  # nothing ended before request 1 was answered
            await replies.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result={})))
        assert (await written.receive()).message.id == 1  # type: ignore[union-attr]
        return said

    assert anyio.run(scenario) == ["reply", "end"]

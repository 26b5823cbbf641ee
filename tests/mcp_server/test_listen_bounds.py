"""2026 ``subscriptions/listen`` streams of a real ``dsh mcp --http`` are bounded: a stream
ends once every task it named has ended, and past ``TASK_LISTEN_STREAMS`` open at once a
new listen is refused (raw JSON-RPC over HTTP)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness.tasks_wire import Listener, Wire2026, ask_call, http_dsh

from dsh_cli.core.limits import TASK_LISTEN_STREAMS

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


WITHIN = 20.0  # seconds a frame that is due may take (a stream left open sends only pings)


def within(read: Any) -> Any:
    """``read()``, failing the test when it takes longer than ``WITHIN`` seconds."""
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(read).result(WITHIN)
    finally:
        pool.shutdown(wait=False)  # a stuck read ends when the test closes its connection


def ended(listener: Listener) -> bool:
    """Whether the stream's HTTP response is over (nothing more will come)."""
    return within(lambda: listener.response.readline() == b"" or listener.response.read() == b"")


def test_a_listen_stream_ends_with_its_result_once_every_task_it_named_has_ended():
    with http_dsh("--wait", "60") as url:  # no desk: each task waits for one
        wire = Wire2026(url)
        first = wire.request("tools/call", ask_call())["result"]["taskId"]
        second = wire.request("tools/call", ask_call())["result"]["taskId"]
        listener = Listener(wire, {"taskIds": [first, second, "no-such-task"]})
        nothing = Listener(wire, {"taskIds": ["no-such-task"]})
        try:
            ack = listener.next()
            wire.request("tasks/cancel", {"taskId": first})
            heard_first = listener.next()
            wire.request("tasks/cancel", {"taskId": second})
            heard_second, last = listener.next(), within(listener.next)
            over = ended(listener)
            nothing_ack, nothing_last = nothing.next(), within(nothing.next)
            nothing_over = ended(nothing)
        finally:
            listener.close()
            nothing.close()
    assert ack["params"]["notifications"] == {"taskIds": [first, second]}
    assert [heard_first["params"]["taskId"], heard_second["params"]["taskId"]] == [first, second]
    assert heard_second["params"]["status"] == "cancelled"
    assert last == {"jsonrpc": "2.0", "id": listener.id,
                    "result": {"_meta": {SUBSCRIPTION_ID: listener.id}}}
    assert over
    assert nothing_ack["params"]["notifications"] == {"taskIds": []}
    assert nothing_last["result"] == {"_meta": {SUBSCRIPTION_ID: nothing.id}}
    assert nothing_over


def test_listen_streams_past_the_cap_are_refused_and_room_comes_back_as_they_end():
    with http_dsh("--wait", "60") as url:
        wire = Wire2026(url)
        task = wire.request("tools/call", ask_call())["result"]["taskId"]
        streams = [Listener(wire, {"taskIds": [task]}) for _ in range(TASK_LISTEN_STREAMS)]
        try:
            acks = [stream.next()["method"] for stream in streams]
            refused = Listener(wire, {"taskIds": [task]}).next()
            assert refused.get("error", {}).get("code") == -32600, refused
            wire.request("tasks/cancel", {"taskId": task})
            lasts = [(stream.next(), within(stream.next)) for stream in streams]
            again = Listener(wire, {"taskIds": [task]})
            served = again.next()
            again.close()
        finally:
            for stream in streams:
                stream.close()
    assert acks == ["notifications/subscriptions/acknowledged"] * TASK_LISTEN_STREAMS
    assert f"at most {TASK_LISTEN_STREAMS}" in refused["error"]["message"]
    assert all(heard["params"]["status"] == "cancelled" and "result" in last
               for heard, last in lasts)
    assert served["method"] == "notifications/subscriptions/acknowledged"

"""The stdio transport: a server's stdout read in bounded lines, parsed here, once.

The SDK's ``stdio_client`` builds a line of any length in memory before parsing it, lets
a line that is not UTF-8 stop its reader without closing the connection (every later
call then waits out its ``tool_timeout``), and logs each line that is not JSON-RPC as a
validation dump quoting it on stderr. This transport starts and stops the server as the
SDK does (its parameters and its shutdown sequence) and reads the pipes itself:

- a line over ``limit`` bytes, or one that is not UTF-8, ends the connection at once
  (``ended`` hears why): the calls waiting for an answer, and every later one, fail now
  instead of at their timeout (that line may have been the answer);
- a line over ``PARSED_WHOLE_BYTES`` is parsed as a stream into a bounded message
  (``streamed.py``), so what it builds stays as small as a short line's; one that would
  build more values than that ends the connection the same way;
- a line that is not JSON, or JSON that is not JSON-RPC, is left out with one sanitised
  notice per server and kind, and the connection goes on;
- the server's stderr goes to ``log`` (``mcp.log``, capped by ``ServerLog``), never the screen.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.core.limits import PARSED_WHOLE_BYTES
from dsh_cli.core.lines import notice as dsh_line
from dsh_cli.core.sanitize import one_line
from dsh_cli.mcp_client.transport.bounded import MessageTooLarge, lines
from dsh_cli.mcp_client.transport.streamed import NotJSON, TooManyValues, bounded_message

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

    from dsh_cli.mcp_client.transport.server_log import LogSink

__all__ = ["stdio_transport"]

QUOTED = 60  # characters of a stray line quoted in its notice
FLUSH_SECONDS = 0.5  # as the SDK's stdio_client waits for its writer before stdin closes


@contextlib.asynccontextmanager
async def stdio_transport(params: StdioServerParameters, *, name: str, limit: int,
                          log: LogSink, notice: Callable[[str], None],
                          ended: Callable[[str], None]) -> AsyncIterator[Any]:
    """Start the server; yield the SDK's (read, write) stream pair for its session.

    ``notice`` takes the ``dsh:`` line about a stray line; ``ended`` the reason when what
    the server wrote ends the connection.
    """
    import anyio
    import mcp_types

    # the SDK's shutdown (stdin closed, a grace period, the process tree killed) is
    # private, so each SDK release is checked by the tests that stop servers
    from mcp.client.stdio import _stop_server_process, get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [params.command, *params.args], env=get_default_environment() | (params.env or {}),
        stderr=subprocess.PIPE, cwd=params.cwd, start_new_session=True)
    to_session, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, from_session = anyio.create_memory_object_stream[Any](0)
    noted: set[str] = set()
    written = anyio.Event()

    def stray(kind: str, line: bytes) -> None:
        if kind not in noted:
            noted.add(kind)
            quoted = one_line(line[:QUOTED * 4].decode("utf-8", "replace"), QUOTED)
            notice(dsh_line(f"MCP server {name} wrote a line that is not {kind} on stdout "
                            f"(left out, as are any more like it): {quoted!r}"))

    async def parsed(line: bytes) -> Any:
        adapter = mcp_types.jsonrpc_message_adapter
        if len(line) <= PARSED_WHOLE_BYTES:  # the usual case: the SDK's own parse, at once
            return adapter.validate_json(line, by_name=False)
        # a worker thread, so the loop goes on while a long line is streamed
        return adapter.validate_python(await anyio.to_thread.run_sync(bounded_message, line),
                                       by_name=False)

    async def read_stdout() -> None:
        assert process.stdout is not None
        async with to_session, contextlib.aclosing(lines(process.stdout, limit)) as received:
            try:
                async for line in received:
                    if not line.strip():
                        continue
                    try:
                        message = await parsed(line)
                    except ValueError as error:
                        kind = _fault(line, error)
                        if kind == "UTF-8":
                            ended("wrote a line that is not UTF-8")
                            break
                        stray(kind, line)
                        continue
                    await to_session.send(SessionMessage(message))
            except (MessageTooLarge, TooManyValues) as error:
                ended(f"sent {error}")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass  # the session is gone
        # what the server still writes is read and dropped, so it is never stuck on a full
        # pipe when its stdin closes and it would end of its own accord
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                                 anyio.BrokenResourceError, OSError):
            while True:
                await process.stdout.receive()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for session_message in from_session:
                    data = session_message.message.model_dump_json(by_alias=True,
                                                                   exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the session sees the end, not a request hanging
        finally:
            written.set()

    async def copy_stderr() -> None:
        assert process.stderr is not None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                                 anyio.BrokenResourceError, OSError, ValueError):
            while True:
                log.write(decoder.decode(await process.stderr.receive()))
                log.flush()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        tasks.start_soon(copy_stderr)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):  # the server must not outlive the session
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(FLUSH_SECONDS):  # what the session sent goes out
                    await written.wait()
                await _stop_server_process(process)
                if process.stderr is not None:
                    with contextlib.suppress(OSError, anyio.BrokenResourceError):
                        await process.stderr.aclose()
            tasks.cancel_scope.cancel()


def _fault(line: bytes, error: ValueError) -> str:
    """What a line the parser refused with ``error`` is not: UTF-8, JSON, or JSON-RPC."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "UTF-8"
    if len(line) > PARSED_WHOLE_BYTES:  # streamed: its parser said whether it was JSON
        return "JSON" if isinstance(error, NotJSON) else "JSON-RPC"
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return "JSON"
    return "JSON-RPC"

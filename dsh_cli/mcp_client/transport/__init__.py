"""The MCP client's transports: stdio, bounded lines, streamed messages, server logs.

    stdio.py       the stdio transport: a server's stdout in bounded lines, parsed once
    bounded.py     a server's messages bounded before anything is built from them
    streamed.py    a long stdio line parsed as a stream into a bounded message
    server_log.py  ``mcp.log``: the servers' stderr and dsh's notices, one rotation
"""

"""The MCP client's transports: stdio, bounded lines, streamed messages, server logs."""

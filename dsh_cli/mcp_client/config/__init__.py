"""The MCP client's configuration: server entries, config files, the project file, trust."""

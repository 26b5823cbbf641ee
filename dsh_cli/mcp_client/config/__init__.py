"""The MCP client's configuration: server entries, config files, the project file, trust.

    servers.py      the ``mcpServers`` JSON format, parsed into server entries
    configured.py   every server of a session: the user's file, a trusted project's, flags'
    project.py      a project's ``.mcp.json``, read once
    trust.py        trusted projects: a project's servers run only once it is trusted
    runs.py         what a project's stdio server runs inside it: the files its trust covers
"""

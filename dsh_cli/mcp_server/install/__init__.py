"""``dsh mcp install AGENT``: dsh added to another agent's own configuration.

    documents.py     an agent's JSON or TOML file read, changed key by key, written safely
    agents.py        what each agent's documentation says to write, and where
    instructions.py  the line an agent's instructions file gets, so its model asks through dsh
"""

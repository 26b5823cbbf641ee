"""The MCP client's forms: elicitation, URL consents, continuation."""

"""Test doubles that plug into real clients: the OpenAI-compatible HTTP server."""

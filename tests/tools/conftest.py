"""Fixtures for tool tests: a bounded ``asyncio.run`` and a seam with a scripted provider."""

from __future__ import annotations



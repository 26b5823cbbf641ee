"""The ``serve`` fixture: a live WebHost on 127.0.0.1 per test."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from harness.web_site import Site

from dsh_cli.interaction import UserInteraction
from dsh_cli.providers.web import WebHost


@pytest.fixture
def serve():
    """``serve(scenario, chat=False)`` runs ``await scenario(site)`` against a live host."""

    def run(scenario: Any, *, chat: bool = False, session_id: str | None = "s1") -> None:
        async def main() -> None:
            ui = UserInteraction(session_id=session_id)
            stderr = io.StringIO()
            site: Site
            host = WebHost(ui, stderr=stderr,
                           on_message=(lambda text: site.messages.append(text)) if chat else None)
            site = Site(host, ui, stderr)
            await host.start()
            dispose = ui.register_provider(host.provider)
            try:
                await asyncio.wait_for(scenario(site), 20)
            finally:
                dispose()
                await host.close()

        asyncio.run(main())

    return run

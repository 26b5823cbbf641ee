"""Fixtures for the docs tests: the man page and README sources, the Click app's commands."""

from __future__ import annotations

import click
import pytest
from docs_reading import MAN_PAGE, README, CommandDoc, walk


@pytest.fixture(scope="session")
def commands() -> list[CommandDoc]:
    from dsh_cli.cli import main

    return walk(main, click.Context(main, info_name="dsh", **main.context_settings))


@pytest.fixture(scope="session")
def man_source() -> str:
    return MAN_PAGE.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def readme() -> str:
    return README.read_text(encoding="utf-8")

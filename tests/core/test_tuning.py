"""A duration read from the environment: a positive, finite number of seconds, or the default."""

from __future__ import annotations

import pytest

from dsh_cli.core.tuning import seconds_from_env


@pytest.mark.parametrize("given", ["", "soon", "0", "-1", "nan", "inf", "-inf"])
def test_what_is_no_positive_finite_number_is_the_default(monkeypatch, given):
    monkeypatch.setenv("DSH_TEST_SECONDS", given)
    assert seconds_from_env("DSH_TEST_SECONDS", 10.0) == 10.0


def test_a_positive_number_of_seconds_is_taken_and_an_unset_name_is_the_default(monkeypatch):
    monkeypatch.setenv("DSH_TEST_SECONDS", "2.5")
    assert seconds_from_env("DSH_TEST_SECONDS", 10.0) == 2.5
    monkeypatch.delenv("DSH_TEST_SECONDS")
    assert seconds_from_env("DSH_TEST_SECONDS", 10.0) == 10.0

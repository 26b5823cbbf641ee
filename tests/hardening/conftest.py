"""Hypothesis profiles for the hardening tests.

``ci`` (the default) runs a bounded number of examples per property so the suite stays
fast; ``deep`` runs many more when asked for:

    HYPOTHESIS_PROFILE=deep python -m pytest tests/hardening
"""

from __future__ import annotations

import json
import os

import pytest
from harness.hostile_text import SCRIPT
from hypothesis import HealthCheck, settings

# No example database: the suite must not write a .hypothesis directory into the checkout,
# and a failure prints its reproducing example (and @reproduce_failure blob) anyway.
_COMMON = {"database": None, "deadline": None,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}

settings.register_profile("ci", max_examples=100, **_COMMON)
settings.register_profile("deep", max_examples=5000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def script(tmp_path):
    """A scripted model (``--model script:…``) whose every text is hostile."""
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    return "script:script.json"

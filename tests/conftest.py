import os
import sys

import pytest

# tests/reference.py is imported as a plain module by the test files.
sys.path.insert(0, os.path.dirname(__file__))

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=30, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("FASTISA_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(12345)

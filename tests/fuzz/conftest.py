"""Fuzz budgets (issue 12): every fuzzer runs a short smoke budget in the default test run
and a long one under ``pytest -m fuzz`` (the marker is excluded from the default run, like
``slow``).  Each case draws from ``numpy.random.default_rng(seed + case)``, so a failure
names its case and replays exactly."""
import pytest

#: RNG seed of every fuzzer (``FASTISA_FUZZ_SEED`` overrides it for a fresh campaign).
import os

SEED = int(os.environ.get("FASTISA_FUZZ_SEED", "20261201"))


def budgets(smoke: int, long: int):
    """``@pytest.mark.parametrize("calls", budgets(...))``: the smoke budget, and the long
    one marked ``fuzz``."""
    return [pytest.param(smoke, id="smoke"),
            pytest.param(long, id="long", marks=pytest.mark.fuzz)]


class Case:
    """A failing case's seed in the assertion message."""

    def __init__(self, name, k):
        self.name, self.k = name, k

    def __str__(self):
        return f"{self.name} case {self.k} (seed {SEED})"

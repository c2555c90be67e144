"""pytest plugin of the NKI conformance harness (loaded into a collection's own test run
with ``-p tests.conformance._nki_cases``): which cases run, and for how long.

* **Small shapes by default** (when ``FASTISA_NKI_SMALL_ONLY=1``, which ``run_nki`` sets
  for nki-library unless ``--full``).  A case whose test id has an integer of at least
  :data:`LARGE` (``4096``; ``1024x1072`` counts as two integers, ``1.0`` or
  ``87000000.0`` are not integers) is skipped with the reason "large shape", when
  small shapes are selected.  nki-library's own simulation mode skips
  the ids that contain one of a few fixed numbers (4096, 5120, 8192, ...); this rule is
  the same idea for every dimension (9216, 10240, 12345 ... are as slow on a CPU).
  Cases the collection's own harness skips stay skipped.
* **A sample per test module** (``FASTISA_NKI_MAX_CASES=N``, ``run_nki --max-cases``):
  at most N of each module's runnable cases, evenly spaced; the others are skipped as
  "not sampled".
* **A shard of them** (``FASTISA_NKI_SHARD=K/N``, ``run_nki --shard K/N``): of each test
  module's runnable cases (after the sample), only every N-th, starting at the K-th
  (0-based); the others are skipped as "not in this shard".  N runs with K = 0 .. N-1
  together run every case once, so a slow directory can use several cores.
* **A time limit per case**, ``FASTISA_NKI_CASE_TIMEOUT`` seconds (default 0: none): a
  case still running then fails with ``TimeoutError: the case ran longer than N s``,
  and the run goes on with the next case (SIGALRM in the main thread).
* **A garbage collection after each case** (see :func:`pytest_runtest_logfinish`).
* **No artefacts kept** (``FASTISA_NKI_CLEAN_OUTPUT=1``, set by ``run_nki``, whose pytest runs
  in a temporary working directory): after each case, the per-test directories
  ``neuron_test_output/out-*`` nki-library's harness dumps every input and output tensor into
  are removed (one moe_block_tkg case writes 1.6 GB there; the whole small run would fill
  the disk before the directory's run ends and its temporary directory goes).
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import signal
from pathlib import Path

import pytest

LARGE = 4096
_SPLIT = re.compile(r"[^0-9A-Za-z.]+|(?<=\d)x(?=\d)")


def large_dims(case_id: str) -> list:
    """The integers >= LARGE in a test id (its parameter part, between the brackets)."""
    m = re.search(r"\[(.*)\]$", case_id)
    part = m.group(1) if m else ""
    return [int(t) for t in _SPLIT.split(part) if t.isdigit() and int(t) >= LARGE]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    _small_only(items)
    _sample(items)
    _shard(items)


def _skipped(item) -> bool:
    return any(m.name == "skip" or (m.name == "skipif" and m.args and m.args[0] is True)
               for m in item.iter_markers())


def _sample(items):
    """``FASTISA_NKI_MAX_CASES=N``: at most N of each test module's runnable cases, evenly
    spaced over its collection order (deterministic); the others are skipped as not
    sampled."""
    n = int(os.environ.get("FASTISA_NKI_MAX_CASES", "0") or 0)
    if n <= 0:
        return
    by_mod: dict = {}
    for item in items:
        if not _skipped(item):
            by_mod.setdefault(str(item.fspath), []).append(item)
    for mod, its in by_mod.items():
        if len(its) <= n:
            continue
        keep = {round(i * (len(its) - 1) / (n - 1)) for i in range(n)} if n > 1 else {0}
        for i, item in enumerate(its):
            if i not in keep:
                item.add_marker(pytest.mark.skip(
                    reason=f"not sampled: the harness runs {n} of this module's {len(its)} "
                           f"small cases (--max-cases 0 runs all)"))


def shard_spec(text: str):
    """``"K/N"`` -> ``(K, N)``; ``""`` -> ``None``.  Raises ValueError unless 0 <= K < N."""
    if not text:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not int(m.group(1)) < int(m.group(2)):
        raise ValueError(f"shard must be K/N with 0 <= K < N, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _shard(items):
    spec = shard_spec(os.environ.get("FASTISA_NKI_SHARD", ""))
    if spec is None:
        return
    k, n = spec
    by_mod: dict = {}
    for item in items:
        if not _skipped(item):
            by_mod.setdefault(str(item.fspath), []).append(item)
    for its in by_mod.values():
        for i, item in enumerate(its):
            if i % n != k:
                item.add_marker(pytest.mark.skip(
                    reason=f"not in this shard: the harness runs shard {k}/{n} (every {n}-th "
                           f"runnable case of this module)"))


def _small_only(items):
    if os.environ.get("FASTISA_NKI_SMALL_ONLY") != "1":
        return
    for item in items:
        big = large_dims(item.name)
        if big:
            item.add_marker(pytest.mark.skip(
                reason=f"large shape ({max(big)} >= {LARGE}): fastisa's conformance harness "
                       f"runs small shapes by default (--full runs it)"))


class CaseTimeout(BaseException):
    """A BaseException, so the collection's own ``except Exception`` handlers let it pass."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limit = int(float(os.environ.get("FASTISA_NKI_CASE_TIMEOUT", "0") or 0))
    if limit <= 0 or not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(signum, frame):
        raise CaseTimeout(f"TimeoutError: the case ran longer than {limit} s (the harness's "
                          f"--case-timeout)")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid, location):
    """After each case: a garbage collection, and with ``FASTISA_NKI_CLEAN_OUTPUT=1`` the
    removal of the case's dumped tensors (see the module docstring; only ``out-*``
    directories under ``neuron_test_output`` of the working directory, which run_nki makes a
    temporary one).  The collection: a failed case's exception chain (the harness re-raises
    it as its own ``InferenceException ... from e``) holds the kernel's frames and their
    arrays in reference cycles, which only the collector frees, and its thresholds count
    objects, not bytes -- nki-library's moe_cte directory grew to 14 GB and was killed by
    the OOM killer before this."""
    gc.collect()
    if os.environ.get("FASTISA_NKI_CLEAN_OUTPUT") != "1":
        return
    base = Path.cwd() / "neuron_test_output"
    if not base.is_dir():
        return
    for d in base.glob("out-*"):
        if d.is_dir() and not d.is_symlink():
            shutil.rmtree(d, ignore_errors=True)

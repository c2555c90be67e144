"""Benchmark: the NKI row-softmax instruction sequence, fastisa vs numpy + ml_dtypes.

The sequence (src/fastisa/examples/nki_softmax.py): tensor_reduce max -> tensor_scalar
subtract -> activation exp with the per-lane sum -> reciprocal -> tensor_scalar multiply,
on [128, F] bfloat16 tiles.  The baseline is the same sequence written the way the
official simulator runs it: numpy float32 compute with ml_dtypes, rounding to bfloat16
after each instruction.

Run:  pytest bench/bench_nki_softmax.py --benchmark-only      (pytest-benchmark table)
      python bench/bench_nki_softmax.py                        (ratios)
"""

import os
import statistics
import sys
import time

import ml_dtypes
import numpy as np
import pytest

from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor

BF16 = ml_dtypes.bfloat16
SIZES = [8192, 65536]


def make_input(F, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((128, F)) * 4).astype(BF16)


def fastisa_softmax(x):
    """The instruction sequence on fastisa: x is read in place, one work tile is written."""
    P, F = x.shape
    t = NkiTensor(x, nl.bfloat16, nl.sbuf)
    w = NkiTensor(np.empty((P, F), BF16), nl.bfloat16, nl.sbuf)
    m = NkiTensor(np.empty((P, 1), np.float32), nl.float32, nl.sbuf)
    ssum = NkiTensor(np.empty((P, 1), np.float32), nl.float32, nl.sbuf)
    r = NkiTensor(np.empty((P, 1), np.float32), nl.float32, nl.sbuf)
    nisa.tensor_reduce(dst=m, op=nl.maximum, data=t, axis=1, keepdims=True)
    nisa.tensor_scalar(dst=w, data=t, op0=nl.subtract, operand0=m)
    nisa.activation(dst=w, op=nl.exp, data=w, reduce_op=nl.add, reduce_res=ssum,
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.reciprocal(dst=r, data=ssum)
    nisa.tensor_scalar(dst=w, data=w, op0=nl.multiply, operand0=r)
    return w.data


def numpy_softmax(x):
    """The same sequence in numpy + ml_dtypes: float32 compute, bf16 after each instruction."""
    m = x.astype(np.float32).max(axis=1, keepdims=True)                       # tensor_reduce
    s = (x.astype(np.float32) - m).astype(BF16)                               # tensor_scalar
    e32 = np.exp(s.astype(np.float32))                                        # activation exp
    e = e32.astype(BF16)
    ssum = e32.sum(axis=1, keepdims=True, dtype=np.float32)                   # ... its reduce
    r = (np.float32(1) / ssum).astype(np.float32)                             # reciprocal
    return (e.astype(np.float32) * r).astype(BF16)                            # tensor_scalar


@pytest.mark.parametrize("F", SIZES)
def test_softmax_fastisa(benchmark, F):
    benchmark.group = f"nki softmax [128, {F}] bf16"
    x = make_input(F)
    out = benchmark(fastisa_softmax, x)
    ref = numpy_softmax(x).astype(np.float32)
    assert np.allclose(out.astype(np.float32), ref, rtol=2e-2, atol=1e-6)


@pytest.mark.parametrize("F", SIZES)
def test_softmax_numpy_ml_dtypes(benchmark, F):
    benchmark.group = f"nki softmax [128, {F}] bf16"
    x = make_input(F)
    benchmark(numpy_softmax, x)


def _times(f, x, reps):
    f(x)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(x)
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


if __name__ == "__main__":
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    print(f"best and median of {reps} runs; load average "
          f"{os.getloadavg()[0]:.1f}")
    for F in SIZES:
        x = make_input(F)
        a = _times(fastisa_softmax, x, reps)
        b = _times(numpy_softmax, x, reps)
        print(f"[128, {F:6d}] bf16: fastisa {a[0] * 1e3:7.2f} / {a[1] * 1e3:7.2f} ms   "
              f"numpy+ml_dtypes {b[0] * 1e3:7.2f} / {b[1] * 1e3:7.2f} ms   "
              f"ratio {b[0] / a[0]:4.1f}x (best) {b[1] / a[1]:4.1f}x (median)")

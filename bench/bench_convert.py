"""Format-conversion benchmarks: fastisa vs ml_dtypes ``astype`` vs numpy, same run.

    pytest bench/bench_convert.py --benchmark-only

16M float32 elements (standard normal), single thread.  Per group:

* ``fastisa-out``: ``fastisa.convert(x, fmt, out=buf)`` into a preallocated, already
  touched buffer (the fair comparison with ``*-copyto``: neither allocates);
* ``fastisa-alloc``: ``fastisa.convert(x, fmt)`` (allocates, like ``astype``);
* ``ml_dtypes-astype`` / ``numpy-astype``: ``x.astype(dtype)`` (the issue's anchor);
* ``ml_dtypes-copyto`` / ``numpy-copyto``: ``np.copyto(buf, x, casting="unsafe")``
  (the ml_dtypes/numpy cast loop into a preallocated buffer);
* ``floor-read`` / ``floor-truncate`` (bfloat16 group only): the memory system's limit for
  one thread, see ``test_encode_bfloat16_memory_floor``.

The ``gil`` group runs the same per-thread work in one thread and in two threads (twice
the total work): with the GIL released in the kernel, two threads take clearly less than
twice the one-thread time on a machine with two free cores (a benchmark, never a test
assertion).
"""

import threading

import ml_dtypes as md
import numpy as np
import pytest

import fastisa

N = 1 << 24
ROUNDS = 7

FORMATS = {
    "bfloat16": md.bfloat16,
    "float16": np.float16,
    "float8_e4m3fn": md.float8_e4m3fn,
    "float8_e5m2": md.float8_e5m2,
    "float4_e2m1fn": md.float4_e2m1fn,
}


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).standard_normal(N).astype(np.float32)


def _run(benchmark, fn):
    benchmark.pedantic(fn, rounds=ROUNDS, iterations=1, warmup_rounds=1)


def _lib(name):
    return "numpy" if name == "float16" else "ml_dtypes"


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("impl", ["fastisa-out", "fastisa-alloc", "lib-astype", "lib-copyto"])
def test_encode(benchmark, x, name, impl):
    dt = FORMATS[name]
    benchmark.group = f"encode f32->{name}"
    benchmark.name = impl.replace("lib", _lib(name))
    out = np.empty(N, dt)
    out[:] = 0
    if impl == "fastisa-out":
        _run(benchmark, lambda: fastisa.convert(x, name, out=out))
    elif impl == "fastisa-alloc":
        _run(benchmark, lambda: fastisa.convert(x, name))
    elif impl == "lib-astype":
        _run(benchmark, lambda: x.astype(dt))
    else:
        _run(benchmark, lambda: np.copyto(out, x, casting="unsafe"))


@pytest.mark.parametrize("impl", ["floor-read", "floor-truncate"])
def test_encode_bfloat16_memory_floor(benchmark, x, impl):
    """What the memory system allows one thread, in the same run as the bf16 rows:
    ``floor-read`` only reads the 64 MiB input (``x.view(uint32).max()``, numpy's AVX2
    reduction); ``floor-truncate`` reads it and writes the 32 MiB output (a strided copy of
    the high halves: bf16 by truncation, no rounding).  No f32 -> bf16 pass can beat
    ``floor-read``, so ``ml_dtypes-astype / floor-read`` is the largest ratio possible."""
    benchmark.group = "encode f32->bfloat16"
    benchmark.name = impl
    if impl == "floor-read":
        u = x.view(np.uint32)
        _run(benchmark, lambda: u.max())
    else:
        hi = x.view(np.uint16)[1::2]
        out = np.zeros(N, np.uint16)
        _run(benchmark, lambda: np.copyto(out, hi))


@pytest.mark.parametrize("name", list(FORMATS))
@pytest.mark.parametrize("impl", ["fastisa-out", "fastisa-alloc", "lib-astype", "lib-copyto"])
def test_decode(benchmark, x, name, impl):
    dt = FORMATS[name]
    benchmark.group = f"decode {name}->f32"
    benchmark.name = impl.replace("lib", _lib(name))
    y = x.astype(dt)
    out = np.zeros(N, np.float32)
    if impl == "fastisa-out":
        _run(benchmark, lambda: fastisa.convert(y, np.float32, out=out))
    elif impl == "fastisa-alloc":
        _run(benchmark, lambda: fastisa.convert(y, np.float32))
    elif impl == "lib-astype":
        _run(benchmark, lambda: y.astype(np.float32))
    else:
        _run(benchmark, lambda: np.copyto(out, y, casting="unsafe"))


@pytest.mark.parametrize("name", ["float8_e4m3fn_x4", "float4_e2m1fn_x4"])
def test_encode_packed(benchmark, x, name):
    benchmark.group = "encode f32->packed x4"
    benchmark.name = f"fastisa-out {name}"
    out = np.zeros(N // 4, fastisa.dtypes.lookup(name).np_dtype)
    _run(benchmark, lambda: fastisa.convert(x, name, out=out))


@pytest.mark.parametrize("name", ["float8_e4m3fn_x4", "float4_e2m1fn_x4"])
def test_decode_packed(benchmark, x, name):
    benchmark.group = "decode packed x4->f32"
    benchmark.name = f"fastisa-out {name}"
    words = fastisa.convert(x, name)
    out = np.zeros(N, np.float32)
    _run(benchmark, lambda: fastisa.convert(words, np.float32, out=out, src_dtype=name))


@pytest.mark.parametrize("threads", [1, 2])
def test_gil_released(benchmark, threads):
    """Each thread converts its own 1M-element float32 array to float8_e4m3fn 8 times
    (compute-bound, mostly cache-resident).  Two threads do twice the work of one: with
    the GIL released in the kernel (and two free cores) they take about the same time as
    one thread; with the GIL held they would take twice as long."""
    benchmark.group = "gil: 1 vs 2 threads, each 8 x 1M f32->float8_e4m3fn"
    benchmark.name = f"{threads} thread(s)"
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(1 << 20).astype(np.float32) for _ in range(threads)]
    outs = [np.zeros(1 << 20, md.float8_e4m3fn) for _ in range(threads)]

    def work(i):
        for _ in range(8):
            fastisa.convert(xs[i], "float8_e4m3fn", out=outs[i])

    def run():
        ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    benchmark.pedantic(run, rounds=15, iterations=1, warmup_rounds=2)

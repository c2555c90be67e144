"""Format-conversion benchmarks: fastisa vs ml_dtypes ``astype`` vs numpy, same run.

    pytest bench/bench_convert.py --benchmark-only

16M float32 elements (standard normal), single thread.  Per group:

* ``fastisa-out``: ``fastisa.convert(x, fmt, out=buf)`` into a preallocated, already
  touched buffer (the fair comparison with ``*-copyto``: neither allocates);
* ``fastisa-alloc``: ``fastisa.convert(x, fmt)`` (allocates, like ``astype``);
* ``ml_dtypes-astype`` / ``numpy-astype``: ``x.astype(dtype)`` (the issue's anchor);
* ``ml_dtypes-copyto`` / ``numpy-copyto``: ``np.copyto(buf, x, casting="unsafe")``
  (the ml_dtypes/numpy cast loop into a preallocated buffer).

The ``gil`` group converts the same 16M elements f32 -> e4m3fn in one call, and as two
halves in two Python threads: with the GIL released in the kernel the two-thread time is
clearly below the one-thread time on a machine with two free cores (a benchmark, never a
test assertion).
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
def test_gil_released(benchmark, x, threads):
    benchmark.group = "gil f32->float8_e4m3fn (16M elements)"
    benchmark.name = f"{threads} thread(s)"
    out = np.zeros(N, md.float8_e4m3fn)

    def one():
        fastisa.convert(x, "float8_e4m3fn", out=out)

    def two():
        h = N // 2
        ts = [threading.Thread(target=fastisa.convert, args=(x[i:i + h], "float8_e4m3fn"),
                               kwargs={"out": out[i:i + h]}) for i in (0, h)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    _run(benchmark, one if threads == 1 else two)

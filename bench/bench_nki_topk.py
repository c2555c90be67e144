"""Benchmark: nisa.topk at vocab scale against a numpy implementation, in the same run.

128 partitions (8 snakes of n = 65535 bf16 each, [128, 4096]), k = 64 and k = 1024,
sorted and unsorted.  The numpy implementation is what a simulator written in numpy does:
de-snake each group, ``argpartition`` per group, ``argsort`` the k (sorted only), re-snake.

    pytest bench/bench_nki_topk.py --benchmark-only --benchmark-group-by=group
    python bench/bench_nki_topk.py          # prints the ratios (median of repeats)
"""

from __future__ import annotations

import timeit

import ml_dtypes
import numpy as np
import pytest

from fastisa.nki import isa as nisa
from fastisa.nki import language as nl

P, COLS, N = 128, 4096, 65535
CASES = [(64, False), (64, True), (1024, False), (1024, True)]


def make_input(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((P, COLS)).astype(np.float32).astype(ml_dtypes.bfloat16)


def numpy_topk(src, n, k, sorted_, val_out, idx_out):
    """De-snake, per-group argpartition, (sort,) re-snake -- float32 compute."""
    G, cols, kc = src.shape[0] // 16, (n + 15) // 16, (k + 15) // 16
    x = src[:, :cols].astype(np.float32)
    snake = x.reshape(G, 16, cols).transpose(0, 2, 1).reshape(G, 16 * cols)[:, :n]
    part = np.argpartition(-snake, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(snake, part, axis=1)
    if sorted_:
        order = np.argsort(-vals, axis=1, kind="stable")
        part = np.take_along_axis(part, order, axis=1)
        vals = np.take_along_axis(vals, order, axis=1)
    pad_v = np.zeros((G, 16 * kc), np.float32)
    pad_i = np.zeros((G, 16 * kc), np.uint32)
    pad_v[:, :k] = vals
    pad_i[:, :k] = part
    val_out[:, :kc] = pad_v.reshape(G, kc, 16).transpose(0, 2, 1).reshape(G * 16, kc) \
        .astype(ml_dtypes.bfloat16)
    idx_out[:, :kc] = pad_i.reshape(G, kc, 16).transpose(0, 2, 1).reshape(G * 16, kc)


def fastisa_setup(x, k):
    src = nl.ndarray((P, COLS), nl.bfloat16, buffer=nl.sbuf)
    src.data[...] = x
    val = nl.ndarray((P, k), nl.bfloat16, buffer=nl.sbuf)
    idx = nl.ndarray((P, k), nl.uint32, buffer=nl.sbuf)
    return src, val, idx


@pytest.mark.parametrize("k, sorted_", CASES)
def test_topk_fastisa(benchmark, k, sorted_):
    benchmark.group = f"nki topk n=65535 x8 k={k} sorted={sorted_}"
    src, val, idx = fastisa_setup(make_input(), k)
    benchmark(nisa.topk, val, idx, src, N, sorted_)


@pytest.mark.parametrize("k, sorted_", CASES)
def test_topk_numpy(benchmark, k, sorted_):
    benchmark.group = f"nki topk n=65535 x8 k={k} sorted={sorted_}"
    x = make_input()
    v = np.zeros((P, k), ml_dtypes.bfloat16)
    i = np.zeros((P, k), np.uint32)
    benchmark(numpy_topk, x, N, k, sorted_, v, i)


def test_topk_gil_released(benchmark):
    """Two Python threads each run a topk (single-threaded kernel): with the GIL released
    in the kernel they overlap, so this takes about one topk's time on two free cores."""
    import threading

    from fastisa._kernels import select as ksel
    benchmark.group = "nki topk GIL release (2 Python threads x 1 call, k=64)"
    bits = make_input().view(np.uint16)
    outs = [(np.zeros((P, 64), np.uint16), np.zeros((P, 64), np.uint32)) for _ in range(2)]

    def two_threads():
        ts = [threading.Thread(target=ksel.topk_bf16, args=(bits, N, True, v, i, 1))
              for v, i in outs]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    benchmark(two_threads)


def _median(fn, repeat=15, number=5):
    return np.median(timeit.repeat(fn, repeat=repeat, number=number)) / number


def main():
    x = make_input()
    print(f"nisa.topk, {P} partitions, n = {N} per group, bf16; median time per call")
    print(f"{'k':>6} {'sorted':>7} {'fastisa ms':>11} {'numpy ms':>10} {'ratio':>7}")
    for k, sorted_ in CASES:
        src, val, idx = fastisa_setup(x, k)
        v = np.zeros((P, k), ml_dtypes.bfloat16)
        i = np.zeros((P, k), np.uint32)
        tf = _median(lambda: nisa.topk(val, idx, src, N, sorted_))
        tn = _median(lambda: numpy_topk(x, N, k, sorted_, v, i), repeat=7, number=2)
        print(f"{k:>6} {str(sorted_):>7} {tf * 1e3:>11.3f} {tn * 1e3:>10.3f} {tn / tf:>6.1f}x")


if __name__ == "__main__":
    main()

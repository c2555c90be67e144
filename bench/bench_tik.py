"""TIK benchmarks: fastisa vs the numpy oracle vs numpy's own ufunc, in the same run.

    pytest bench/bench_tik.py --benchmark-only       # pytest-benchmark groups
    python bench/bench_tik.py                         # the ratios the README reports

Groups (one per shape of work):
* ``tik-full-<dtype>``: a full-mask contiguous vec_adds / vec_add with 255 repeats,
  against ``np.add(x, s, out=y)`` on the same number of elements and the oracle;
* ``tik-masked-<dtype>``: a bitwise-masked, block-strided vadds (blk stride 2, rep stride
  16) with two masks (block-granular ``0xFFFF0000...`` and interleaved ``0x5555...``),
  against ``np.add`` on the same number of lanes;
* ``tik-1rep-<dtype>``: the fixed cost of one recorded 1-repeat instruction against one
  small ``np.add`` call;
* ``tik-softmax``: the whole softmax program (64K float16) through ``start_debug`` against
  a per-instruction, per-repeat Python interpretation built on the oracle (how the TIK
  debugger's statement walk works).

The instruction benchmarks time the recorded instruction's run step (what start_debug
executes per instruction: argument dispatch plus one walker call), not program building.
"""
from __future__ import annotations

import gc
import os
import sys
import timeit

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import reference as ref  # noqa: E402

from fastisa import examples, tik  # noqa: E402
from fastisa.tik import platform  # noqa: E402

MASKS = {"block": (0xFFFF0000FFFF0000, 0xFFFF0000FFFF0000),
         "interleaved": (0x5555555555555555, 0x5555555555555555)}


def _instr(dtype, kind, mask=None, nrep=255):
    """-> (run(), np_baseline(), oracle(), lanes) for one recorded instruction."""
    platform.set_target("Ascend910", ub_size=8 << 20)
    try:
        tk = tik.Tik()
        par = 256 // np.dtype(dtype).itemsize
        blk, rep = (2, 16) if kind == "masked" else (1, 8)
        n = par * nrep * (2 if kind == "masked" else 1) + par
        rng = np.random.default_rng(0)
        xs = [(rng.standard_normal(n) * 10).astype(dtype) for _ in range(3)]
        a, b, c = (tk.Tensor(dtype, (n,), name=nm, scope=tik.scope_ubuf) for nm in "abc")
        if kind == "vec_add":
            tk.vec_add(par, a, b, c, nrep, 8, 8, 8)
        elif kind == "masked":
            h, lo = MASKS[mask]
            m = [h if par == 128 else 0, lo]
            tk.vadds(m, a, b, 2.0, nrep, blk, blk, rep, rep)
        elif kind == "dyn":
            i = tk.Scalar("int32", "i")  # a loop-indexed start: resolved at run time
            tk.vec_adds(par, a[i * par], b[i * par], 2.0, nrep, 8, 8)
        else:
            tk.vec_adds(par, a, b, 2.0, nrep, 8, 8)
        tk.BuildCCE("bench", [], [])
        st = tk._make_state({})
        for t, x in zip((a, b, c), xs):
            st.bufs[1][t.byte_off:t.byte_off + t.nbytes] = x.view(np.uint8)
        op = tk._root[-1]
    finally:
        platform.set_target("Ascend910")
    lanes = par * nrep
    x, y = xs[1][:lanes].copy(), np.empty(lanes, dtype)
    s = np.array(2, dtype)

    def run():
        op.run(st)

    def np_add():
        np.add(x, s, out=y)

    if kind == "masked":
        h, lo = MASKS[mask]

        def oracle():
            ref.tik_vector("vadds", xs[0], 0, [xs[1]], [0], scalar=np.dtype(dtype).type(2),
                           mask=[h if par == 128 else 0, lo], nrep=nrep, blks=[blk, blk],
                           reps=[rep, rep], sat=True)
    elif kind == "vec_add":
        def oracle():
            ref.tik_vector("vec_add", xs[0], 0, [xs[1], xs[2]], [0, 0], mask=par, nrep=nrep,
                           reps=[8, 8, 8], sat=True)
    else:
        def oracle():
            ref.tik_vector("vec_adds", xs[0], 0, [xs[1]], [0], scalar=np.dtype(dtype).type(2),
                           mask=par, nrep=nrep, reps=[8, 8], sat=True)
    return run, np_add, oracle, lanes


# ---- the softmax program and its per-repeat Python interpretation -----------------------

def _softmax():
    mod = examples.load("tik_softmax")
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(65536) * 3).astype(np.float16)
    tk = mod.build(x.size)

    def run():
        return tk.tikdb.start_debug({"x": x}, interactive=False)[0]

    def interpret():
        """The same instruction sequence, each instruction walked repeat by repeat and
        lane by lane in Python (reference.tik_vector / tik_reduce_repeat), buffers copied
        per instruction like the TIK debugger's model calls."""
        T, L = mod.TILE, mod.LANES
        reps = T // L
        tiles = x.reshape(-1, T)
        vmax = np.float16(-65504.0)
        for t in tiles:
            ub = t.copy()
            r1 = ref.tik_reduce_repeat("max", ub, 0, mask=L, nrep=reps, blk=1, rep=8, sat=True)
            m = ref.tik_reduce_repeat("max", r1, 0, mask=L, nrep=1, blk=1, rep=8, sat=True)[0]
            if m > vmax:
                vmax = m
        neg = np.float16(-vmax)
        total = np.float32(0)

        def exp_tile(t):
            ub = ref.tik_vector("vec_adds", t.copy(), 0, [t.copy()], [0], scalar=neg, mask=L,
                                nrep=reps, reps=[8, 8], sat=True)
            return ref.tik_vector("vec_exp", ub, 0, [ub.copy()], [0], mask=L, nrep=reps,
                                  reps=[8, 8], sat=True)
        for t in tiles:
            e = exp_tile(t)
            r1 = ref.tik_reduce_repeat("add", e, 0, mask=L, nrep=reps, blk=1, rep=8, sat=True)
            s = ref.tik_reduce_repeat("add", r1, 0, mask=L, nrep=1, blk=1, rep=8, sat=True)[0]
            total = np.float32(total + np.float32(s))
        inv = np.float16(1.0 / float(total))
        out = []
        for t in tiles:
            e = exp_tile(t)
            out.append(ref.tik_vector("vec_muls", e, 0, [e.copy()], [0], scalar=inv, mask=L,
                                      nrep=reps, reps=[8, 8], sat=True))
        return np.concatenate(out)
    return run, interpret


# ---- pytest-benchmark ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("impl", ["fastisa_vec_adds", "fastisa_vec_add", "np_add", "oracle"])
def test_full(benchmark, dtype, impl):
    benchmark.group = f"tik-full-{dtype}"
    run, np_add, oracle, _ = _instr(dtype, "vec_add" if impl == "fastisa_vec_add" else "adds")
    benchmark({"fastisa_vec_adds": run, "fastisa_vec_add": run, "np_add": np_add,
               "oracle": oracle}[impl])


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("impl", ["fastisa_block", "fastisa_interleaved", "np_add", "oracle"])
def test_masked(benchmark, dtype, impl):
    benchmark.group = f"tik-masked-{dtype}"
    mask = "interleaved" if impl == "fastisa_interleaved" else "block"
    run, np_add, oracle, _ = _instr(dtype, "masked", mask)
    benchmark({"np_add": np_add, "oracle": oracle}.get(impl, run))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("impl", ["fastisa", "np_add"])
def test_one_repeat(benchmark, dtype, impl):
    benchmark.group = f"tik-1rep-{dtype}"
    run, np_add, _, _ = _instr(dtype, "adds", nrep=1)
    benchmark(run if impl == "fastisa" else np_add)


@pytest.mark.parametrize("impl", ["fastisa", "interpreted"])
def test_softmax(benchmark, impl):
    benchmark.group = "tik-softmax"
    run, interpret = _softmax()
    if impl == "fastisa":
        benchmark(run)
    else:
        benchmark.pedantic(interpret, rounds=1, iterations=1)


# ---- plain ratios ---------------------------------------------------------------------------

def _best(f, number, repeat=7):
    gc.disable()
    try:
        return min(timeit.repeat(f, number=number, repeat=repeat)) / number
    finally:
        gc.enable()


def _ratio(f, g, number, rounds=9):
    """min time of f / min time of g, the two timed in alternation (round by round) so
    that a noisy neighbour slows both alike."""
    tf, tg = [], []
    for _ in range(rounds):
        tf.append(_best(f, number, 1))
        tg.append(_best(g, number, 1))
    return min(tf) / min(tg)


def main():
    print("ratio = fastisa time / baseline time (same number of elements, one run)")
    for dt in ("float16", "float32"):
        run, np_add, oracle, lanes = _instr(dt, "adds")
        run2, _, _, _ = _instr(dt, "vec_add")
        t_np = _best(np_add, 200)
        t_or = _best(oracle, 1, 3)
        print(f"{dt} full-mask contiguous, 255 repeats ({lanes} elements): "
              f"vec_adds/np.add = {_ratio(run, np_add, 200):.2f}, "
              f"vec_add/np.add = {_ratio(run2, np_add, 200):.2f}, "
              f"oracle/vec_adds = {t_or / _best(run, 200):.0f}")
        for mask in ("block", "interleaved"):
            run, np_add, _, lanes = _instr(dt, "masked", mask)
            print(f"{dt} bitwise-masked ({mask}), blk stride 2, rep stride 16, 255 repeats: "
                  f"vadds/np.add({lanes}) = {_ratio(run, np_add, 100):.2f}")
        run, np_add, _, lanes = _instr(dt, "adds", nrep=1)
        print(f"{dt} one 1-repeat instruction vs one np.add of {lanes}: "
              f"{_ratio(run, np_add, 5000):.2f}")
        run, np_add, _, lanes = _instr(dt, "dyn", nrep=1)
        print(f"{dt} one 1-repeat instruction with a runtime (Scalar-indexed) start vs one "
              f"np.add of {lanes}: {_best(run, 5000) / _best(np_add, 5000):.2f}")
    run, interpret = _softmax()
    assert np.array_equal(run().view(np.uint16), interpret().view(np.uint16))
    t_i = _best(interpret, 1, 1)
    t_f = _best(run, 5, 3)
    print(f"softmax 64K float16: interpreted {t_i * 1e3:.0f} ms, fastisa {t_f * 1e3:.2f} ms, "
          f"speed-up {t_i / t_f:.0f}x")


# ---- tik-isa: compare/select and transpose against numpy, per element ------------------

def _isa(kind, dtype="float16", nrep=255):
    """-> (run(), numpy baseline(), elements) for one recorded compare/select/transpose
    instruction over nrep full contiguous repeats (the instruction's run step, as
    _instr), and the numpy operation producing the same result:
    vcmpv_gt -> np.greater(a, b, out=bool) (numpy's result unpacked: one byte a lane);
    vsel mode 0/2 -> np.where(bool mask, a, b, ...) via np.copyto(where=) into dst;
    vnchwconv / vec_trans -> a (nrep, 16, 16) transpose copy (np.copyto)."""
    # (vrpsort16 exists on Ascend 310/910 only)
    platform.set_target("Ascend910" if kind == "vrpsort16" else "Ascend910B", ub_size=8 << 20)
    try:
        tk = tik.Tik()
        es = np.dtype(dtype).itemsize
        par = 256 // es
        n = par * nrep
        rng = np.random.default_rng(0)
        xa, xb = ((rng.standard_normal(2 * n) * 10).astype(dtype) for _ in range(2))
        a, b, c = (tk.Tensor(dtype, (2 * n,), name=nm, scope=tik.scope_ubuf) for nm in "abc")
        bits = tk.Tensor("uint8", (n // 8,), name="bits", scope=tik.scope_ubuf)
        if kind == "vcmpv":
            tk.vcmpv_gt(bits, a, b, nrep, 1, 1, 8, 8)
        elif kind == "vsel0":
            cm = tk.mov_tensor_to_cmpmask(bits)
            tk.vsel(par, 0, c, cm, a, b, nrep, 1, 1, 1, 8, 8, 8)
        elif kind == "vsel2":
            tk.vsel(par, 2, c, bits, a, b, nrep, 1, 1, 1, 8, 8, 8)
        elif kind == "vnchwconv":
            B = 32 // es
            tk.vnchwconv(False, False, [c[B * i] for i in range(16)],
                         [a[B * i] for i in range(16)], nrep, 16, 16)
        elif kind == "vconcat":
            tk.vconcat(c, a, nrep, 4)
        elif kind == "vcgadd":
            tk.vcgadd(par, c, a, nrep, 1, 1, 8)
        elif kind == "vrpsort16":   # tik-ops: 16 proposals sorted by score per repeat
            tk.vrpsort16(c, a, nrep)
        elif kind == "vmla":        # tik-ops: c = a * b + c
            tk.vmla(par, c, a, b, nrep, 1, 1, 1, 8, 8, 8)
        else:
            tk.vec_trans(c, a, nrep, 1, 1)
        tk.BuildCCE("bench", [], [])
        st = tk._make_state({})
        ub = st.bufs[1]
        ub[a.byte_off:a.byte_off + xa.nbytes] = xa.view(np.uint8)
        ub[b.byte_off:b.byte_off + xb.nbytes] = xb.view(np.uint8)
        ub[bits.byte_off:bits.byte_off + bits.nbytes] = rng.integers(0, 256, n // 8,
                                                                     dtype=np.uint8)
        ops = list(tk._root)
    finally:
        platform.set_target("Ascend910")
    for op in ops[:-1]:
        op.run(st)
    op = ops[-1]
    m = rng.random(n) < 0.5
    y = np.empty(n, dtype)
    yb = np.empty(n, bool)
    if kind in ("vnchwconv", "vec_trans"):
        n = 512 // es * nrep     # one repeat moves 16 blocks
        x3 = xa[:n].reshape(nrep, 16, 32 // es)
        y3 = np.empty((nrep, 32 // es, 16), dtype)

        def base():   # 16-bit: a 16x16 transpose; 32-bit: (16, 8) -> (8, 16)
            np.copyto(y3, x3.transpose(0, 2, 1))
    elif kind == "vconcat":
        n = 16 * nrep
        xa1, y8 = xa[:n], np.empty((n, 8), dtype)

        def base():   # the score field of n proposals
            y8[:, 4] = xa1
    elif kind == "vrpsort16":
        n = 128 * nrep
        p3 = xa[:n].reshape(nrep, 16, 8)
        y3 = np.empty_like(p3)

        def base():   # a stable descending sort of each 16 proposals by field 4
            o = np.argsort(-p3[:, :, 4], axis=1, kind="stable")
            np.copyto(y3, np.take_along_axis(p3, o[:, :, None], axis=1))
    elif kind == "vmla":
        xa1, xb1 = xa[:n], xb[:n]

        def base():
            with np.errstate(over="ignore"):
                np.add(xa1 * xb1, y, out=y)
    elif kind == "vcgadd":
        xb3 = xa[:n].reshape(-1, 32 // es)
        yg = np.empty(xb3.shape[0], dtype)

        def base():   # one sum per 32-byte block
            np.sum(xb3, axis=1, out=yg)
    elif kind == "vcmpv":
        xa1, xb1 = xa[:n], xb[:n]

        def base():
            np.greater(xa1, xb1, out=yb)
    else:
        xa1, xb1 = xa[:n], xb[:n]

        def base():
            np.copyto(y, xb1)
            np.copyto(y, xa1, where=m)

    def run():
        op.run(st)
    return run, base, n


def test_isa(benchmark):
    """pytest-benchmark entry: vsel mode 2 float16 (the README ratio table is main())."""
    benchmark.group = "tik-isa"
    run, _, _ = _isa("vsel2")
    benchmark(run)


def main_isa():
    print("tik-isa: ratio = fastisa time / numpy time per element (same elements, one run)")
    for kind, label in (("vcmpv", "vcmpv_gt vs np.greater(out=bool)"),
                        ("vsel0", "vsel mode 0 vs np.copyto(where=bool)"),
                        ("vsel2", "vsel mode 2 vs np.copyto(where=bool)"),
                        ("vnchwconv", "vnchwconv vs (R,16,32/esize) transpose copy"),
                        ("vec_trans", "vec_trans vs (R,16,16) transpose copy"),
                        ("vconcat", "vconcat vs a strided field store y[:, 4] = x"),
                        ("vcgadd", "vcgadd vs np.sum over 32-byte blocks"),
                        ("vrpsort16", "vrpsort16 vs a stable argsort + gather per 16"),
                        ("vmla", "vmla vs np.add(a * b, c)")):
        for dt in (("float16", "float32") if kind not in ("vec_trans", "vconcat", "vcgadd",
                                                          "vrpsort16")
                   else ("float16",)):
            run, base, n = _isa(kind, dt)
            print(f"{dt} {label}, 255 repeats ({n} elements): {_ratio(run, base, 200):.2f}")


# ---- tik-cube: the cube path and the h_* API against numpy ------------------------------

def _cube(kind, n=256):
    """-> (run(), numpy baseline(), label) for one recorded cube / h_* operation (its run
    step, as _instr).  matmul: M = K = N = n float16 (float32 accumulate) against
    np.matmul of the same float32 matrices (BLAS); int8 against np.matmul in int32;
    conv2d: 16 channels in, 64 out, 32x32, 3x3 pad 1, against an im2col gather + np.matmul;
    fixpipe fp322fp16 over the n x n result against an astype(float16) of it; h_add,
    h_exp and h_reduce_sum over (n, n) float16 against np.add / np.exp / np.sum."""
    platform.set_target("Ascend910", ub_size=8 << 20)
    try:
        tk = tik.Tik()
        rng = np.random.default_rng(0)
        fill = []
        if kind in ("matmul", "matmul_int8", "fixpipe"):
            dt, acc, k0 = (("int8", "int32", 32) if kind == "matmul_int8"
                           else ("float16", "float32", 16))
            a = tk.Tensor(dt, (n * n,), name="a", scope=tik.scope_cbuf)
            b = tk.Tensor(dt, (n * n,), name="b", scope=tik.scope_cbuf)
            d = tk.Tensor(acc, (n * n,), name="d", scope=tik.scope_cbuf_out)
            xa = (rng.standard_normal(n * n) * 4).astype(dt)
            xb = (rng.standard_normal(n * n) * 4).astype(dt)
            fill += [(a, xa), (b, xb)]
            tk.matmul(d, a, b, n, n, n)
            if kind == "fixpipe":
                g = tk.Tensor("float16", (n * n,), name="g", scope=tik.scope_gm)
                tk.fixpipe(g, d, n // 16, n * 16 * 4 // 32, 0, 0, extend_params={
                    "quantize_params": {"mode": "fp322fp16", "mode_param": None}})
            A = xa.reshape(n // k0, n, k0).transpose(1, 0, 2).reshape(n, n).astype(
                np.float32 if dt == "float16" else np.int32)
            B = xb.reshape(n // k0, n, k0).transpose(0, 2, 1).reshape(n, n).astype(A.dtype)
            C = np.empty((n, n), A.dtype)

            def base():
                np.matmul(A, B, out=C)
            if kind == "fixpipe":
                Cf = (A @ B).astype(np.float32)
                Y = np.empty((n, n), np.float16)

                def base():   # noqa: F811
                    np.copyto(Y, Cf, casting="unsafe")
        elif kind == "conv2d":
            c1, h, w, co = 1, 32, 32, 64
            f = tk.Tensor("float16", (c1, h, w, 16), name="f", scope=tik.scope_cbuf)
            wt = tk.Tensor("float16", (c1, 3, 3, co, 16), name="w", scope=tik.scope_cbuf)
            d = tk.Tensor("float32", (co // 16, h * w, 16), name="d", scope=tik.scope_cbuf_out)
            xf = rng.standard_normal(c1 * h * w * 16).astype(np.float16)
            xw = rng.standard_normal(c1 * 9 * co * 16).astype(np.float16)
            fill += [(f, xf), (wt, xw)]
            tk.conv2d(d, f, wt, [c1, h, w, 16], [c1, 3, 3, co, 16], [1, 1], [1, 1, 1, 1],
                      [1, 1])
            P = np.pad(xf.reshape(h, w, 16).astype(np.float32), ((1, 1), (1, 1), (0, 0)))
            W2 = xw.reshape(9 * 16, co).astype(np.float32)   # same element count
            ii = (np.arange(h)[:, None, None, None] + np.arange(3)[None, None, :, None])
            jj = (np.arange(w)[None, :, None, None] + np.arange(3)[None, None, None, :])
            Y = np.empty((h * w, co), np.float32)

            def base():
                np.matmul(P[ii, jj].reshape(h * w, 9 * 16), W2, out=Y)
        else:
            x = tk.Tensor("float16", (n, n), name="x", scope=tik.scope_ubuf)
            y = tk.Tensor("float16", (n, n), name="y", scope=tik.scope_ubuf)
            r = tk.Tensor("float16", (n,), name="r", scope=tik.scope_ubuf)
            xv = rng.standard_normal(n * n).astype(np.float16)
            yv = rng.standard_normal(n * n).astype(np.float16)
            fill += [(x, xv), (y, yv)]
            X, Yv, Z = xv.reshape(n, n), yv.reshape(n, n), np.empty((n, n), np.float16)
            Zr = np.empty(n, np.float16)
            if kind == "h_add":
                tk.h_add(y, x, y)

                def base():
                    np.add(X, Yv, out=Z)
            elif kind == "h_exp":
                tk.h_exp(y, x)

                def base():
                    np.exp(X, out=Z)
            else:
                tk.h_reduce_sum(r, x, axis=1)

                def base():
                    np.sum(X, axis=1, out=Zr)
        tk.BuildCCE("bench", [], [])
        st = tk._make_state({})
        for t, v in fill:
            st.bufs[t.sidx][t.byte_off:t.byte_off + v.nbytes] = v.view(np.uint8)
        ops = list(tk._root)
    finally:
        platform.set_target("Ascend910")
    for op in ops[:-1]:
        op.run(st)
    op = ops[-1]

    def run():
        op.run(st)
    return run, base


@pytest.mark.parametrize("kind", ["matmul", "matmul_int8", "conv2d", "fixpipe", "h_add",
                                  "h_exp", "h_reduce_sum"])
@pytest.mark.parametrize("impl", ["fastisa", "numpy"])
def test_cube(benchmark, kind, impl):
    benchmark.group = f"tik-cube-{kind}"
    run, base = _cube(kind)
    benchmark(run if impl == "fastisa" else base)


def main_cube():
    print("tik-cube: ratio = fastisa time / numpy time (same result size, one run)")
    for kind, label in (("matmul", "matmul 256x256x256 float16 (f32 acc) vs np.matmul f32"),
                        ("matmul_int8", "matmul 256x256x256 int8 vs np.matmul int32"),
                        ("conv2d", "conv2d 16->64 ch, 32x32, 3x3 vs im2col + np.matmul"),
                        ("fixpipe", "fixpipe fp322fp16 256x256 vs astype(float16)"),
                        ("h_add", "h_add (256, 256) float16 vs np.add"),
                        ("h_exp", "h_exp (256, 256) float16 vs np.exp"),
                        ("h_reduce_sum", "h_reduce_sum axis 1 (256, 256) float16 vs np.sum")):
        run, base = _cube(kind)
        print(f"{label}: {_ratio(run, base, 5):.2f}")


if __name__ == "__main__":
    main()
    main_isa()
    main_cube()

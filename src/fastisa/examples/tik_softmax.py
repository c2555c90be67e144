"""Softmax over a 1-D float16 vector, the pattern of Ascend's softmax_tik sample
(the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/) row 1), tiled through the Unified Buffer:

  pass 1  per tile: data_move in, vec_reduce_max -> running max (Scalar, if_scope)
  pass 2  per tile: vec_adds(-max), vec_exp, vec_reduce_add -> running sum (float32 Scalar)
  pass 3  per tile: vec_adds(-max), vec_exp, vec_muls(1/sum), data_move out

Checked bit for bit against a numpy replay of the same instruction sequence, and against
float64 softmax to within float16 accuracy.
"""

from __future__ import annotations

import numpy as np

from tbe import tik

from fastisa import cost
from fastisa.examples import Report

TITLE = "softmax of 64K float16 values, tiled through UB (TIK)"
FRONTEND = "tik"
ORDER = 1

TILE = 16384          # elements per UB tile (128 repeats of 128 lanes)
LANES = 128


def build(n: int = 65536):
    """Record the softmax program for an (n,) float16 input, n a multiple of TILE."""
    tik_instance = tik.Tik()
    ntiles = n // TILE
    reps = TILE // LANES
    x = tik_instance.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y = tik_instance.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    x_ub = tik_instance.Tensor("float16", (TILE,), name="x_ub", scope=tik.scope_ubuf)
    work = tik_instance.Tensor("float16", (LANES,), name="work", scope=tik.scope_ubuf)
    red = tik_instance.Tensor("float16", (16,), name="red", scope=tik.scope_ubuf)
    red32 = tik_instance.Tensor("float32", (8,), name="red32", scope=tik.scope_ubuf)
    vmax = tik_instance.Scalar("float16", "vmax", init_value=-65504.0)
    tmax = tik_instance.Scalar("float16", "tmax")
    neg = tik_instance.Scalar("float16", "neg")
    total = tik_instance.Scalar("float32", "total", init_value=0.0)
    tsum = tik_instance.Scalar("float32", "tsum")
    inv = tik_instance.Scalar("float16", "inv")
    burst = TILE * 2 // 32
    with tik_instance.for_range(0, ntiles) as t:
        tik_instance.data_move(x_ub, x[t * TILE], 0, 1, burst, 0, 0)
        tik_instance.vec_reduce_max(LANES, red, x_ub, work, reps, 8)
        tmax.set_as(red[0])
        with tik_instance.if_scope(tmax > vmax):
            vmax.set_as(tmax)
    neg.set_as(-vmax)
    with tik_instance.for_range(0, ntiles) as t:
        tik_instance.data_move(x_ub, x[t * TILE], 0, 1, burst, 0, 0)
        tik_instance.vec_adds(LANES, x_ub, x_ub, neg, reps, 8, 8)
        tik_instance.vec_exp(LANES, x_ub, x_ub, reps, 8, 8)
        tik_instance.vec_reduce_add(LANES, red, x_ub, work, reps, 8)
        # a Scalar takes a tensor element's bits (TIK reinterprets, it does not convert):
        # widen the float16 sum to float32 with vec_conv before reading it as float32
        tik_instance.vec_conv(1, "", red32, red, 1, 8, 4)
        tsum.set_as(red32[0])
        total.set_as(total + tsum)
    inv.set_as(1.0 / total)
    with tik_instance.for_range(0, ntiles) as t:
        tik_instance.data_move(x_ub, x[t * TILE], 0, 1, burst, 0, 0)
        tik_instance.vec_adds(LANES, x_ub, x_ub, neg, reps, 8, 8)
        tik_instance.vec_exp(LANES, x_ub, x_ub, reps, 8, 8)
        tik_instance.vec_muls(LANES, x_ub, x_ub, inv, reps, 8, 8)
        tik_instance.data_move(y[t * TILE], x_ub, 0, 1, burst, 0, 0)
    tik_instance.BuildCCE(kernel_name="softmax", inputs=[x], outputs=[y])
    return tik_instance


def _f16(v):
    with np.errstate(over="ignore"):
        return np.asarray(v).astype(np.float16)


def replay(x: np.ndarray, sat: bool = True) -> np.ndarray:
    """The same instruction sequence in numpy (float16 results rounded once, saturated)."""
    def sat16(v):
        v = _f16(v)
        if sat:
            v = np.where(np.isinf(v), np.sign(v) * np.float16(65504), v)
            v = np.where(np.isnan(v), np.float16(0), v).astype(np.float16)
        return v

    def reduce_add(t):  # vec_reduce_add: per-repeat sums rounded, then one more sum
        rows = t.astype(np.float64).reshape(-1, LANES)
        s1 = sat16(np.array([np.sum(r) for r in rows]))   # exact in float64 for fp16
        return sat16(np.sum(s1.astype(np.float64)))

    tiles = x.reshape(-1, TILE)
    vmax = np.float16(-65504.0)
    for t in tiles:
        m = t.max()
        if m > vmax:
            vmax = m
    neg = np.float16(-vmax)
    total = np.float32(0)
    for t in tiles:
        e = sat16(np.exp(sat16(t.astype(np.float32) + np.float32(neg)).astype(np.float64)))
        total = np.float32(total + np.float32(reduce_add(e)))
    inv = np.float16(1.0 / float(total))
    out = []
    for t in tiles:
        e = sat16(np.exp(sat16(t.astype(np.float32) + np.float32(neg)).astype(np.float64)))
        out.append(sat16(e.astype(np.float32) * np.float32(inv)))
    return np.concatenate(out)


def demo(seed: int = 0) -> Report:
    rep = Report("tik_softmax", TITLE, description=__doc__)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(65536) * 3).astype(np.float16)
    tk = build(x.size)
    with cost.profiling() as prof:
        (y,) = tk.tikdb.start_debug({"x": x}, interactive=False)
    rep.inputs = [("x", x)]
    rep.outputs = [("y", y)]
    rep.check("bit-exact against a numpy replay of the same instruction sequence",
              np.array_equal(y.view(np.uint16), replay(x, tk.target.saturation).view(np.uint16)))
    xd = x.astype(np.float64)
    ref = np.exp(xd - xd.max())
    ref /= ref.sum()
    err = np.abs(y.astype(np.float64) - ref).max() / ref.max()
    rep.check(f"close to float64 softmax (max error {err:.2e} of the largest value, "
              f"float16 accuracy)", err < 2e-3)
    rep.cycles = prof.totals()
    rep.notes.append("engine cycles are fastisa's estimates (Vector: 8 + 1 per repeat; "
                     "MTE: 32 + 1 per 32-byte block), not from the spec")
    return rep

"""Shared helpers for the TIK tests: wrap one instruction in a TIK program."""
from __future__ import annotations

import numpy as np

from fastisa import tik
from fastisa.tik import platform


def blocks(n, dtype):
    """32-byte blocks holding n elements of dtype (rounded up)."""
    return -(-n * np.dtype(dtype).itemsize // 32)


def run_program(target, arrays, body, out_index=0, ub_size=None):
    """Build a program with one GM input + one UB tensor per array (copied in with
    data_move), call ``body(tik_instance, ub_tensors)`` to record the instruction(s),
    copy UB tensor ``out_index`` back to GM and return it after start_debug
    (``out_index="all"``: every UB tensor, in order)."""
    platform.set_target(target, ub_size=ub_size)
    try:
        tk = tik.Tik()
        gms, ubs = [], []
        for k, a in enumerate(arrays):
            gms.append(tk.Tensor(str(a.dtype), a.shape, name=f"in{k}", scope=tik.scope_gm))
            ubs.append(tk.Tensor(str(a.dtype), a.shape, name=f"ub{k}", scope=tik.scope_ubuf))
        for g, u, a in zip(gms, ubs, arrays):
            tk.data_move(u, g, 0, 1, blocks(a.size, a.dtype), 0, 0)
        body(tk, ubs)
        idx = range(len(arrays)) if out_index == "all" else [out_index]
        outs = []
        for k in idx:
            o = arrays[k]
            outs.append(tk.Tensor(str(o.dtype), o.shape, name=f"out{k}", scope=tik.scope_gm))
            tk.data_move(outs[-1], ubs[k], 0, 1, blocks(o.size, o.dtype), 0, 0)
        tk.BuildCCE(kernel_name="k", inputs=gms, outputs=outs)
        res = tk.tikdb.start_debug({f"in{k}": a for k, a in enumerate(arrays)},
                                   interactive=False)
        return res if out_index == "all" else res[0]
    finally:
        platform.set_target("Ascend910")


def bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def random_values(rng, dtype, n, special=True):
    """Random values of dtype: random bit patterns for floats (incl. inf/NaN/subnormals)
    mixed with ordinary small numbers; full-range ints."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        ub = {2: np.uint16, 4: np.uint32}[dt.itemsize]
        raw = rng.integers(0, np.iinfo(ub).max, n, dtype=ub, endpoint=True).view(dt)
        if not special:
            raw = np.where(np.isfinite(raw), raw, dt.type(1.5))
        small = (rng.standard_normal(n) * 8).astype(dt)
        return np.where(rng.random(n) < 0.5, raw, small).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def same_bits(got, want) -> bool:
    """Bit-exact equality, except that any NaN equals any NaN: IEEE 754 leaves which
    payload a NaN result carries (e.g. from two NaN operands) to the implementation, and
    compilers may commute operands.  Everything else, including -0.0, inf and the
    saturated values, must match bit for bit."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.kind == "f":
        gn, wn = np.isnan(got), np.isnan(want)
        if not np.array_equal(gn, wn):
            return False
        return np.array_equal(bits(got)[~gn], bits(want)[~wn])
    return np.array_equal(bits(got), bits(want))

"""The walker's masked-blend path (fragmented bitwise masks on 32-bit operands): the op
is computed over whole 32-byte blocks and blended into dst under the lane mask.  Checked
bit-exact against the per-lane oracle (tests/reference.py) with interleaved and random
bitwise masks, block strides 0/1/2, rep strides 0/1/8/16, in place (dst == src) and the
accumulate idiom; float16 (which keeps the per-lane walk) is checked the same way."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa.tik import platform
from test_tik_walker import _check
from tik_helpers import random_values, run_program, same_bits

INTERLEAVED = 0x5555555555555555


@st.composite
def frag_geometry(draw, par, nops):
    kind = draw(st.sampled_from(["interleaved", "odd", "random", "sparse"]))
    if kind == "interleaved":
        lo = INTERLEAVED
    elif kind == "odd":
        lo = INTERLEAVED << 1
    elif kind == "sparse":
        lo = sum(1 << i for i in draw(st.lists(st.integers(0, 63), min_size=9, max_size=20)))
    else:
        lo = draw(st.integers(1, 2**64 - 1))
    lo &= (1 << min(par, 64)) - 1
    hi = (draw(st.sampled_from([INTERLEAVED, 0, draw(st.integers(0, 2**64 - 1))]))
          if par == 128 else 0)
    if lo == 0 and hi == 0:
        lo = INTERLEAVED
    nrep = draw(st.integers(1, 20))
    blks = [draw(st.sampled_from([0, 1, 2])) for _ in range(nops)]
    reps = [draw(st.sampled_from([0, 1, 8, 16])) for _ in range(nops)]
    starts = [draw(st.integers(0, 2)) for _ in range(nops)]
    return [hi, lo], None, nrep, blks, reps, starts


@settings(max_examples=25, deadline=None)
@pytest.mark.parametrize("name,dt", [("vadds", "float32"), ("vmuls", "float32"),
                                     ("vmaxs", "int32"), ("vaxpy", "float32"),
                                     ("vadds", "float16")])
@given(data=st.data())
def test_blend_vector_scalar(name, dt, data):
    par = ref.tik_lanes_per_repeat(dt)
    geo = data.draw(frag_geometry(par, 2))
    if name == "vaxpy" and geo[3][0] == 0:
        geo[3][0] = 1  # dst blk stride 0 with axpy: NotImplementedError
    sc = data.draw(st.sampled_from([2.0, -0.5, 3.14159, -1e30]) if dt != "int32"
                   else st.sampled_from([2, -7, 40000]))
    _check(name, "vs", dt, [dt], "Ascend910B", geo, data, scalar=sc)


@settings(max_examples=20, deadline=None)
@pytest.mark.parametrize("name,dt", [("vexp", "float32"), ("vabs", "float32"),
                                     ("vrec", "float32"), ("vsqrt", "float16")])
@given(data=st.data())
def test_blend_single_source(name, dt, data):
    geo = data.draw(frag_geometry(ref.tik_lanes_per_repeat(dt), 2))
    _check(name, "un", dt, [dt], "Ascend910", geo, data)


@settings(max_examples=20, deadline=None)
@pytest.mark.parametrize("name,dt", [("vadd", "float32"), ("vdiv", "float32"),
                                     ("vmul", "int32"), ("vmin", "float16")])
@given(data=st.data())
def test_blend_two_tensor(name, dt, data):
    geo = data.draw(frag_geometry(ref.tik_lanes_per_repeat(dt), 3))
    _check(name, "bin", dt, [dt, dt], "Ascend310P", geo, data)


@settings(max_examples=20, deadline=None)
@pytest.mark.parametrize("dt", ["float32", "float16"])
@given(data=st.data())
def test_blend_in_place(dt, data):
    """dst == src (same start, same strides): each block is read before it is written."""
    par = ref.tik_lanes_per_repeat(dt)
    geo = data.draw(frag_geometry(par, 1))
    mask, _, nrep, _, _, _ = geo
    blk = data.draw(st.sampled_from([1, 2]))
    rep = data.draw(st.sampled_from([8 * blk, 16]))  # no repeat reads an earlier write
    ext = ref.tik_extent(dt, 0, blk, rep, par, mask, nrep, None)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, dt, ext + data.draw(st.integers(0, 20)))

    def body(tk, ub):
        tk.vadds(mask, ub[0], ub[0], 2.0, nrep, blk, blk, rep, rep)

    got = run_program("Ascend910B", [x], body)
    want = ref.tik_vector("vadds", x, 0, [x], [0], scalar=np.dtype(dt).type(2.0), mask=mask,
                          nrep=nrep, blks=[blk, blk], reps=[rep, rep], sat=False,
                          src_is_dst=(True,))
    assert same_bits(got, want)


@settings(max_examples=20, deadline=None)
@pytest.mark.parametrize("dt", ["float32", "int32"])
@given(data=st.data())
def test_blend_accumulate(dt, data):
    """dst == src1 with rep strides 0: every repeat adds into the same blocks."""
    par = ref.tik_lanes_per_repeat(dt)
    mask = data.draw(frag_geometry(par, 1))[0]
    nrep = data.draw(st.integers(1, 12))
    blk = data.draw(st.sampled_from([1, 2]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ext_d = ref.tik_extent(dt, 0, blk, 0, par, mask, nrep, None)
    ext_s = ref.tik_extent(dt, 0, 1, 8, par, mask, nrep, None)
    acc = random_values(rng, dt, ext_d, special=False)
    src = random_values(rng, dt, ext_s, special=False)

    def body(tk, ub):
        tk.vadd(mask, ub[0], ub[1], ub[0], nrep, blk, 1, blk, 0, 8, 0)

    got = run_program("Ascend910B", [acc, src], body)
    want = ref.tik_vector("vadd", acc, 0, [src, acc], [0, 0], mask=mask, nrep=nrep,
                          blks=[blk, 1, blk], reps=[0, 8, 0], sat=False,
                          src_is_dst=(False, True))
    assert same_bits(got, want)


# ---- run-major order (fi_tik_set_reorder) ------------------------------------------------
# The walker may run an instruction run by run (every repeat of one block, then the next)
# when no write can hit a byte another write or a later read touches.  These draw dst and
# sources inside ONE tensor, at nearby starts with assorted strides, so the order matters
# in many examples: the result must still be the in-order, lane-by-lane walk.

@st.composite
def aliasing_geometry(draw, par, nsrc):
    kind = draw(st.sampled_from(["interleaved", "full", "block", "random", "contiguous"]))
    if kind == "contiguous":
        mask = draw(st.integers(1, par))
    else:
        lo = {"interleaved": INTERLEAVED, "full": 2**64 - 1,
              "block": 0xFFFF0000FFFF0000}.get(kind) or draw(st.integers(1, 2**64 - 1))
        lo &= (1 << min(par, 64)) - 1
        hi = lo if par == 128 else 0
        mask = [hi, lo or 1]
    nrep = draw(st.integers(2, 24))
    blks = [draw(st.sampled_from([1, 2, 3])) for _ in range(nsrc + 1)]
    reps = [draw(st.sampled_from([1, 4, 8, 16, 24])) for _ in range(nsrc + 1)]
    starts = [draw(st.sampled_from([0, 1, 2, 8, 16, 40])) for _ in range(nsrc + 1)]
    return mask, nrep, blks, reps, starts


@settings(max_examples=60, deadline=None)
@pytest.mark.parametrize("name,dt,nsrc", [("vadds", "float32", 1), ("vadds", "float16", 1),
                                          ("vadd", "float32", 2), ("vmul", "int32", 2),
                                          ("vexp", "float32", 1)])
@given(data=st.data())
def test_run_major_order_with_aliasing_operands(name, dt, nsrc, data):
    par = ref.tik_lanes_per_repeat(dt)
    mask, nrep, blks, reps, sblk = data.draw(aliasing_geometry(par, nsrc))
    epb = 32 // np.dtype(dt).itemsize
    starts = [b * epb for b in sblk]
    ext = max(ref.tik_extent(dt, s, b, r, par, mask, nrep) for s, b, r in zip(starts, blks, reps))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, dt, ext + 8, special=False)

    def body(tk, ub):
        t = ub[0]
        if nsrc == 1 and name == "vadds":
            tk.vadds(mask, t[starts[0]], t[starts[1]], 2.0, nrep, blks[0], blks[1], reps[0],
                     reps[1])
        elif nsrc == 1:
            tk.vexp(mask, t[starts[0]], t[starts[1]], nrep, blks[0], blks[1], reps[0], reps[1])
        else:
            getattr(tk, name)(mask, t[starts[0]], t[starts[1]], t[starts[2]], nrep, *blks,
                              *reps)

    try:
        got = run_program("Ascend910B", [x], body)
    except Exception as e:  # the front-end's overlap rules may reject the geometry
        from fastisa.errors import FastisaError
        assert isinstance(e, FastisaError), e
        return
    scalar = np.dtype(dt).type(2.0) if name == "vadds" else None
    want = ref.tik_vector(name, x, starts[0], [x] * nsrc, starts[1:], scalar=scalar,
                          mask=mask, nrep=nrep, blks=blks, reps=reps, sat=False,
                          src_is_dst=(True,) * nsrc)
    assert same_bits(got, want)


@pytest.mark.parametrize("rep", [16, 32])
def test_run_major_order_large_footprint(rep):
    """Spans above the cache-sized limit keep repeat-major order; same bits either way."""
    dt = "float32"
    par, nrep, blk = 64, 255, 2
    mask = [0, INTERLEAVED]
    rng = np.random.default_rng(rep)
    ext = ref.tik_extent(dt, 0, blk, rep, par, mask, nrep)
    a = random_values(rng, dt, ext, special=False)
    b = random_values(rng, dt, ext, special=False)

    def body(tk, ub):
        tk.vadds(mask, ub[0], ub[1], 2.0, nrep, blk, blk, rep, rep)

    got = run_program("Ascend910B", [a, b], body, ub_size=4 << 20)
    want = ref.tik_vector("vadds", a, 0, [b], [0], scalar=np.float32(2.0), mask=mask,
                          nrep=nrep, blks=[blk, blk], reps=[rep, rep], sat=False)
    assert same_bits(got, want)

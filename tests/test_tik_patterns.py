"""The instruction patterns of real TIK kernels (reference/tik.md section 3), rewritten as
small programs and checked bit-exactly against the per-lane oracle."""
from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from tik_helpers import random_values, run_program, same_bits


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.parametrize("mask", [1, 16, 100])
def test_odd_contiguous_masks_rep_stride_0(mask):
    """blast_tik: vec_dup(100, scores_ub(int16), 0, 1, 0); nll_loss_grad: mask 1."""
    d0 = np.full(256, 77, np.int16)
    got = run_program("Ascend910", [d0], lambda tk, ub: tk.vec_dup(mask, ub[0], -3, 1, 0))
    want = ref.tik_vector("vec_dup", d0, 0, [], [], scalar=np.int16(-3), mask=mask, nrep=1,
                          reps=[0])
    assert same_bits(got, want)
    assert (got[mask:] == 77).all()


def test_interleaved_bitwise_masks_write_same_tensor_twice():
    """check_valid: vector_dup with [0xAAAA.., 0xAAAA..] then [0x5555.., 0x5555..]."""
    d0 = np.zeros(512, np.float16)
    a, f = 0xAAAAAAAAAAAAAAAA, 0x5555555555555555

    def body(tk, ub):
        tk.vector_dup([a, a], ub[0], 1.0, 4, 1, 8)
        tk.vector_dup([f, f], ub[0], 2.0, 4, 1, 8)
    got = run_program("Ascend910", [d0], body)
    assert np.array_equal(got, np.tile(np.array([2.0, 1.0], np.float16), 256))


def test_block_stride_0_broadcast(rng):
    """iou: vmax(m, dst, a, gt, R, 1, 1, 0, 8, 8, 0) -- src1 one block for every block."""
    d0 = random_values(rng, "float16", 512)
    a = random_values(rng, "float16", 512, special=False)
    gt = random_values(rng, "float16", 16, special=False)

    def body(tk, ub):
        tk.vmax(128, ub[0], ub[1], ub[2], 4, 1, 1, 0, 8, 8, 0)
    got = run_program("Ascend910", [d0, a, gt], body)
    want = ref.tik_vector("vmax", d0, 0, [a, gt], [0, 0], mask=128, nrep=4, blks=[1, 1, 0],
                          reps=[8, 8, 0], sat=True)
    assert same_bits(got, want)
    assert same_bits(got, np.maximum(a, np.tile(gt, 32)))


@pytest.mark.parametrize("drep,srep", [(1, 1), (2, 1), (1, 2)])
def test_rep_stride_1_and_2(rng, drep, srep):
    """batch_norm: vec_rec(16, b, b, n, 1, 1) in place; upsample: vec_muls(c0, dst, src,
    scale, R, 2, 1) -- rep strides of 1-2 blocks with mask 16."""
    n = 40
    src = random_values(rng, "float16", 16 * n * srep + 16, special=False)
    d0 = random_values(rng, "float16", 16 * n * drep + 16)

    def body(tk, ub):
        tk.vec_muls(16, ub[0], ub[1], -1.5, n, drep, srep)
    got = run_program("Ascend910", [d0, src], body)
    want = ref.tik_vector("vec_muls", d0, 0, [src], [0], scalar=np.float16(-1.5), mask=16,
                          nrep=n, reps=[drep, srep], sat=True)
    assert same_bits(got, want)
    # in place with rep stride 1 (no iteration reads what the previous one wrote)
    got = run_program("Ascend910", [src], lambda tk, ub: tk.vec_rec(16, ub[0], ub[0], n, 1, 1))
    want = ref.tik_vector("vec_rec", src, 0, [src], [0], mask=16, nrep=n, reps=[1, 1],
                          sat=True)
    assert same_bits(got, want)


def test_255_repeat_loop_with_tail(rng):
    """The usual tiling: for_range over 255-repeat chunks, then a tail with a smaller mask."""
    total = 255 * 128 * 2 + 128 * 3 + 50
    x = random_values(rng, "float16", total + 78, special=False)
    d0 = np.zeros_like(x)

    def body(tk, ub):
        with tk.for_range(0, 2) as i:
            tk.vec_adds(128, ub[0][i * 255 * 128], ub[1][i * 255 * 128], 0.25, 255, 8, 8)
        base = 2 * 255 * 128
        tk.vec_adds(128, ub[0][base], ub[1][base], 0.25, 3, 8, 8)
        tk.vec_adds(50, ub[0][base + 384], ub[1][base + 384], 0.25, 1, 8, 8)
    got = run_program("Ascend910", [d0, x], body, ub_size=1 << 20)
    want = d0.copy()
    want[:total] = (x[:total].astype(np.float32) + np.float32(0.25)).astype(np.float16)
    assert same_bits(got, want)


def test_counter_mode_beyond_255_repeats(rng):
    count = 128 * 300 + 17
    x = random_values(rng, "float16", count + 111)
    d0 = random_values(rng, "float16", count + 111)
    got = run_program("Ascend310P", [d0, x],
                      lambda tk, ub: tk.vec_adds(count, ub[0], ub[1], 3.0, 1, 8, 8,
                                                 mask_mode="counter"))
    want = ref.tik_vector("vec_adds", d0, 0, [x], [0], scalar=np.float16(3.0), counter=count,
                          reps=[8, 8], sat=True)
    assert same_bits(got, want)
    assert same_bits(got[count:], d0[count:])


def test_counter_mode_with_strides(rng):
    count = 64 * 5 + 3
    x = random_values(rng, "float32", 64 * 2 * 6)
    d0 = random_values(rng, "float32", 64 * 3 * 6)
    got = run_program("Ascend910B", [d0, x],
                      lambda tk, ub: tk.vmuls(count, ub[0], ub[1], 0.5, 1, 3, 2, 24, 16,
                                              mask_mode="counter"))
    want = ref.tik_vector("vmuls", d0, 0, [x], [0], scalar=np.float32(0.5), counter=count,
                          blks=[3, 2], reps=[24, 16])
    assert same_bits(got, want)


def test_vrec_newton_division(rng):
    """scatter_nd_add / iou: x/y without vdiv: r = rec(y); r = r * (2 - y*r) via vec_mul,
    vec_muls(-1), vec_adds(2), vec_mul."""
    n = 256
    x = random_values(rng, "float32", n, special=False)
    y = (rng.random(n).astype(np.float32) * 10 + 0.5)
    zero = np.zeros(n, np.float32)

    def body(tk, ub):
        out, xs, ys, r, t = ub
        tk.vec_rec(64, r, ys, 4, 8, 8)
        tk.vec_mul(64, t, ys, r, 4, 8, 8, 8)
        tk.vec_muls(64, t, t, -1.0, 4, 8, 8)
        tk.vec_adds(64, t, t, 2.0, 4, 8, 8)
        tk.vec_mul(64, r, r, t, 4, 8, 8, 8)
        tk.vec_mul(64, out, xs, r, 4, 8, 8, 8)
    got = run_program("Ascend910", [zero, x, y, zero, zero], body)
    r = (1.0 / y.astype(np.float64)).astype(np.float32)
    t = ((y * r) * np.float32(-1)) + np.float32(2)
    want = x * (r * t)
    assert same_bits(got, want)
    assert np.allclose(got, x / y, rtol=1e-6)


def test_accumulate_idiom(rng):
    """vadd(m, acc, x, acc, R, 1, 1, 1, 0, 8, 0): acc += each row of x, in order."""
    rows = 6
    x = random_values(rng, "float16", 128 * rows, special=False)
    acc0 = random_values(rng, "float16", 128, special=False)
    got = run_program("Ascend910B", [acc0, x],
                      lambda tk, ub: tk.vec_add(128, ub[0], ub[1], ub[0], rows, 0, 8, 0))
    want = acc0.copy()
    with np.errstate(over="ignore"):  # sums past float16's range round to inf, as on chip
        for r in range(rows):
            want = (x[r * 128:(r + 1) * 128].astype(np.float32) + want.astype(np.float32)
                    ).astype(np.float16)
    assert same_bits(got, want)


def test_in_place_fp32_and_vconv_round_trip(rng):
    """bounding_box_encode: vconv fp16 -> fp32, compute, vconv back."""
    x = random_values(rng, "float16", 128, special=False)
    f = np.zeros(128, np.float32)
    h = np.zeros(128, np.float16)

    def body(tk, ub):
        tk.vconv(64, "", ub[1], ub[0], 2, 1, 1, 8, 4)
        tk.vmuls(64, ub[1], ub[1], 0.5, 2, 1, 1, 8, 8)
        tk.vconv(64, "", ub[2], ub[1], 2, 1, 1, 4, 8)
    got = run_program("Ascend910", [x, f, h], body, out_index=2)
    want = (x.astype(np.float32) * np.float32(0.5)).astype(np.float16)
    assert same_bits(got, want)


def test_vcadd_and_vec_reduce(rng):
    x = random_values(rng, "float16", 128 * 5, special=False)
    d0 = np.zeros(16, np.float16)
    got = run_program("Ascend910", [d0, x],
                      lambda tk, ub: tk.vcadd(128, ub[0], ub[1], 5, 1, 1, 8))
    want = ref.tik_reduce_repeat("add", x, 0, mask=128, nrep=5, blk=1, rep=8, sat=True)
    assert same_bits(got[:5], want)
    assert (got[5:] == 0).all()
    # vec_reduce_add: per-repeat sums rounded, then summed (one more rounding)
    big = (rng.standard_normal(128 * 200) * 4).astype(np.float16)
    w0 = np.zeros(256, np.float16)
    got = run_program("Ascend910", [d0, big, w0],
                      lambda tk, ub: tk.vec_reduce_add(128, ub[0], ub[1], ub[2], 200, 8))
    stage1 = ref.tik_reduce_repeat("add", big, 0, mask=128, nrep=200, blk=1, rep=8, sat=True)
    s = 0.0
    for v in stage1[:128]:
        s += float(v)
    s2 = 0.0
    for v in stage1[128:]:
        s2 += float(v)
    want = np.float16(float(np.float16(s)) + float(np.float16(s2)))
    assert got[0].view(np.uint16) == want.view(np.uint16)
    for name, fn in (("vec_reduce_max", np.max), ("vec_reduce_min", np.min)):
        got = run_program("Ascend910", [d0, big, w0],
                          lambda tk, ub, name=name: getattr(tk, name)(
                              128, ub[0], ub[1], ub[2], 200, 8))
        assert got[0] == fn(big)


def test_data_move_strided(rng):
    """data_move with gaps on both sides, GM -> UB -> GM, against the element oracle."""
    x = random_values(rng, "int16", 16 * 20)
    d0 = np.full(16 * 24, 5, np.int16)

    def body(tk, ub):
        tk.data_move(ub[0], ub[1], 0, 4, 2, 3, 4)
    got = run_program("Ascend910", [d0, x], body)
    want = ref.tik_data_move(d0, 0, x, 0, 4, 2, 3, 4)
    assert np.array_equal(got, want)


def test_softmax_example_matches():
    from fastisa import examples
    rep = examples.run("tik_softmax")
    assert rep.matches, rep.format()
    assert rep.cycles["Vector"] > 0 and rep.cycles["MTE2"] > 0


# ---- chunked float32 transpose through fp16 vnchwconv (hwc_2_chw-style) -----------------
# The pattern of ascend-opp op_impl/built-in/ai_core/tbe/impl/hwc_2_chw.py, as our own
# kernel: a (16 * L, c) float32 matrix in UB, seen as 16 chunks of L rows, is transposed
# per chunk by vnchwconv (16 chunk pointers -> interleaved), a strided UB -> UB data_move
# that regroups the interleaved pairs by channel (c bursts of 2 blocks, dst gap
# 2 * (L - 1) blocks), and a second vnchwconv back.  (L, c) = (120, 16) are the parameters
# that kernel computes for c = 16 (dst gap 238 blocks, 240 repeats); (8, 128) the ones it
# is written for.

@pytest.mark.parametrize("rows,c", [(120, 16), (8, 128), (3, 16)])
def test_chunked_f32_transpose_via_vnchwconv(rng, rows, c):
    n32 = rows * c                    # float32 elements per chunk
    n16 = 2 * n32                     # float16 halves per chunk
    nrep = n16 // 16
    x = random_values(rng, "float32", 16 * n32)
    y = random_values(rng, "float32", 16 * n32)

    def body(tk, ub):
        a, b = (t.reinterpret_cast_to("float16") for t in ub)
        tk.vnchwconv(False, False, [b[16 * j] for j in range(16)],
                     [a[n16 * k] for k in range(16)], nrep, 16, 1)
        with tk.for_range(0, rows) as h:
            tk.data_move(a[32 * h], b[32 * c * h], 0, c, 2, 0, 2 * (rows - 1))
        tk.vnchwconv(False, False, [b[n16 * j] for j in range(16)],
                     [a[16 * k] for k in range(16)], nrep, 1, 16)
    got_a, got_b = run_program("Ascend910", [x, y], body, out_index="all")

    # the same three steps through the per-element oracles
    off = x.nbytes
    ub = np.concatenate([x.view(np.uint8), y.view(np.uint8)])
    ub = ref.tik_nchwconv(ub, [off + 32 * j for j in range(16)],
                          [2 * n16 * k for k in range(16)], 2, nrep, 16, 1)
    a16, b16 = ub[:off].view(np.uint16), ub[off:].view(np.uint16)
    for h in range(rows):
        a16 = ref.tik_data_move(a16, 32 * h, b16, 32 * c * h, c, 2, 0, 2 * (rows - 1))
    ub = np.concatenate([a16.view(np.uint8), b16.view(np.uint8)])
    ub = ref.tik_nchwconv(ub, [off + 2 * n16 * j for j in range(16)],
                          [32 * k for k in range(16)], 2, nrep, 1, 16)
    assert np.array_equal(got_a.view(np.uint8), ub[:off])
    assert np.array_equal(got_b.view(np.uint8), ub[off:])
    # and what the pattern is for: every chunk transposed, channel-major
    assert same_bits(got_b.reshape(16, c, rows), x.reshape(16, rows, c).transpose(0, 2, 1))

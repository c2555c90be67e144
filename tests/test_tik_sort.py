"""vrpsort16 / vmrgsort4 (region-proposal sorts) against tests/reference.py, bit-exact, with
hypothesis geometry, their documented constraints as error tests, and an operator of our
own in the style of the public sort kernels (entry function, vconcat, vrpsort16, merge
passes with vmrgsort4, vextract, a row tail and padding)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import tik
from fastisa.errors import AccessError, AlignmentError, ConstraintError, OverlapError
from fastisa.tik import platform
from tik_helpers import run_program, same_bits


@pytest.fixture(autouse=True)
def _default_target():
    platform.set_target("Ascend910")
    yield
    platform.set_target("Ascend910")


def _proposals(rng, dtype, n, ties):
    """n proposals (flat, 8 elements each): random fields, scores from a small set (many
    ties, -0/+0) or random bits (with inf/NaN)."""
    ut = np.uint16 if dtype == "float16" else np.uint32
    p = rng.integers(0, np.iinfo(ut).max, n * 8, dtype=ut, endpoint=True).view(dtype).copy()
    if ties:
        p[4::8] = rng.choice(np.array([-2.0, -0.0, 0.0, 1.0, 3.5, np.inf], dtype), n)
    return p


def _target(dtype):
    return "Ascend910" if dtype == "float16" else "Ascend310P"


@settings(max_examples=25, deadline=None)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@given(data=st.data())
def test_vrpsort16(dtype, data):
    nrep = data.draw(st.integers(1, 4))
    B = 32 // np.dtype(dtype).itemsize
    inplace = data.draw(st.booleans())
    ds, ss = (data.draw(st.integers(0, 2)) * B for _ in range(2))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = _proposals(rng, dtype, (ss // 8 + 1) + nrep * 16 + 2, data.draw(st.booleans()))
    dst = _proposals(rng, dtype, (ds // 8 + 1) + nrep * 16 + 2, False)
    dynamic = data.draw(st.booleans())

    def body(tk, ub):
        d = (lambda v: tk.Scalar("int32", "d", init_value=v)) if dynamic else (lambda v: v)
        if inplace:
            tk.vrpsort16(ub[1][d(ss)], ub[1][d(ss)], d(nrep))
        else:
            tk.vrpsort16(ub[0][d(ds)], ub[1][d(ss)], d(nrep))

    got = run_program(_target(dtype), [dst, src], body, out_index="all")
    if inplace:
        assert same_bits(got[0], dst)
        assert same_bits(got[1], ref.tik_vrpsort16(src, ss, src, ss, nrep))
    else:
        assert same_bits(got[0], ref.tik_vrpsort16(dst, ds, src, ss, nrep))
        assert same_bits(got[1], src)


def _sorted_lists(rng, dtype, counts, ties, presort):
    lists = []
    for c in counts:
        p = _proposals(rng, dtype, c, ties)
        if presort and c:
            p = ref._rp_stable_sort(p.reshape(c, 8)).ravel()
        lists.append(p)
    return lists


@settings(max_examples=30, deadline=None)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@given(data=st.data())
def test_vmrgsort4(dtype, data):
    target = _target(dtype)
    valid = data.draw(st.sampled_from([3, 7, 15] + ([1] if target != "Ascend910" else [])))
    k = bin(valid).count("1")
    counts = [data.draw(st.integers(0, 20)) for _ in range(4)]
    suspend = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lists = _sorted_lists(rng, dtype, counts, data.draw(st.booleans()),
                          data.draw(st.booleans()))
    # the four lists one after another in one UB tensor, each start 32-byte aligned
    starts, flat = [], []
    pos = 0
    for p in lists:
        pad = (-pos) % (32 // np.dtype(dtype).itemsize)
        flat.append(np.zeros(pad, dtype))
        pos += pad
        starts.append(pos)
        flat.append(p)
        pos += p.size
    ub = np.concatenate(flat + [np.zeros(8, dtype)])
    dst = _proposals(rng, dtype, sum(counts) + 2, False)
    dynamic = data.draw(st.booleans())

    def body(tk, u):
        d = (lambda v: tk.Scalar("int32", "d", init_value=v)) if dynamic else (lambda v: v)
        tk.vmrgsort4(u[0], [u[1][s] for s in starts], [d(c) for c in counts], suspend,
                     d(valid) if dynamic else format(valid, "04b"), 1)

    got = run_program(target, [dst, ub], body, out_index="all")
    want = ref.tik_vmrgsort4(dst, 0, ub, starts[:k], counts[:k], suspend)
    assert same_bits(got[0], want)
    assert same_bits(got[1], ub)


def test_vmrgsort4_repeats_advance_by_the_four_lists():
    rng = np.random.default_rng(7)
    L, nrep = 5, 3
    ub = np.concatenate([ref._rp_stable_sort(_proposals(rng, "float16", L, True)
                                             .reshape(L, 8)).ravel()
                         for _ in range(4 * nrep)])
    dst = np.zeros(4 * L * 8 * nrep, np.float16)

    def body(tk, u):
        tk.vmrgsort4(u[0], [u[1][i * L * 8] for i in range(4)], L, False, "1111", nrep)

    got = run_program("Ascend910", [dst, ub], body)
    want = dst.copy()
    for r in range(nrep):
        base = r * 4 * L * 8
        want = ref.tik_vmrgsort4(want, base, ub, [base + i * L * 8 for i in range(4)],
                                 [L] * 4)
    assert same_bits(got, want)


def test_vmrgsort4_unsorted_lists_are_merged_not_sorted():
    # the merge takes the larger head: [1, 5] and [3] give 3, 1, 5 (a sort would give
    # 5, 3, 1)
    ub = np.zeros(32, np.float16)
    for i, v in enumerate([1, 5]):
        ub[i * 8 + 4] = v
    ub[16 + 4] = 3

    def body(tk, u):
        tk.vmrgsort4(u[0], [u[1][0], u[1][16], u[1][0], u[1][0]], [2, 1, 0, 0], False,
                     "0011", 1)

    got = run_program("Ascend910", [np.zeros(24, np.float16), ub], body)
    assert list(got[4::8]) == [3, 1, 5]


# --------------------------------------------------------------------------------------
# an operator of our own: sort_rows (the public sort kernels' shape of program)
# --------------------------------------------------------------------------------------

def sort_rows(rows, cols, descending=True, kernel_name="sort_rows"):
    """y[r] = the row sorted (descending, or ascending), idx[r] = the source positions
    (as int32): each row's values (times -1 for ascending; a tail read as the row's
    last 16 elements, then -65504 padding to 32 or 64) and their positions go into
    proposals with vconcat, vrpsort16 sorts groups of 16, one vmrgsort4 merges the groups
    (four, or two for a short row), vextract takes the fields out; rows are a for_range
    loop."""
    assert 16 <= cols <= 64
    tk = tik.Tik()
    x = tk.Tensor("float16", (rows, cols), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (rows, 64), name="y", scope=tik.scope_gm)
    idx = tk.Tensor("int32", (rows, 64), name="idx", scope=tik.scope_gm)
    total = 64 if cols > 32 else 32
    groups = total // 16
    vals = tk.Tensor("float16", (total,), name="vals", scope=tik.scope_ubuf)
    pos = tk.Tensor("float16", (total,), name="pos", scope=tik.scope_ubuf)
    prop = tk.Tensor("float16", (total * 8,), name="prop", scope=tik.scope_ubuf)
    srt = tk.Tensor("float16", (total * 8,), name="srt", scope=tik.scope_ubuf)
    out = tk.Tensor("float16", (total * 8,), name="out", scope=tik.scope_ubuf)
    ipos = tk.Tensor("int32", (total,), name="ipos", scope=tik.scope_ubuf)
    tail = tk.Tensor("float16", (16,), name="tail", scope=tik.scope_ubuf)
    sign = 1.0 if descending else -1.0
    k = tk.Scalar("float16", "k")
    with tk.for_range(0, rows) as r:
        tk.vec_dup(total, vals, -65504.0, 1, 8)
        tk.data_move(vals, x[r * cols], 0, 1, cols // 16, 0, 0)
        if cols % 16:       # the tail: the row's last 16 elements, the new ones copied over
            tk.data_move(tail, x[r * cols + cols - 16], 0, 1, 1, 0, 0)
            with tk.for_range(cols // 16 * 16, cols) as t:
                vals[t].set_as(tail[t - (cols - 16)])
        tk.vec_muls(total, vals, vals, sign, 1, 8, 8)
        with tk.for_range(cols, total) as t:     # padding below every (signed) value
            vals[t].set_as(-65504.0)
        k.set_as(0.0)
        with tk.for_range(0, total) as t:
            pos[t].set_as(k)
            k.set_as(k + 1.0)
        tk.vconcat(prop, vals, groups, 4)
        tk.vconcat(prop, pos, groups, 0)
        tk.vrpsort16(srt, prop, groups)
        if groups == 4:
            tk.vmrgsort4(out, [srt[0], srt[128], srt[256], srt[384]], 16, False, "1111")
        else:
            tk.vmrgsort4(out, [srt[0], srt[128], srt[0], srt[0]], [16, 16, 0, 0], False,
                         "0011")
        tk.vextract(vals, out, groups, 4)
        tk.vextract(pos, out, groups, 0)
        tk.vec_muls(total, vals, vals, sign, 1, 8, 8)
        tk.vec_conv(total, "round", ipos, pos, 1, 8, 4)
        tk.data_move(y[r * 64], vals, 0, 1, total // 16, 0, 0)
        tk.data_move(idx[r * 64], ipos, 0, 1, total // 8, 0, 0)
    tk.BuildCCE(kernel_name, [x], [y, idx])
    return tk


@pytest.mark.parametrize("rows,cols,desc", [(3, 64, True), (2, 40, False), (4, 20, True),
                                            (1, 64, False)])
def test_sort_rows_operator(rows, cols, desc):
    rng = np.random.default_rng(rows * 100 + cols)
    x = (rng.integers(-8, 8, (rows, cols)) / 2).astype(np.float16)   # many ties
    y, idx = sort_rows(rows, cols, desc).tikdb.start_debug({"x": x}, interactive=False)
    total = 64 if cols > 32 else 32
    for r in range(rows):
        key = -x[r].astype(np.float64) if desc else x[r].astype(np.float64)
        order = np.argsort(key, kind="stable")          # ties: the earlier position first
        assert same_bits(y[r, :cols], x[r][order])
        assert np.array_equal(idx[r, :cols], order.astype(np.int32))
        assert np.all(idx[r, cols:total] == np.arange(cols, total))


# --------------------------------------------------------------------------------------
# documented constraints
# --------------------------------------------------------------------------------------

def _h(tk):
    return {"p": tk.Tensor("float16", (512,), name="p", scope=tik.scope_ubuf),
            "q": tk.Tensor("float16", (512,), name="q", scope=tik.scope_ubuf),
            "f": tk.Tensor("float32", (512,), name="f", scope=tik.scope_ubuf),
            "gm": tk.Tensor("float16", (512,), name="gm", scope=tik.scope_gm)}


def _m4(tk, h, dst=None, counts=4, valid="1111", rep=1, suspend=False, src=None):
    srcs = src or [h["p"][0], h["p"][32], h["p"][64], h["p"][96]]
    return tk.vmrgsort4(h["q"] if dst is None else dst, srcs, counts, suspend, valid, rep)


ERRORS = [
    ("vrpsort16 repeat 0", "Ascend910", lambda tk, h: tk.vrpsort16(h["q"], h["p"], 0),
     ConstraintError, "immediate 0 is not supported"),
    ("vrpsort16 extent", "Ascend910", lambda tk, h: tk.vrpsort16(h["q"], h["p"], 5),
     AccessError, "tensor overflow"),
    ("vrpsort16 align", "Ascend910", lambda tk, h: tk.vrpsort16(h["q"][8], h["p"], 1),
     AlignmentError, "not 32 align"),
    ("vrpsort16 scope", "Ascend910", lambda tk, h: tk.vrpsort16(h["q"], h["gm"], 1),
     ConstraintError, "scope must be UB"),
    ("vrpsort16 dtype mix", "Ascend910", lambda tk, h: tk.vrpsort16(h["q"], h["f"], 1),
     ConstraintError, "dtype should be equal"),
    ("vrpsort16 f32 v100", "Ascend910", lambda tk, h: tk.vrpsort16(h["f"], h["f"], 1),
     ConstraintError, "not supported on Ascend910"),
    ("vrpsort16 A2", "Ascend910B", lambda tk, h: tk.vrpsort16(h["q"], h["p"], 1),
     ConstraintError, "not supported on Ascend910B"),
    ("vmrgsort4 list len", "Ascend910",
     lambda tk, h: tk.vmrgsort4(h["q"], [h["p"]] * 3, 4, False, "0111"),
     ConstraintError, "length of src_list should be 4"),
    ("vmrgsort4 counts len", "Ascend910", lambda tk, h: _m4(tk, h, counts=[4, 4]),
     ConstraintError, "element_count_list(length: 2)"),
    ("vmrgsort4 count range", "Ascend910", lambda tk, h: _m4(tk, h, counts=4096),
     ConstraintError, "element_count_list[0] should be in the range of [0, 4095]"),
    ("vmrgsort4 valid v100", "Ascend910", lambda tk, h: _m4(tk, h, valid="0001"),
     ConstraintError, "valid bits only support"),
    ("vmrgsort4 valid value", "Ascend310P", lambda tk, h: _m4(tk, h, valid="0101"),
     ConstraintError, "valid bits only support"),
    ("vmrgsort4 valid str", "Ascend910", lambda tk, h: _m4(tk, h, valid="12"),
     ConstraintError, "binary string"),
    ("vmrgsort4 repeat criteria", "Ascend910", lambda tk, h: _m4(tk, h, valid="0111", rep=2),
     ConstraintError, "repeat_times should be 1"),
    ("vmrgsort4 repeat suspend", "Ascend910", lambda tk, h: _m4(tk, h, rep=2, suspend=True),
     ConstraintError, "repeat_times should be 1"),
    ("vmrgsort4 repeat range", "Ascend910", lambda tk, h: _m4(tk, h, rep=0),
     ConstraintError, "repeat_times should be in the range of [1, 255]"),
    ("vmrgsort4 suspend type", "Ascend910", lambda tk, h: _m4(tk, h, suspend=1),
     ConstraintError, "if_exhausted_suspension should be bool"),
    ("vmrgsort4 dst extent", "Ascend910", lambda tk, h: _m4(tk, h, dst=h["q"][400]),
     AccessError, "tensor overflow"),
    ("vmrgsort4 src extent", "Ascend910",
     lambda tk, h: _m4(tk, h, src=[h["p"][0], h["p"][32], h["p"][64], h["p"][496]]),
     AccessError, "tensor overflow"),
    ("vmrgsort4 align", "Ascend910",
     lambda tk, h: _m4(tk, h, src=[h["p"][4], h["p"][32], h["p"][64], h["p"][96]]),
     AlignmentError, "not 16 align"),
    ("vmrgsort4 overlap", "Ascend910", lambda tk, h: _m4(tk, h, dst=h["p"][104]),
     OverlapError, "overlapping"),
    ("vmrgsort4 sr array", "Ascend910",
     lambda tk, h: tk.vmrgsort4(h["q"], [h["p"]] * 4, 4, True, "1111", 1,
                                [tk.Scalar("int64")] * 4),
     NotImplementedError, "vms4_sr_scalar_array"),
    ("vmrgsort4 A2", "Ascend910B", lambda tk, h: _m4(tk, h),
     ConstraintError, "not supported on Ascend910B"),
]


@pytest.mark.parametrize("label,target,call,exc,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_sort_errors(label, target, call, exc, msg):
    platform.set_target(target)
    tk = tik.Tik()
    h = _h(tk)
    with pytest.raises(exc, match=None) as ei:
        call(tk, h)
    assert msg in str(ei.value)


def test_runtime_checks_leave_state_unchanged():
    # a Scalar repeat past the tensor is an AccessError at run time and writes nothing
    tk = tik.Tik()
    x = tk.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    u = tk.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
    n = tk.Scalar("int32", "n", init_value=3)
    tk.data_move(u, x, 0, 1, 16, 0, 0)
    tk.vrpsort16(u, u, n)
    tk.data_move(y, u, 0, 1, 16, 0, 0)
    tk.BuildCCE("k", [x], [y])
    with pytest.raises(AccessError, match="tensor overflow"):
        tk.tikdb.start_debug({"x": np.zeros(256, np.float16)}, interactive=False)

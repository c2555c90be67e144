"""The TIK 1.5 h_* API (tik-cube): regions of tensors, bit-exact against tests/reference.py
(tik_h_region for the regions, tik_op for the arithmetic, tik_h_reduce for reductions)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import errors, tik
from fastisa.tik import platform
from tik_helpers import random_values, run_program, same_bits

BIN = {"h_add": "vec_add", "h_sub": "vec_sub", "h_mul": "vec_mul", "h_div": "vec_div",
       "h_max": "vec_max", "h_min": "vec_min"}
UN = {"h_exp": "vec_exp", "h_ln": "vec_ln", "h_abs": "vec_abs", "h_sqrt": "vec_sqrt",
      "h_rsqrt": "vec_rsqrt", "h_rec": "vec_rec", "h_relu": "vec_relu"}


def _box(data, shape, region_shape=None):
    """A random index for a tensor of ``shape``: None (all), one flat range, or a box."""
    kind = data.draw(st.sampled_from(["all", "flat", "box"])) if region_shape is None else "box"
    if kind == "all":
        return None
    if kind == "flat":
        n = int(np.prod(shape))
        a = data.draw(st.integers(0, n - 1))
        b = data.draw(st.integers(a + 1, n))
        return (slice(a, b),)
    idx = []
    for d, n in enumerate(shape):
        w = region_shape[d] if region_shape is not None else data.draw(st.integers(1, n))
        a = data.draw(st.integers(0, n - w))
        if w == 1 and data.draw(st.booleans()):
            idx.append(a)
        else:
            idx.append(slice(a, a + w))
    return tuple(idx)


def _idx(t, index):
    return t if index is None else t[index]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_h_elementwise_matches_reference(data):
    name = data.draw(st.sampled_from(sorted(BIN) + sorted(UN)))
    instr = BIN.get(name) or UN[name]
    dts = ["float16", "float32"] + (["int32", "int16"] if name in
                                    ("h_add", "h_sub", "h_mul", "h_max", "h_min") else [])
    if name in ("h_abs", "h_relu"):
        dts += ["int32"] if name == "h_relu" else []
    dt = data.draw(st.sampled_from(dts))
    target = data.draw(st.sampled_from(["Ascend910", "Ascend910B"]))
    if not platform.TARGETS[target].supports(instr, dt):
        return
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 9)) for _ in range(rank))
    rshape = tuple(data.draw(st.integers(1, n)) for n in shape)
    di = _box(data, shape, rshape)
    si = [_box(data, shape, rshape) for _ in range(2)]
    scalar = name in BIN and data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = int(np.prod(shape))
    arrays = [random_values(rng, dt, n).reshape(shape) for _ in range(3)]
    sval = float(random_values(rng, dt, 1, special=False)[0]) if dt[0] == "f" else \
        int(random_values(rng, dt, 1)[0])

    def body(tk, ubs):
        d, a, b = ubs
        if name in BIN:
            getattr(tk, name)(_idx(d, di), _idx(a, si[0]), sval if scalar else _idx(b, si[1]))
        else:
            getattr(tk, name)(_idx(d, di), _idx(a, si[0]))
    got = run_program(target, arrays, body)
    want = arrays[0].reshape(-1).copy()
    _, dix = ref.tik_h_region(shape, di)
    srcs = [arrays[1].reshape(-1)[ref.tik_h_region(shape, si[0])[1]]]
    if name in BIN:
        srcs.append(np.full(dix.size, sval, dtype=dt) if scalar else
                    arrays[2].reshape(-1)[ref.tik_h_region(shape, si[1])[1]])
    sat = platform.TARGETS[target].saturation
    want[dix] = ref.tik_op(instr, dt, srcs, None, want[dix], sat)
    assert same_bits(got.reshape(-1), want)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_h_reduce_matches_reference(data):
    name = data.draw(st.sampled_from(["h_reduce_sum", "h_reduce_max", "h_reduce_min"]))
    dt = data.draw(st.sampled_from(["float16", "float32"]))
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.integers(1, 12)) for _ in range(rank))
    axes = data.draw(st.sets(st.integers(0, rank - 1), min_size=1))
    axis = tuple(sorted(axes)) if len(axes) > 1 or data.draw(st.booleans()) else min(axes)
    keep = [i for i in range(rank) if i not in axes]
    out_shape = tuple(shape[i] for i in keep) or (1,)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, dt, int(np.prod(shape)), special=data.draw(st.booleans()))
    x = x.reshape(shape)
    d0 = random_values(rng, dt, int(np.prod(out_shape))).reshape(out_shape)
    got = run_program("Ascend910", [d0, x],
                      lambda tk, ubs: getattr(tk, name)(ubs[0], ubs[1], axis=axis))
    xr = np.ascontiguousarray(x.transpose(sorted(axes) + keep)).reshape(
        -1, int(np.prod(out_shape)))
    want = ref.tik_h_reduce(name, xr, True).reshape(out_shape)
    assert same_bits(got, want)


def test_h_reduce_sum_order_is_pairwise():
    """float16: 2048 + 1 + 1 + 1 summed pairwise: (2048 + 1) + (1 + 1) = 2048 + 2 = 2050
    (sequential adds would round each +1 away and give 2048)."""
    x = np.array([2048, 1, 1, 1], np.float16)
    got = run_program("Ascend910", [np.zeros(16, np.float16), x],
                      lambda tk, ubs: tk.h_reduce_sum(ubs[0][0:1], ubs[1]))
    assert got[0] == 2050


def test_h_data_move_and_duplicate_regions():
    tk = tik.Tik()
    g = tk.Tensor("float32", (6, 10), name="g", scope=tik.scope_gm)
    o = tk.Tensor("float32", (6, 10), name="o", scope=tik.scope_gm)
    ub = tk.Tensor("float32", (4, 16), name="ub", scope=tik.scope_ubuf)
    tk.h_duplicate(ub, -1.0)
    i = tk.Scalar("int32", init_value=2)
    tk.h_data_move(ub[1:3, 4:14], g[i:i + 2, :])       # a runtime start
    tk.h_duplicate(ub[0, 0:4], 7.0)
    tk.h_data_move(o, g)
    tk.h_data_move(o[0:2, 0:10], ub[1:3, 4:14])
    tk.BuildCCE("k", [g], [o])
    x = np.arange(60, dtype=np.float32).reshape(6, 10)
    out = tk.tikdb.start_debug({"g": x})[0]
    assert (out[0:2] == x[2:4]).all() and (out[2:] == x[2:]).all()


def _softmax_kernel(rows, cols, dtype="float16"):
    """A TIK 1.5 softmax in the style of the public h_* operators: a decorated-entry-free
    builder, row tiling with for_range, h_* over row slices."""
    tk = tik.Tik()
    x_gm = tk.Tensor(dtype, (rows, cols), name="x_gm", scope=tik.scope_gm)
    y_gm = tk.Tensor(dtype, (rows, cols), name="y_gm", scope=tik.scope_gm)
    tile = 4
    with tk.for_range(0, rows // tile) as i:
        x = tk.Tensor(dtype, (tile, cols), name="x", scope=tik.scope_ubuf)
        m = tk.Tensor(dtype, (tile,), name="m", scope=tik.scope_ubuf)
        s = tk.Tensor(dtype, (tile,), name="s", scope=tik.scope_ubuf)
        tk.h_data_move(x, x_gm[i * tile:(i + 1) * tile, :])
        tk.h_reduce_max(m, x, axis=1)
        v = tk.Scalar(dtype)
        with tk.for_range(0, tile) as j:
            v.set_as(m[j])
            tk.h_sub(x[j:j + 1, :], x[j:j + 1, :], v)
        tk.h_exp(x, x)
        tk.h_reduce_sum(s, x, axis=1)
        with tk.for_range(0, tile) as j:
            v.set_as(s[j])
            tk.h_div(x[j:j + 1, :], x[j:j + 1, :], v)
        tk.h_data_move(y_gm[i * tile:(i + 1) * tile, :], x)
    tk.BuildCCE("softmax", [x_gm], [y_gm])
    return tk


def test_h_softmax_operator():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 40)).astype(np.float16)
    y = _softmax_kernel(8, 40).tikdb.start_debug({"x_gm": x})[0]
    # the same steps with the oracles
    want = np.empty_like(x)
    for r in range(8):
        row = x[r].copy()
        mx = ref.tik_h_reduce("h_reduce_max", row.reshape(-1, 1), True)[0]
        row = ref.tik_op("vec_sub", "float16", [row, np.full(40, mx, np.float16)], None, row, True)
        row = ref.tik_op("vec_exp", "float16", [row], None, row, True)
        sm = ref.tik_h_reduce("h_reduce_sum", row.reshape(-1, 1), True)[0]
        want[r] = ref.tik_op("vec_div", "float16", [row, np.full(40, sm, np.float16)], None,
                             row, True)
    assert same_bits(y, want)
    z = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    assert np.allclose(y, z / z.sum(1, keepdims=True), atol=2e-3)


def test_h_errors():
    tk = tik.Tik()
    a = tk.Tensor("float16", (4, 16), name="a", scope=tik.scope_ubuf)
    b = tk.Tensor("float16", (4, 8), name="b", scope=tik.scope_ubuf)
    c = tk.Tensor("float32", (4, 16), name="c", scope=tik.scope_ubuf)
    g = tk.Tensor("float16", (4, 16), name="g", scope=tik.scope_gm)
    E = errors.ConstraintError
    with pytest.raises(E, match="src1 shape \\(4, 8\\) does not match dst shape \\(4, 16\\)"):
        tk.h_add(a, a, b)
    with pytest.raises(E, match="src0's dtype should be equal to dst's dtype"):
        tk.h_add(a, c, a)
    with pytest.raises(E, match="scope should be ub"):
        tk.h_exp(a, g)
    with pytest.raises(errors.AccessError, match="index range \\[2, 6\\)"):
        tk.h_add(a[2:6, :], a[0:4, :], a[0:4, :])
    with pytest.raises(E, match="index not match shape"):
        tk.h_relu(a[0:1, 0:1, 0:1], a[0:1, 0:1, 0:1])
    with pytest.raises(NotImplementedError, match="step"):
        tk.h_abs(a[0:4:2, :], a[0:4:2, :])
    with pytest.raises(E, match="axis must be ints in \\[-2, 2\\)"):
        tk.h_reduce_max(a[0, :], a, axis=2)
    with pytest.raises(E, match="does not match the reduced shape"):
        tk.h_reduce_sum(a, a, axis=1)
    with pytest.raises(E, match="h_data_move: src's dtype"):
        tk.h_data_move(c, g)
    with pytest.raises(E, match="conversion float16 -> int16 is not supported"):
        tk.h_cast(tk.Tensor("int16", (4, 16), name="i", scope=tik.scope_ubuf), a)
    with pytest.raises(E, match="round_mode should be one of"):
        tk.h_cast(c, a, "floor")
    with pytest.raises(E, match="scalar must be an int/float immediate or a Scalar"):
        tk.h_duplicate(a, "x")
    # int16 vec_exp is not in the target's dtype table
    i16 = tk.Tensor("int16", (16,), name="i16", scope=tik.scope_ubuf)
    with pytest.raises(E, match="dtype int16 is not supported"):
        tk.h_exp(i16, i16)


def test_h_cast_matches_vec_conv():
    rng = np.random.default_rng(2)
    x = random_values(rng, "float32", 48).reshape(3, 16)
    d = np.zeros((3, 16), np.float16)
    got = run_program("Ascend910", [d, x], lambda tk, ubs: tk.h_cast(ubs[0], ubs[1], ""))
    want = ref.tik_op("vec_conv", "float16", [x.reshape(-1)], None, d.reshape(-1), True)
    assert same_bits(got.reshape(-1), want)

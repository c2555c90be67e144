"""TIK cube path (tik-cube): matmul, conv2d and fixpipe over L1 / L1OUT, bit-exact against
tests/reference.py (tik_matmul, tik_conv2d, tik_fixpipe)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import errors, tik
from fastisa.tik import platform
from tik_helpers import blocks, random_values, same_bits

K0 = {"float16": 16, "int8": 32, "uint8": 32}
ACC = {"float16": "float32", "int8": "int32", "uint8": "int32"}


def _r16(x):
    return -(-x // 16) * 16


def _mm_inputs(rng, adt, m, k, n, special=False):
    k0 = K0[adt]
    mr, nr, kr = _r16(m), _r16(n), -(-k // k0) * k0
    a = random_values(rng, adt, kr * mr, special=special).reshape(kr // k0, mr, k0)
    b = random_values(rng, "int8" if adt != "float16" else adt, kr * nr,
                      special=special).reshape(kr // k0, nr, k0)
    if adt == "float16" and not special:   # keep sums finite and meaningful
        a = (rng.standard_normal(a.shape) * 4).astype(np.float16)
        b = (rng.standard_normal(b.shape) * 4).astype(np.float16)
    return a, b


def _run_matmul(calls, m, k, n, acc_dtype, dst_pad=0, src_pad=0, target="Ascend910"):
    """calls: [(a, b, init_l1out)], all matmuls into one L1OUT tensor (starting dst_pad
    elements in); returns the whole L1OUT region read back with a plain fixpipe."""
    mr, nr = _r16(m), _r16(n)
    platform.set_target(target)
    try:
        tk = tik.Tik()
        d = tk.Tensor(acc_dtype, (dst_pad + nr * mr,), name="d", scope=tik.scope_cbuf_out)
        gms, feed = [], {}
        for q, (a, b, init) in enumerate(calls):
            ga = tk.Tensor(str(a.dtype), (src_pad + a.size,), name=f"a{q}", scope=tik.scope_gm)
            gb = tk.Tensor(str(b.dtype), (src_pad + b.size,), name=f"b{q}", scope=tik.scope_gm)
            la = tk.Tensor(str(a.dtype), (src_pad + a.size,), name=f"la{q}",
                           scope=tik.scope_cbuf)
            lb = tk.Tensor(str(b.dtype), (src_pad + b.size,), name=f"lb{q}",
                           scope=tik.scope_cbuf)
            tk.data_move(la, ga, 0, 1, blocks(src_pad + a.size, a.dtype), 0, 0)
            tk.data_move(lb, gb, 0, 1, blocks(src_pad + b.size, b.dtype), 0, 0)
            tk.matmul(d[dst_pad:], la[src_pad:], lb[src_pad:], m, k, n, init_l1out=init)
            gms += [ga, gb]
            pad = np.zeros(src_pad, a.dtype)
            feed[f"a{q}"] = np.concatenate([pad, a.reshape(-1)])
            feed[f"b{q}"] = np.concatenate([np.zeros(src_pad, b.dtype), b.reshape(-1)])
        out = tk.Tensor(acc_dtype, (nr * mr,), name="out", scope=tik.scope_gm)
        tk.fixpipe(out, d[dst_pad:], nr // 16, mr * 16 * 4 // 32, 0, 0)
        tk.BuildCCE("mm", gms, [out])
        return tk.tikdb.start_debug(feed)[0].reshape(nr // 16, mr, 16)
    finally:
        platform.set_target("Ascend910")


def _oracle_chain(calls, m, k, n, acc_dtype):
    mr, nr = _r16(m), _r16(n)
    d = np.zeros((nr // 16, mr, 16), acc_dtype)
    for a, b, init in calls:
        d = ref.tik_matmul(d, a, b, m, k, n, init)
    return d


# ---- matmul -----------------------------------------------------------------------------

def test_matmul_doc_example_int8():
    """TIK matmul doc example 1: a = -1 (int8), b = 1, m, k, n = 30, 64, 160: every valid
    C entry is -64 (the doc's relu then gives 0; here without relu)."""
    a = np.full((2, 32, 32), -1, np.int8)
    b = np.ones((2, 160, 32), np.int8)
    got = _run_matmul([(a, b, True)], 30, 64, 160, "int32")
    assert (got[:, :30] == -64).all()


def test_matmul_doc_example_float16_elementwise_add():
    """TIK matmul doc example 2: ones, m, k, n = 30, 64, 160, fixpipe element-wise-add of
    ones: dst_gm = 65.0 everywhere."""
    tk = tik.Tik()
    a_gm = tk.Tensor("float16", [4, 32, 16], name="a_gm", scope=tik.scope_gm)
    b_gm = tk.Tensor("float16", [4, 160, 16], name="b_gm", scope=tik.scope_gm)
    e_gm = tk.Tensor("float32", [10, 32, 16], name="e_gm", scope=tik.scope_gm)
    dst_gm = tk.Tensor("float32", [10, 30, 16], name="dst_gm", scope=tik.scope_gm)
    a_l1 = tk.Tensor("float16", [4, 32, 16], name="a_l1", scope=tik.scope_cbuf)
    b_l1 = tk.Tensor("float16", [4, 160, 16], name="b_l1", scope=tik.scope_cbuf)
    e_l1 = tk.Tensor("float32", [10, 32, 16], name="e_l1", scope=tik.scope_cbuf)
    d = tk.Tensor("float32", [10, 32, 16], name="d", scope=tik.scope_cbuf_out)
    tk.data_move(a_l1, a_gm, 0, 1, 128, 0, 0)
    tk.data_move(b_l1, b_gm, 0, 1, 640, 0, 0)
    tk.data_move(e_l1, e_gm, 0, 1, 640, 0, 0)
    tk.matmul(d, a_l1, b_l1, 30, 64, 160)
    tk.fixpipe(dst_gm, d, 10, 60, 0, 0, extend_params={"element-wise-add": e_l1})
    tk.BuildCCE("matmul", [a_gm, b_gm, e_gm], [dst_gm])
    out, = tk.tikdb.start_debug({"a_gm": np.ones((4, 32, 16), np.float16),
                                 "b_gm": np.ones((4, 160, 16), np.float16),
                                 "e_gm": np.ones((10, 32, 16), np.float32)})
    assert (out == 65.0).all()


def test_matmul_float32_accumulation_is_sequential():
    """float16 products are exact; the float32 sum rounds after every add, in k order:
    k = 0 gives 2^24 (4096 * 4096), and each later +1 rounds back to 2^24 (ties to even)."""
    a = np.zeros((1, 16, 16), np.float16)
    b = np.zeros((1, 16, 16), np.float16)
    a[0, :, 0] = 4096.0
    b[0, :, 0] = 4096.0             # k = 0: 2^24
    a[0, :, 1:] = 1.0
    b[0, :, 1:] = 1.0               # k = 1..15: +1 each, each rounded away
    got = _run_matmul([(a, b, True)], 16, 16, 16, "float32")
    assert got[0, 0, 0] == 2.0 ** 24          # a float64 or pairwise sum would give 2^24+16
    want = _oracle_chain([(a, b, True)], 16, 16, 16, "float32")
    assert same_bits(got, want)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_matmul_matches_reference(data):
    adt = data.draw(st.sampled_from(["float16", "int8", "uint8"]))
    m = data.draw(st.integers(1, 40))
    n = data.draw(st.integers(1, 40))
    k = data.draw(st.integers(1, 80))
    nacc = data.draw(st.integers(1, 2))          # a second call accumulates (init False)
    dst_pad = data.draw(st.sampled_from([0, 256]))     # 1024 B into the L1OUT tensor
    src_pad = data.draw(st.sampled_from([0, 512 // np.dtype(adt).itemsize]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    calls = [(*_mm_inputs(rng, adt, m, k, n), q == 0) for q in range(nacc)]
    got = _run_matmul(calls, m, k, n, ACC[adt], dst_pad, src_pad)
    want = _oracle_chain(calls, m, k, n, ACC[adt])
    assert same_bits(got, want)


def test_matmul_special_values_and_int_wrap():
    rng = np.random.default_rng(5)
    calls = [(*_mm_inputs(rng, "float16", 20, 40, 24, special=True), True)]
    assert same_bits(_run_matmul(calls, 20, 40, 24, "float32"),
                     _oracle_chain(calls, 20, 40, 24, "float32"))
    # int8 x int8 over k = 32768 would overflow int32 only beyond 2^31; wrap checked with
    # uint8 255 * int8 -128 over k = 96 twice accumulated: exact
    a = np.full((3, 16, 32), 255, np.uint8)
    b = np.full((3, 16, 32), -128, np.int8)
    got = _run_matmul([(a, b, True), (a, b, False)], 16, 96, 16, "int32")
    assert (got == 2 * 96 * 255 * -128).all()


def test_matmul_errors():
    tk = tik.Tik()
    a = tk.Tensor("float16", (2, 32, 16), name="a", scope=tik.scope_cbuf)
    b = tk.Tensor("float16", (2, 32, 16), name="b", scope=tik.scope_cbuf)
    d = tk.Tensor("float32", (2, 32, 16), name="d", scope=tik.scope_cbuf_out)
    ub = tk.Tensor("float16", (2, 32, 16), name="ub", scope=tik.scope_ubuf)
    bi = tk.Tensor("int8", (2, 32, 32), name="bi", scope=tik.scope_cbuf)
    d16 = tk.Tensor("float16", (2, 32, 16), name="d16", scope=tik.scope_cbuf_out)
    E = errors.ConstraintError
    with pytest.raises(E, match="a's scope should be L1"):
        tk.matmul(d, ub, b, 32, 32, 32)
    with pytest.raises(E, match="dst.s scope should be L1_OUT"):
        tk.matmul(a, a, b, 32, 32, 32)
    with pytest.raises(E, match="dtype combination float16:int8:float32"):
        tk.matmul(d, a, bi, 32, 32, 32)
    with pytest.raises(E, match="dtype combination float16:float16:float16"):
        tk.matmul(d16, a, b, 32, 32, 32)
    with pytest.raises(E, match=r"m should be in range of \[1, 4096\], but m is 0"):
        tk.matmul(d, a, b, 0, 32, 32)
    with pytest.raises(E, match=r"k should be in range of \[1, 16384\]"):
        tk.matmul(d, a, b, 32, 16385, 32)
    with pytest.raises(E, match="n should be int"):
        tk.matmul(d, a, b, 32, 32, 3.5)
    with pytest.raises(E, match="init_l1out should be bool"):
        tk.matmul(d, a, b, 32, 32, 32, init_l1out=1)
    with pytest.raises(errors.AccessError, match="a tensor overflow, expected elements: 1536"):
        tk.matmul(d, a, b, 48, 32, 16)
    with pytest.raises(errors.AlignmentError, match="dst address should be 1024B aligned"):
        tk.matmul(d[16:], a, b, 16, 16, 16)
    with pytest.raises(errors.AlignmentError, match="should be 512B aligned"):
        tk.matmul(d, a[16:], b, 16, 16, 16)
    platform.set_target("Ascend310P")
    try:   # 32-byte source alignment off the 310/910 generation
        tk2 = tik.Tik()
        a2 = tk2.Tensor("float16", (2, 32, 16), name="a", scope=tik.scope_cbuf)
        d2 = tk2.Tensor("float32", (2, 32, 16), name="d", scope=tik.scope_cbuf_out)
        tk2.matmul(d2, a2[16:], a2, 16, 16, 16)
    finally:
        platform.set_target("Ascend910")


def test_matmul_runtime_offset_checked_and_nothing_written():
    tk = tik.Tik()
    g = tk.Tensor("float16", (16 * 16,), name="g", scope=tik.scope_gm)
    a = tk.Tensor("float16", (16 * 16,), name="a", scope=tik.scope_cbuf)
    d = tk.Tensor("float32", (2 * 256,), name="d", scope=tik.scope_cbuf_out)
    out = tk.Tensor("float32", (256,), name="out", scope=tik.scope_gm)
    s = tk.Scalar("int32", init_value=256)
    tk.data_move(a, g, 0, 1, 16, 0, 0)
    tk.matmul(d[s], a, a, 16, 16, 16)      # 256 elements in: 1024 B, fits
    s.set_as(512)
    tk.matmul(d[s], a, a, 16, 16, 16)      # past the end at run time
    tk.fixpipe(out, d, 1, 32, 0, 0)
    tk.BuildCCE("k", [g], [out])
    with pytest.raises(errors.AccessError, match="dst tensor overflow"):
        tk.tikdb.start_debug({"g": np.ones(256, np.float16)})


# ---- conv2d -----------------------------------------------------------------------------

def _run_conv(fm, w, stride, pad, dilation, pad_value, acc, init_twice=False):
    c1, h, wd, c0 = fm.shape
    _, kh, kw, co, _ = w.shape
    ho = (h + pad[2] + pad[3] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + pad[0] + pad[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    rh = _r16(ho * wo)
    tk = tik.Tik()
    gf = tk.Tensor(str(fm.dtype), fm.shape, name="gf", scope=tik.scope_gm)
    gw = tk.Tensor(str(w.dtype), w.shape, name="gw", scope=tik.scope_gm)
    lf = tk.Tensor(str(fm.dtype), fm.shape, name="lf", scope=tik.scope_cbuf)
    lw = tk.Tensor(str(w.dtype), w.shape, name="lw", scope=tik.scope_cbuf)
    d = tk.Tensor(acc, (co // 16, rh, 16), name="d", scope=tik.scope_cbuf_out)
    out = tk.Tensor(acc, (co // 16, ho * wo, 16), name="out", scope=tik.scope_gm)
    tk.data_move(lf, gf, 0, 1, blocks(fm.size, fm.dtype), 0, 0)
    tk.data_move(lw, gw, 0, 1, blocks(w.size, w.dtype), 0, 0)
    tk.conv2d(d, lf, lw, list(fm.shape), list(w.shape), stride, pad, dilation, pad_value)
    if init_twice:
        tk.conv2d(d, lf, lw, list(fm.shape), list(w.shape), stride, pad, dilation, pad_value,
                  init_l1out=False)
    tk.fixpipe(out, d, co // 16, ho * wo * 16 * 4 // 32, 0, 0)
    tk.BuildCCE("conv", [gf, gw], [out])
    got = tk.tikdb.start_debug({"gf": fm, "gw": w})[0]
    want = np.zeros((co // 16, rh, 16), acc)
    want = ref.tik_conv2d(want, fm, w, stride, pad, dilation, pad_value)
    if init_twice:
        want = ref.tik_conv2d(want, fm, w, stride, pad, dilation, pad_value, False)
    return got, want[:, :ho * wo]


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_conv2d_matches_reference(data):
    dt = data.draw(st.sampled_from(["float16", "int8", "uint8"]))
    c0 = K0[dt]
    c1 = data.draw(st.integers(1, 2))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    h, w = data.draw(st.integers(kh, 6)), data.draw(st.integers(kw, 6))
    stride = [data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))]
    dilation = [data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))]
    pad = [data.draw(st.integers(0, 2)) for _ in range(4)]
    if (h + pad[2] + pad[3] - dilation[0] * (kh - 1) - 1 < 0 or
            w + pad[0] + pad[1] - dilation[1] * (kw - 1) - 1 < 0):
        return
    co = data.draw(st.sampled_from([16, 32]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if dt == "float16":
        fm = (rng.standard_normal((c1, h, w, c0)) * 2).astype(np.float16)
        wt = (rng.standard_normal((c1, kh, kw, co, c0)) * 2).astype(np.float16)
        pv = float(np.float16(data.draw(st.floats(-4, 4))))
    else:
        fm = random_values(rng, dt, c1 * h * w * c0).reshape(c1, h, w, c0)
        wt = random_values(rng, "int8", c1 * kh * kw * co * c0).reshape(c1, kh, kw, co, c0)
        pv = data.draw(st.integers(0, 255) if dt == "uint8" else st.integers(-128, 127))
    got, want = _run_conv(fm, wt, stride, pad, dilation, pv, ACC[dt],
                          init_twice=data.draw(st.booleans()))
    assert same_bits(got, want)


def test_conv2d_errors():
    tk = tik.Tik()
    f = tk.Tensor("float16", (1, 4, 4, 16), name="f", scope=tik.scope_cbuf)
    w = tk.Tensor("float16", (1, 2, 2, 16, 16), name="w", scope=tik.scope_cbuf)
    d = tk.Tensor("float32", (1, 16, 16), name="d", scope=tik.scope_cbuf_out)
    E = errors.ConstraintError
    ok = dict(fm_shape=[1, 4, 4, 16], kernel_shape=[1, 2, 2, 16, 16], stride=[1, 1],
              pad=[0, 0, 0, 0], dilation=[1, 1])
    tk.conv2d(d, f, w, **ok)

    def bad(match, exc=E, **kw):
        args = {**ok, **kw}
        with pytest.raises(exc, match=match):
            tk.conv2d(d, f, w, **args)
    bad(r"stride\[0\] should be in range of \[1, 63\]", stride=[0, 1])
    bad(r"pad\[2\] should be in range of \[0, 255\]", pad=[0, 0, 256, 0])
    bad(r"dilation\[1\] should be in range of \[1, 255\]", dilation=[1, 0])
    bad("kernel_shape Cout should be a multiple of 16", kernel_shape=[1, 2, 2, 24, 16])
    bad("fm_shape C0 should be in range of", fm_shape=[1, 4, 4, 32])
    bad("input channels of fm_shape", kernel_shape=[2, 2, 2, 16, 16])
    bad("output is empty", dilation=[4, 1])
    bad("pad_value should be in range", pad_value=70000.0)
    bad("feature_map tensor overflow", exc=errors.AccessError, fm_shape=[1, 4, 5, 16])
    with pytest.raises(E, match="dst.s scope should be L1_OUT"):
        tk.conv2d(f, f, w, **ok)


# ---- fixpipe ----------------------------------------------------------------------------

def _fixpipe_case(rng, adt, m, n, k, cb_use, dgap, sgap, post, relu, special=False,
                  target="Ascend910", dst_dtype=None):
    """matmul (m, k, n) -> L0C, then fixpipe of ``cb_use`` bursts of m rows (sgap
    fractals between src bursts as if the src had sgap more fractal rows: the
    matmul's m is rounded so that works), compared with the oracle chain."""
    acc = ACC[adt]
    dst_dtype = dst_dtype or acc
    a, b = _mm_inputs(rng, adt, m, k, n, special=special)
    mr, nr = _r16(m), _r16(n)
    src = ref.tik_matmul(np.zeros((nr // 16, mr, 16), acc), a, b, m, k, n)
    howo = m - 16 * sgap if sgap else m     # rows per burst
    howo = max(howo, 1)
    rh = _r16(howo)
    cb = min(cb_use, (src.size - rh * 16) // ((rh // 16 + sgap) * 256) + 1)
    bl = howo * 16 * 4 // 32
    if bl % 2:
        return None
    db = howo * 16 + dgap * 32 // np.dtype(dst_dtype).itemsize
    dsize = (cb - 1) * db + howo * 16
    platform.set_target(target)
    try:
        tk = tik.Tik()
        ga = tk.Tensor(str(a.dtype), a.shape, name="ga", scope=tik.scope_gm)
        gb = tk.Tensor(str(b.dtype), b.shape, name="gb", scope=tik.scope_gm)
        la = tk.Tensor(str(a.dtype), a.shape, name="la", scope=tik.scope_cbuf)
        lb = tk.Tensor(str(b.dtype), b.shape, name="lb", scope=tik.scope_cbuf)
        d = tk.Tensor(acc, src.shape, name="d", scope=tik.scope_cbuf_out)
        out = tk.Tensor(dst_dtype, (dsize,), name="out", scope=tik.scope_gm)
        ins, feed = [ga, gb], {"ga": a, "gb": b}
        tk.data_move(la, ga, 0, 1, blocks(a.size, a.dtype), 0, 0)
        tk.data_move(lb, gb, 0, 1, blocks(b.size, b.dtype), 0, 0)
        tk.matmul(d, la, lb, m, k, n)
        ep, kw = {}, {}
        if post == "bias":
            bias = random_values(rng, acc, cb * 16, special=special)
            if acc == "float32" and not special:
                bias = (rng.standard_normal(cb * 16) * 100).astype(np.float32)
            gbias = tk.Tensor(acc, (cb * 16,), name="gbias", scope=tik.scope_gm)
            lbias = tk.Tensor(acc, (cb * 16,), name="lbias", scope=tik.scope_cbuf)
            tk.data_move(lbias, gbias, 0, 1, blocks(cb * 16, acc), 0, 0)
            ep["bias"], kw["bias"] = lbias, bias
            ins.append(gbias)
            feed["gbias"] = bias
        elif post == "ele":
            ele = random_values(rng, acc, src.size, special=special)
            if acc == "float32" and not special:
                ele = (rng.standard_normal(src.size) * 100).astype(np.float32)
            gele = tk.Tensor(acc, (src.size,), name="gele", scope=tik.scope_gm)
            lele = tk.Tensor(acc, (src.size,), name="lele", scope=tik.scope_cbuf)
            tk.data_move(lele, gele, 0, 1, blocks(src.size, acc), 0, 0)
            ep["element-wise-add"], kw["ele"] = lele, ele
            ins.append(gele)
            feed["gele"] = ele
        if dst_dtype == "float16":
            mode = "fp322fp16" if acc == "float32" else "int322fp16"
            ep["quantize_params"] = {"mode": mode, "mode_param": None if mode == "fp322fp16"
                                     else 1.0}
            kw["mode"] = mode
        if relu:
            ep["relu"] = kw["relu"] = True
        tk.fixpipe(out, d, cb, bl, dgap, sgap, extend_params=ep or None)
        tk.BuildCCE("fp", ins, [out])
        got = tk.tikdb.start_debug(feed)[0]
        # the gaps between dst bursts keep the uninitialised fill
        want0 = np.full(dsize * np.dtype(dst_dtype).itemsize, tik.UNINIT_FILL,
                        np.uint8).view(dst_dtype)
        want = ref.tik_fixpipe(want0, src, cb, bl, dgap, sgap,
                               saturate=tik.get_target().saturation, **kw)
        return got, want
    finally:
        platform.set_target("Ascend910")


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_fixpipe_matches_reference(data):
    adt = data.draw(st.sampled_from(["float16", "int8", "uint8"]))
    acc = ACC[adt]
    m = data.draw(st.sampled_from([2, 4, 16, 18, 30, 32, 48]))
    n = data.draw(st.integers(1, 48))
    k = data.draw(st.integers(1, 40))
    post = data.draw(st.sampled_from([None, "bias", "ele"]))
    relu = post is None and data.draw(st.booleans())
    dst_dtype = data.draw(st.sampled_from([acc, "float16"]))
    if dst_dtype == "float16" and acc == "int32" and relu:
        relu = False    # not supported with a scalar int322fp16 mode_param
    dgap = data.draw(st.integers(0, 3)) * (2 if dst_dtype != "float16" else 1)
    sgap = data.draw(st.sampled_from([0, 0, 1])) if m > 16 else 0
    target = data.draw(st.sampled_from(["Ascend910", "Ascend910B"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    r = _fixpipe_case(rng, adt, m, n, k, data.draw(st.integers(1, 3)), dgap, sgap, post,
                      relu, target=target, dst_dtype=dst_dtype,
                      special=data.draw(st.booleans()))
    if r is not None:
        assert same_bits(*r)


def test_fixpipe_gaps_keep_their_contents():
    """The dst_stride gap between bursts is not written (it keeps the uninit fill)."""
    rng = np.random.default_rng(1)
    got, want = _fixpipe_case(rng, "float16", 16, 32, 16, 2, 2, 0, None, False)
    assert same_bits(got, want)
    gap = got[16 * 16:16 * 16 + 16]          # 2 * 32 bytes of float32 after burst 0
    assert (gap.view(np.uint32) == 0xA5A5A5A5).all()


def test_fixpipe_quantize_saturates_on_saturation_targets():
    for target, want in (("Ascend910", 65504.0), ("Ascend910B", np.inf)):
        platform.set_target(target)
        try:
            tk = tik.Tik()
            ga = tk.Tensor("float16", (1, 16, 16), name="ga", scope=tik.scope_gm)
            la = tk.Tensor("float16", (1, 16, 16), name="la", scope=tik.scope_cbuf)
            d = tk.Tensor("float32", (1, 16, 16), name="d", scope=tik.scope_cbuf_out)
            out = tk.Tensor("float16", (1, 16, 16), name="out", scope=tik.scope_gm)
            tk.data_move(la, ga, 0, 1, 16, 0, 0)
            tk.matmul(d, la, la, 16, 16, 16)
            tk.fixpipe(out, d, 1, 32, 0, 0, extend_params={
                "quantize_params": {"mode": "fp322fp16", "mode_param": None}})
            tk.BuildCCE("k", [ga], [out])
            got = tk.tikdb.start_debug({"ga": np.full((1, 16, 16), 300, np.float16)})[0]
            assert (got == want).all()    # 16 * 300^2 = 1.44e6 > 65504
        finally:
            platform.set_target("Ascend910")


def test_fixpipe_errors():
    tk = tik.Tik()
    d = tk.Tensor("float32", (2, 32, 16), name="d", scope=tik.scope_cbuf_out)
    di = tk.Tensor("int32", (2, 32, 16), name="di", scope=tik.scope_cbuf_out)
    g = tk.Tensor("float32", (2, 32, 16), name="g", scope=tik.scope_gm)
    g16 = tk.Tensor("float16", (2, 32, 16), name="g16", scope=tik.scope_gm)
    gi8 = tk.Tensor("int8", (2, 32, 32), name="gi8", scope=tik.scope_gm)
    bias = tk.Tensor("float32", (32,), name="bias", scope=tik.scope_cbuf)
    bias_ub = tk.Tensor("float32", (32,), name="bub", scope=tik.scope_ubuf)
    bias16 = tk.Tensor("float16", (32,), name="b16", scope=tik.scope_cbuf)
    E = errors.ConstraintError
    tk.fixpipe(g, d, 2, 64, 0, 0)
    with pytest.raises(E, match="dst's scope should be gm"):
        tk.fixpipe(bias, d, 2, 64, 0, 0)
    with pytest.raises(E, match="src's scope should be L1_OUT"):
        tk.fixpipe(g, bias, 2, 64, 0, 0)
    with pytest.raises(E, match=r"cburst_num should be in range of \[1, 4095\]"):
        tk.fixpipe(g, d, 0, 64, 0, 0)
    with pytest.raises(E, match="burst_len should be an even number"):
        tk.fixpipe(g, d, 2, 63, 0, 0)
    with pytest.raises(E, match=r"dst_stride should be in range of \[0, 65535\]"):
        tk.fixpipe(g, d, 2, 64, 65536, 0)
    with pytest.raises(E, match="not supported"):
        tk.fixpipe(gi8, di, 1, 64, 0, 0)
    with pytest.raises(E, match="mode should be 'fp322fp16'"):
        tk.fixpipe(g16, d, 2, 64, 0, 0)
    with pytest.raises(E, match="mode should be None"):
        tk.fixpipe(g, d, 2, 64, 0, 0, {"quantize_params": {"mode": "fp322fp16",
                                                            "mode_param": None}})
    with pytest.raises(E, match="mutually exclusive"):
        tk.fixpipe(g, d, 2, 64, 0, 0, {"bias": bias, "element-wise-add": bias})
    with pytest.raises(E, match="relu is supported only when bias"):
        tk.fixpipe(g, d, 2, 64, 0, 0, {"bias": bias, "relu": True})
    with pytest.raises(E, match="bias's scope should be L1"):
        tk.fixpipe(g, d, 2, 64, 0, 0, {"bias": bias_ub})
    with pytest.raises(E, match="bias should have the dtype of src"):
        tk.fixpipe(g, d, 2, 64, 0, 0, {"bias": bias16})
    with pytest.raises(E, match="keys should be"):
        tk.fixpipe(g, d, 2, 64, 0, 0, {"relux": True})
    with pytest.raises(E, match="relu is not supported with mode 'int322fp16'"):
        tk.fixpipe(g16, di, 2, 64, 0, 0, {"quantize_params": {"mode": "int322fp16",
                                                               "mode_param": 1.0},
                                          "relu": True})
    with pytest.raises(NotImplementedError, match="deqscale 0.5 is not implemented"):
        tk.fixpipe(g16, di, 2, 64, 0, 0, {"quantize_params": {"mode": "int322fp16",
                                                               "mode_param": 0.5}})
    with pytest.raises(NotImplementedError, match="Tensor/Scalar mode_param"):
        tk.fixpipe(g16, di, 2, 64, 0, 0, {"quantize_params": {"mode": "int322fp16",
                                                               "mode_param": bias16}})
    with pytest.raises(errors.AccessError, match="src tensor overflow"):
        tk.fixpipe(g, d, 3, 64, 0, 0)
    with pytest.raises(errors.AccessError, match="dst tensor overflow"):
        tk.fixpipe(g, d, 2, 64, 4, 0)


def test_cube_scopes_declare_and_capacity():
    tk = tik.Tik()
    for sc, cap in ((tik.scope_ca, 65536), (tik.scope_cb, 65536), (tik.scope_cc, 262144)):
        tk.Tensor("float16", (cap // 2,), name="x", scope=sc)
        with pytest.raises(errors.ConstraintError, match="buffer overflow"):
            tk.Tensor("float16", (16,), name="y", scope=sc)
    assert tik.scope_cbuf_out == tik.scope_cc     # TIK: L1OUT is the L0C
    with pytest.raises(errors.ConstraintError, match="data_move: the matrix mode moves L0C"):
        tk2 = tik.Tik()
        a = tk2.Tensor("float32", (64,), name="a", scope=tik.scope_cc)
        b = tk2.Tensor("float32", (64,), name="b", scope=tik.scope_gm)
        tk2.data_move(b, a, 0, 1, 8, 0, 0)


def test_matmul_tik_sample_shape():
    """The Ascend/samples matmul_tik tiling (m tiles of 16, k tiles of 32 accumulated with
    init_l1out False, fixpipe with a dst_stride into an [N1, M, N0] workspace), written
    here in the same style."""
    M, K, N = 32, 64, 64
    mt, kt, nt = 16, 32, 32
    tk = tik.Tik()
    a_gm = tk.Tensor("float16", (K // 16, M, 16), name="a", scope=tik.scope_gm)
    b_gm = tk.Tensor("float16", (K // 16, N, 16), name="b", scope=tik.scope_gm)
    c_gm = tk.Tensor("float32", (N // 16, M, 16), name="c", scope=tik.scope_gm)
    with tk.for_range(0, N // nt) as ni:
        with tk.for_range(0, M // mt) as mi:
            d = tk.Tensor("float32", (nt // 16, mt, 16), name="d", scope=tik.scope_cbuf_out)
            with tk.for_range(0, K // kt) as ki:
                la = tk.Tensor("float16", (kt // 16, mt, 16), name="la", scope=tik.scope_cbuf)
                tk.data_move(la, a_gm[ki * kt // 16, mi * mt, 0], 0, kt // 16, mt, M - mt, 0)
                lb = tk.Tensor("float16", (kt // 16, nt, 16), name="lb", scope=tik.scope_cbuf)
                tk.data_move(lb, b_gm[ki * kt // 16, ni * nt, 0], 0, kt // 16, nt, N - nt, 0)
                with tk.if_scope(ki == 0):
                    tk.matmul(d, la, lb, mt, kt, nt, init_l1out=True)
                with tk.else_scope():
                    tk.matmul(d, la, lb, mt, kt, nt, init_l1out=False)
            tk.fixpipe(c_gm[ni * nt // 16, mi * mt, 0], d, nt // 16, mt * 16 * 4 // 32,
                       (M - mt) * 16 * 4 // 32, 0)
    tk.BuildCCE("mm", [a_gm, b_gm], [c_gm])
    rng = np.random.default_rng(3)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    a = A.reshape(M, K // 16, 16).transpose(1, 0, 2).copy()
    b = B.T.reshape(N, K // 16, 16).transpose(1, 0, 2).copy()
    c = tk.tikdb.start_debug({"a": a, "b": b})[0]
    C = c.transpose(1, 0, 2).reshape(M, N)
    # the oracle: k tiles accumulate in order, so the whole K sums in ascending k
    want = ref.tik_matmul(np.zeros((N // 16, M, 16), np.float32), a, b, M, K, N)
    assert same_bits(c, want)
    assert np.allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-4)


# ---- tensor_mov L0C <-> UB (block mode 'm') ---------------------------------------------

@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_tensor_mov_matrix_roundtrip(data):
    """UB -> L0C -> UB with strides on both sides, conversion and relu on the way out."""
    pair = data.draw(st.sampled_from([("float32", "float32"), ("int32", "int32"),
                                      ("float16", "float16"), ("uint32", "uint32"),
                                      ("float32", "float16")]))
    relu = pair[0] != "uint32" and data.draw(st.booleans())
    target = data.draw(st.sampled_from(["Ascend910", "Ascend910B"]))
    nb, bl = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    g_in = data.draw(st.integers(0, 2))       # UB gap (32-byte blocks) on the way in
    g_cc = data.draw(st.integers(0, 2))       # L0C gap (matrices)
    g_out = data.draw(st.integers(0, 2))      # UB gap on the way out
    cdt, odt = pair
    ces = np.dtype(cdt).itemsize
    step_in = bl * 256 + g_in * 32 // ces
    step_cc = bl * 256 + g_cc * 256
    step_out = bl * 256 + g_out * 32 // np.dtype(odt).itemsize
    n_in, n_cc = (nb - 1) * step_in + bl * 256, (nb - 1) * step_cc + bl * 256
    n_out = (nb - 1) * step_out + bl * 256
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, cdt, n_in)
    o0 = random_values(rng, odt, n_out)
    platform.set_target(target)
    try:
        tk = tik.Tik()
        gx = tk.Tensor(cdt, (n_in,), name="gx", scope=tik.scope_gm)
        go0 = tk.Tensor(odt, (n_out,), name="go0", scope=tik.scope_gm)
        go = tk.Tensor(odt, (n_out,), name="go", scope=tik.scope_gm)
        ux = tk.Tensor(cdt, (n_in,), name="ux", scope=tik.scope_ubuf)
        uo = tk.Tensor(odt, (n_out,), name="uo", scope=tik.scope_ubuf)
        cc = tk.Tensor(cdt, (n_cc,), name="cc", scope=tik.scope_cc)
        tk.data_move(ux, gx, 0, 1, blocks(n_in, cdt), 0, 0)
        tk.data_move(uo, go0, 0, 1, blocks(n_out, odt), 0, 0)
        tk.tensor_mov(cc, ux, "m", nb, bl, g_cc, g_in)
        tk.tensor_mov(uo, cc, "", nb, bl, g_out, g_cc, relu=relu)
        tk.data_move(go, uo, 0, 1, blocks(n_out, odt), 0, 0)
        tk.BuildCCE("k", [gx, go0], [go])
        got = tk.tikdb.start_debug({"gx": x, "go0": o0})[0]
        sat = tik.get_target().saturation
    finally:
        platform.set_target("Ascend910")
    fill = np.full(n_cc * ces, tik.UNINIT_FILL, np.uint8).view(cdt)
    cc_want = ref.tik_tensor_mov_matrix(fill, x, nb, bl, step_cc, step_in)
    want = ref.tik_tensor_mov_matrix(o0, cc_want, nb, bl, step_out, step_cc, relu, sat)
    assert same_bits(got, want)


def test_tensor_mov_matrix_reads_a_matmul_result():
    """The fixpipe lowering's first step: the matmul's L0C matrices to UB as float16."""
    rng = np.random.default_rng(4)
    a, b = _mm_inputs(rng, "float16", 32, 32, 32)
    tk = tik.Tik()
    ga = tk.Tensor("float16", a.shape, name="ga", scope=tik.scope_gm)
    gb = tk.Tensor("float16", b.shape, name="gb", scope=tik.scope_gm)
    la = tk.Tensor("float16", a.shape, name="la", scope=tik.scope_cbuf)
    lb = tk.Tensor("float16", b.shape, name="lb", scope=tik.scope_cbuf)
    d = tk.Tensor("float32", (2, 32, 16), name="d", scope=tik.scope_cbuf_out)
    ub = tk.Tensor("float16", (2 * 32 * 16,), name="ub", scope=tik.scope_ubuf)
    out = tk.Tensor("float16", (2 * 32 * 16,), name="out", scope=tik.scope_gm)
    tk.data_move(la, ga, 0, 1, blocks(a.size, a.dtype), 0, 0)
    tk.data_move(lb, gb, 0, 1, blocks(b.size, b.dtype), 0, 0)
    tk.matmul(d, la, lb, 32, 32, 32)
    tk.tensor_mov(ub, d, "m", 1, 4, 0, 0)
    tk.data_move(out, ub, 0, 1, 64, 0, 0)
    tk.BuildCCE("k", [ga, gb], [out])
    got = tk.tikdb.start_debug({"ga": a, "gb": b})[0]
    c = ref.tik_matmul(np.zeros((2, 32, 16), np.float32), a, b, 32, 32, 32).reshape(-1)
    assert same_bits(got, ref.tik_op("vec_conv", "float16", [c], None, got, True))


def test_tensor_mov_matrix_errors():
    tk = tik.Tik()
    cc = tk.Tensor("float32", (1024,), name="cc", scope=tik.scope_cc)
    ub = tk.Tensor("float32", (1024,), name="ub", scope=tik.scope_ubuf)
    ub16 = tk.Tensor("float16", (1024,), name="ub16", scope=tik.scope_ubuf)
    ubi = tk.Tensor("int32", (1024,), name="ubi", scope=tik.scope_ubuf)
    l1 = tk.Tensor("float32", (1024,), name="l1", scope=tik.scope_cbuf)
    E = errors.ConstraintError
    tk.tensor_mov(ub, cc, "m", 1, 4, 0, 0)
    with pytest.raises(E, match="matrix mode moves L0C -> UB or UB -> L0C"):
        tk.tensor_mov(cc, l1, "m", 1, 4, 0, 0)
    with pytest.raises(E, match="float32 in local.L0C to int32 in local.UB is not supported"):
        tk.tensor_mov(ubi, cc, "m", 1, 4, 0, 0)
    with pytest.raises(E, match="relu is supported from L0C to UB"):
        tk.tensor_mov(cc, ub, "m", 1, 4, 0, 0, relu=True)
    with pytest.raises(E, match=r"nburst should be in range of \[1, 4095\]"):
        tk.tensor_mov(ub, cc, "m", 0, 4, 0, 0)
    with pytest.raises(errors.AccessError, match="src tensor overflow"):
        tk.tensor_mov(ub16, cc, "m", 1, 5, 0, 0)
    with pytest.raises(errors.AlignmentError, match="should be 1024B aligned"):
        tk.tensor_mov(ub, cc[16:], "m", 1, 1, 0, 0)
    with pytest.raises(NotImplementedError, match="deq modes"):
        tk.tensor_mov(ub16, cc, "m", 1, 1, 0, 0, deqscale=0.5)
    with pytest.raises(NotImplementedError, match="block_mode 'v'"):
        tk.tensor_mov(ub, cc, "v", 1, 1, 0, 0)
    with pytest.raises(E, match="Please specify block_mode"):
        tk.tensor_mov(ub, cc, "x", 1, 1, 0, 0)


def test_cube_tensors_are_fractal_aligned():
    tk = tik.Tik()
    for sc, al in ((tik.scope_ca, 512), (tik.scope_cb, 512), (tik.scope_cc, 1024)):
        tk.Tensor("float16", (16,), name="x", scope=sc)
        t = tk.Tensor("float16", (16,), name="y", scope=sc)
        assert t.byte_off % al == 0 and t.byte_off > 0


def test_cube_and_h_ops_in_the_engine_schedule():
    """matmul waits for the data_move it reads, fixpipe and h_* for the cube result."""
    from fastisa import cost
    tk = tik.Tik()
    g = tk.Tensor("float16", (1, 16, 16), name="g", scope=tik.scope_gm)
    o = tk.Tensor("float16", (1, 16, 16), name="o", scope=tik.scope_gm)
    a = tk.Tensor("float16", (1, 16, 16), name="a", scope=tik.scope_cbuf)
    d = tk.Tensor("float32", (1, 16, 16), name="d", scope=tik.scope_cbuf_out)
    u = tk.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
    tk.data_move(a, g, 0, 1, 16, 0, 0)
    tk.matmul(d, a, a, 16, 16, 16)
    tk.tensor_mov(u, d, "m", 1, 1, 0, 0)
    tk.h_exp(u, u)
    tk.fixpipe(o, d, 1, 32, 0, 0, extend_params={
        "quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    tk.BuildCCE("k", [g], [o])
    with cost.profiling() as p:
        tk.tikdb.start_debug({"g": np.ones((1, 16, 16), np.float16)})
    slots = {s.instruction: s for s in p.schedule.slots}
    assert slots["matmul"].engine == "Cube"
    assert slots["matmul"].start_ns >= slots["data_move"].end_ns
    for after in ("tensor_mov", "fixpipe"):
        assert slots[after].start_ns >= slots["matmul"].end_ns
    assert slots["h_exp"].start_ns >= slots["tensor_mov"].end_ns
    assert "test_tik_cube.py:" in slots["matmul"].source     # the kernel's own line


def test_conv2d_leaves_the_rows_past_howo_and_matmul_computes_the_padding():
    """conv2d: Ho*Wo = 9, round_howo = 16: rows 9..15 of dst keep their contents (the
    uninitialised fill); matmul with m = 20: rows 20..31 are computed from a's padding."""
    tk = tik.Tik()
    gf = tk.Tensor("float16", (1, 3, 3, 16), name="gf", scope=tik.scope_gm)
    gw = tk.Tensor("float16", (1, 1, 1, 16, 16), name="gw", scope=tik.scope_gm)
    f = tk.Tensor("float16", (1, 3, 3, 16), name="f", scope=tik.scope_cbuf)
    w = tk.Tensor("float16", (1, 1, 1, 16, 16), name="w", scope=tik.scope_cbuf)
    d = tk.Tensor("float32", (1, 16, 16), name="d", scope=tik.scope_cbuf_out)
    out = tk.Tensor("float32", (1, 16, 16), name="out", scope=tik.scope_gm)
    tk.data_move(f, gf, 0, 1, 9, 0, 0)
    tk.data_move(w, gw, 0, 1, 16, 0, 0)
    tk.conv2d(d, f, w, [1, 3, 3, 16], [1, 1, 1, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1])
    tk.fixpipe(out, d, 1, 32, 0, 0)
    tk.BuildCCE("k", [gf, gw], [out])
    x = np.ones((1, 3, 3, 16), np.float16)
    got = tk.tikdb.start_debug({"gf": x, "gw": np.ones((1, 1, 1, 16, 16), np.float16)})[0]
    assert (got[0, :9] == 16.0).all()
    assert (got[0, 9:].view(np.uint32) == 0xA5A5A5A5).all()
    # matmul m = 20: the a tensor's rows 20..31 are data too (here 2.0), so C rows 20..31
    rng = np.random.default_rng(7)
    a, b = _mm_inputs(rng, "float16", 32, 16, 16)
    a[:, 20:] = 2.0
    got = _run_matmul([(a, b, True)], 20, 16, 16, "float32")
    want = _oracle_chain([(a, b, True)], 20, 16, 16, "float32")
    assert same_bits(got, want) and not (got[:, 20:] == 0).all()


@pytest.mark.parametrize("mode,pair,relu", [(0, ("float32", "float32"), False),
                                            (1, ("float32", "float16"), False),
                                            (2, ("float32", "float16"), True),
                                            (5, ("int32", "int32"), True)])
def test_data_move_l0c_to_ub_conv_relu_modes(mode, pair, relu):
    """data_move(ub, l0c, 0, nburst, burst, src_stride, dst_stride, ConvReluMode), as the
    public basic_lstm_cell_weight_grad moves its mmad result (mode 1, one matrix)."""
    cdt, odt = pair
    rng = np.random.default_rng(mode)
    n_cc, n_ub = 3 * 256, 2 * 256 + 32 // np.dtype(odt).itemsize
    x = random_values(rng, cdt, n_cc)
    tk = tik.Tik()
    gx = tk.Tensor(cdt, (n_cc,), name="gx", scope=tik.scope_gm)
    go = tk.Tensor(odt, (n_ub,), name="go", scope=tik.scope_gm)
    ux = tk.Tensor(cdt, (n_cc,), name="ux", scope=tik.scope_ubuf)
    uo = tk.Tensor(odt, (n_ub,), name="uo", scope=tik.scope_ubuf)
    cc = tk.Tensor(cdt, (n_cc,), name="cc", scope=tik.scope_cc)
    tk.data_move(ux, gx, 0, 1, blocks(n_cc, cdt), 0, 0)
    tk.data_move(cc, ux, 0, 1, 3, 0, 0)                       # UB -> L0C, 3 matrices
    tk.data_move(uo, cc, 0, 2, 1, 1, 1, mode)                 # every other matrix out
    tk.data_move(go, uo, 0, 1, blocks(n_ub, odt), 0, 0)
    tk.BuildCCE("k", [gx], [go])
    got = tk.tikdb.start_debug({"gx": x})[0]
    fill = np.full(n_ub * np.dtype(odt).itemsize, tik.UNINIT_FILL, np.uint8).view(odt)
    want = ref.tik_tensor_mov_matrix(fill, x, 2, 1, 256 + 32 // np.dtype(odt).itemsize,
                                     512, relu, True)
    assert same_bits(got, want)


def test_data_move_l0c_errors():
    tk = tik.Tik()
    cc = tk.Tensor("float32", (256,), name="cc", scope=tik.scope_cc)
    ub = tk.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
    with pytest.raises(errors.ConstraintError, match="ConvReluMode 0 moves"):
        tk.data_move(ub, cc, 0, 1, 1, 0, 0)
    with pytest.raises(NotImplementedError, match="ConvReluMode 3"):
        tk.data_move(ub, cc, 0, 1, 1, 0, 0, 3)
    with pytest.raises(errors.ConstraintError, match=r"sid should be in range of \[0, 15\]"):
        tk.data_move(ub, cc, 16, 1, 1, 0, 0, 1)
    tk.data_move(ub, cc, 0, 1, 1, 0, 0, 1)

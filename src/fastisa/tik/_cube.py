"""TIK's cube path: ``matmul``, ``conv2d`` and ``fixpipe`` over the L1 / L1OUT scopes.

Semantics: CANN TIK API reference (matmul, conv2d, fixpipe) and the 2020 TIK source,
caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/api/cube/tik_cube_api.py`` (the
docstrings and argument checks of matmul, conv2d and fixpipe), ``api/cube/matmul.py``
(``MatMulImpl._check_params``/``_check_overflow``/``_check_operator_align``, the mmad
tiling: every mmad gets the valid ``k``) and the fixpipe lowering in
``tik_cube_api.py`` (``_fixpipe_l1out_to_ub``, ``_fixpipe_ub_to_out``: burst layout and
the bias -> element-wise-add -> quantize -> relu order).

Fractal layouts (all C-contiguous, M0 = N0 = 16, K0 = 16 for float16 and 32 for int8/uint8;
``Mr``/``Nr``/``Kr`` are m/n/k rounded up to 16/16/K0):

* matmul ``a`` [K1, Mr, K0]: ``A[i, kk] = a[kk // K0, i, kk % K0]``;
  ``b`` [K1, Nr, K0]: ``B[kk, j] = b[kk // K0, j, kk % K0]``;
  ``dst`` [N1, Mr, N0]: ``C[i, j] = dst[j // 16, i, j % 16]``.
* conv2d ``feature_map`` [C1, H, W, C0], ``weight`` [C1, Kh, Kw, Cout, C0] (the matmul
  ``b`` layout with K1 = C1*Kh*Kw), ``dst`` [Cout/16, round_howo, 16].

Arithmetic (the documented float16-in / float32-accumulate): every float16 x float16
product is exact in float32; the products are added in float32, one rounding per add, in
ascending k, starting from +0 (``init_l1out=True``) or from dst; int8/uint8 x int8
accumulates exactly in int32 (wrapping).  The order in which the cube hardware adds the
products inside one 16x16xK0 fractal is not documented and the 2020 debugger runs the mmad
on a binary model, so it cannot be checked: where partial sums cancel the hardware may
differ from fastisa in the last float32 bits.  The float path runs on the NKI matmul C
kernel (``csrc/fastisa/nki.h`` fi_nki_matmul_f32), the integer path on the tile matmul
(``csrc/fastisa/tile.h`` fi_tile_matmul); numpy only re-lays the fractals.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided as _as_strided

from .. import cost
from .._kernels import nki as _knki
from .._kernels import tile as _ktile
from ..errors import AccessError, AlignmentError, ConstraintError
from . import _program as P
from ._program import (Expr, Tensor, TensorView, as_expr, scope_cbuf, scope_cbuf_out,
                       scope_gm)

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._types import Int, Real
    from ._annot import IntArg, Operand, RealArg

__all__ = ["CubeMixin", "MATMUL_TYPES", "FIXPIPE_TYPES"]

#: (a.dtype, b.dtype) -> dst.dtype (TIK matmul / conv2d "Data type combination")
MATMUL_TYPES = {("int8", "int8"): "int32", ("uint8", "int8"): "int32",
                ("float16", "float16"): "float32"}
#: (src.dtype, dst.dtype) -> quantize mode (TIK fixpipe "Data type combination")
FIXPIPE_TYPES = {("float32", "float16"): "fp322fp16", ("int32", "float16"): "int322fp16",
                 ("float32", "float32"): None, ("int32", "int32"): None}


# ---- helpers ------------------------------------------------------------------------------

_LABEL = {scope_cbuf: "L1", scope_cbuf_out: "L1_OUT", scope_gm: "gm"}


def _view(name, role, x, scope):
    """(tensor, start Expr) of a Tensor/TensorView operand in ``scope``."""
    if isinstance(x, Tensor):
        t, off = x, 0
    elif isinstance(x, TensorView):
        t, off = x.tensor, x.offset
    else:
        raise ConstraintError(f"{name}: {role} should be Tensor, but {role}'s type is "
                              f"{type(x).__name__}")
    if t.scope != scope:
        raise ConstraintError(f"{name}: {role}'s scope should be {_LABEL[scope]}, "
                              f"but {role}'s scope is {t.scope}")
    return t, as_expr(off)


def _imm(name, param, v, lo, hi):
    if isinstance(v, Expr) and v.const is not None:
        v = v.const
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ConstraintError(f"{name}: {param} should be int, but {param}'s type is "
                              f"{type(v).__name__}")
    if not lo <= int(v) <= hi:
        raise ConstraintError(f"{name}: {param} should be in range of [{lo}, {hi}], but "
                              f"{param} is {int(v)}")
    return int(v)


def _start(name, role, t, off, env, need, align=0):
    """The element ``off`` resolves to, checked: >= 0, ``need`` elements inside the tensor,
    the offset ``align``-byte aligned (TIK checks the offset within the tensor)."""
    s = int(off.fn(env)) if off.const is None else int(off.const)
    if s < 0:
        raise AccessError(f"{name}: {role} start element of tensor {t.name} must be >= 0, "
                          f"got {s}")
    if s + need > t.size:
        raise AccessError(f"{name}: {role} tensor overflow, expected elements: {need}, "
                          f"actual elements: {t.size - s} (tensor {t.name}[{s}:])")
    if align and (s * t.esize) % align:
        raise AlignmentError(f"{name}: {role} address should be {align}B aligned, got "
                             f"{t.name}[{s}] ({s * t.esize} bytes into the tensor)")
    return s


def _elems(st, t, s, n):
    """numpy view of elements [s, s + n) of tensor ``t`` in this run's buffers."""
    b = t.byte_off + s * t.esize
    return st.bufs[t.sidx][b:b + n * t.esize].view(t.np_dtype)


def _rec(op, engine, name, cyc, reads, writes):
    """Charge ``cyc`` cycles to ``engine`` with the tensors read and written (whole
    tensors, as the other TIK families), for the engine schedule (profiling only)."""
    if not cost._ACTIVE.get():
        return

    def spans(ts):
        return [(("tik", id(t.tik), t.sidx), t.byte_off, t.byte_off + t.nbytes) for t in ts]
    cost.record(engine, name, cyc, reads=spans(reads), writes=spans(writes),
                source=getattr(op, "_fi_src", ""), domain="tik")


def _ab_align(tik):
    """matmul/conv2d source alignment: 512 B on Ascend 310/910, 32 B elsewhere."""
    return 512 if tik.target.family == "v100" else 32


def _mm_run(dst_acc, a2, b2, init):
    """dst_acc[Mr, Nr] = (init ? 0 : dst_acc) + a2 @ b2 with a2 [Mr, k], b2 [k, Nr]; float
    sources on the NKI float32 kernel (exact fp16 products, k-ascending float32 adds),
    integer ones on the tile kernel (exact, int32 wrap).  Returns the new accumulator."""
    M, K = a2.shape
    N = b2.shape[1]
    if a2.dtype == np.float16:
        out = np.zeros((M, N), np.float32) if init else np.ascontiguousarray(dst_acc,
                                                                             np.float32)
        s = np.ascontiguousarray(a2.T, dtype=np.float32)
        v = np.ascontiguousarray(b2, dtype=np.float32)
        _knki.matmul_f32(out, s, v)
        return out
    out = np.zeros((M, N), np.int32) if init else np.ascontiguousarray(dst_acc, np.int32)
    ac = np.ascontiguousarray(a2)
    bc = np.ascontiguousarray(b2)
    codes = {np.dtype(np.int8): 1, np.dtype(np.uint8): 0}
    ob = out.reshape(-1).view(np.uint8)
    _ktile.matmul(ob, 5, N, 1, ac.reshape(-1).view(np.uint8), codes[ac.dtype], K, 1,
                  bc.reshape(-1).view(np.uint8), codes[bc.dtype], N, 1, M, K, N,
                  None if init else ob, 5, N, 1)
    return out


def _check_types(name, a, b, d):
    pair = (a.dtype, b.dtype)
    if pair not in MATMUL_TYPES or MATMUL_TYPES[pair] != d.dtype:
        raise ConstraintError(f"{name}: dtype combination {a.dtype}:{b.dtype}:{d.dtype} is "
                              f"not supported (a:b:dst must be one of "
                              f"{[f'{x}:{y}:{z}' for (x, y), z in MATMUL_TYPES.items()]})")


# ---- matmul -----------------------------------------------------------------------------

class _Matmul:
    def __init__(self, tik, dst, a, b, m, k, n, init_l1out):
        name = "matmul"
        for pn, x in (("dst", dst), ("a", a), ("b", b)):
            P.check_owner(tik, name, pn, x)
        self.d, self.doff = _view(name, "dst", dst, scope_cbuf_out)
        self.a, self.aoff = _view(name, "a", a, scope_cbuf)
        self.b, self.boff = _view(name, "b", b, scope_cbuf)
        _check_types(name, self.a, self.b, self.d)
        self.K0 = 16 if self.a.dtype == "float16" else 32
        self.m = _imm(name, "m", m, 1, 4096)
        self.k = _imm(name, "k", k, 1, 16384 if self.K0 == 16 else 32768)
        self.n = _imm(name, "n", n, 1, 4096)
        if not isinstance(init_l1out, bool):
            raise ConstraintError(f"{name}: init_l1out should be bool type, got "
                                  f"{init_l1out!r}")
        self.init = init_l1out
        self.Mr = -(-self.m // 16) * 16
        self.Nr = -(-self.n // 16) * 16
        self.Kr = -(-self.k // self.K0) * self.K0
        self.align = _ab_align(tik)
        self.name = name
        # static offsets are checked now, as TIK does at build time
        if all(o.const is not None for o in (self.doff, self.aoff, self.boff)):
            self._starts(None)

    def _starts(self, env):
        n = self.name
        return (_start(n, "dst", self.d, self.doff, env, self.Mr * self.Nr, 1024),
                _start(n, "a", self.a, self.aoff, env, self.Mr * self.Kr, self.align),
                _start(n, "b", self.b, self.boff, env, self.Kr * self.Nr, self.align))

    def run(self, st):
        ds, as_, bs = self._starts(st.env)
        Mr, Nr, Kr, K0, k = self.Mr, self.Nr, self.Kr, self.K0, self.k
        A = _elems(st, self.a, as_, Mr * Kr).reshape(Kr // K0, Mr, K0)
        A2 = A.transpose(1, 0, 2).reshape(Mr, Kr)[:, :k]
        B = _elems(st, self.b, bs, Kr * Nr).reshape(Kr // K0, Nr, K0)
        B2 = B.transpose(0, 2, 1).reshape(Kr, Nr)[:k]
        D = _elems(st, self.d, ds, Mr * Nr).reshape(Nr // 16, Mr, 16)
        acc = None if self.init else D.transpose(1, 0, 2).reshape(Mr, Nr)
        out = _mm_run(acc, A2, B2, self.init)
        D[...] = out.reshape(Mr, Nr // 16, 16).transpose(1, 0, 2)
        _rec(self, "Cube", "matmul", _cube_cycles(Mr, Kr, Nr, self.a.esize),
             [self.a, self.b] + ([] if self.init else [self.d]), [self.d])


def _cube_cycles(m, k, n, itemsize):
    """Estimated Cube cycles: a start-up of 32 plus one per 16 x 16 x (32/itemsize) step."""
    return 32 + math.ceil(m / 16) * math.ceil(n / 16) * math.ceil(k / max(1, 32 // itemsize))


# ---- conv2d -----------------------------------------------------------------------------

def _ilist(name, param, v, n, lo, hi):
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise ConstraintError(f"{name}: {param} should be a list or tuple of {n} ints, "
                              f"input: {v!r}")
    return [_imm(name, f"{param}[{i}]", x, lo, hi) for i, x in enumerate(v)]


class _Conv2d:
    def __init__(self, tik, dst, fm, weight, fm_shape, kernel_shape, stride, pad, dilation,
                 pad_value, init_l1out):
        name = self.name = "conv2d"
        for pn, x in (("dst", dst), ("feature_map", fm), ("weight", weight)):
            P.check_owner(tik, name, pn, x)
        self.d, self.doff = _view(name, "dst", dst, scope_cbuf_out)
        self.f, self.foff = _view(name, "feature_map", fm, scope_cbuf)
        self.w, self.woff = _view(name, "weight", weight, scope_cbuf)
        _check_types(name, self.f, self.w, self.d)
        C0 = self.C0 = 16 if self.f.dtype == "float16" else 32
        if not isinstance(fm_shape, (list, tuple)) or len(fm_shape) != 4:
            raise ConstraintError(f"{name}: fm_shape should be [C1, H, W, C0], input: "
                                  f"{fm_shape!r}")
        if not isinstance(kernel_shape, (list, tuple)) or len(kernel_shape) != 5:
            raise ConstraintError(f"{name}: kernel_shape should be [C1, Kh, Kw, Cout, C0], "
                                  f"input: {kernel_shape!r}")
        c1 = _imm(name, "fm_shape C1", fm_shape[0], 1, 256)
        h = _imm(name, "fm_shape H", fm_shape[1], 1, 4096)
        w = _imm(name, "fm_shape W", fm_shape[2], 1, 4096)
        c0 = _imm(name, "fm_shape C0", fm_shape[3], C0, C0)
        kc1 = _imm(name, "kernel_shape C1", kernel_shape[0], 1, 256)
        kh = _imm(name, "kernel_shape Kh", kernel_shape[1], 1, 255)
        kw = _imm(name, "kernel_shape Kw", kernel_shape[2], 1, 255)
        cout = _imm(name, "kernel_shape Cout", kernel_shape[3], 16, 4096)
        kc0 = _imm(name, "kernel_shape C0", kernel_shape[4], C0, C0)
        if kc1 != c1 or kc0 != c0:
            raise ConstraintError(f"{name}: kernel_shape must have the input channels of "
                                  f"fm_shape (C1={c1}, C0={c0}), got C1={kc1}, C0={kc0}")
        if cout % 16:
            raise ConstraintError(f"{name}: kernel_shape Cout should be a multiple of 16, "
                                  f"input: {cout}")
        self.sh, self.sw = _ilist(name, "stride", stride, 2, 1, 63)
        self.pl, self.pr, self.pt, self.pb = _ilist(name, "pad", pad, 4, 0, 255)
        self.dh, self.dw = _ilist(name, "dilation", dilation, 2, 1, 255)
        lo, hi = {"float16": (-65504, 65504), "int8": (-128, 127),
                  "uint8": (0, 255)}[self.f.dtype]
        if isinstance(pad_value, bool) or not isinstance(
                pad_value, (int, np.integer) if C0 == 32 else (int, float, np.number)):
            raise ConstraintError(f"{name}: pad_value should be "
                                  f"{'int' if C0 == 32 else 'int or float'}, input: "
                                  f"{pad_value!r}")
        if not lo <= pad_value <= hi:
            raise ConstraintError(f"{name}: pad_value should be in range of [{lo}, {hi}] for "
                                  f"{self.f.dtype}, input: {pad_value}")
        self.pad_value = pad_value
        if not isinstance(init_l1out, bool):
            raise ConstraintError(f"{name}: init_l1out should be bool type, got "
                                  f"{init_l1out!r}")
        self.init = init_l1out
        self.ho = (h + self.pt + self.pb - self.dh * (kh - 1) - 1) // self.sh + 1
        self.wo = (w + self.pl + self.pr - self.dw * (kw - 1) - 1) // self.sw + 1
        if self.ho < 1 or self.wo < 1:
            raise ConstraintError(f"{name}: the output is empty (Ho={self.ho}, Wo={self.wo}): "
                                  f"the dilated kernel is larger than the padded feature map")
        self.c1, self.h, self.w_, self.kh, self.kw, self.cout = c1, h, w, kh, kw, cout
        self.round_howo = -(-(self.ho * self.wo) // 16) * 16
        self.align = _ab_align(tik)
        # the im2col gather, as indices into the padded feature map (built once)
        HP, WP = h + self.pt + self.pb, w + self.pl + self.pr
        oh = np.arange(self.ho)[:, None, None, None] * self.sh
        ow = np.arange(self.wo)[None, :, None, None] * self.sw
        ih = oh + np.arange(kh)[None, None, :, None] * self.dh
        iw = ow + np.arange(kw)[None, None, None, :] * self.dw
        self.gather = (ih * WP + iw).reshape(self.ho * self.wo, kh * kw)  # [howo, kh*kw]
        self.HP, self.WP = HP, WP
        if all(o.const is not None for o in (self.doff, self.foff, self.woff)):
            self._starts(None)

    def _starts(self, env):
        n = self.name
        return (_start(n, "dst", self.d, self.doff, env, self.cout * self.round_howo, 1024),
                _start(n, "feature_map", self.f, self.foff, env,
                       self.c1 * self.h * self.w_ * self.C0, self.align),
                _start(n, "weight", self.w, self.woff, env,
                       self.c1 * self.kh * self.kw * self.cout * self.C0, self.align))

    def run(self, st):
        ds, fs, ws = self._starts(st.env)
        c1, h, w, C0, kh, kw, cout = self.c1, self.h, self.w_, self.C0, self.kh, self.kw, \
            self.cout
        fm = _elems(st, self.f, fs, c1 * h * w * C0).reshape(c1, h, w, C0)
        padded = np.full((c1, self.HP, self.WP, C0), self.pad_value, dtype=fm.dtype)
        padded[:, self.pt:self.pt + h, self.pl:self.pl + w] = fm
        flat = padded.reshape(c1, self.HP * self.WP, C0)
        howo = self.ho * self.wo
        # A[p, ((c1*kh + i)*kw + j)*C0 + c0]: the order of weight's K1 = (C1, Kh, Kw) blocks
        A2 = flat[:, self.gather].transpose(1, 0, 2, 3).reshape(howo, c1 * kh * kw * C0)
        K = c1 * kh * kw * C0
        Wt = _elems(st, self.w, ws, K * cout).reshape(c1 * kh * kw, cout, C0)
        B2 = Wt.transpose(0, 2, 1).reshape(K, cout)
        D = _elems(st, self.d, ds, cout * self.round_howo).reshape(cout // 16,
                                                                   self.round_howo, 16)
        acc = None if self.init else D[:, :howo].transpose(1, 0, 2).reshape(howo, cout)
        out = _mm_run(acc, A2, B2, self.init)
        D[:, :howo] = out.reshape(howo, cout // 16, 16).transpose(1, 0, 2)
        _rec(self, "Cube", "conv2d", _cube_cycles(howo, K, cout, self.f.esize),
             [self.f, self.w] + ([] if self.init else [self.d]), [self.d])


# ---- fixpipe ----------------------------------------------------------------------------

def _relu(x):
    """TIK relu (as vrelu, csrc/fastisa/walker.h fi_tik_relu): x > 0 ? x : 0."""
    return np.where(x > 0, x, np.zeros((), x.dtype))


class _Fixpipe:
    def __init__(self, tik, dst, src, cburst_num, burst_len, dst_stride, src_stride,
                 extend_params):
        name = self.name = "fixpipe"
        for pn, x in (("dst", dst), ("src", src), ("extend_params", extend_params)):
            if pn == "extend_params" and isinstance(x, dict):
                x = [v for v in x.values() if isinstance(v, (Tensor, TensorView, Expr))]
            P.check_owner(tik, name, pn, x)
        self.d, self.doff = _view(name, "dst", dst, scope_gm)
        self.s, self.soff = _view(name, "src", src, scope_cbuf_out)
        pair = (self.s.dtype, self.d.dtype)
        if pair not in FIXPIPE_TYPES:
            raise ConstraintError(f"{name}: dtype combination src {pair[0]} -> dst {pair[1]} "
                                  f"is not supported (one of {sorted(FIXPIPE_TYPES)})")
        self.cburst = _imm(name, "cburst_num", cburst_num, 1, 4095)
        self.blen = _imm(name, "burst_len", burst_len, 2, 65535)
        if self.blen % 2:
            raise ConstraintError(f"{name}: burst_len should be an even number, input: "
                                  f"{self.blen}")
        self.dgap = _imm(name, "dst_stride", dst_stride, 0, 65535)
        self.sgap = _imm(name, "src_stride", src_stride, 0, 65535)
        ep = {} if extend_params is None else extend_params
        if not isinstance(ep, dict):
            raise ConstraintError(f"{name}: extend_params should be a dict or None, input: "
                                  f"{extend_params!r}")
        bad = set(ep) - {"bias", "quantize_params", "element-wise-add", "relu"}
        if bad:
            raise ConstraintError(f"{name}: extend_params keys should be bias, "
                                  f"quantize_params, element-wise-add, relu, input: "
                                  f"{sorted(bad)}")
        self.bias = self.ele = None
        if ep.get("bias") is not None:
            self.bias = _view(name, "bias", ep["bias"], scope_cbuf)
        if ep.get("element-wise-add") is not None:
            self.ele = _view(name, "element-wise-add", ep["element-wise-add"], scope_cbuf)
        for what, v in (("bias", self.bias), ("element-wise-add", self.ele)):
            if v is not None and v[0].dtype != self.s.dtype:
                raise ConstraintError(f"{name}: {what} should have the dtype of src "
                                      f"({self.s.dtype}), input: {v[0].dtype}")
        if self.bias is not None and self.ele is not None:
            raise ConstraintError(f"{name}: bias and element-wise-add are mutually exclusive")
        self.relu = ep.get("relu", False)
        if not isinstance(self.relu, bool):
            raise ConstraintError(f"{name}: relu should be bool, input: {self.relu!r}")
        if self.relu and (self.bias is not None or self.ele is not None):
            raise ConstraintError(f"{name}: relu is supported only when bias and "
                                  f"element-wise-add are disabled")
        want = FIXPIPE_TYPES[pair]
        qp = ep.get("quantize_params")
        mode = None
        if qp is not None:
            if not isinstance(qp, dict) or "mode" not in qp:
                raise ConstraintError(f"{name}: quantize_params should be a dict with 'mode' "
                                      f"and 'mode_param', input: {qp!r}")
            mode = qp["mode"]
        if mode != want:
            raise ConstraintError(f"{name}: quantize_params mode should be {want!r} for src "
                                  f"{pair[0]} -> dst {pair[1]}, input: {mode!r}")
        if mode == "fp322fp16" and qp.get("mode_param") is not None:
            raise ConstraintError(f"{name}: mode_param should be None for mode 'fp322fp16', "
                                  f"input: {qp.get('mode_param')!r}")
        if mode == "int322fp16":
            mp = qp.get("mode_param")
            if isinstance(mp, (Tensor, TensorView)) or (isinstance(mp, Expr) and
                                                        mp.const is None):
                raise NotImplementedError(f"{name}: a Tensor/Scalar mode_param (deqscale) is "
                                          f"not implemented by fastisa: the rounding of "
                                          f"int32*deqscale is not documented")
            if isinstance(mp, bool) or not isinstance(mp, (int, float, Expr)):
                raise ConstraintError(f"{name}: mode_param should be a float immediate, a "
                                      f"float16 Scalar or a float16 Tensor for 'int322fp16', "
                                      f"input: {mp!r}")
            v = float(mp.const if isinstance(mp, Expr) else mp)
            if v != 1.0:
                raise NotImplementedError(f"{name}: deqscale {v} is not implemented by "
                                          f"fastisa: the rounding of int32*deqscale is not "
                                          f"documented (1.0 is)")
            if self.relu:
                raise ConstraintError(f"{name}: relu is not supported with mode 'int322fp16' "
                                      f"and a scalar mode_param")
        self.mode = mode
        self.sat = tik.target.saturation
        self.howo = self.blen * 32 // self.s.esize // 16
        self.round_howo = -(-self.howo // 16) * 16
        # src burst i: (round_howo/16 + src_stride) fractals of 256 elements
        self.sburst = (self.round_howo // 16 + self.sgap) * 256
        # dst burst i: howo rows of 16 plus dst_stride * 32 bytes (the documented gap)
        gap_bytes = self.dgap * 32
        if gap_bytes % self.d.esize:
            raise ConstraintError(f"{name}: dst_stride*32 bytes must be whole {self.d.dtype} "
                                  f"elements")
        self.dburst = self.howo * 16 + gap_bytes // self.d.esize
        if all(o.const is not None for o in (self.doff, self.soff)):
            self._starts(None)

    def _starts(self, env):
        n, cb = self.name, self.cburst
        s_need = (cb - 1) * self.sburst + self.round_howo * 16
        d_need = (cb - 1) * self.dburst + self.howo * 16
        ss = _start(n, "src", self.s, self.soff, env, s_need)
        ds = _start(n, "dst", self.d, self.doff, env, d_need)
        extra = []
        if self.bias is not None:
            extra.append(_start(n, "bias", self.bias[0], self.bias[1], env, cb * 16))
        if self.ele is not None:
            extra.append(_start(n, "element-wise-add", self.ele[0], self.ele[1], env, s_need))
        return ds, ss, extra

    def run(self, st):
        ds, ss, extra = self._starts(st.env)
        cb, howo = self.cburst, self.howo
        src = _elems(st, self.s, ss, (cb - 1) * self.sburst + self.round_howo * 16)
        es = src.itemsize
        x = _as_strided(src, (cb, howo * 16), (self.sburst * es, es))   # [cb, howo*16]
        isf = x.dtype == np.float32
        if self.bias is not None:
            bias = _elems(st, self.bias[0], extra[0], cb * 16).reshape(cb, 1, 16)
            x3 = x.reshape(cb, howo, 16)
            x = (x3 + bias if isf else (x3.astype(np.int64) + bias).astype(np.int32))
            x = x.reshape(cb, howo * 16)
        if self.ele is not None:
            ele = _elems(st, self.ele[0], extra[0], src.size)
            ele = _as_strided(ele, (cb, howo * 16), (self.sburst * es, es))
            x = x + ele if isf else (x.astype(np.int64) + ele).astype(np.int32)
        if self.mode is not None:      # fp322fp16 / int322fp16 (deqscale 1.0): one rounding
            with np.errstate(over="ignore", invalid="ignore"):
                y = x.astype(np.float64).astype(np.float16) if not isf else x.astype(
                    np.float16)
            if self.sat:               # saturation-mode targets: inf -> +-max, NaN -> 0
                y = np.nan_to_num(y, nan=0.0, posinf=65504.0, neginf=-65504.0)
            x = y
        if self.relu:
            x = _relu(x)
        dst = _elems(st, self.d, ds, (cb - 1) * self.dburst + howo * 16)
        # bursts never overlap (dburst >= howo*16), so the strided view writes each once
        dv = _as_strided(dst, (cb, howo * 16), (self.dburst * dst.itemsize, dst.itemsize),
                         writeable=True)
        dv[...] = x
        _rec(self, "MTE3", "fixpipe", 32 + cb * self.blen,
             [self.s] + [v[0] for v in (self.bias, self.ele) if v is not None], [self.d])


# ---- tensor_mov between L0C and UB (the matrix block mode) ------------------------------

#: (src scope, dst scope) -> the dtype pairs of TIK's tensor_mov table implemented here
#: ("cc_m" -> "ubuf" / "ubuf" -> "cc_m" rows of tik_data_operation_api_.py tensor_mov;
#: the deq/vdeq/deq8/deq16 rows need int32*deqscale, whose rounding is not documented)
_TMOV_PAIRS = {
    ("local.L0C", "local.UB"): {("float16", "float16"), ("float32", "float32"),
                                ("int32", "int32"), ("uint32", "uint32"),
                                ("float32", "float16")},
    ("local.UB", "local.L0C"): {("float16", "float16"), ("float32", "float32"),
                                ("int32", "int32"), ("uint32", "uint32"),
                                ("float32", "float16")},
}
_TMOV_RELU = {("float16", "float16"), ("float32", "float32"), ("int32", "int32"),
              ("float32", "float16")}


class _TensorMovMatrix:
    """tensor_mov block_mode 'm' ('' means 'm' when L0C is involved): nburst bursts of
    burst_len 16x16 matrices (256 elements each side, in each side's dtype); the L0C side
    strides in matrices, the UB side in 32-byte blocks."""

    def __init__(self, tik, dst, src, nburst, burst_len, dst_stride, src_stride, relu,
                 name="tensor_mov"):
        self.name = name
        for pn, x in (("dst", dst), ("src", src)):
            P.check_owner(tik, name, pn, x)
        for x, role in ((dst, "dst"), (src, "src")):
            if not isinstance(x, (Tensor, TensorView)):
                raise ConstraintError(f"{name}: {role} should be Tensor, got {x!r}")
        dt = dst.tensor if isinstance(dst, TensorView) else dst
        stt = src.tensor if isinstance(src, TensorView) else src
        key = (stt.scope, dt.scope)
        if key not in _TMOV_PAIRS:
            raise ConstraintError(f"{name}: the matrix mode moves L0C -> UB or UB -> L0C on "
                                  f"{tik.target.name}, got {stt.scope} -> {dt.scope}")
        self.d, self.doff = _view(name, "dst", dst, dt.scope)
        self.s, self.soff = _view(name, "src", src, stt.scope)
        pair = (self.s.dtype, self.d.dtype)
        if pair not in _TMOV_PAIRS[key]:
            raise ConstraintError(f"{name}: {pair[0]} in {stt.scope} to {pair[1]} in "
                                  f"{dt.scope} is not supported (implemented: "
                                  f"{sorted(_TMOV_PAIRS[key])})")
        if not isinstance(relu, bool):
            raise ConstraintError(f"{name}: relu should be bool, input: {relu!r}")
        if relu and (key[0] != "local.L0C" or pair not in _TMOV_RELU):
            raise ConstraintError(f"{name}: relu is supported from L0C to UB for "
                                  f"{sorted(_TMOV_RELU)}, got {pair} {stt.scope} -> "
                                  f"{dt.scope}")
        self.relu = relu
        self.nburst = _imm(name, "nburst", nburst, 1, 4095)
        self.blen = _imm(name, "burst_len", burst_len, 1, 65535)
        self.dgap = _imm(name, "dst_stride", dst_stride, 0, 65535)
        self.sgap = _imm(name, "src_stride", src_stride, 0, 65535)
        self.sat = tik.target.saturation
        # element strides between bursts on each side
        n = self.blen * 256

        def step(t, gap):
            if t.scope == "local.L0C":
                return n + gap * 256
            if (gap * 32) % t.esize:
                raise ConstraintError(f"{name}: the UB stride must be whole {t.dtype} "
                                      f"elements")
            return n + gap * 32 // t.esize
        self.sstep = step(self.s, self.sgap)
        self.dstep = step(self.d, self.dgap)
        if self.doff.const is not None and self.soff.const is not None:
            self._starts(None)

    def _starts(self, env):
        n, nb, blen = self.name, self.nburst, self.blen * 256
        res = []
        for role, t, off, stp in (("src", self.s, self.soff, self.sstep),
                                  ("dst", self.d, self.doff, self.dstep)):
            al = 256 * t.esize if t.scope == "local.L0C" else 32
            s = _start(n, role, t, off, env, (nb - 1) * stp + blen)
            if (t.byte_off + s * t.esize) % al:
                raise AlignmentError(f"{n}: {role} address of {t.name}[{s}] should be {al}B "
                                     f"aligned in {t.scope}")
            res.append(s)
        return res

    def run(self, st):
        ss, ds = self._starts(st.env)
        nb, blen = self.nburst, self.blen * 256
        src = _elems(st, self.s, ss, (nb - 1) * self.sstep + blen)
        x = _as_strided(src, (nb, blen), (self.sstep * src.itemsize, src.itemsize))
        if x.dtype != self.d.np_dtype:       # float32 -> float16, as vconv rounds it
            from ._high import _CONV as conv_op, _walk
            x = _walk(conv_op, self.d.np_dtype, [np.ascontiguousarray(x).reshape(-1)],
                      1 if self.sat else 0).reshape(nb, blen)
        if self.relu:
            x = _relu(x)
        dst = _elems(st, self.d, ds, (nb - 1) * self.dstep + blen)
        dv = _as_strided(dst, (nb, blen), (self.dstep * dst.itemsize, dst.itemsize),
                         writeable=True)
        dv[...] = x
        _rec(self, "Vector", self.name, 32 + nb * self.blen, [self.s], [self.d])


#: data_move's ConvReluMode for L0C <-> UB (TIK tik_api_constants.py CR_MODE_MAP):
#: mode -> ((src dtype, dst dtype) pairs, relu)
_CR_MODES = {0: ({("float16", "float16"), ("float32", "float32"), ("int32", "int32"),
                  ("uint32", "uint32")}, False),
             1: ({("float32", "float16")}, False),
             2: ({("float32", "float16")}, True),
             5: ({("float16", "float16"), ("float32", "float32"), ("int32", "int32")}, True)}


class CubeMixin:
    """The cube instructions (mixed into :class:`fastisa.tik.Tik`)."""

    def data_move(self, dst: Operand, src: Operand, sid: IntArg, nburst: IntArg, burst: IntArg,
                  src_stride: IntArg, dst_stride: IntArg, *args: object,
                  **kwargs: object) -> None:
        """With an L0C operand: L0C -> UB or UB -> L0C in 16x16 matrices, as tensor_mov's
        matrix mode (burst and the L0C side's stride in matrices, the UB side's stride in
        32-byte blocks), the eighth argument ``ConvReluMode`` (TIK CR_MODE_MAP) choosing
        the conversion: 0 same dtype, 1 float32 -> float16, 2 float32 -> float16 + relu,
        5 same dtype + relu; the deq modes (3, 6-13) and 4 raise NotImplementedError.
        Source: caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/api/
        tik_data_operation_api.py`` (data_move: "L0C UB"/"UB L0C" paths),
        ``tik_lib/tik_data_operation_api_.py`` (_gen_data_move_code: ConvReluMode) and
        ``tik_lib/tik_api_constants.py`` (CR_MODE_MAP).  Without an L0C operand: the core
        data_move."""
        scopes = {getattr(x, "scope", None) for x in (dst, src)}
        if "local.L0C" not in scopes:
            return super().data_move(dst, src, sid, nburst, burst, src_stride, dst_stride,
                                     *args, **kwargs)
        mode = args[0] if args else kwargs.get("ConvReluMode", kwargs.get("conv_relu", 0))
        if isinstance(mode, bool) or not isinstance(mode, (int, np.integer)):
            raise ConstraintError(f"data_move: ConvReluMode should be an int, input: "
                                  f"{mode!r}")
        if int(mode) not in _CR_MODES:
            raise NotImplementedError(f"data_move: ConvReluMode {int(mode)} (a deq mode) is "
                                      f"not implemented by fastisa (0, 1, 2, 5 are)")
        pairs, relu = _CR_MODES[int(mode)]
        pair = (getattr(src, "dtype", None), getattr(dst, "dtype", None))
        if pair not in pairs:
            raise ConstraintError(f"data_move: ConvReluMode {int(mode)} moves "
                                  f"{sorted(pairs)}, got {pair[0]} -> {pair[1]}")
        _imm("data_move", "sid", sid, 0, 15)
        self._record(_TensorMovMatrix(self, dst, src, nburst, burst, dst_stride, src_stride,
                                      relu, "data_move"))

    def tensor_mov(self, dst: Operand, src: Operand, block_mode: str | None, nburst: IntArg,
                   burst_len: IntArg, dst_stride: IntArg, src_stride: IntArg,
                   deqscale: RealArg | Operand | None = None, sid_store_mode: Int = 0,
                   relu: bool = False, pad_mode: object = None, pad_value: object = None,
                   onthefly_mode: Int = 0, src_onthefly: object = None,
                   src_onthefly_stride: Int = 0) -> None:
        """With an L0C operand (``scope_cc`` / ``scope_cbuf_out``): block_mode ``'m'``
        (``''`` is ``'m'`` there, as in TIK): ``nburst`` bursts of ``burst_len`` 16x16
        matrices, L0C -> UB or UB -> L0C, ``dst_burst[i] = convert(src_burst[i])``; the L0C
        side's stride counts matrices (256 elements), the UB side's 32-byte blocks.  dtype
        pairs: same dtype (float16, float32, int32, uint32) or float32 -> float16 (rounded
        as vconv: nearest even, saturating on saturation-mode targets); ``relu`` (L0C -> UB)
        clamps at 0 (``x > 0 ? x : 0``).  L0C addresses on one matrix (512 B float16,
        1024 B 32-bit), UB on 32 bytes.  The deq modes (``deqscale``), the 'v'/'sc'/'dp'
        block modes and ``sid_store_mode`` raise NotImplementedError.  Without an L0C
        operand: the 32-byte block move (see the core tensor_mov).

        Raises ConstraintError (scopes, dtype pairs, ranges), AccessError, AlignmentError.
        Source: CANN TIK API reference tensor_mov; caffe-huawei-atlas-convertor
        ``convertor/huawei/te/tik/tik_lib/tik_data_operation_api_.py`` (tensor_mov: the
        scope/dtype tables, '' -> 'm'), ``api/cube/tik_cube_api.py`` (the fixpipe lowering's
        L0C -> UB matrix moves: burst and stride units)."""
        scopes = {getattr(x, "scope", None) for x in (dst, src)}
        if "local.L0C" not in scopes:
            return super().tensor_mov(dst, src, block_mode, nburst, burst_len, dst_stride,
                                      src_stride, deqscale, sid_store_mode, relu, pad_mode,
                                      pad_value, onthefly_mode, src_onthefly,
                                      src_onthefly_stride)
        if block_mode not in ("", "m", None):
            if block_mode in ("v", "sc", "dp"):
                raise NotImplementedError(f"tensor_mov: block_mode {block_mode!r} is not "
                                          f"implemented by fastisa ('m' is)")
            raise ConstraintError(f"tensor_mov: Please specify block_mode: ''/'m'/'v'/'sc', "
                                  f"input: {block_mode!r}")
        if deqscale is not None:
            raise NotImplementedError("tensor_mov: the deq modes (deqscale) are not "
                                      "implemented by fastisa: the rounding of "
                                      "int32*deqscale is not documented")
        if sid_store_mode not in (0, None):
            raise NotImplementedError(f"tensor_mov: sid_store_mode {sid_store_mode!r} is not "
                                      f"implemented by fastisa")
        if onthefly_mode not in (0, None) or pad_mode is not None:
            raise NotImplementedError("tensor_mov: onthefly_mode/pad_mode are not "
                                      "implemented for L0C moves")
        self._record(_TensorMovMatrix(self, dst, src, nburst, burst_len, dst_stride,
                                      src_stride, relu))

    def matmul(self, dst: Operand, a: Operand, b: Operand, m: Int, k: Int, n: Int,
               init_l1out: bool = True) -> None:
        """``C = (init_l1out ? 0 : C) + A @ B`` over the fractal layouts.

        ``C[i, j] = dst[j // 16, i, j % 16]`` for ``i < Mr``, ``j < Nr`` (m, n rounded up
        to 16: the padding rows/columns are computed from a's and b's padding, as the
        hardware does; fixpipe drops the rows), summed over the valid ``kk < k``:
        ``A[i, kk] = a[kk // K0, i, kk % K0]``, ``B[kk, j] = b[kk // K0, j, kk % K0]``.

        dst: L1OUT (scope_cbuf_out) float32/int32 [N1, Mr, 16], start 1024-byte aligned;
        a, b: L1 (scope_cbuf) [K1, Mr, K0] / [K1, Nr, K0], start 512-byte aligned on Ascend
        310/910 (32 elsewhere); dtypes a:b:dst float16:float16:float32 (K0 = 16) or
        int8/uint8:int8:int32 (K0 = 32).  m, n: int in [1, 4096]; k: int in [1, 16384]
        (float16) or [1, 32768] (int8); init_l1out: bool.

        float16 products are exact in float32 and added in float32 in ascending k (one
        rounding each); integers accumulate exactly, wrapping to int32.

        Raises ConstraintError (scope, dtype combination, m/k/n range or type,
        init_l1out), AccessError (an operand needs more elements than its tensor has from
        the start: dst Mr*Nr, a Mr*Kr, b Kr*Nr), AlignmentError.

        Source: CANN TIK API reference, matmul; caffe-huawei-atlas-convertor
        ``convertor/huawei/te/tik/api/cube/tik_cube_api.py`` (matmul) and
        ``api/cube/matmul.py`` (MatMulImpl checks).  See fastisa.tik._cube."""
        self._record(_Matmul(self, dst, a, b, m, k, n, init_l1out))

    def conv2d(self, dst: Operand, feature_map: Operand, weight: Operand, fm_shape: Sequence[Int],
               kernel_shape: Sequence[Int], stride: Sequence[Int], pad: Sequence[Int],
               dilation: Sequence[Int], pad_value: Real = 0, init_l1out: bool = True) -> None:
        """2-D convolution on the cube: ``dst[co // 16, oh*Wo + ow, co % 16] =
        (init_l1out ? 0 : dst) + sum_{c, i, j} X[c, oh*sh - pt + i*dh, ow*sw - pl + j*dw] *
        W[co, c, i, j]`` where X outside the feature map is ``pad_value``.

        feature_map: L1 [C1, H, W, C0] (X[c1*C0 + c0, h, w] = fm[c1, h, w, c0]);
        weight: L1 [C1, Kh, Kw, Cout, C0] (W[co, c1*C0 + c0, i, j] = weight[c1, i, j, co,
        c0]); dst: L1OUT [Cout/16, round_howo, 16] with round_howo = Ho*Wo rounded up to 16
        (rows Ho*Wo .. round_howo are not written: fixpipe drops them).  dtypes
        float16:float16:float32 (C0 = 16) or int8/uint8:int8:int32 (C0 = 32);
        fm_shape [C1, H, W, C0] (C1 in [1, 256], H, W in [1, 4096]); kernel_shape
        [C1, Kh, Kw, Cout, C0] (Kh, Kw in [1, 255], Cout a multiple of 16 in [16, 4096]);
        stride [sh, sw] in [1, 63]; pad [pl, pr, pt, pb] in [0, 255]; dilation [dh, dw] in
        [1, 255]; Ho = (H + pt + pb - dh*(Kh-1) - 1) // sh + 1, Wo likewise.  The sum runs
        over (c1, i, j, c0) in that order (the weight's K1 = C1*Kh*Kw blocks) with matmul's
        arithmetic.

        Raises ConstraintError (scopes, dtypes, shape/stride/pad/dilation/pad_value
        ranges, empty output), AccessError, AlignmentError.

        Source: CANN TIK API reference, conv2d; caffe-huawei-atlas-convertor
        ``convertor/huawei/te/tik/api/cube/tik_cube_api.py`` (conv2d)."""
        self._record(_Conv2d(self, dst, feature_map, weight, fm_shape, kernel_shape, stride,
                             pad, dilation, pad_value, init_l1out))

    def fixpipe(self, dst: Operand, src: Operand, cburst_num: IntArg, burst_len: IntArg,
                dst_stride: IntArg, src_stride: IntArg,
                extend_params: Mapping[str, object] | None = None) -> None:
        """L1OUT -> GM with the matrix post-processing:
        ``dst[i*Db + r*16 + c] = relu(quantize(src[i*Sb + r*16 + c] + bias[i*16 + c] (or
        + ele[i*Sb + r*16 + c])))`` for burst ``i < cburst_num``, row ``r < howo``,
        ``c < 16``; howo = burst_len*32 / sizeof(src) / 16, Sb = (ceil16(howo)/16 +
        src_stride) * 256 elements, Db = howo*16 elements + dst_stride*32 bytes.

        dst: GM; src: L1OUT (the matmul/conv2d result [N1, ceil16(howo), 16]).  dtypes
        (src -> dst, quantize mode): float32 -> float16 "fp322fp16", int32 -> float16
        "int322fp16", float32 -> float32 and int32 -> int32 (no quantize).  cburst_num in
        [1, 4095]; burst_len even in [2, 65535] (32-byte units of src); dst_stride,
        src_stride in [0, 65535].  extend_params: "bias" (L1 tensor of src's dtype,
        [cburst_num*16]), "element-wise-add" (L1 tensor like src), exclusive;
        "quantize_params" {"mode", "mode_param"}; "relu" (bool; only without bias and
        element-wise-add).  Additions are float32 (one rounding) or wrapping int32;
        quantize rounds once to float16 (nearest even), saturating (inf -> +-65504,
        NaN -> 0) on saturation-mode targets (Ascend 310/910/310P), as vconv does; relu is
        ``x > 0 ? x : 0``.  int322fp16 takes mode_param 1.0 only: the rounding of
        int32*deqscale for other scales (and per-channel Tensor scales) is not documented,
        so they raise NotImplementedError.  dst_stride*32 bytes is the gap between dst
        bursts as documented (the 2020 lowering truncates it to whole 16-element rows).

        Raises ConstraintError, AccessError, NotImplementedError as above.

        Source: CANN TIK API reference, fixpipe; caffe-huawei-atlas-convertor
        ``convertor/huawei/te/tik/api/cube/tik_cube_api.py`` (fixpipe, FixpipeInfo,
        _fixpipe_l1out_to_ub, _fixpipe_ub_to_out)."""
        self._record(_Fixpipe(self, dst, src, cburst_num, burst_len, dst_stride, src_stride,
                              extend_params))

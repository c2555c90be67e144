"""TIK operator conformance: public CANN TIK operators, called unchanged, against numpy.

For each case of :data:`CASES` the harness imports the operator's file from a checkout of
one of the public op libraries below (the file is read from the checkout at run time; no
vendor code is in this repository), calls its entry function unchanged with the shapes of
the case, runs the ``tik.Tik`` program the entry function built with
``tikdb.start_debug(feed_dict, interactive=False)`` and compares every output with a numpy
reference of the operator's documented semantics, written here (the TensorFlow/CANN
operator definitions: ``tf.math.cumsum``, ``tf.nn.in_top_k``, ...).  Exact ops (data
movement, integer results, selections) compare bit for bit; arithmetic ops compare within
the tolerance the case names (float16 arithmetic in a different order than numpy's).

Environment variables (each optional; the harness skips a library whose variable is unset
or names no directory, and prints ``0 passed, 0 failed`` when none is set):

``FASTISA_CANN_CONVERTOR``  checkout of jizhuoran/caffe-huawei-atlas-convertor (the CANN
                            2020 op library, ``convertor/huawei/impl/``)
``FASTISA_ASCEND_OPP``      checkout of gekowa/ascend-opp
                            (``op_impl/built-in/ai_core/tbe/impl/``)
``FASTISA_ASCEND_SAMPLES``  checkout of Ascend/samples (the custom TIK operator examples)

Run: ``FASTISA_CANN_CONVERTOR=/path python tests/conformance/run_tik_ops.py [-v] [-k SUBSTR]``.
Prints one row per case (PASS / FAIL with the reason), then ``N passed, M failed``.
A case whose operator needs an instruction fastisa does not have yet fails with the
``NotImplementedError``/``AttributeError`` naming it.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import math
import os
import signal
import sys
import time
import traceback
import types
import warnings
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if os.path.isdir(os.path.join(ROOT, "src", "fastisa")):
    sys.path.insert(0, os.path.join(ROOT, "src"))

from fastisa import shim  # noqa: E402
from fastisa.tik import _program as _P  # noqa: E402
from fastisa.tik import platform as _platform  # noqa: E402

#: library key -> (environment variable, impl directory inside the checkout)
LIBS = {
    "cann2020": ("FASTISA_CANN_CONVERTOR", "convertor/huawei/impl"),
    "opp": ("FASTISA_ASCEND_OPP", "op_impl/built-in/ai_core/tbe/impl"),
    "samples": ("FASTISA_ASCEND_SAMPLES",
                "cplusplus/level1_single_api/4_op_dev/1_custom_op/tbe/impl"),
}
_TIME_LIMIT = int(os.environ.get("FASTISA_TIK_OPS_TIMEOUT", "120"))   # seconds per case


# ======================================================================================
# case table
# ======================================================================================

def T(shape, dtype, fmt="ND"):
    """An operator tensor description as CANN passes it."""
    shape = tuple(shape)
    return {"shape": shape, "dtype": dtype, "format": fmt, "ori_shape": shape,
            "ori_format": fmt}


@dataclasses.dataclass
class Case:
    name: str                 #: table label
    lib: str                  #: key of LIBS
    module: str               #: file name (no .py) in the library's impl directory
    entry: str                #: entry function name
    args: object              #: callable () -> (args, kwargs) for the entry function
    inputs: object            #: callable (rng) -> list of input arrays, BuildCCE order
    ref: object               #: callable (*inputs) -> list of expected output arrays
    rtol: float = 0.0         #: 0: bit-exact
    atol: float = 0.0
    target: str = "Ascend910"
    outputs: object = None    #: which BuildCCE outputs to compare (default: all)
    #: (exception class name, message substring): the case passes when the run raises it
    #: (a documented rejection the 2020 TIK debugger makes too)
    expect_error: object = None
    #: {output index: input index}: a ref output (CANN gives the operator the input's
    #: memory, e.g. ScatterNdAdd's var_out is var): it starts with that input's contents
    alias: object = None


CASES: list[Case] = []


def case(*a, **k):
    CASES.append(Case(*a, **k))


def _f16(rng, shape, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float16)


def _f32(rng, shape, lo=-4.0, hi=4.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def _i32(rng, shape, lo=-1000, hi=1000):
    return rng.integers(lo, hi, size=shape, dtype=np.int32)


# ---- copies and layout ---------------------------------------------------------------
for _shape, _dt in (((1000,), "float16"), ((4, 33), "float32"), ((3, 5, 7), "int32")):
    case(f"copy_only {_shape} {_dt}", "cann2020", "copy_only", "copy_only",
         lambda s=_shape, d=_dt: ((T(s, d), T(s, d), "copy_only"), {}),
         lambda rng, s=_shape, d=_dt: [rng.uniform(-9, 9, size=s).astype(d)],
         lambda x: [x.copy()])

for _shape in ((16, 64), (3, 1000)):
    case(f"population_count {_shape}", "cann2020", "population_count", "population_count",
         lambda s=_shape: ((T(s, "int16"), T(s, "uint8"), "population_count"), {}),
         lambda rng, s=_shape: [rng.integers(-32768, 32767, size=s, dtype=np.int16)],
         lambda x: [np.unpackbits(x.view(np.uint8).reshape(-1, 2), axis=1).sum(axis=1)
                    .astype(np.uint8).reshape(x.shape)])

for _shape, _axis in (((4, 6, 8), [1]), ((2, 3, 16), [0, 2]), ((64,), [0]), ((5, 48), [1])):
    case(f"reverse_v2_d {_shape} axis={_axis}", "cann2020", "reverse_v2_d", "reverse_v2_d",
         lambda s=_shape, a=_axis: ((T(s, "float16"), T(s, "float16"), a, "reverse_v2_d"),
                                    {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, a=_axis: [np.flip(x, axis=tuple(a)).copy()])

for _shape, _bs in (((1, 4, 4, 16), 2), ((2, 6, 6, 8), 3)):
    case(f"space_to_depth {_shape} bs={_bs}", "cann2020", "space_to_depth", "space_to_depth",
         lambda s=_shape, b=_bs: ((T(s, "float16", "NHWC"),
                                   T((s[0], s[1] // b, s[2] // b, s[3] * b * b), "float16",
                                     "NHWC"), b, "NHWC", "space_to_depth"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, b=_bs: [x.reshape(x.shape[0], x.shape[1] // b, b, x.shape[2] // b, b,
                                     x.shape[3]).transpose(0, 1, 3, 2, 4, 5)
                           .reshape(x.shape[0], x.shape[1] // b, x.shape[2] // b, -1).copy()])

for _shape, _bs in (((1, 2, 2, 64), 2), ((2, 3, 3, 36), 3)):
    def _d2s(x, b):
        n, h, w, c = x.shape
        return [x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
                .reshape(n, h * b, w * b, c // (b * b)).copy()]
    case(f"depth_to_space {_shape} bs={_bs}", "cann2020", "depth_to_space", "depth_to_space",
         lambda s=_shape, b=_bs: ((T(s, "float16", "NHWC"),
                                   T((s[0], s[1] * b, s[2] * b, s[3] // (b * b)), "float16",
                                     "NHWC"), b, "NHWC", "depth_to_space"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, b=_bs: _d2s(x, b))

for _shape, _grp in (((1, 16, 4, 4), 4), ((2, 12, 3, 8), 3)):
    case(f"shuffle_channel {_shape} group={_grp}", "cann2020", "shuffle_channel",
         "shuffle_channel",
         lambda s=_shape, g=_grp: ((T(s, "float16", "NCHW"), T(s, "float16", "NCHW"), g,
                                    "shuffle_channel"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, g=_grp: [x.reshape(x.shape[0], g, x.shape[1] // g, *x.shape[2:])
                            .swapaxes(1, 2).reshape(x.shape).copy()])

for _shape, _dim, _num in (((4, 64, 16), 1, 4), ((6, 32), 1, 2), ((2, 3, 48), 2, 3)):
    case(f"split_d {_shape} dim={_dim} n={_num}", "cann2020", "split_d", "split_d",
         lambda s=_shape, d=_dim, n=_num: ((T(s, "float16"),
                                            [T(tuple(v // n if i == d else v
                                                     for i, v in enumerate(s)), "float16")
                                             for _ in range(n)], d, n, "split_d"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, d=_dim, n=_num: [a.copy() for a in np.split(x, n, axis=d)])

# reverse_v2_d on (37,) float16 reads 104 bytes of a 74-byte tensor (96 with the 32-byte
# round-up): rejected as the TIK debugger rejects reads past a GM tensor
case("reverse_v2_d (37,) axis=[0] over-read", "cann2020", "reverse_v2_d", "reverse_v2_d",
     lambda: ((T((37,), "float16"), T((37,), "float16"), [0], "reverse_v2_d"), {}),
     lambda rng: [_f16(rng, (37,))], lambda x: [],
     expect_error=("AccessError", "need read 104 bytes, but only 96"))

# ---- reductions and selections --------------------------------------------------------
# arg_max_d & co. over a non-last axis set a b32 vector_dup mask [mask_l, mask_l]: TIK's
# debugger rejects a non-zero mask_h for 32-bit tensors (te/tik/debug/util.py, "mask_h
# should be 0 for b32 tensor") and so does fastisa
for _op in ("arg_max_d", "arg_min_d"):
    case(f"{_op} (37, 16) dim=0 b32 mask_h", "cann2020", _op, _op,
         lambda o=_op: ((T((37, 16), "float16"), T((16,), "int32"), 0, o), {}),
         lambda rng: [_f16(rng, (37, 16), -100, 100)], lambda x: [],
         expect_error=("ConstraintError", "mask_h should be 0 for b32 tensor"))
for _op in ("arg_max_with_value", "arg_min_with_value"):
    case(f"{_op} (37, 16) dim=0 b32 mask_h", "cann2020", _op, _op,
         lambda o=_op: ((T((37, 16), "float16"), T((16,), "int32"), T((16,), "float16"), 0),
                        {}),
         lambda rng: [_f16(rng, (37, 16), -100, 100)], lambda x: [],
         expect_error=("ConstraintError", "mask_h should be 0 for b32 tensor"))
# arg_max_d/arg_min_d on (4, 100) float16 read 24 bytes past the end of x (800 bytes, a
# whole number of 32-byte blocks): TIK's debugger rejects reads past a GM tensor and so
# does fastisa (issue 18: keep that rule); on hardware the over-read is harmless.
for _op in ("arg_max_d", "arg_min_d"):
    case(f"{_op} (4, 100) dim=1 over-read", "cann2020", _op, _op,
         lambda o=_op: ((T((4, 100), "float16"), T((4,), "int32"), 1, o), {}),
         lambda rng: [_f16(rng, (4, 100))], lambda x: [],
         expect_error=("AccessError", "data_gm need read 824 bytes"))
for _shape, _dim in (((4, 128), 1), ((37, 16), 1), ((2, 3, 300), 2)):
    for _op, _f in (("arg_max_d", np.argmax), ("arg_min_d", np.argmin)):
        case(f"{_op} {_shape} dim={_dim}", "cann2020", _op, _op,
             lambda s=_shape, d=_dim, o=_op: ((T(s, "float16"),
                                               T(tuple(v for i, v in enumerate(s) if i != d),
                                                 "int32"), d, o), {}),
             lambda rng, s=_shape: [_f16(rng, s, -100, 100)],
             lambda x, d=_dim, f=_f: [f(x, axis=d).astype(np.int32)])

for _shape, _dim in (((4, 128), 1), ((37, 16), 1), ((2, 3, 300), 2)):
    for _op, _f, _g in (("arg_max_with_value", np.argmax, np.max),
                        ("arg_min_with_value", np.argmin, np.min)):
        case(f"{_op} {_shape} dim={_dim}", "cann2020", _op, _op,
             lambda s=_shape, d=_dim, o=_op: (
                 (T(s, "float16"), T(tuple(v for i, v in enumerate(s) if i != d), "int32"),
                  T(tuple(v for i, v in enumerate(s) if i != d), "float16"), d), {}),
             lambda rng, s=_shape: [_f16(rng, s, -100, 100)],
             lambda x, d=_dim, f=_f, g=_g: [f(x, axis=d).astype(np.int32), g(x, axis=d)])

for _shape, _axis in (((8, 64), 1), ((3, 5, 40), 2)):   # the last axis (the op's only one)
    for _op, _f in (("reduce_max_d_tik", np.max), ("reduce_min_d_tik", np.min)):
        case(f"{_op} {_shape} axis={_axis}", "cann2020", _op, _op,
             lambda s=_shape, a=_axis, o=_op: (
                 (T(s, "float32"), T(tuple(v for i, v in enumerate(s) if i != a), "float32"),
                  a, o), {}),
             lambda rng, s=_shape: [_f32(rng, s, -100, 100)],
             lambda x, a=_axis, f=_f: [f(x, axis=a)])

for _shape in ((64,), (1000,), (3, 300)):
    case(f"square_sum_all {_shape}", "cann2020", "square_sum_all", "square_sum_all",
         lambda s=_shape: ((T(s, "float32"), T(s, "float32"), T((1,), "float32"),
                            T((1,), "float32"), "square_sum_all"), {}),
         lambda rng, s=_shape: [_f32(rng, s), _f32(rng, s)],
         lambda x, y: [np.array([np.sum(x.astype(np.float64) ** 2)], np.float32),
                       np.array([np.sum(y.astype(np.float64) ** 2)], np.float32)],
         rtol=1e-5)

for _n, _c, _k in ((8, 16, 3), (33, 100, 5)):
    def _in_top_k(p, t, k):
        tgt = p[np.arange(len(t)), t]
        return [((p > tgt[:, None]).sum(axis=1) < k)]
    case(f"in_top_k ({_n}, {_c}) k={_k}", "cann2020", "in_top_k", "in_top_k",
         lambda n=_n, c=_c, k=_k: ((T((n, c), "float32"), T((n,), "int32"),
                                    T((n,), "bool"), k, "in_top_k"), {}),
         lambda rng, n=_n, c=_c: [_f32(rng, (n, c)), rng.integers(0, c, n, dtype=np.int32)],
         lambda p, t, k=_k: [a.astype(np.uint8).view(np.bool_) for a in _in_top_k(p, t, k)])

for _shape, _axis, _excl, _rev in (((8, 16), 0, False, False), ((4, 5, 32), 1, True, False),
                                   ((6, 16), 0, False, True)):
    def _cum(x, axis, exclusive, reverse, f, ident):
        a = np.flip(x, axis) if reverse else x
        r = f(a.astype(np.float32), axis=axis).astype(x.dtype)
        if exclusive:
            r = np.concatenate([np.full_like(np.take(r, [0], axis), ident),
                                np.take(r, range(r.shape[axis] - 1), axis)], axis)
        return [np.flip(r, axis).copy() if reverse else r]
    for _op, _f, _id in (("cumsum_d", np.cumsum, 0), ("cumprod_d", np.cumprod, 1)):
        case(f"{_op} {_shape} axis={_axis} excl={_excl} rev={_rev}", "cann2020", _op, _op,
             lambda s=_shape, a=_axis, e=_excl, r=_rev, o=_op: (
                 (T(s, "float32"), T(s, "float32"), a, e, r, o), {}),
             lambda rng, s=_shape: [_f32(rng, s, 0.5, 1.5)],
             lambda x, a=_axis, e=_excl, r=_rev, f=_f, i=_id: _cum(x, a, e, r, f, i),
             rtol=1e-5)

# ---- boxes ---------------------------------------------------------------------------
for _n in (16, 100):
    def _clip(b, w=80.0, h=60.0):
        out = b.astype(np.float32).copy()
        out[:, 0::2] = np.clip(out[:, 0::2], 0, w)
        out[:, 1::2] = np.clip(out[:, 1::2], 0, h)
        return [out.astype(np.float16)]
    # clip_boxes_d builds with tik.Tik(disable_debug=True): the TIK debugger refuses to
    # run such a program ("Debug function is disabled") and so does fastisa
    case(f"clip_boxes_d ({_n}, 4) disable_debug", "cann2020", "clip_boxes_d", "clip_boxes_d",
         lambda n=_n: ((T((n, 4), "float16"), T((n, 4), "float16"), [60, 80],
                        "clip_boxes"), {}),
         lambda rng, n=_n: [_f16(rng, (n, 4), -20, 120)],
         lambda b: _clip(b), expect_error=("RuntimeError", "Debug function is disabled"))

def _boxes(rng, n, lo, hi):
    """n boxes [x1, y1, x2, y2] with x1 <= x2 and y1 <= y2 (the documented layout)."""
    a = _f16(rng, (n, 2, 2), lo, hi)    # [box, corner, (x, y)]
    a.sort(axis=1)                       # corner 0 the smaller x and y
    return a.reshape(n, 4).copy()


# CheckValid: a box is valid when x1 >= 0, y1 >= 0, x2 <= width * ratio and
# y2 <= height * ratio, img_metas = [height, width, ratio]
for _n in (48, 50, 200):
    def _valid(b, m):
        h, w, r = m[0], m[1], m[2]
        ok = (b[:, 0] >= 0) & (b[:, 1] >= 0) & (b[:, 2] <= np.float16(w * r)) & \
            (b[:, 3] <= np.float16(h * r))
        return [ok.astype(np.int8)]
    case(f"check_valid ({_n}, 4)", "cann2020", "check_valid", "check_valid",
         lambda n=_n: ((T((n, 4), "float16"), T((3,), "float16"), T((n,), "int8"),
                        "check_valid"), {}),
         lambda rng, n=_n: [_boxes(rng, n, -10, 120), np.array([60, 80, 1], np.float16)],
         lambda b, m: _valid(b, m))
# check_valid on 16 boxes writes 64 bytes of int8 results into the 16-byte output (32
# with the round-up): rejected as TIK's debugger rejects writes past a GM tensor
case("check_valid (16, 4) over-write", "cann2020", "check_valid", "check_valid",
     lambda: ((T((16, 4), "float16"), T((3,), "float16"), T((16,), "int8"), "check_valid"),
              {}),
     lambda rng: [_boxes(rng, 16, -10, 120), np.array([60, 80, 1], np.float16)],
     lambda b, m: [], expect_error=("AccessError", "need write 64 bytes, but only 32"))


# ---- gekowa/ascend-opp (a later CANN op library) -----------------------------------
# tensor_redirect moves one 32-byte block whatever the shape (its kernel is one
# data_move of burst 1): its shapes here are one block
for _shape, _dt in (((16,), "float16"), ((2, 4), "float32"), ((8,), "int32")):
    case(f"tensor_redirect {_shape} {_dt}", "opp", "tensor_redirect", "tensor_redirect",
         lambda s=_shape, d=_dt: ((T(s, d), T(s, d), "tensor_redirect"), {}),
         lambda rng, s=_shape, d=_dt: [rng.uniform(-9, 9, size=s).astype(d)],
         lambda x: [x.copy()])
for _shape, _dt in (((1000,), "float16"), ((4, 33), "float32"), ((7, 64), "int32")):
    for _op in ("tensor_move",):
        case(f"{_op} {_shape} {_dt}", "opp", _op, _op,
             lambda s=_shape, d=_dt, o=_op: ((T(s, d), T(s, d), o), {}),
             lambda rng, s=_shape, d=_dt: [rng.uniform(-9, 9, size=s).astype(d)],
             lambda x: [x.copy()])
    case(f"copy_only {_shape} {_dt}", "opp", "copy_only", "copy_only",
         lambda s=_shape, d=_dt: ((T(s, d), T(s, d), "copy_only"), {}),
         lambda rng, s=_shape, d=_dt: [rng.uniform(-9, 9, size=s).astype(d)],
         lambda x: [x.copy()])

for _shape, _desc in (((4, 16), False), ((3, 48), True), ((2, 128), False), ((5, 32), True),
                      ((1, 2048), False)):   # indices travel as float16: exact to 2048
    def _sort(x, desc):
        order = np.argsort(-x if desc else x, axis=-1, kind="stable").astype(np.int32)
        return [np.take_along_axis(x, order, -1), order]
    case(f"sort {_shape} descending={_desc}", "opp", "sort", "sort",
         lambda s=_shape, d=_desc: ((T(s, "float16"), T(s, "float16"), T(s, "int32"), -1, d,
                                     "sort"), {}),
         lambda rng, s=_shape: [rng.permutation(np.arange(-(s[-1] // 2), s[-1] - s[-1] // 2)
                                                .astype(np.float16) / 4)
                                [None].repeat(s[0], 0).copy() + np.float16(0)],
         lambda x, d=_desc: _sort(x, d))
# sort pads each row to a multiple of 16 in UB and moves the padded rows back out: on
# (3, 40) it writes 512 bytes of indices into the 480-byte data_indices_, on (2, 100) it
# reads 424 bytes of the 400-byte x: rejected as TIK's debugger rejects accesses past a GM
# tensor, and so does fastisa
for _shape, _desc, _err in (((3, 40), True, "data_indices_ need write 512 bytes"),
                            ((2, 100), False, "x need read 424 bytes")):
    case(f"sort {_shape} descending={_desc} over-access", "opp", "sort", "sort",
         lambda s=_shape, d=_desc: ((T(s, "float16"), T(s, "float16"), T(s, "int32"), -1, d,
                                     "sort"), {}),
         lambda rng, s=_shape: [rng.permutation(s[-1]).astype(np.float16)[None]
                                .repeat(s[0], 0).copy()],
         lambda x: [], expect_error=("AccessError", _err))

# this InplaceUpdate kernel applies indices[0] and v[0] only (fun_no_cut reads
# input_indices_ub[0] and moves input_v_gm[0]): the cases give one index
for _shape, _idx in (((8, 32), [2]), ((16, 16), [15]), ((4, 2, 16), [3]), ((6, 64), [0])):
    def _inplace_update(x, i, v):
        y = x.copy()
        y[i] = v
        return [y]
    case(f"inplace_update {_shape} rows={_idx}", "opp", "inplace_update", "inplace_update",
         lambda s=_shape, i=_idx: ((T(s, "float32"), T((len(i),), "int32"),
                                    T((len(i),) + s[1:], "float32"), T(s, "float32"),
                                    "inplace_update"), {}),
         lambda rng, s=_shape, i=_idx: [_f32(rng, s), np.array(i, np.int32),
                                        _f32(rng, (len(i),) + s[1:])],
         lambda x, i, v: _inplace_update(x, i, v))

# index_add requires updates of var's shape (so len(indices) == var.shape[axis]).  The
# IndexAdd proto (ascend-opp op_proto/built-in/inc/index_add.h) does not say which side
# the indices index; this kernel computes var_out[i] = var[i] + updates[indices[i]]
# (ScatterAxis.proc_elem_data_move reads updates at indices[i]), which the reference
# follows -- it is not torch's index_add (var[indices[i]] += updates[i])
for _shape, _idx in (((8, 32), [1, 5, 1, 0, 7, 7, 2, 3]), ((4, 64), [0, 3, 3, 3])):
    def _index_add(var, i, u):
        return [(var + u[i]).astype(var.dtype)]
    case(f"index_add {_shape} rows={_idx}", "opp", "index_add", "index_add",
         lambda s=_shape, i=_idx: ((T(s, "float32"), T((len(i),), "int32"),
                                    T((len(i),) + s[1:], "float32"), T(s, "float32"), 0,
                                    "index_add"), {}),
         lambda rng, s=_shape, i=_idx: [_f32(rng, s), np.array(i, np.int32),
                                        _f32(rng, (len(i),) + s[1:])],
         lambda v, i, u: _index_add(v, i, u), rtol=1e-6, alias={0: 0})

# ---- Ascend/samples custom TIK operators ----------------------------------------------
for _n in (128, 1024):
    def _softmax(x):
        e = np.exp(x.astype(np.float64)).astype(np.float16)
        return [(e.astype(np.float64) / e.astype(np.float64).sum()).astype(np.float16)]
    case(f"softmax_tik ({_n},)", "samples", "softmax_tik", "softmax_tik",
         lambda n=_n: ((T((n,), "float16"), T((n,), "float16"), "softmax_tik"), {}),
         lambda rng, n=_n: [_f16(rng, (n,), -2, 2)],
         lambda x: _softmax(x), rtol=2e-3, atol=1e-5)

for _vshape, _ishape in (((16, 32), (4, 1)), ((8, 4, 16), (5, 2))):
    def _scatter_nd_add(var, idx, upd):
        y = var.astype(np.float32).copy()
        for k in np.ndindex(idx.shape[:-1]):
            y[tuple(idx[k])] += upd[k]
        return [y.astype(var.dtype)]
    case(f"scatter_nd_add var={_vshape} indices={_ishape}", "samples", "scatter_nd_add",
         "scatter_nd_add",
         lambda v=_vshape, i=_ishape: ((T(v, "float32"), T(i, "int32"),
                                        T(i[:-1] + v[i[-1]:], "float32"), T(v, "float32")),
                                       {"kernel_name": "scatter_nd_add"}),
         # distinct indices: the kernel reads var and writes var_out, which CANN makes
         # one buffer (a ref output) but the TIK debugger, like fastisa, keeps apart, so a
         # repeated index would keep only its last update there
         lambda rng, v=_vshape, i=_ishape: [
             _f32(rng, v),
             np.array(np.unravel_index(rng.choice(int(np.prod(v[:i[-1]])), i[0],
                                                  replace=False), v[:i[-1]])).T
             .astype(np.int32),
             _f32(rng, i[:-1] + v[i[-1]:])],
         lambda v, i, u: _scatter_nd_add(v, i, u), rtol=1e-6, alias={0: 0})


# ---- losses, float status -------------------------------------------------------------
# nll_loss reads one 32-byte block of weight from weight[target]: targets below C - 7 keep
# that read inside the tensor.  With reduction "mean"/"sum" the 2020 kernel also moves the
# targets one int32 past their end (36 bytes of a 32-byte (8,) tensor): rejected as TIK's
# debugger rejects reads past a GM tensor, and so does fastisa
for _n, _c, _red in ((8, 16, "mean"), (24, 16, "sum"), (64, 32, "none"), (8, 200, "mean")):
    def _nll(x, t, w, red):
        wt = w[t].astype(np.float64)
        picked = -x[np.arange(len(t)), t].astype(np.float64) * wt
        tw = np.array([wt.sum()], np.float32)
        if red == "none":
            return [picked.astype(np.float32)]
        y = picked.sum() / (wt.sum() if red == "mean" else 1.0)
        return [np.array([y], np.float32), tw]
    case(f"nll_loss ({_n}, {_c}) {_red}" + ("" if _red == "none" else " over-read"),
         "cann2020", "nll_loss", "nll_loss",
         lambda n=_n, c=_c, r=_red: ((T((n, c), "float32"), T((n,), "int32"),
                                      T((c,), "float32"),
                                      T((n,) if r == "none" else (1,), "float32"),
                                      T((1,), "float32"), r, "nll_loss"), {}),
         lambda rng, n=_n, c=_c: [_f32(rng, (n, c)),
                                  rng.integers(0, c - 7, n, dtype=np.int32),
                                  _f32(rng, (c,), 0.5, 2.0)],
         lambda x, t, w, r=_red: _nll(x, t, w, r), rtol=1e-5,
         outputs=[0] if _red == "none" else None,
         expect_error=None if _red == "none" else (
             "AccessError", f"data_target need read {_n * 4 + 4} bytes"))

# nll_loss with reduction "none" multiplies with mask 64 over a (batch,) float32 UB
# tensor: for a batch of 16 it writes 64 elements into 16, which TIK's debugger rejects
# (te/tik/debug/sim/util.py, "AccessViolation: tensor ... need ... elements") and so does
# fastisa
case("nll_loss (16, 32) none over-write", "cann2020", "nll_loss", "nll_loss",
     lambda: ((T((16, 32), "float32"), T((16,), "int32"), T((32,), "float32"),
               T((16,), "float32"), T((1,), "float32"), "none", "nll_loss"), {}),
     lambda rng: [_f32(rng, (16, 32)), rng.integers(0, 32, 16, dtype=np.int32),
                  _f32(rng, (32,), 0.5, 2.0)], lambda x, t, w: [],
     expect_error=("AccessError", "need write 64 elements but only 16"))

case("n_p_u_alloc_float_status", "cann2020", "n_p_u_alloc_float_status",
     "n_p_u_alloc_float_status", lambda: (({"shape": (8,), "dtype": "float32"},
                                            "n_p_u_alloc_float_status"), {}),
     lambda rng: [], lambda: [np.zeros(8, np.float32)])

# ---- shape arithmetic and transposes ------------------------------------------------------
for _shapes, _dim in ((([2, 3, 5], [2, 4, 5], [2, 1, 5]), 1), (([7, 3], [2, 3]), 0),
                      (([1, 2, 3, 4], [1, 2, 3, 6], [1, 2, 3, 1], [1, 2, 3, 2]), -1)):
    def _concat_offset(*xs, dim):
        d = dim % len(xs[0])
        out, acc = [], 0
        for x in xs:
            o = np.zeros_like(x)
            o[d] = acc
            acc += x[d]
            out.append(o)
        return out
    case(f"concat_offset_d {_shapes} dim={_dim}", "cann2020", "concat_offset_d",
         "concat_offset_d",
         lambda sh=_shapes, d=_dim: (([T((len(x),), "int32") for x in sh],
                                      [T((len(x),), "int32") for x in sh], d,
                                      "concat_offset_d"), {}),
         lambda rng, sh=_shapes: [np.array(x, np.int32) for x in sh],
         lambda *xs, d=_dim: _concat_offset(*xs, dim=d))

# hwc_2_chw is written for the shapes its one caller gives it: transpose_d (ascend-opp
# transpose_d.py) calls it only for perm (0, 4, 1, 2, 3) of [1, 15|7, 63|31, 63|31, C],
# C in 128/160/192/224, i.e. (hw, c) = (59535 | 6727, C).  Its vadds step (block stride c,
# dst in_ub[c_idx * 128]) and its final data_move read the UB as 16 chunks of 8 hw rows,
# which is what the two vnchwconv passes leave only when sub_hw_per_loop =
# floor_trunc(need_ub_size // 16 // c, 8) * 16 is 128, i.e. 125 <= c <= 248 with the
# 248 KiB it budgets (c > 248 makes it 0 and the kernel divides by zero).  For c <= 124
# the chunks are longer (c = 16: 120 rows) and the output is garbage: at (16, 16) only
# out[0, 0:8] is right and out[1, 0:8] is x[8:16, 0]; fastisa's output matches a
# step-by-step model of the documented vnchwconv/data_move/vadds semantics there, bit
# for bit, in every element that comes from input data.  So the table uses C >= 125:
# transpose_d's own shapes (6727, 128) and (6727, 224) (32 cores of 208 rows, the last
# 279: two 128-row loops and a 23-row tail through the back_len path), (100, 160) (25
# cores, 24 of them with 0 rows, the last 100) and (300, 192) (30 cores of 8, the last 68).
for _shape, _dt in (((6727, 128), "float32"), ((6727, 224), "float32"),
                    ((100, 160), "float32"), ((300, 192), "float32")):
    case(f"hwc_2_chw {_shape} {_dt}", "opp", "hwc_2_chw", "hwc_2_chw",
         lambda s=_shape, d=_dt: ((s, d, "hwc_2_chw"), {}),
         lambda rng, s=_shape, d=_dt: [rng.uniform(-9, 9, size=s).astype(d)],
         lambda x: [x.T.copy()])

for _shape in ((1, 16, 4, 4), (2, 16, 8, 8), (1, 32, 4, 8)):
    case(f"permute_tik {_shape} nchw->nhwc", "samples", "permute_tik", "permute_tik",
         lambda s=_shape: ((T(s, "float16", "NCHW"),
                            T((s[0], s[2], s[3], s[1]), "float16", "NHWC"), (0, 2, 3, 1),
                            "permute_tik"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x: [x.transpose(0, 2, 3, 1).copy()])

# upsample_tik: nearest-neighbour upsampling of an NC1HWC0 tensor by (stride_h, stride_w),
# times scale (Caffe's Upsample layer as the sample documents it)
for _shape, _sh, _sw, _scale in (((1, 1, 4, 4, 16), 2, 2, 1.0), ((1, 2, 3, 5, 16), 2, 3, 0.5),
                                 ((2, 1, 2, 8, 16), 1, 2, 2.0)):
    def _upsample(x, sh, sw, scale):
        y = np.repeat(np.repeat(x, sh, axis=2), sw, axis=3)
        return [(y.astype(np.float32) * np.float32(scale)).astype(x.dtype)]
    case(f"upsample_tik {_shape} stride=({_sh}, {_sw}) scale={_scale}", "samples",
         "upsample_tik", "upsample_tik",
         lambda s=_shape, a=_sh, b=_sw, k=_scale: (
             (T(s, "float16", "NC1HWC0"),
              T((s[0], s[1], s[2] * a, s[3] * b, s[4]), "float16", "NC1HWC0"), k, a, b,
              "upsample"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, a=_sh, b=_sw, k=_scale: _upsample(x, a, b, k))

# strided_slice_d's TIK branches (strided_slice_d itself builds a TVM compute first): their
# own entry functions, as strided_slice_d calls them
for _n in (200, 1000):
    case(f"strided_slice_two_turn_one ({_n}, 2)", "cann2020", "strided_slice_two_turn_one",
         "strided_slice_two_turn_one",
         lambda n=_n: ((T((n, 2), "float32"), T((n, 1), "float32"),
                        "strided_slice_two_turn_one"), {}),
         lambda rng, n=_n: [_f32(rng, (n, 2))],
         lambda x: [x[:, 0:1].copy()])
for _shape, _b, _e in (((40, 32), 0, 16), ((128, 16), 0, 8), ((64, 48), 0, 16)):
    def _sl(x, b, e):
        return [x[..., b:e].copy()]
    case(f"strided_slice_last_dim {_shape} [{_b}:{_e}]", "cann2020", "strided_slice_for_last_dim",
         "strided_slice_last_dim",
         lambda s=_shape, b=_b, e=_e: ((list(s), "float16", list(s[:-1]) + [e - b],
                                        [0] * (len(s) - 1) + [b], list(s[:-1]) + [e],
                                        [1] * len(s), "strided_slice_last_dim"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, b=_b, e=_e: _sl(x, b, e))

# permute_tik on (2, 32, 3, 5) moves 1920 bytes starting one element into x (1922 of a
# 1920-byte tensor): rejected as the TIK debugger rejects reads past a GM tensor
case("permute_tik (2, 32, 3, 5) over-read", "samples", "permute_tik", "permute_tik",
     lambda: ((T((2, 32, 3, 5), "float16", "NCHW"), T((2, 3, 5, 32), "float16", "NHWC"),
               (0, 2, 3, 1), "permute_tik"), {}),
     lambda rng: [_f16(rng, (2, 32, 3, 5))], lambda x: [],
     expect_error=("AccessError", "need read 1922 bytes, but only 1920"))

# every 2020 configuration also on the later library's copy of the operator (the file of
# the same name in ascend-opp; skipped when it has none)
# (not the expected rejections: those are the 2020 kernels' own over-reads and masks;
# not space_to_depth, whose later entry function takes a "filter" argument)
# nor nll_loss, whose later entry function declares x as 1 element for these shapes)
for _c in [c for c in CASES if c.lib == "cann2020" and c.expect_error is None and
           c.module not in ("space_to_depth", "nll_loss")]:
    CASES.append(dataclasses.replace(_c, lib="opp"))
for _op, _f in (("arg_max_d", np.argmax), ("arg_min_d", np.argmin)):
    case(f"{_op} (37, 16) dim=0", "opp", _op, _op,
         lambda o=_op: ((T((37, 16), "float16"), T((16,), "int32"), 0, o), {}),
         lambda rng: [_f16(rng, (37, 16), -100, 100)],
         lambda x, f=_f: [f(x, axis=0).astype(np.int32)])
for _shape, _bs in (((1, 4, 4, 16), 2), ((2, 6, 6, 8), 3)):
    case(f"space_to_depth {_shape} bs={_bs}", "opp", "space_to_depth", "space_to_depth",
         lambda s=_shape, b=_bs: ((T(s, "float16", "NHWC"), None,
                                   T((s[0], s[1] // b, s[2] // b, s[3] * b * b), "float16",
                                     "NHWC"), b, "NHWC", "space_to_depth"), {}),
         lambda rng, s=_shape: [_f16(rng, s)],
         lambda x, b=_bs: [x.reshape(x.shape[0], x.shape[1] // b, b, x.shape[2] // b, b,
                                     x.shape[3]).transpose(0, 1, 3, 2, 4, 5)
                           .reshape(x.shape[0], x.shape[1] // b, x.shape[2] // b, -1).copy()])


# ======================================================================================
# the runner
# ======================================================================================

class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"no result within {_TIME_LIMIT} s")


_BUILT: list = []
_SKIP = "skip"


def _capture_buildcce():
    orig = _P.Tik.BuildCCE

    def BuildCCE(self, *args, **kwargs):
        r = orig(self, *args, **kwargs)
        _BUILT.append(self)
        return r
    _P.Tik.BuildCCE = BuildCCE


def _use_library(impl_dir):
    """Make ``impl`` the given op library without running its ``__init__`` (which
    imports every operator, TVM ones included)."""
    for name in [n for n in sys.modules if n == "impl" or n.startswith("impl.")]:
        del sys.modules[name]
    pkg = types.ModuleType("impl")
    pkg.__path__ = [impl_dir]
    sys.modules["impl"] = pkg
    util_dir = os.path.join(impl_dir, "util")
    if os.path.isdir(util_dir):
        sub = types.ModuleType("impl.util")
        sub.__path__ = [util_dir]
        sys.modules["impl.util"] = sub
        pkg.util = sub


def _compare(got, want, rtol, atol):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.size < want.size:
        return f"size {got.size} < expected {want.size}"
    if got.size > want.size:
        # the operator declared its GM output larger than the result (a padded tail the
        # framework never reads): compare the result's elements
        got = got.reshape(-1)[:want.size]
    got = got.reshape(want.shape) if got.shape != want.shape else got
    if got.dtype != want.dtype:
        if got.dtype.itemsize == want.dtype.itemsize and want.dtype == np.bool_:
            got = got.view(np.bool_)
        else:
            return f"dtype {got.dtype} != expected {want.dtype}"
    if rtol == 0 and atol == 0:
        if want.dtype.kind == "f":
            bad = got.view(f"u{want.dtype.itemsize}") != want.view(f"u{want.dtype.itemsize}")
        else:
            bad = got != want
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~(np.isclose(g, w, rtol=rtol, atol=atol) | (np.isnan(g) & np.isnan(w)))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), want.shape)
        return (f"{int(bad.sum())}/{want.size} elements differ, first at {tuple(map(int, i))}:"
                f" got {got[i]!r}, expected {want[i]!r}")
    return None


def run_case(c: Case, impl_dir, rng):
    if c.expect_error is None:
        return _run_case(c, impl_dir, rng)
    try:
        msg = _run_case(c, impl_dir, rng)
    except Exception as e:   # noqa: BLE001
        if type(e).__name__ == c.expect_error[0] and c.expect_error[1] in str(e):
            return None
        raise
    return f"expected {c.expect_error[0]} ({c.expect_error[1]}), got: {msg or 'no error'}"


def _run_case(c: Case, impl_dir, rng):
    if not os.path.exists(os.path.join(impl_dir, c.module + ".py")):
        return _SKIP
    _use_library(impl_dir)
    _platform.set_target(c.target)
    _BUILT.clear()
    mod = importlib.import_module("impl." + c.module)
    args, kwargs = c.args()
    inputs = c.inputs(rng)
    getattr(mod, c.entry)(*args, **kwargs)
    if not _BUILT:
        return "the entry function built no TIK program (BuildCCE not called)"
    tk = _BUILT[-1]
    tensors = [x for x in tk._inputs if isinstance(x, _P.Tensor)]
    if len(tensors) != len(inputs):
        return f"the program has {len(tensors)} GM inputs, the case gives {len(inputs)}"
    feed = {}
    for t, a in zip(tensors, inputs):
        a = np.ascontiguousarray(a, dtype=t.np_dtype).reshape(-1)
        if a.size < t.size:
            # the operator declared its GM input larger than the tensor it is given (a
            # padded tail it reads but does not use): the tail is zeros
            a = np.concatenate([a, np.zeros(t.size - a.size, a.dtype)])
        if a.size > t.size:
            return f"input {t.name} is declared with {t.size} elements, the case gives {a.size}"
        feed[t.name] = a.reshape(t.shape)
    if c.alias:
        make_state = tk._make_state

        def _make_state(feed_dict):
            st = make_state(feed_dict)
            for o, i in c.alias.items():
                dst, src = tk._outputs[o], tensors[i]
                st.bufs[0][dst.byte_off:dst.byte_off + dst.nbytes] = \
                    st.bufs[0][src.byte_off:src.byte_off + src.nbytes]
            return st
        tk._make_state = _make_state
    outs = tk.tikdb.start_debug(feed, interactive=False)
    wants = c.ref(*[a.copy() for a in inputs])
    sel = c.outputs if c.outputs is not None else range(len(wants))
    outs = [outs[i] for i in sel]
    if len(outs) != len(wants):
        return f"{len(outs)} outputs, reference has {len(wants)}"
    for k, (g, w) in enumerate(zip(outs, wants)):
        msg = _compare(g, w, c.rtol, c.atol)
        if msg:
            return f"output {k}: {msg}"
    return None


def _annotate(msg):
    """Say who owns a failure that another piece of issue 18 fixes."""
    import re
    m = re.search(r"'Tik' object has no attribute '(\w+)'", msg)
    if m:
        return f"needs {m.group(1)} (tik-isa) -- {msg}"
    if "vec_sel: Please assure sel is cmpmask" in msg:
        return f"needs vec_sel mode 0 with a Tensor sel (tik-isa) -- {msg}"
    if "deqscale" in msg and "NotImplementedError" in msg:
        return f"needs vconv deqscale (tik-isa) -- {msg}"
    if "timeout" in msg and "BuildCCE" in msg:
        return f"needs B1 (rel: BuildCCE(inputs=<one Tensor>)) -- {msg}"
    return msg


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-v", action="store_true", help="print tracebacks of failures")
    ap.add_argument("-k", default="", help="only cases whose name contains one of these "
                                           "comma-separated substrings")
    opt = ap.parse_args(argv)
    dirs = {}
    for key, (var, sub) in LIBS.items():
        p = os.environ.get(var)
        if p and os.path.isdir(os.path.join(p, sub)):
            dirs[key] = os.path.join(p, sub)
    if not dirs:
        print("no op library checkout given (set " + ", ".join(v for v, _ in LIBS.values())
              + "); skipped")
        print("0 passed, 0 failed")
        return 0
    shim.install()
    _capture_buildcce()
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    passed = failed = 0
    ops_seen: dict[str, bool] = {}
    width = max(len(c.name) for c in CASES) + 2
    for c in CASES:
        if c.lib not in dirs or not any(k in c.name for k in opt.k.split(",")):
            continue
        rng = np.random.default_rng(zlib.crc32(f"{c.lib} {c.name}".encode()))
        t0 = time.perf_counter()
        signal.alarm(_TIME_LIMIT)
        try:
            msg = run_case(c, dirs[c.lib], rng)
        except _Timeout as e:
            tb = traceback.extract_tb(e.__traceback__)
            msg = f"timeout: {e}" + (" in BuildCCE" if any(f.name == "BuildCCE" and
                                                          "_program" in f.filename
                                                          for f in tb) else "")
            if opt.v:
                traceback.print_exc()
        except Exception as e:   # noqa: BLE001 -- every failure is a row of the table
            last = traceback.extract_tb(e.__traceback__)[-1]
            where = f"{os.path.basename(last.filename)}:{last.lineno}"
            msg = f"{type(e).__name__}: {str(e).splitlines()[0][:150] if str(e) else ''} " \
                  f"[{where}]"
            if opt.v:
                traceback.print_exc()
        finally:
            signal.alarm(0)
        dt = time.perf_counter() - t0
        if msg is _SKIP:
            continue
        ok = msg is None
        if not ok:
            msg = _annotate(msg)
        key = f"{c.lib}:{c.module}"
        ops_seen[key] = ops_seen.get(key, True) and ok
        passed += ok
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {c.lib:9s} {c.name:{width}s} {dt:6.2f}s"
              + ("" if ok else f"  {msg}"))
    nops = len(ops_seen)
    print(f"operators: {sum(ops_seen.values())} of {nops} pass every configuration")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

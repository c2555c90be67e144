"""``topi.cce.util``: the shape/dtype/kernel-name checks TIK operators call.

Names and signatures of the CANN ``topi/cce/util.py`` (caffe-huawei-atlas-convertor
``convertor/huawei/topi/cce/util.py``); the checks are fastisa's own and raise
:class:`.op_utils.OpParamError` (a RuntimeError, as CANN raises).
"""
from __future__ import annotations

import functools
import math

from .. import platform as _platform
from .op_utils import OpParamError, check_kernel_name  # noqa: F401

DEFAULT_MIN_SHAPE_DIM = 1
DEFAULT_MAX_SHAPE_DIM = 8
DEFAULT_MAX_SHAPE_NUM = 200000000
MAX_REDUCE_SHAPE_NUM = 200000000
MAX_KERNEL_NAEM_LEN = 200
VERSION_CLOUD = "cloud"
VERSION_MINI = "mini"
VERSION_SHISI = "smallhisi"
SHAPE_SIZE_LIMIT = 2147483648


def _fail(msg):
    raise OpParamError(msg)


def check_input_type(*type_args, **type_kwargs):
    """``@check_input_type(dict, dict, (int, list), str)``: each positional/keyword
    argument must be an instance of its type(s); in a dict argument a "shape" present must
    be a list/tuple and a "dtype" present a str (CANN's ``check_input_type_dict`` checks
    the keys a dict has: strided_slice_grad_d hands pad_d an empty output dict)."""
    def deco(func):
        names = func.__code__.co_varnames[:func.__code__.co_argcount]
        table = dict(zip(names, type_args))

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for n, v in list(zip(names, args)) + list(kwargs.items()):
                if n not in table:
                    continue
                if isinstance(v, dict):
                    if "shape" in v and not isinstance(v["shape"], (list, tuple)):
                        _fail(f"{func.__name__}: input {n!r} shape must be a list or tuple, "
                              f"got {v['shape']!r}")
                    if "dtype" in v and not isinstance(v["dtype"], str):
                        _fail(f"{func.__name__}: input {n!r} dtype must be a str, got "
                              f"{v['dtype']!r}")
                if not isinstance(v, table[n]):
                    _fail(f"{func.__name__}: input parameter {n!r} type error: expected "
                          f"{table[n]}, got {type(v).__name__}")
            return func(*args, **kwargs)
        return wrapper
    return deco


def check_dtype_rule(dtype, check_list):
    """dtype (case-insensitive) must be in check_list."""
    if dtype is None:
        _fail("dtype is None")
    if str(dtype).lower() not in check_list:
        _fail(f"The data type {dtype!r} is not supported, it should be one of "
              f"{list(check_list)}")


def check_shape_rule(shape, min_dim=None, max_dim=None, max_shape_num=None):
    """rank in [min_dim (1), max_dim (8)], every dim an int in [1, max_shape_num (2e8)]."""
    lo = DEFAULT_MIN_SHAPE_DIM if min_dim is None else min_dim
    hi = DEFAULT_MAX_SHAPE_DIM if max_dim is None else max_dim
    mx = DEFAULT_MAX_SHAPE_NUM if max_shape_num is None else max_shape_num
    if not isinstance(shape, (tuple, list)):
        _fail(f"the shape must be a tuple or list, got {shape!r}")
    if not lo <= len(shape) <= hi:
        _fail(f"The ndim of input must be in [{lo}, {hi}], actual input is {len(shape)}")
    for d in shape:
        if type(d) is not int or not 0 < d <= mx:
            _fail(f"every dim must be a positive int at most {mx}, got {tuple(shape)}")


def check_reduce_shape_rule(shape):
    """Element count at most MAX_REDUCE_SHAPE_NUM."""
    if math.prod(shape) > MAX_REDUCE_SHAPE_NUM:
        _fail(f"the reduce shape {tuple(shape)} has more than {MAX_REDUCE_SHAPE_NUM} elements")


def check_shape_size(shape, limit):
    """The element count, which must be at most limit."""
    n = math.prod(shape)
    if n > limit:
        _fail(f"the shape {tuple(shape)} has {n} elements, more than the limit {limit}")
    return n


def check_tensor_shape_size(shape):
    """The element count, which must be less than 2**31."""
    return check_shape_size(shape, SHAPE_SIZE_LIMIT - 1)


def axis_check(shape_len, axis):
    """An int axis in [-shape_len, shape_len) made non-negative; a list: each made
    non-negative, deduplicated and sorted."""
    def one(a):
        if type(a) is not int:
            _fail(f"type of axis value should be int, got {a!r}")
        if not -shape_len <= a < shape_len:
            _fail(f"input axis is out of range, axis value can be from {-shape_len} to "
                  f"{shape_len - 1}, got {a}")
        return a + shape_len if a < 0 else a
    if not hasattr(axis, "index"):
        return one(axis)
    return sorted({one(a) for a in axis})


def shape_to_list(shape):
    """A shape as a list of ints (TVM shape entries expose ``.value``)."""
    return [int(getattr(d, "value", d)) for d in shape]


def simplify_axis_shape(shape, axis):
    """Merge runs of adjacent reduced axes and runs of adjacent kept dims: returns
    (shape, axis) of the merged problem (axis non-empty, sorted)."""
    red = set(axis)
    new_shape, new_axis, prev = [], [], None
    for i, d in enumerate(shape):
        kind = i in red
        if kind == prev:
            new_shape[-1] *= d
        else:
            new_shape.append(d)
            if kind:
                new_axis.append(len(new_shape) - 1)
            prev = kind
    return new_shape, (new_axis or [0])


def shape_refine(shape, reduce_axis=None):
    """Drop dims of 1 (and the reduce axes that pointed at them); returns the shape, or
    (shape, axis) when reduce_axis is given."""
    if reduce_axis is None:
        out = [d for d in shape if d != 1]
        return out or [1]
    axes = axis_check(len(shape), list(reduce_axis) if hasattr(reduce_axis, "index")
                      else [reduce_axis])
    out, new_axes = [], []
    for i, d in enumerate(shape):
        if d == 1:
            continue
        if i in axes:
            new_axes.append(len(out))
        out.append(d)
    return (out or [1]), new_axes


def produce_shapes(shape1, shape2):
    """numpy broadcasting: (shape1 padded, shape2 padded, broadcast shape)."""
    from .op_utils import broadcast_shapes
    return broadcast_shapes(shape1, shape2)


def is_scalar(shape):
    return len(shape) == 1 and shape[0] == 1


def scalar2tensor_one(shape):
    return [1] if len(shape) == 0 else list(shape)


def compare_tensor_dict_key(dict1, dict2, dict_key):
    """dict1[dict_key] must equal dict2[dict_key] (shapes compared as tuples)."""
    for d in (dict1, dict2):
        if not isinstance(d, dict) or dict_key not in d:
            _fail(f"compare_tensor_dict_key: both inputs must be dicts with {dict_key!r}")
    a, b = dict1[dict_key], dict2[dict_key]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        a, b = tuple(a), tuple(b)
    if a != b:
        _fail(f"The {dict_key} of the two inputs must be the same, got {a!r} and {b!r}")


def axis_transfrom_5d(axis, data_format):
    """An NCHW/NHWC axis as the matching NC1HWC0 axis (C maps to C1)."""
    order = {"NCHW": (0, 1, 2, 3), "NHWC": (0, 2, 3, 1)}
    if data_format not in order:
        _fail(f"axis_transfrom_5d: format must be NCHW or NHWC, got {data_format!r}")
    nchw = order[data_format][axis if axis >= 0 else axis + 4]
    return {0: 0, 1: 1, 2: 2, 3: 3}[nchw]


def get_product_version():
    """"mini" (Ascend310), "cloud" (Ascend910) or "smallhisi" (others), from the target."""
    name = _platform.get_target().name
    if name.startswith("Ascend310") and not name.startswith(("Ascend310P", "Ascend310B")):
        return VERSION_MINI
    if name.startswith("Ascend910"):
        return VERSION_CLOUD
    return VERSION_SHISI


def is_v200_version():
    return _platform.get_target().family == "v200"


def is_lhisi_version():
    return False


def is_cloud_version():
    return get_product_version() == VERSION_CLOUD


def is_mini_version():
    return get_product_version() == VERSION_MINI


def is_mini_or_lhisi_version():
    return is_mini_version()

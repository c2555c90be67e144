"""``te.utils.op_utils`` / ``tbe.common.utils.para_check``: operator parameter checks.

The names, constants and signatures are those of the CANN op utilities
(caffe-huawei-atlas-convertor ``convertor/huawei/te/utils/op_utils.py``; gekowa/ascend-opp's
operators import the same names from ``tbe.common.utils.para_check``).  The checks are
fastisa's own: a parameter that breaks one raises :class:`OpParamError` (a ``RuntimeError``,
as CANN raises, and a :class:`fastisa.errors.ConstraintError`) naming the rule and value.

``@check_op_params(REQUIRED_INPUT, ..., KERNEL_NAME)`` checks each positional argument of
the decorated entry function against its kind (an input/output is a dict with "shape" and
"dtype"; an option may be None; attributes by type; a dynamic input is a list of such
dicts) and then calls the function unchanged.
"""
from __future__ import annotations

import functools
import math
import re

from ...errors import ConstraintError

SHAPE_SIZE_LIMIT = 2 ** 31 - 1
SHAPE_SIZE_ZERO = 0
RANK_ZERO = 0
RANK_LIMIT = 8
DIM_LIMIT = 2 ** 31 - 1
ZERO_DIM = 0
MAX_KERNEL_NAEM_LEN = 200
MAX_KERNEL_NAME_LEN = 200

REQUIRED_INPUT = "required_input"
OPTION_INPUT = "option_input"
DYNAMIC_INPUT = "dynamic_input"
REQUIRED_OUTPUT = "required_output"
OPTION_OUTPUT = "option_output"
DYNAMIC_OUTPUT = "dynamic_output"
REQUIRED_ATTR_INT = "REQUIRED_ATTR_INT"
REQUIRED_ATTR_FLOAT = "REQUIRED_ATTR_FLOAT"
REQUIRED_ATTR_STR = "REQUIRED_ATTR_STR"
REQUIRED_ATTR_BOOL = "REQUIRED_ATTR_BOOL"
REQUIRED_ATTR_TYPE = "REQUIRED_ATTR_TYPE"
REQUIRED_ATTR_LIST_INT = "REQUIRED_ATTR_LIST_INT"
REQUIRED_ATTR_LIST_FLOAT = "REQUIRED_ATTR_LIST_FLOAT"
REQUIRED_ATTR_LIST_BOOL = "REQUIRED_ATTR_LIST_BOOL"
REQUIRED_ATTR_LIST_LIST_INT = "REQUIRED_ATTR_LIST_LIST_INT"
OPTION_ATTR_INT = "OPTION_ATTR_INT"
OPTION_ATTR_FLOAT = "OPTION_ATTR_FLOAT"
OPTION_ATTR_STR = "OPTION_ATTR_STR"
OPTION_ATTR_BOOL = "OPTION_ATTR_BOOL"
OPTION_ATTR_TYPE = "OPTION_ATTR_TYPE"
OPTION_ATTR_LIST_INT = "OPTION_ATTR_LIST_INT"
OPTION_ATTR_LIST_FLOAT = "OPTION_ATTR_LIST_FLOAT"
OPTION_ATTR_LIST_BOOL = "OPTION_ATTR_LIST_BOOL"
OPTION_ATTR_LIST_LIST_INT = "OPTION_ATTR_LIST_LIST_INT"
KERNEL_NAME = "kernel_name"
OP_NAME = ""
PARAM_NAME = ""
for _i in range(18):
    globals()[f"OP_ERROR_CODE_{_i:03d}"] = f"E800{_i:02d}"


class OpParamError(ConstraintError, RuntimeError):
    """An operator parameter check failed (CANN raises RuntimeError)."""


class OpParamInfoKey:
    SHAPE = "shape"
    FORMAT = "format"
    ORI_SHAPE = "ori_shape"
    ORI_FORMAT = "ori_format"
    D_TYPE = "dtype"
    RANGE = "range"


class TensorFormat:
    ND = "ND"
    NCHW = "NCHW"
    NHWC = "NHWC"
    NDHWC = "NDHWC"
    NCDHW = "NCDHW"
    CHWN = "CHWN"
    NC1HWC0 = "NC1HWC0"
    NC1HWC0_C04 = "NC1HWC0_C04"
    NDC1HWC0 = "NDC1HWC0"
    FRACTAL_NZ = "FRACTAL_NZ"
    HWCN = "HWCN"
    DHWCN = "DHWCN"
    FRACTAL_Z = "FRACTAL_Z"
    FRACTAL_Z_C04 = "FRACTAL_Z_C04"
    C1HWNCoC0 = "C1HWNCoC0"
    FRACTAL_Z_3D = "FRACTAL_Z_3D"
    FRACTAL_ZN_LSTM = "FRACTAL_ZN_LSTM"


ALL_FORMAT_LIST = [v for k, v in vars(TensorFormat).items() if not k.startswith("__")]
ALL_DTYPE_LIST = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                  "float16", "float32", "float64", "bool")

_INPUTS = (REQUIRED_INPUT, OPTION_INPUT, DYNAMIC_INPUT)
_OUTPUTS = (REQUIRED_OUTPUT, OPTION_OUTPUT, DYNAMIC_OUTPUT)
_ATTR_TYPES = {"INT": (int,), "FLOAT": (int, float), "STR": (str,), "BOOL": (bool,),
               "TYPE": (str,)}


def _fail(msg):
    raise OpParamError(msg)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_tensor_dict(fname, pname, d, kind):
    if not isinstance(d, dict):
        _fail(f"{fname}: {kind} {pname!r} must be a dict with 'shape' and 'dtype', "
              f"got {type(d).__name__}")
    for key in ("shape", "dtype"):
        if key not in d:
            _fail(f"{fname}: {kind} {pname!r} has no {key!r} key")
    if not isinstance(d["shape"], (tuple, list)):
        _fail(f"{fname}: {kind} {pname!r} shape must be a tuple or list, got {d['shape']!r}")
    if not isinstance(d["dtype"], str):
        _fail(f"{fname}: {kind} {pname!r} dtype must be a str, got {d['dtype']!r}")


def _check_one(fname, pname, kind, v):
    if isinstance(kind, type) or (isinstance(kind, tuple) and
                                  all(isinstance(k, type) for k in kind)):
        # the older form: check_op_params(dict, dict, int, str) gives the Python types
        if not isinstance(v, kind):
            _fail(f"{fname}: parameter {pname!r} must be {kind}, got {type(v).__name__}")
        if isinstance(v, dict):
            _check_tensor_dict(fname, pname, v, "input")
        return
    if isinstance(kind, tuple):
        # alternatives, e.g. (OPTION_ATTR_FLOAT, OPTION_ATTR_INT): one of them must hold
        # (ascend-opp sparse_apply_ftrl_d / sparse_apply_adagrad_v2_d declare attrs so)
        errors = []
        for k in kind:
            try:
                _check_one(fname, pname, k, v)
                return
            except OpParamError as e:
                errors.append(str(e))
        _fail(f"{fname}: parameter {pname!r} matches none of {kind}: " + "; ".join(errors))
    if kind in (REQUIRED_INPUT, REQUIRED_OUTPUT):
        _check_tensor_dict(fname, pname, v, kind)
    elif kind in (OPTION_INPUT, OPTION_OUTPUT):
        if v is not None:
            _check_tensor_dict(fname, pname, v, kind)
    elif kind in (DYNAMIC_INPUT, DYNAMIC_OUTPUT):
        if not isinstance(v, (list, tuple)) or not v:
            _fail(f"{fname}: {kind} {pname!r} must be a non-empty list of dicts, got {v!r}")
        for d in v:
            _check_tensor_dict(fname, pname, d, kind)
    elif kind == KERNEL_NAME:
        check_kernel_name(v)
    elif kind.startswith(("REQUIRED_ATTR_", "OPTION_ATTR_")):
        req = kind.startswith("REQUIRED")
        t = kind.split("_ATTR_", 1)[1]
        if v is None:
            if req:
                _fail(f"{fname}: required attribute {pname!r} is None")
            return
        if t.startswith("LIST_"):
            inner = t[len("LIST_"):]
            if not isinstance(v, (list, tuple)):
                _fail(f"{fname}: attribute {pname!r} must be a list ({kind}), got {v!r}")
            for e in v:
                if inner == "LIST_INT":
                    if not isinstance(e, (list, tuple)) or not all(_is_int(i) for i in e):
                        _fail(f"{fname}: attribute {pname!r} must be a list of int lists, "
                              f"got {v!r}")
                elif not _type_ok(inner, e):
                    _fail(f"{fname}: attribute {pname!r} must be a list of "
                          f"{inner.lower()}, got {v!r}")
        elif not _type_ok(t, v):
            _fail(f"{fname}: attribute {pname!r} must be {t.lower()} ({kind}), got {v!r}")
    else:
        _fail(f"check_op_params: unknown parameter kind {kind!r}")


def _type_ok(t, v):
    if t == "INT":
        return _is_int(v)
    if t == "BOOL":
        return isinstance(v, bool)
    if t == "FLOAT":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, _ATTR_TYPES.get(t, (object,)))


def check_op_params(*type_args, **type_kwargs):
    """``@check_op_params(REQUIRED_INPUT, REQUIRED_OUTPUT, REQUIRED_ATTR_INT, KERNEL_NAME)``:
    check each argument of the decorated function against its kind, then call it."""
    def deco(func):
        import inspect
        try:
            names = list(inspect.signature(func).parameters)
        except (TypeError, ValueError):
            names = []

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            vals = list(args)
            for n in names[len(args):len(type_args)]:
                if n in kwargs:
                    vals.append(kwargs[n])
                else:
                    vals.append(_DEFAULT)
            for k, (kind, v) in enumerate(zip(type_args, vals)):
                if v is _DEFAULT:
                    continue   # the function's own default applies
                pname = names[k] if k < len(names) else f"arg{k}"
                _check_one(func.__name__, pname, kind, v)
            return func(*args, **kwargs)
        return wrapper
    return deco


_DEFAULT = object()


def check_kernel_name(kernel_name, *args, **kwargs):
    """kernel_name: a str of letters, digits and '_' (not starting with a digit), at
    most 200 characters; None is allowed (the operator's default applies)."""
    if kernel_name is None:
        return
    if not isinstance(kernel_name, str):
        _fail(f"kernel_name must be a str, got {type(kernel_name).__name__}")
    if len(kernel_name) > MAX_KERNEL_NAEM_LEN:
        _fail(f"kernel_name must have at most {MAX_KERNEL_NAEM_LEN} characters, got "
              f"{len(kernel_name)}")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", kernel_name):
        _fail(f"kernel_name may contain only letters, digits and '_' and not start with a "
              f"digit, got {kernel_name!r}")


def check_shape(shape, min_dim=0, max_dim=DIM_LIMIT, min_rank=0, max_rank=RANK_LIMIT,
                min_size=0, max_size=SHAPE_SIZE_LIMIT, param_name=PARAM_NAME):
    """Every dim an int in [min_dim, max_dim], rank in [min_rank, max_rank], element
    count in [min_size, max_size]."""
    if not isinstance(shape, (tuple, list)):
        _fail(f"check_shape: {param_name or 'shape'} must be a tuple or list, got {shape!r}")
    if not min_rank <= len(shape) <= max_rank:
        _fail(f"check_shape: the rank of {param_name or 'shape'} {tuple(shape)} must be in "
              f"[{min_rank}, {max_rank}], got {len(shape)}")
    for d in shape:
        if not _is_int(d):
            _fail(f"check_shape: the dims of {param_name or 'shape'} must be int, got "
                  f"{tuple(shape)}")
        if not min_dim <= d <= max_dim:
            _fail(f"check_shape: the dims of {param_name or 'shape'} must be in "
                  f"[{min_dim}, {max_dim}], got {tuple(shape)}")
    size = math.prod(shape)
    if not min_size <= size <= max_size:
        _fail(f"check_shape: the size of {param_name or 'shape'} must be in "
              f"[{min_size}, {max_size}], got {size}")


def check_dtype(dtype, check_list=ALL_DTYPE_LIST, param_name=PARAM_NAME):
    """dtype (case-insensitive) must be one of check_list."""
    if dtype is None:
        _fail(f"check_dtype: the dtype of {param_name or 'input'} could not be None")
    if str(dtype).lower() not in check_list:
        _fail(f"check_dtype: the dtype of {param_name or 'input'} should be one of "
              f"{list(check_list)}, got {dtype!r}")


def check_format(data_format, check_list=ALL_FORMAT_LIST, param_name=PARAM_NAME):
    """data_format must be one of check_list."""
    if data_format is None:
        _fail(f"check_format: the format of {param_name or 'input'} could not be None")
    if data_format not in check_list:
        _fail(f"check_format: the format of {param_name or 'input'} should be one of "
              f"{list(check_list)}, got {data_format!r}")


def check_elewise_shape_range(inputs, support_broadcast=False):
    """Dynamic-shape range check: fastisa runs static shapes only; accepted."""
    return None


def squeeze_shape(shape):
    """The dims > 1 of shape ([1] when none)."""
    out = [d for d in shape if d > 1]
    return out or [1]


def wrap_axes_to_positive(axes, rank):
    """axes (an int or a list) as non-negative axes of a rank-``rank`` tensor."""
    one = not isinstance(axes, (tuple, list))
    out = []
    for a in ([axes] if one else axes):
        if not -rank <= a < rank:
            _fail(f"Axis must between [-{rank}, {rank}), got {a}")
        out.append(a + rank if a < 0 else a)
    return out[0] if one else out


def refine_shape_axes(shape, axes):
    """Merge adjacent dims of the same kind (reduced / kept) and drop dims of 1; returns
    (shape, axes) of the merged problem."""
    axes = wrap_axes_to_positive(list(axes), len(shape))
    red = set(axes)
    new_shape, new_axes = [], []
    prev = None
    for i, d in enumerate(shape):
        if d == 1:
            continue
        kind = i in red
        if kind == prev and new_shape:
            new_shape[-1] *= d
        else:
            new_shape.append(d)
            if kind:
                new_axes.append(len(new_shape) - 1)
            prev = kind
    if not new_shape:
        return [1], []
    return new_shape, new_axes


def broadcast_shapes(shape1, shape2, op_name=OP_NAME, param_name_input1="",
                     param_name_input2=""):
    """numpy broadcasting of two shapes: (shape1 padded, shape2 padded, result)."""
    n = max(len(shape1), len(shape2))
    a = [1] * (n - len(shape1)) + list(shape1)
    b = [1] * (n - len(shape2)) + list(shape2)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            _fail(f"{op_name or 'broadcast_shapes'}: shapes {tuple(shape1)} and "
                  f"{tuple(shape2)} cannot be broadcast")
        out.append(max(x, y))
    return a, b, out


def refine_shapes_for_broadcast(shape1, shape2):
    """Merge adjacent dims that broadcast the same way; returns the two shapes."""
    a, b, _ = broadcast_shapes(shape1, shape2)
    ra, rb, prev = [], [], None
    for x, y in zip(a, b):
        if x == 1 and y == 1:
            continue
        kind = (x == 1, y == 1)
        if kind == prev and ra:
            ra[-1] *= x
            rb[-1] *= y
        else:
            ra.append(x)
            rb.append(y)
            prev = kind
    return (ra or [1]), (rb or [1])


# the topi.cce.util-style checks some operators import from para_check
def check_dtype_rule(dtype, check_list, param_name=PARAM_NAME):
    check_dtype(dtype, check_list, param_name)


def check_shape_rule(shape, min_dim=None, max_dim=None, max_shape_num=None):
    from .topi_util import check_shape_rule as f
    f(shape, min_dim, max_dim, max_shape_num)


def check_shape_size(shape, limit=SHAPE_SIZE_LIMIT):
    from .topi_util import check_shape_size as f
    return f(shape, limit)


def check_tensor_shape_size(shape):
    from .topi_util import check_tensor_shape_size as f
    return f(shape)

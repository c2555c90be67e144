"""``te.utils.error_manager.error_manager_vector``: the operators' error raisers.

Each ``raise_err_*`` raises :class:`.op_utils.OpParamError` (a RuntimeError, as CANN does)
whose message names the operator, the parameter and the values given.  Names and argument
orders as the operators call them (gekowa/ascend-opp ``op_impl/built-in/ai_core/tbe/impl``).
"""
from __future__ import annotations

import sys

from .op_utils import OpParamError


def _raise(kind, *args):
    raise OpParamError(f"{kind}: " + ", ".join(repr(a) for a in args))


def raise_err_input_value_invalid(op_name, param_name, excepted_value, real_value):
    raise OpParamError(f"{op_name}: the value of {param_name} should be {excepted_value}, "
                       f"got {real_value}")


def raise_err_check_params_rules(op_name, rule_desc, param_name, param_value):
    raise OpParamError(f"{op_name}: {param_name} ({param_value!r}) breaks the rule: "
                       f"{rule_desc}")


def raise_err_input_dtype_not_supported(op_name, param_name, param_type, actual_type):
    raise OpParamError(f"{op_name}: the dtype of {param_name} should be {param_type}, got "
                       f"{actual_type}")


def raise_err_inputs_dtype_not_equal(op_name, param_name1, param_name2, param1_dtype,
                                     param2_dtype):
    raise OpParamError(f"{op_name}: the dtypes of {param_name1} ({param1_dtype}) and "
                       f"{param_name2} ({param2_dtype}) must be equal")


def raise_err_input_shape_invalid(op_name, param_name, error_detail):
    raise OpParamError(f"{op_name}: the shape of {param_name} is invalid: {error_detail}")


raise_err_input_shpae_invalid = raise_err_input_shape_invalid


def raise_err_two_input_shape_invalid(op_name, param_name1, param_name2, error_detail):
    raise OpParamError(f"{op_name}: the shapes of {param_name1} and {param_name2} are "
                       f"invalid: {error_detail}")


raise_err_two_input_shpae_invalid = raise_err_two_input_shape_invalid


def raise_err_two_input_dtype_invalid(op_name, param_name1, param_name2, error_detail):
    raise OpParamError(f"{op_name}: the dtypes of {param_name1} and {param_name2} are "
                       f"invalid: {error_detail}")


def raise_err_input_param_range_invalid(op_name, param_name, min_value, max_value,
                                        real_value):
    raise OpParamError(f"{op_name}: {param_name} must be in [{min_value}, {max_value}], "
                       f"got {real_value}")


def raise_err_specific_reson(op_name, reason):
    raise OpParamError(f"{op_name}: {reason}")


raise_err_specific_reason = raise_err_specific_reson


def __getattr__(name):
    if name.startswith("raise_err_"):
        return lambda *args: _raise(name, *args)
    raise AttributeError(name)


#: ``from te.utils.error_manager import error_manager_vector`` / ``error_manager_util``
error_manager_vector = sys.modules[__name__]
error_manager_util = sys.modules[__name__]

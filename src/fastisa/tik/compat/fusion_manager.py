"""``te.platform.fusion_manager``: the ``@fusion_manager.register("op")`` decorator.

In CANN it registers a TVM compute function for operator fusion (caffe-huawei-atlas-convertor
``convertor/huawei/te/platform/fusion_manager.py``); no fusion happens on fastisa, so the
decorator records the function under the op name and returns it unchanged.
"""
from __future__ import annotations

__all__ = ["fusion_manager", "FusionManager", "get_fusion_build_cfg"]


class FusionManager:
    """The ``fusion_manager`` singleton: ``register(op_type)`` and the queries operators
    make (``get_build_cfg`` -> "enable", ``get_op_build_type``, ``get_current_op_name``)."""

    def __init__(self):
        self.registered: dict[str, object] = {}
        self._op_name = ""

    def register(self, register_name):
        """``@fusion_manager.register("add")``: record and return the compute function."""
        def deco(func):
            self.registered[str(register_name)] = func
            return func
        return deco

    def has_op_compute(self, op_type):
        return op_type in self.registered

    def get_op_compute(self, op_type, *args, **kwargs):
        return self.registered[op_type]

    def get_build_cfg(self):
        return "enable"

    def set_build_cfg(self, cfg):
        return None

    def get_op_build_type(self, *args, **kwargs):
        return ""

    def set_current_op_name(self, name):
        self._op_name = name

    def get_current_op_name(self):
        return self._op_name

    def set_op_res(self, res):
        return None

    def get_op_res(self, *args, **kwargs):
        return None


fusion_manager = FusionManager()


def get_fusion_build_cfg():
    return fusion_manager.get_build_cfg()

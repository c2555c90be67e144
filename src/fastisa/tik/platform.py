"""The TIK target chip: what ``te.platform`` / ``tbe.common.platform`` set and report.

:mod:`fastisa.shim` maps ``te.platform``, ``te.platform.cce_conf``,
``tbe.common.platform`` and ``tbe.common.platform.platform_info`` to this module, so the
calls real kernels make to pick a chip work unchanged::

    from te import platform as tbe_platform
    tbe_platform.te_set_version("Ascend910")            # or set_current_compile_soc_info
    tbe_platform.cce_conf.api_check_support("tik.vdiv", "float32")
    tbe_platform.get_soc_spec("UB_SIZE")

The target decides (the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/)):

* the dtypes each instruction accepts (:func:`api_check_support`);
* whether ``mask_mode="counter"`` exists (not on Ascend 310/910: there it is treated
  as normal mode, as the TIK docs say);
* the float16 overflow mode: saturation (inf -> +-65504, NaN -> 0) on Ascend 310, 910,
  310P and 310B (200I/500 A2); IEEE inf/NaN on the A2/A3 training chips (910B, 910_93);
* the buffer sizes (UB 256 KiB except A2/A3: 192 KiB; L1 1 MiB / 512 KiB).

The default target is ``Ascend910``.  :func:`set_target` changes it for ``Tik``
instances created afterwards (each ``Tik`` keeps the target it was created with).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

__all__ = [
    "Target", "TARGETS", "set_target", "get_target", "te_set_version",
    "set_current_compile_soc_info", "get_soc_spec", "api_check_support",
    "intrinsic_check_support", "Dprofile", "cce_conf", "SOC_VERSION", "SHORT_SOC_VERSION",
    "FULL_SOC_VERSION", "UB_SIZE", "L1_SIZE", "CORE_NUM", "ASCEND_310", "ASCEND_910",
    "ASCEND_310P", "ASCEND_910B",
]

SOC_VERSION = "SOC_VERSION"
SHORT_SOC_VERSION = "SHORT_SOC_VERSION"
FULL_SOC_VERSION = "FULL_SOC_VERSION"
UB_SIZE = "UB_SIZE"
L1_SIZE = "L1_SIZE"
CORE_NUM = "CORE_NUM"
ASCEND_310 = "Ascend310"
ASCEND_910 = "Ascend910"
ASCEND_310P = "Ascend310P"
ASCEND_910B = "Ascend910B"

_F16, _F32, _I16, _I32, _U16 = "float16", "float32", "int16", "int32", "uint16"
_U32, _I8, _U8 = "uint32", "int8", "uint8"


def _dtype_table(family: str) -> dict[str, tuple[str, ...]]:
    """Per-instruction dtypes (of dst) for a chip family (the TIK source and its CPU debugger (github.com/jizhuoran/caffe-huawei-atlas-convertor, convertor/huawei/te/tik/))."""
    v100 = family == "v100"
    arith = (_F16, _F32) if v100 else (_F16, _I16, _F32, _I32)
    binary = (_F16, _F32, _I32) if v100 else (_F16, _I16, _F32, _I32)
    t = {}
    for n in ("vec_adds", "vec_muls", "vadds", "vmuls"):
        t[n] = arith
    for n in ("vmaxs", "vmins"):
        t[n] = () if v100 else (_F16, _I16, _F32, _I32)
    for n in ("vec_axpy", "vaxpy"):
        t[n] = (_F16, _F32)  # plus fmix fp16 -> fp32, checked by the instruction
    for b in ("add", "sub", "mul", "max", "min"):
        t["vec_" + b] = t["v" + b] = binary
    t["vec_div"] = t["vdiv"] = (_F16, _F32)
    for b in ("and", "or", "not"):
        t["vec_" + b] = t["v" + b] = (_U16, _I16)
    t["vec_abs"] = t["vabs"] = (_F16, _F32)
    t["vec_exp"] = t["vexp"] = (_F16,) if family == "v100mini" else (_F16, _F32)
    for u in ("ln", "rec", "rsqrt", "sqrt"):
        t["vec_" + u] = t["v" + u] = (_F16, _F32)
    t["vec_relu"] = t["vrelu"] = (_F16,) if v100 else (_F16, _F32, _I32)
    t["vec_dup"] = t["vector_dup"] = (_U16, _I16, _F16, _U32, _I32, _F32)
    for r in ("vec_reduce_add", "vec_reduce_max", "vec_reduce_min", "vcadd", "vcmax", "vcmin"):
        t[r] = (_F16, _F32)
    t["vec_conv"] = t["vconv"] = (_F16, _F32, _I32, _I8, _U8)
    t["data_move"] = (_U8, _I8, _U16, _I16, _F16, _U32, _I32, _F32, "uint64", "int64")
    return t


@dataclass(frozen=True)
class Target:
    """One chip: name, family, float16 overflow mode, counter mode, buffer sizes."""

    name: str
    short: str
    family: str                 #: "v100" (310/910), "v200" (310P), "a2" (910B/910_93), "a2i" (310B)
    saturation: bool            #: float16 results saturate (inf -> +-max, NaN -> 0)
    counter_mode: bool          #: mask_mode="counter" exists (else treated as normal mode)
    ub_size: int                #: Unified Buffer bytes
    l1_size: int                #: L1 (scope_cbuf) bytes
    core_num: int
    dtypes: dict = field(default_factory=dict, repr=False)

    def supports(self, instr: str, dtype: str) -> bool:
        return dtype in self.dtypes.get(instr, ())


def _t(name, short, family, sat, counter, ub, l1, cores):
    fam_table = "v100mini" if name == "Ascend310" else family
    tab = _dtype_table("v100" if fam_table == "v100mini" else fam_table)
    if fam_table == "v100mini":
        tab["vec_exp"] = tab["vexp"] = (_F16,)
    return Target(name, short, family, sat, counter, ub, l1, cores, tab)


#: Known targets (aliases map to the same entry).
TARGETS: dict[str, Target] = {}
for _tg in (
    _t("Ascend310", "Ascend310", "v100", True, False, 256 * 1024, 1024 * 1024, 2),
    _t("Ascend910", "Ascend910", "v100", True, False, 256 * 1024, 1024 * 1024, 32),
    _t("Ascend310P", "Ascend310P", "v200", True, True, 256 * 1024, 1024 * 1024, 8),
    _t("Ascend310B", "Ascend310B", "a2i", True, True, 256 * 1024, 1024 * 1024, 1),
    _t("Ascend910B", "Ascend910B", "a2", False, True, 192 * 1024, 512 * 1024, 24),
    _t("Ascend910_93", "Ascend910_93", "a2", False, True, 192 * 1024, 512 * 1024, 24),
):
    TARGETS[_tg.name] = _tg
for _alias, _base in {"Ascend910A": "Ascend910", "Ascend910ProA": "Ascend910",
                      "Ascend910ProB": "Ascend910", "Ascend910PremiumA": "Ascend910",
                      "Ascend310P1": "Ascend310P", "Ascend310P3": "Ascend310P",
                      "Ascend910B1": "Ascend910B", "Ascend910B2": "Ascend910B",
                      "Ascend910B3": "Ascend910B", "Ascend910B4": "Ascend910B",
                      "Ascend910_9391": "Ascend910_93", "Ascend910_9392": "Ascend910_93",
                      "Ascend310B1": "Ascend310B", "Ascend310B4": "Ascend310B"}.items():
    TARGETS[_alias] = replace(TARGETS[_base], name=_alias)

_current: Target = TARGETS["Ascend910"]


def set_target(name: str, *, ub_size: int | None = None, l1_size: int | None = None) -> Target:
    """Select the chip later ``Tik()`` instances simulate (e.g. ``"Ascend910B"``).

    ``ub_size``/``l1_size`` (bytes) override the chip's buffer sizes.
    Raises ``ConstraintError`` for an unknown name.
    """
    global _current
    from ..errors import ConstraintError
    if isinstance(name, Target):
        tg = name
    else:
        if name not in TARGETS:
            raise ConstraintError(f"set_target: soc_version must be one of "
                                  f"{sorted(TARGETS)}, got {name!r}")
        tg = TARGETS[name]
    if ub_size is not None:
        tg = replace(tg, ub_size=int(ub_size))
    if l1_size is not None:
        tg = replace(tg, l1_size=int(l1_size))
    _current = tg
    return tg


def get_target() -> Target:
    """The current target (the one a new ``Tik()`` uses)."""
    return _current


def te_set_version(soc_version: str, core_type: str = "AiCore", *args, **kwargs) -> bool:
    """``te.platform.te_set_version``: select the chip (see :func:`set_target`)."""
    set_target(soc_version)
    return True


def set_current_compile_soc_info(soc_version: str, core_type: str = "AiCore",
                                 aicore_num=None, l1_fusion=None, *args, **kwargs) -> str:
    """``tbe.common.platform.set_current_compile_soc_info``: select the chip."""
    set_target(soc_version)
    return "success"


def get_soc_spec(key: str):
    """``get_soc_spec("SOC_VERSION" | "SHORT_SOC_VERSION" | "UB_SIZE" | "L1_SIZE" | "CORE_NUM")``."""
    t = _current
    table = {SOC_VERSION: t.name, FULL_SOC_VERSION: t.name, SHORT_SOC_VERSION: t.short,
             UB_SIZE: t.ub_size, L1_SIZE: t.l1_size, CORE_NUM: t.core_num,
             "AICORE_TYPE": "AiCore", "CUBE_CORE_CNT": t.core_num,
             "VECTOR_CORE_CNT": t.core_num}
    if key not in table:
        from ..errors import ConstraintError
        raise ConstraintError(f"get_soc_spec: key must be one of {sorted(table)}, got {key!r}")
    return table[key]


def api_check_support(intrinsic: str, dtype: str = "") -> bool:
    """``cce_conf.api_check_support("tik.vdiv", "float32")``: does the current chip support it."""
    name = intrinsic.split(".", 1)[1] if intrinsic.startswith(("tik.", "te.")) else intrinsic
    t = _current
    if name not in t.dtypes:
        return False
    return True if not dtype else t.supports(name, str(dtype))


def intrinsic_check_support(intrinsic: str, dtype: str = "") -> bool:
    """``intrinsic_check_support("Intrinsic_vdiv", "float32")``."""
    name = intrinsic[len("Intrinsic_"):] if intrinsic.startswith("Intrinsic_") else intrinsic
    return api_check_support(name, dtype)


class Dprofile:
    """Legacy ``tik.Dprofile(ai_core_arch, ai_core_version)``: ``("v100", "mini")`` is
    Ascend310, ``("v100", "cloud")`` Ascend910, ``("v200", ...)`` Ascend310P.  Passing
    one to ``tik.Tik(...)`` selects that chip for the instance."""

    _MAP = {("v100", "mini"): "Ascend310", ("v100", "cloud"): "Ascend910",
            ("v200", "aic"): "Ascend310P", ("v200", "lhisi"): "Ascend310P",
            ("v200", "mini"): "Ascend310P", ("v200", "cloud"): "Ascend310P"}

    def __init__(self, ai_core_arch: str | None = None, ai_core_version: str | None = None,
                 ddk_version: str | None = None):
        if ai_core_arch is None:
            self.target = _current
        else:
            key = (str(ai_core_arch).lower(), str(ai_core_version or "cloud").lower())
            self.target = TARGETS[self._MAP.get(key, "Ascend910")]

    def get_aicore_num(self) -> int:
        return self.target.core_num

    def get_unified_buffer_size(self) -> int:
        return self.target.ub_size

    def get_l1_buffer_size(self) -> int:
        return self.target.l1_size

    def get_product_name(self) -> str:
        return self.target.name


class _CceConf:
    """``te.platform.cce_conf`` attribute access on the module object."""

    def __getattr__(self, name):
        return globals()[name]


#: ``from te import platform; platform.cce_conf.api_check_support(...)``
cce_conf = _CceConf()

#: ``from tbe.common.platform import platform_info`` (the same functions)
import sys as _sys  # noqa: E402

platform_info = _sys.modules[__name__]

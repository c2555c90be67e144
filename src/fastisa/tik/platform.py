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
    t["vmla"] = (_F16, _F32)   # Intrinsic_vmla f16f16f16, f32f32f32 (f32f16f16: not yet)
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
    # ---- tik-isa: compare/select, transpose (platform_config/<soc>.ini Intrinsic_* rows
    # of the 2020 ATC copy in caffe-huawei-atlas-convertor; Ascend 310: float16 only) ----
    for c in ("eq", "ne", "lt", "gt", "le", "ge"):
        t["vcmp_" + c] = t["vcmpv_" + c] = t["vec_cmpv_" + c] = (_F16, _F32)
        if not v100:
            t["vcmpvs_" + c] = (_F16, _F32)
    t["vsel"] = t["vec_sel"] = (_F16, _F32)
    t["vtranspose"] = t["vec_trans"] = (_U16, _I16, _F16)
    t["vnchwconv"] = t["vec_trans_scatter"] = ((_I8, _U8, _I16, _U16, _F16) if v100 else
                                               (_I8, _U8, _I16, _U16, _F16, _I32, _U32, _F32))
    t["vconcat"] = t["vextract"] = (_F16,) if v100 else (_F16, _F32)
    # region-proposal sorts: platform_config Ascend310/910.ini Intrinsic_vbitsort (vrpsort16)
    # and Intrinsic_vmrgsort4 float16; Ascend610/620 (v200) float16, float32; not on A2/A3
    # (the Ascend C RpSort16/MrgSort4 pages list no Atlas A2/A3 support)
    if family in ("v100", "v100mini"):
        t["vrpsort16"] = t["vmrgsort4"] = (_F16,)
    elif family == "v200":
        t["vrpsort16"] = t["vmrgsort4"] = (_F16, _F32)
    for n in ("vcgadd", "vcgmax", "vcgmin", "vcpadd"):
        t[n] = (_F16,) if v100 else (_F16, _F32)
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
        for k in [k for k in tab if k.startswith(("vcmp", "vec_cmpv", "vsel", "vec_sel"))]:
            tab[k] = (_F16,)   # tik-isa: Ascend310.ini lists float16 only
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


def set_target(name: str, *, ub_size: int | None = None, l1_size: int | None = None,
               allow_unknown: bool = True) -> Target:
    """Select the chip later ``Tik()`` instances simulate (e.g. ``"Ascend910B"``).

    ``ub_size``/``l1_size`` (bytes) override the chip's buffer sizes.
    A name fastisa has no table for is accepted as CANN accepts the SoCs its platform
    files list (issue 18 B10), simulated with the Ascend310P rules and a RuntimeWarning;
    ``allow_unknown=False`` makes it a ``ConstraintError`` instead.  A non-str or empty
    name raises ``ConstraintError``.
    """
    global _current
    from ..errors import ConstraintError
    if isinstance(name, Target):
        tg = name
    else:
        if not isinstance(name, str) or not name:
            raise ConstraintError(f"set_target: soc_version must be a non-empty str, "
                                  f"got {name!r}")
        if name not in TARGETS and not allow_unknown:
            raise ConstraintError(f"set_target: soc_version must be one of "
                                  f"{sorted(TARGETS)}, got {name!r}")
        tg = TARGETS.get(name) or _unknown_target(name)
    if ub_size is not None:
        tg = replace(tg, ub_size=int(ub_size))
    if l1_size is not None:
        tg = replace(tg, l1_size=int(l1_size))
    _current = tg
    return tg


def _unknown_target(name: str) -> Target:
    """A SoC name fastisa has no table for (e.g. ``"BS9SX1AA"``, which Ascend/samples'
    ``softmax_tik.py`` selects): accepted, as CANN's ``set_current_compile_soc_info``
    accepts every SoC its installed platform files list, simulated with the Ascend310P
    (v200) vector rules and buffer sizes, with a RuntimeWarning saying so."""
    import warnings
    warnings.warn(f"set_target: SoC {name!r} is not known to fastisa; simulating it with "
                  f"the Ascend310P (v200) dtypes, counter mode, float16 saturation and "
                  f"buffer sizes", RuntimeWarning, stacklevel=3)
    return replace(TARGETS["Ascend310P"], name=name, short=name)


def get_target() -> Target:
    """The current target (the one a new ``Tik()`` uses)."""
    return _current


def te_set_version(soc_version: str, core_type: str = "AiCore", *args, **kwargs) -> bool:
    """``te.platform.te_set_version``: select the chip (see :func:`set_target`)."""
    set_target(soc_version, allow_unknown=True)
    return True


def set_current_compile_soc_info(soc_version: str, core_type: str = "AiCore",
                                 aicore_num=None, l1_fusion=None, *args, **kwargs) -> str:
    """``tbe.common.platform.set_current_compile_soc_info``: select the chip."""
    set_target(soc_version, allow_unknown=True)
    return "success"


def get_soc_spec(key: str):
    """``get_soc_spec("SOC_VERSION" | "SHORT_SOC_VERSION" | "UB_SIZE" | "L1_SIZE" | "CORE_NUM")``."""
    t = _current
    table = {SOC_VERSION: t.name, FULL_SOC_VERSION: t.name, SHORT_SOC_VERSION: t.short,
             UB_SIZE: t.ub_size, L1_SIZE: t.l1_size, CORE_NUM: t.core_num,
             "AICORE_TYPE": "AiCore", "CUBE_CORE_CNT": t.core_num,
             "VECTOR_CORE_CNT": t.core_num, "UB_BLOCK_SIZE": 32,
             # the cube buffers of the Ascend 310/910 generation (TIK docs: L0A/L0B 64 KiB,
             # L0C 256 KiB); fastisa has no cube path, operators only size tiles by them
             "L0A_SIZE": 65536, "L0B_SIZE": 65536, "L0C_SIZE": 262144}
    if key not in table:
        from ..errors import ConstraintError
        raise ConstraintError(f"get_soc_spec: key must be one of {sorted(table)}, got {key!r}")
    return table[key]


#: TIK's dtype abbreviations and round-mode suffixes in vconv codes such as "f322s32r"
#: (caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/tik_lib/tik_api_constants.py``,
#: DTYPE_MAP and ROUND_MODE_MAP; ``vconv`` checks ``Intrinsic_vconv`` with
#: src + "2" + dst + round suffix)
_DT_ABBR = {"uint8": "u8", "int8": "s8", "uint16": "u16", "int16": "s16", "float16": "f16",
            "uint32": "u32", "int32": "s32", "float32": "f32", "uint64": "u64",
            "int64": "s64"}
_ROUND_SUFFIX = {"": "", "none": "", "round": "r", "floor": "f", "ceil": "c", "ceiling": "c",
                 "away-zero": "a", "to-zero": "z", "odd": "o"}


def _conv_codes() -> set[str]:
    """The vconv codes fastisa runs: every (src, dst, round_mode) vec_conv accepts."""
    from ._vector import _CONV
    codes = {_DT_ABBR[s] + "2" + _DT_ABBR[d] + _ROUND_SUFFIX[r]
             for (s, d), modes in _CONV.items() for r in modes}
    return codes


def api_check_support(intrinsic: str, dtype: str = "") -> bool:
    """``cce_conf.api_check_support("tik.vdiv", "float32")``: does the current chip support it.

    ``dtype`` is a dtype name, or for ``tik.vconv``/``tik.vec_conv`` a conversion code
    ``<src>2<dst><round>`` ("f322f16", "f162s32r", "s322f32"): True when fastisa runs that
    conversion on the current chip (vec_conv's table).  Non-str arguments raise
    ConstraintError (CANN raises RuntimeError)."""
    from ..errors import ConstraintError
    if not isinstance(intrinsic, str) or not isinstance(dtype, str):
        raise ConstraintError(f"api_check_support: intrinsic and dtype must be str, got "
                              f"{intrinsic!r}, {dtype!r}")
    name = intrinsic.split(".", 1)[1] if intrinsic.startswith(("tik.", "te.")) else intrinsic
    t = _current
    if name not in t.dtypes:
        return False
    if name in ("vconv", "vec_conv") and dtype and dtype not in _DT_ABBR:
        return dtype in _conv_codes()
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

#: scope names as ``te.platform`` exports them (``tbe_platform.scope_ubuf``)
scope_gm = "global"
scope_ubuf = "local.UB"
scope_cbuf = "local.L1"
scope_cbuf_out = "local.L0C"   # TIK tik_params.py: "new SCOPE_CBUF_OUT, actual scope_cc"
scope_ca = "local.L0A"
scope_cb = "local.L0B"
scope_cc = "local.L0C"
scope_reg = "local.REG"
scope_aicpu = "local_aicpu"
L1_SIZE_KEY = L1_SIZE

#: submodules of te.platform operators reach as attributes (``tbe_platform.cce_params``)
_LAZY = {"cce_params": "cce_params", "fusion_manager": "fusion_manager",
         "cce_intrin": "cce_misc", "cce_build": "cce_misc", "insn_cmd": "cce_misc",
         "cce_intrin_md": "cce_misc", "cce_runtime": "cce_misc"}


def __getattr__(name):
    import importlib
    if name in _LAZY:
        return importlib.import_module(f"fastisa.tik.compat.{_LAZY[name]}")
    if name in ("get_bit_len", "build_config", "cce_build_code"):
        return getattr(importlib.import_module("fastisa.tik.compat.cce_misc"), name)
    raise AttributeError(f"module 'te.platform' (fastisa) has no attribute {name!r}")


class CceProductParams:
    """``te.platform.cce_conf.CceProductParams().get_params("...")``: the current chip's
    product parameters (``getValue``/``get_params`` of the keys get_soc_spec knows)."""

    def __init__(self):
        self.cce_product = get_product_version()

    #: the legacy product-parameter names -> get_soc_spec keys
    _LEGACY = {"Unified_Buffer": UB_SIZE, "L1_Buffer": L1_SIZE, "Device_core_num": CORE_NUM,
               "Core_num": CORE_NUM, "L0A_Buffer": "L0A_SIZE", "L0B_Buffer": "L0B_SIZE",
               "L0C_Buffer": "L0C_SIZE"}

    def get_params(self, key, *args):
        return get_soc_spec(self._LEGACY.get(key, key))

    getValue = getParams = get_params


def get_product_version() -> str:
    """"mini", "cloud" or another family name for the current chip."""
    n = _current.name
    if n.startswith("Ascend910"):
        return "cloud"
    if n == "Ascend310":
        return "mini"
    return _current.family

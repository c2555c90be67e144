"""Every documented constraint of the compare/select and transpose families raises the
fastisa error naming the instruction, parameter and value (at record time for immediates,
at run time for Scalars), and a call that raises changes nothing."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import tik
from fastisa.errors import AccessError, AlignmentError, ConstraintError, OverlapError
from fastisa.tik import platform


def _tk(target="Ascend910B"):
    platform.set_target(target)
    tk = tik.Tik()
    platform.set_target("Ascend910")
    h = {n: tk.Tensor("float16", (512,), name=n) for n in ("a", "b", "c")}
    h["f"] = tk.Tensor("float32", (256,), name="f")
    h["bits"] = tk.Tensor("uint8", (64,), name="bits")
    h["u64"] = tk.Tensor("uint64", (4,), name="u64")
    h["gm"] = tk.Tensor("float16", (512,), name="gm", scope=tik.scope_gm)
    return tk, h


def L(h, k, step=16):
    return [h[k][step * i] for i in range(16)]


CASES = [
    # ---- vcmp ----
    ("vcmp dtype", "Ascend910", lambda tk, h: tk.vcmp_eq(128, h["a"], h["f"], 1, 1),
     ConstraintError, "src0's dtype should be equal to src1's dtype"),
    ("vcmp f32 on 310", "Ascend310", lambda tk, h: tk.vcmp_lt(64, h["f"], h["f"], 1, 1),
     ConstraintError, "dtype float32 is not supported on Ascend310"),
    ("vcmp mask", "Ascend910", lambda tk, h: tk.vcmp_gt(129, h["a"], h["b"], 1, 1),
     ConstraintError, "mask value should be in the range of [1, 128]"),
    ("vcmp mask_h b32", "Ascend910", lambda tk, h: tk.vcmp_gt([1, 1], h["f"], h["f"], 1, 1),
     ConstraintError, "mask_h should be 0 for b32"),
    ("vcmp blk", "Ascend910", lambda tk, h: tk.vcmp_ge(128, h["a"], h["b"], 65536, 1),
     ConstraintError, "src0_blk_stride should be in the range of [0, 65535]"),
    ("vcmp scope", "Ascend910", lambda tk, h: tk.vcmp_ne(128, h["gm"], h["b"], 1, 1),
     ConstraintError, "src0 scope should be ub"),
    ("vcmp align", "Ascend910", lambda tk, h: tk.vcmp_ne(128, h["a"][3], h["b"], 1, 1),
     AlignmentError, "is not 32 align"),
    ("vcmp extent", "Ascend910", lambda tk, h: tk.vcmp_le(128, h["a"][448], h["b"], 1, 1),
     AccessError, "tensor overflow"),
    # ---- vcmpv / vcmpvs ----
    ("vcmpv dst dtype", "Ascend910",
     lambda tk, h: tk.vcmpv_eq(h["c"], h["a"], h["b"], 1, 1, 1, 8, 8),
     ConstraintError, "dst dtype should be one of"),
    ("vcmpv repeat", "Ascend910",
     lambda tk, h: tk.vcmpv_eq(h["bits"], h["a"], h["b"], 256, 1, 1, 8, 8),
     ConstraintError, "repeat_times should be in the range of [0, 255]"),
    ("vcmpv repeat 0", "Ascend910",
     lambda tk, h: tk.vcmpv_eq(h["bits"], h["a"], h["b"], 0, 1, 1, 8, 8),
     ConstraintError, "immediate 0 is not supported"),
    ("vcmpv blk", "Ascend910",
     lambda tk, h: tk.vcmpv_eq(h["bits"], h["a"], h["b"], 1, 256, 1, 8, 8),
     ConstraintError, "src0_blk_stride should be in the range of [0, 255]"),
    ("vcmpv rep", "Ascend910",
     lambda tk, h: tk.vcmpv_lt(h["bits"], h["a"], h["b"], 1, 1, 1, 8, 256),
     ConstraintError, "src1_rep_stride should be in the range of [0, 255]"),
    ("vcmpv dst extent", "Ascend910",
     lambda tk, h: tk.vcmpv_lt(h["bits"][32], h["a"], h["b"], 3, 1, 1, 0, 0),
     AccessError, "dst tensor overflow"),
    ("vcmpv src extent", "Ascend910",
     lambda tk, h: tk.vcmpv_lt(h["bits"], h["a"], h["b"], 5, 1, 1, 8, 8),
     AccessError, "tensor overflow"),
    ("vcmpv overlap", "Ascend910",
     lambda tk, h: tk.vcmpv_gt(h["a"].reinterpret_cast_to("uint8"), h["a"], h["b"], 1, 1, 1,
                               8, 8),
     OverlapError, "dst and src0 address overlapping"),
    ("vcmpvs on v100", "Ascend910",
     lambda tk, h: tk.vcmpvs_gt(h["bits"], h["a"], 1.0, 1, 1, 8),
     ConstraintError, "not supported on Ascend910"),
    ("vcmpvs scalar", "Ascend910B",
     lambda tk, h: tk.vcmpvs_gt(h["bits"], h["a"], "x", 1, 1, 8),
     ConstraintError, "scalar must be an int/float immediate or a Scalar"),
    # ---- vsel ----
    ("vsel mode range", "Ascend910B",
     lambda tk, h: tk.vsel(128, 3, h["c"], h["bits"], h["a"], h["b"], 1, 1, 1, 1, 8, 8, 8),
     ConstraintError, "mode should be in the range of [0, 2]"),
    ("vsel mode v100", "Ascend910",
     lambda tk, h: tk.vsel(128, 2, h["c"], h["bits"], h["a"], h["b"], 1, 1, 1, 1, 8, 8, 8),
     ConstraintError, "v100 doesn't support mode 2"),
    ("vsel mode0 sel", "Ascend910",
     lambda tk, h: tk.vsel(128, 0, h["c"], h["bits"], h["a"], h["b"], 1, 1, 1, 1, 8, 8, 8),
     ConstraintError, "Please assure sel is cmpmask"),
    ("vsel mode1 src1", "Ascend910B",
     lambda tk, h: tk.vsel(128, 1, h["c"], h["bits"], h["a"], h["b"], 1, 1, 1, 1, 8, 8, 8),
     ConstraintError, "when mode is 1, src1 should be int, float or Scalar"),
    ("vsel mode2 src1", "Ascend910B",
     lambda tk, h: tk.vsel(128, 2, h["c"], h["bits"], h["a"], 1.0, 1, 1, 1, 1, 8, 8, 8),
     ConstraintError, "when mode isn't 1, src1 should be tensor"),
    ("vsel sel dtype", "Ascend910B",
     lambda tk, h: tk.vsel(128, 2, h["c"], h["a"], h["a"], h["b"], 1, 1, 1, 1, 8, 8, 8),
     ConstraintError, "sel dtype should be one of"),
    ("vsel dtype", "Ascend910B",
     lambda tk, h: tk.vsel(64, 2, h["f"], h["bits"], h["a"], h["b"], 1, 1, 1, 1, 8, 8, 8),
     ConstraintError, "dtype should be equal to dst's dtype"),
    ("vsel blk", "Ascend910",
     lambda tk, h: tk.vsel(128, 0, h["c"], tk.mov_tensor_to_cmpmask(h["u64"]), h["a"], h["b"],
                           1, 256, 1, 1, 8, 8, 8),
     ConstraintError, "dst_blk_stride should be in the range of [0, 255]"),
    ("vsel sel extent", "Ascend910B",
     lambda tk, h: tk.vsel(128, 2, h["c"], h["bits"][32], h["a"], h["b"], 3, 1, 1, 1, 0, 0, 0),
     AccessError, "sel tensor overflow"),
    ("vsel sel overlap", "Ascend910B",
     lambda tk, h: tk.vsel(128, 2, h["c"], h["c"].reinterpret_cast_to("uint8"), h["a"],
                           h["b"], 1, 1, 1, 1, 8, 8, 8),
     OverlapError, "dst and sel address overlapping"),
    ("vsel dst overlap", "Ascend910",
     lambda tk, h: tk.vsel(128, 0, h["a"][16], tk.mov_tensor_to_cmpmask(h["u64"]), h["a"],
                           h["b"], 1, 1, 1, 1, 8, 8, 8),
     OverlapError, "address overlapping"),
    ("mov_cmpmask_to_tensor handle", "Ascend910",
     lambda tk, h: tk.mov_cmpmask_to_tensor(h["u64"], h["u64"]),
     ConstraintError, "src_cmpmask is error"),
    ("mov_cmpmask_to_tensor dtype", "Ascend910",
     lambda tk, h: tk.mov_cmpmask_to_tensor(h["a"], tk.mov_tensor_to_cmpmask(h["u64"])),
     ConstraintError, "dst dtype should be one of"),
    # ---- vnchwconv / vec_trans_scatter ----
    ("vnchwconv bool", "Ascend910",
     lambda tk, h: tk.vnchwconv(0, False, L(h, "c"), L(h, "a"), 1, 0, 0),
     ConstraintError, "dst_high_half should be bool"),
    ("vnchwconv list len", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "c")[:15], L(h, "a"), 1, 0, 0),
     ConstraintError, "there should be 16 addresses in dst_list"),
    ("vnchwconv list type", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, h["c"], L(h, "a"), 1, 0, 0),
     ConstraintError, "dst_list should be tuple or list"),
    ("vnchwconv dtype", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "c"), [h["f"][0]] * 16, 1, 0, 0),
     ConstraintError, "src's dtype should be equal to dst's dtype"),
    ("vnchwconv b32 on v100", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, [h["f"][0]] * 16, [h["f"][8]] * 16, 1, 0, 0),
     ConstraintError, "dtype float32 is not supported on Ascend910"),
    ("vnchwconv repeat", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "c"), L(h, "a"), 256, 0, 0),
     ConstraintError, "repeat_times should be in the range of [0, 255]"),
    ("vnchwconv rep stride", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "c"), L(h, "a"), 1, 65536, 0),
     ConstraintError, "dst_rep_stride should be in the range of [0, 65535]"),
    ("vnchwconv align", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "c"), [h["a"][1]] + L(h, "a")[1:], 1, 0, 0),
     AlignmentError, "is not 32 align"),
    ("vnchwconv extent", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "c"), L(h, "a"), 3, 0, 16),
     AccessError, "overflow"),
    ("vnchwconv repeat-1 shift", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "c", 16), L(h, "a", 16), 1, 0, 17),
     AccessError, "overflow"),
    ("vnchwconv partial overlap", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, L(h, "a"), L(h, "a", 16)[1:] + [h["b"][0]], 1,
                                0, 0),
     OverlapError, "same blocks (in place) or disjoint"),
    ("vnchwconv dependency", "Ascend910",
     lambda tk, h: tk.vnchwconv(False, False, [h["a"][16 * i + 256] for i in range(16)],
                                L(h, "a"), 2, 0, 16),
     OverlapError, "destination is the source of a later iteration"),
    ("vec_trans_scatter name", "Ascend910",
     lambda tk, h: tk.vec_trans_scatter(False, False, L(h, "c"), L(h, "a"), 256, 0, 0),
     ConstraintError, "vec_trans_scatter: repeat_times"),
    # ---- vtranspose / vec_trans ----
    ("vtranspose dtype", "Ascend910",
     lambda tk, h: tk.vtranspose(h["f"], h["f"]), ConstraintError, "u16u16, s16s16 or f16f16"),
    ("vtranspose extent", "Ascend910",
     lambda tk, h: tk.vtranspose(h["c"][384], h["a"]), AccessError, "tensor overflow"),
    ("vtranspose overlap", "Ascend910",
     lambda tk, h: tk.vtranspose(h["a"][16], h["a"]), OverlapError,
     "not support partially address overlapping"),
    ("vec_trans repeat", "Ascend910",
     lambda tk, h: tk.vec_trans(h["c"], h["a"], 4096, 1, 1), ConstraintError,
     "repeat_times should be in the range of [1, 4095]"),
    ("vec_trans stride", "Ascend910",
     lambda tk, h: tk.vec_trans(h["c"], h["a"], 1, 4096, 1), ConstraintError,
     "dst_rep_stride should be in the range of [0, 4095]"),
    ("vec_trans extent", "Ascend910",
     lambda tk, h: tk.vec_trans(h["c"], h["a"], 3, 1, 1), AccessError, "tensor overflow"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_constraint(case):
    _, target, call, exc, msg = case
    tk, h = _tk(target)
    with pytest.raises(exc) as e:
        call(tk, h)
    assert msg in str(e.value), str(e.value)


def test_runtime_checks_and_nothing_changed():
    """A Scalar repeat count out of range raises when the program runs, before any
    write; the destination keeps its contents."""
    platform.set_target("Ascend910")
    tk = tik.Tik()
    gm = tk.Tensor("uint8", (64,), name="gm", scope=tik.scope_gm)
    out = tk.Tensor("uint8", (64,), name="out", scope=tik.scope_gm)
    a = tk.Tensor("float16", (512,), name="a")
    bits = tk.Tensor("uint8", (64,), name="bits")
    n = tk.Scalar("int32", "n", init_value=300)
    tk.data_move(bits, gm, 0, 1, 2, 0, 0)
    tk.vcmpv_eq(bits, a, a, n, 1, 1, 8, 8)
    tk.BuildCCE("k", [gm], [out])
    with pytest.raises(ConstraintError, match="vcmpv_eq: repeat_times should be in the range"):
        tk.tikdb.start_debug({"gm": np.zeros(64, np.uint8)}, interactive=False)


def test_cmpmask_starts_at_zero_every_run():
    platform.set_target("Ascend910")
    tk = tik.Tik()
    gm = tk.Tensor("uint64", (2,), name="gm", scope=tik.scope_gm)
    out = tk.Tensor("uint64", (2,), name="out", scope=tik.scope_gm)
    u = tk.Tensor("uint64", (4,), name="u")
    tk.mov_cmpmask_to_tensor(u, tk.mov_tensor_to_cmpmask(u) if False else
                             tk.vcmp_eq([0, 1], tk.Tensor("float16", (16,), name="z"),
                                        tk.Tensor("float16", (16,), name="z2"), 0, 0))
    tk.data_move(out, u, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [gm], [out])
    r = tk.tikdb.start_debug({"gm": np.zeros(2, np.uint64)}, interactive=False)[0]
    # lane 0 of two equal fill patterns (0xA5A5 == 0xA5A5) -> bit 0 set, others 0
    assert r.tolist() == [1, 0]


def test_tensors_of_another_instance_are_rejected():
    tk, h = _tk("Ascend910")
    other, oh = _tk("Ascend910")
    for call in (lambda: tk.vcmp_eq(128, oh["a"], h["b"], 1, 1),
                 lambda: tk.vsel(128, 0, h["c"], tk.mov_tensor_to_cmpmask(h["u64"]), oh["a"],
                                 h["b"], 1, 1, 1, 1, 8, 8, 8),
                 lambda: tk.vcmpv_gt(oh["bits"], h["a"], h["b"], 1, 1, 1, 8, 8),
                 lambda: tk.mov_tensor_to_cmpmask(oh["u64"]),
                 lambda: tk.vnchwconv(False, False, L(h, "c"), L(oh, "a"), 1, 0, 0),
                 lambda: tk.vtranspose(h["c"], oh["a"])):
        with pytest.raises(ConstraintError, match="of this tik.Tik"):
            call()

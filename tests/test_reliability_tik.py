"""Issue 12 (reliability), TIK: operands of another tik.Tik() instance, the walker
drivers' own extent checks, concurrent start_debug, Tensor not iterable, raw errors."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from fastisa import errors, tik
from fastisa._kernels import walker as _w
from fastisa.tik import platform


@pytest.fixture(autouse=True)
def _default_target():
    platform.set_target("Ascend910")
    yield
    platform.set_target("Ascend910")


def ub(tk, n=128, dtype="float16", name="x"):
    return tk.Tensor(dtype, (n,), name=name, scope=tik.scope_ubuf)


# ---- item 1: operands must belong to the recording instance ---------------------------

def test_vec_dup_into_tensor_of_another_instance_rejected():
    a, b = tik.Tik(), tik.Tik()
    for k in range(8):
        ub(b, 128, name=f"b{k}")  # B's tensor lies far past A's UB buffer
    foreign = ub(b, 128, name="foreign")
    with pytest.raises(errors.ConstraintError, match="vec_dup: dst must be a Tensor of this "
                       "tik.Tik.. instance.*'foreign'"):
        a.vec_dup(128, foreign, 1.0, 1, 8)


@pytest.mark.parametrize("role", ["dst", "src0", "src1"])
def test_vec_add_operand_of_another_instance_rejected(role):
    a, b = tik.Tik(), tik.Tik()
    ops = {"dst": ub(a, name="d"), "src0": ub(a, name="s0"), "src1": ub(a, name="s1")}
    ops[role] = ub(b, name="other")
    with pytest.raises(errors.ConstraintError, match=f"vec_add: {role} must be a Tensor of "
                       f"this tik.Tik.. instance"):
        a.vec_add(128, ops["dst"], ops["src0"], ops["src1"], 1, 8, 8, 8)


def test_data_move_tensor_of_another_instance_rejected():
    a, b = tik.Tik(), tik.Tik()
    g = a.Tensor("float16", (128,), name="g", scope=tik.scope_gm)
    with pytest.raises(errors.ConstraintError, match="data_move: dst must be a Tensor of "
                       "this tik.Tik"):
        a.data_move(ub(b), g, 0, 1, 8, 0, 0)
    with pytest.raises(errors.ConstraintError, match="data_move: src must be"):
        a.data_move(ub(a), b.Tensor("float16", (128,), name="g2", scope=tik.scope_gm),
                    0, 1, 8, 0, 0)


def test_scalar_of_another_instance_rejected():
    a, b = tik.Tik(), tik.Tik()
    s = b.Scalar("int32", name="sb", init_value=1)
    x = ub(a)
    with pytest.raises(errors.ConstraintError, match="vec_adds: repeat_times must be a "
                       "Scalar/Expr of this tik.Tik.. instance, got Scalar 'sb'"):
        a.vec_adds(128, x, x, 1.0, s, 8, 8)
    with pytest.raises(errors.ConstraintError, match="vec_dup: scalar"):
        a.vec_dup(128, x, b.Scalar("float16", name="f"), 1, 8)
    with pytest.raises(errors.ConstraintError, match="vec_adds: dst must be a Scalar/Expr"):
        a.vec_adds(128, x[s * 16], x, 1.0, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="for_range: end"):
        with a.for_range(0, s):
            pass
    with pytest.raises(errors.ConstraintError, match="set_as: value"):
        a.Scalar("int32").set_as(s + 1)
    with pytest.raises(errors.ConstraintError, match="two tik.Tik.. instances"):
        a.Scalar("int32") + s


def test_buildcce_operands_of_another_instance_rejected():
    a, b = tik.Tik(), tik.Tik()
    gb = b.Tensor("float16", (16,), name="gb", scope=tik.scope_gm)
    with pytest.raises(errors.ConstraintError, match="BuildCCE: inputs must be a Tensor of "
                       "this tik.Tik"):
        a.BuildCCE("k", [gb], [a.Tensor("float16", (16,), name="o", scope=tik.scope_gm)])
    with pytest.raises(errors.ConstraintError, match="BuildCCE: outputs must be"):
        a.BuildCCE("k", [], [gb])
    with pytest.raises(errors.ConstraintError, match="BuildCCE: inputs must be a Scalar"):
        a.BuildCCE("k", [b.InputScalar("int32", name="n")],
                   [a.Tensor("float16", (16,), name="o", scope=tik.scope_gm)])


# ---- item 1: the drivers check buffer extents themselves ------------------------------

def _vector_params(off_dst, nrep=1, rep=8, op=21, fmt=10):
    p = np.zeros(_w.NPARAM, dtype=np.int64)
    p[0] = op            # DUP
    p[1] = fmt           # float16 dst
    p[2] = p[3] = -1
    p[4] = off_dst
    p[7] = 1
    p[10] = rep
    p[13] = nrep
    p[14] = 128
    p[15] = p[16] = -1   # all lanes
    return p


def test_walker_driver_refuses_write_past_its_buffer():
    big = np.zeros(1024, dtype=np.uint8)
    buf = big[:256]                      # the driver sees 256 bytes
    with pytest.raises(errors.AccessError, match="dst would reach outside its scope buffer"):
        _w.vector(_vector_params(32), 1.0, buf, buf, buf)
    assert not big.any()                 # nothing written, inside or past the view
    _w.vector(_vector_params(0), 1.0, buf, buf, buf)   # exactly fits
    assert (buf.view(np.float16) == 1.0).all() and not big[256:].any()


def test_walker_instr_and_buffers_refuse_out_of_bounds():
    bufs = [np.zeros(64, np.uint8), np.zeros(256, np.uint8), np.zeros(64, np.uint8)]
    b = _w.Buffers(bufs)
    ins = _w.Instr(_vector_params(0, nrep=2), 1, 1)
    with pytest.raises(errors.AccessError):
        ins.run(b, 1.0)
    ok = _w.Instr(_vector_params(0, nrep=1), 1, 1)
    with pytest.raises(errors.AccessError):
        ok.run_at(b, 1.0, 64, 0, 0)
    with pytest.raises(errors.AccessError):
        ok.run_at(b, 1.0, -32, 0, 0)
    assert not any(x.any() for x in bufs)


def test_walker_driver_rejects_absurd_fields():
    buf = np.zeros(256, np.uint8)
    with pytest.raises(errors.ConstraintError, match="parameter block"):
        _w.vector(_vector_params(0, nrep=1 << 62), 1.0, buf, buf, buf)
    with pytest.raises(errors.ConstraintError):
        _w.vector(_vector_params(0, rep=-1, nrep=2), 1.0, buf, buf, buf)
    assert not buf.any()


def test_dma_and_reduce_drivers_check_extents():
    big = np.zeros(512, np.uint8)
    d, s = big[:128], np.ones(256, np.uint8)
    with pytest.raises(errors.AccessError, match="dst"):
        _w.dma(d, 0, s, 0, 1, 256, 0, 0)
    with pytest.raises(errors.AccessError, match="src0"):
        _w.dma(s, 0, d, 64, 1, 128, 0, 0)
    with pytest.raises(errors.AccessError):
        _w.dma(d, -32, s, 0, 1, 32, 0, 0)
    assert not big.any()
    p = np.zeros(_w.NPARAM, dtype=np.int64)
    p[0], p[1], p[2], p[3] = 13, 10, 10, -1
    p[5], p[8], p[11], p[13], p[14] = 0, 1, 8, 2, 128
    p[4], p[10] = 126, 1                  # 2 results at byte 126: the second is past 128
    p[15] = p[16] = -1
    with pytest.raises(errors.AccessError, match="dst"):
        _w.reduce(p, d, np.zeros(512, np.uint8))
    with pytest.raises(errors.AccessError, match="dst"):
        _w.reduce_arg(p, d, np.zeros(512, np.uint8))
    with pytest.raises(errors.AccessError, match="src0"):
        _w.reduce(p, np.zeros(256, np.uint8), np.zeros(300, np.uint8))
    assert not big.any()


# ---- item 2: concurrent start_debug --------------------------------------------------

def _dynamic_program():
    """Runtime start offsets and a runtime (InputScalar) scalar in a loop: the 'fixed'
    path, whose parameter record is shared by every run of the program."""
    tk = tik.Tik()
    n = tk.InputScalar("int32", name="n")
    g = tk.Tensor("float32", (16384,), name="g", scope=tik.scope_gm)
    o = tk.Tensor("float32", (16384,), name="o", scope=tik.scope_gm)
    x = tk.Tensor("float32", (16384,), name="x", scope=tik.scope_ubuf)
    tk.data_move(x, g, 0, 1, 2048, 0, 0)
    sc = tk.Scalar("float32", name="sc")
    sc.set_as(n)
    with tk.for_range(0, 32) as i:
        tk.vec_adds(64, x[i * 512], x[i * 512], sc, 8, 8, 8)
        tk.vec_muls(64, x[i * 512 + n * 0], x[i * 512], 1.0, 8, 8, 8)
    tk.data_move(o, x, 0, 1, 2048, 0, 0)
    tk.BuildCCE("k", [g, n], [o])
    return tk


def test_concurrent_start_debug_bit_identical_to_serial():
    """4 threads running one recorded program with different feeds give exactly the
    serial results (main mixed the threads' offsets/scalars: a few of 256 runs wrong)."""
    import sys
    tk = _dynamic_program()
    rng = np.random.default_rng(7)
    feeds = [{"g": rng.standard_normal(16384).astype(np.float32), "n": k + 1}
             for k in range(32)]
    serial = [tk.tikdb.start_debug(f, interactive=False)[0].view(np.uint32) for f in feeds]
    bad = []

    def work(t):
        for k in range(t, len(feeds), 4):
            for _ in range(8):
                r = tk.tikdb.start_debug(feeds[k], interactive=False)[0]
                if not np.array_equal(r.view(np.uint32), serial[k]):
                    bad.append(k)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        th = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in th:
            t.start()
        for t in th:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert bad == []


# ---- item 7: a Tensor is not iterable; BuildCCE(inputs=<Tensor>) -----------------------

def test_tensor_is_not_iterable():
    tk = tik.Tik()
    with pytest.raises(TypeError, match="not iterable"):
        iter(ub(tk))
    with pytest.raises(TypeError):
        list(ub(tk))


def test_buildcce_single_tensor_is_wrapped_in_a_list():
    tk = tik.Tik()
    g = tk.Tensor("float16", (16,), name="g", scope=tik.scope_gm)
    o = tk.Tensor("float16", (16,), name="o", scope=tik.scope_gm)
    x = ub(tk, 16)
    tk.data_move(x, g, 0, 1, 1, 0, 0)
    tk.vec_adds(16, x, x, 1.0, 1, 8, 8)
    tk.data_move(o, x, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", inputs=g, outputs=o)
    a = np.arange(16, dtype=np.float16)
    (r,) = tk.tikdb.start_debug({"g": a}, interactive=False)
    np.testing.assert_array_equal(r, a + np.float16(1))


def test_buildcce_inputs_not_a_list_rejected():
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match="BuildCCE: inputs must be a list"):
        tk.BuildCCE("k", inputs={"a": 1}, outputs=[])


# ---- item 9: raw errors for wrong indices --------------------------------------------

@pytest.mark.parametrize("index", [[0, 16], None, 1.5, "a", True])
def test_tensor_index_of_wrong_type_is_constraint_error(index):
    tk = tik.Tik()
    x = ub(tk)
    with pytest.raises(errors.ConstraintError, match="Tensor x: (an index must be an int, a "
                       "Scalar/Expr or a slice|index not match shape)"):
        x[index]
    assert x[np.int64(16)].offset == 16 and x[16:32].offset == 16


# ---- item 10: runtime list masks -------------------------------------------------------

def _runtime_mask_program(dtype, value, high=False):
    tk = tik.Tik()
    m = tk.InputScalar(dtype, name="m")
    g = tk.Tensor("float16", (128,), name="g", scope=tik.scope_gm)
    x = ub(tk)
    tk.vec_dup(128, x, 0.0, 1, 8)
    tk.vec_dup([m, 0] if high else [0, m], x, 1.0, 1, 8)
    tk.data_move(g, x, 0, 1, 8, 0, 0)
    tk.BuildCCE("k", [m], [g])
    return tk.tikdb.start_debug({"m": value}, interactive=False)[0]


@pytest.mark.parametrize("high", [False, True])
def test_negative_runtime_mask_rejected_like_the_immediate(high):
    n = "mask_h" if high else "mask_l"
    with pytest.raises(errors.ConstraintError, match=f"vec_dup: {n} should be in the range "
                       f"of \\[0, 2\\*\\*64-1\\], input {n}: -1"):
        _runtime_mask_program("int32", -1, high)
    tk = tik.Tik()
    with pytest.raises(errors.ConstraintError, match=f"{n} should be in the range"):
        tk.vec_dup([-1, 1] if high else [0, -1], ub(tk), 1.0, 1, 8)


def test_int64_runtime_mask_is_a_bit_pattern_as_in_tik():
    """TIK's debugger (debug/util.py set_vector_mask) does not range-check int64 masks:
    they carry the 64 bits two's-complement, so -1 selects every lane."""
    r = _runtime_mask_program("int64", -1)
    assert (r[:64] == 1).all() and (r[64:] == 0).all()
    r = _runtime_mask_program("int64", -(1 << 63))
    assert r[63] == 1 and (r[:63] == 0).all()


# ---- item 11: long instructions are interruptible, chunking keeps the bits -------------

def _counter_program(count, n_elems, tk=None):
    platform.set_target("Ascend910B1")
    tk = tik.Tik()
    g = tk.Tensor("float16", (n_elems,), name="g", scope=tik.scope_gm)
    o = tk.Tensor("float16", (n_elems,), name="o", scope=tik.scope_gm)
    x = tk.Tensor("float16", (n_elems,), name="x", scope=tik.scope_ubuf)
    y = tk.Tensor("float16", (n_elems,), name="y", scope=tik.scope_ubuf)
    tk.data_move(x, g, 0, 1, n_elems // 16, 0, 0)
    tk.vec_dup(128, y, 0.0, n_elems // 128, 8)
    rep = 8 if count <= n_elems else 0
    tk.vec_adds(count, y, x, 1.5, 1, rep, rep, mask_mode="counter")
    tk.data_move(o, y, 0, 1, n_elems // 16, 0, 0)
    tk.BuildCCE("k", [g], [o])
    return tk


def test_chunked_long_instruction_gives_the_same_bits(monkeypatch):
    tk = _counter_program(128 * 10 + 5, 2048)
    a = np.random.default_rng(2).standard_normal(2048).astype(np.float16)
    whole = tk.tikdb.start_debug({"g": a}, interactive=False)[0]
    monkeypatch.setattr(_w, "CHUNK_REPEATS", 3)
    chunked = tk.tikdb.start_debug({"g": a}, interactive=False)[0]
    np.testing.assert_array_equal(chunked.view(np.uint16), whole.view(np.uint16))
    want = a.copy()
    want[:1285] = (a[:1285].astype(np.float32) + np.float32(1.5)).astype(np.float16)
    want[1285:] = 0
    np.testing.assert_array_equal(whole.view(np.uint16), want.view(np.uint16))


def test_long_counter_instruction_stops_on_ctrl_c():
    """count 2**32-1 with rep strides 0: 33.5 M repeats, 40-57 s on main with no way to
    stop it; now a KeyboardInterrupt (SIGINT) ends it between chunks of repeats."""
    import _thread
    import signal
    import time

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted

    tk = _counter_program(2**32 - 1, 128)
    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    try:
        t0 = time.monotonic()
        timer.start()
        with pytest.raises(Interrupted):
            tk.tikdb.start_debug({"g": np.zeros(128, np.float16)}, interactive=False)
        elapsed = time.monotonic() - t0
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, old)
    assert elapsed < 10, elapsed


def test_every_instruction_family_rejects_a_foreign_tensor():
    """The catch-all scan of recorded instructions: families without their own check
    (compare/select, transposes) still reject another instance's tensor."""
    a, b = tik.Tik(), tik.Tik()
    x, y = ub(a, 256), ub(a, 256)
    ub(b, 4096, name="pad")            # the foreign tensors lie past a's, overlapping nothing
    bits = ub(b, 64, "uint16", name="foreign")
    with pytest.raises(errors.ConstraintError, match="another instance"):
        a.vec_cmpv_eq(bits, x, y, 1, 8, 8)
    with pytest.raises(errors.ConstraintError, match="another instance"):
        a.vec_trans(ub(b, 256, name="f2"), x, 1, 1, 1)

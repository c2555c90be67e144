"""NKI Tensor-engine instructions (NKI 0.7 signatures, destination first), re-exported by
``nki.isa``: ``nc_transpose`` and ``nc_matmul`` (with the PSUM accumulate rule and the operand
checks that ``nc_matmul_mx`` shares).

Split out of :mod:`fastisa.nki._compute` (the file passed the project's ~1,000-line limit);
the validation helpers and the elementwise C kernel used for dtype conversion are
:mod:`fastisa.nki._compute`'s; the matmul itself is ``matmul_f32`` (``csrc/fastisa/nki_matmul.h``).
nc_matmul's transpose and double_row modes live in :mod:`fastisa.nki._matmul`.  Costs: see
the module docstring of :mod:`fastisa.nki._compute`.  Source: the NKI docs and simulator guide
(github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
"""

from __future__ import annotations

import os
import warnings
from sys import _getframe

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from .. import plans as _plans
from .. import _matmul_isa as _mm_isa
from ..errors import ConstraintError, UndefinedBehaviorWarning
from . import _matmul   # nc_matmul's transpose and double_row modes (nki-isa family)
from ._compute import (MIN_II, _computable, _kernels, _mm_threads, _onchip, _rows, _run_ew,
                       _target, _tensor)
from .enums import engine_name
from .tensor import (NkiTensor, PSUM_FRESH, PSUM_GROUP, PSUM_INIT, _PSUM_STATE, _owner,
                     discard_pending, meta_array, psum_state)

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import EnumLike, Int

__all__ = ["nc_transpose", "nc_matmul"]   # + matmul_operands, _psum_start (used by nc_matmul_mx)

# ---- nc_transpose / nc_matmul ------------------------------------------------------------------
def nc_transpose(dst: NkiTensor, data: NkiTensor, engine: EnumLike | None = None,
                 name: str | None = None) -> None:
    """``dst[f, p] = data[p, f]``: swap the partition and free axes of a 2-D tile.

    data : NkiTensor [P, F] in SBUF or PSUM; dst [F, P].  engine: vector (P, F <= 32),
    tensor (P, F <= 128; data in SBUF, dst in PSUM), or unknown (vector when both fit in
    32, else tensor).  Same float dtype: a bit copy on both engines (the Tensor engine's
    identity matmul is exact for float values); integer dtypes on the Tensor engine and
    dtype changes go through float32 (int32 above 2^24 rounds).  Raises ConstraintError.  Cost: Vector ``max(MIN_II, F)``; Tensor
    ``max(P, min(64, F))``.  Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    instr = "nc_transpose"
    _tensor(instr, "dst", dst)
    _tensor(instr, "data", data)
    for pname, t in (("dst", dst), ("data", data)):
        if t.ndim != 2:
            raise ConstraintError(f"{instr}: {pname} must be 2-D [partition, free], got shape "
                                  f"{t.shape}")
    P, F = data.shape
    if dst.shape != (F, P):
        raise ConstraintError(f"{instr}: dst must have shape {(F, P)} (data {data.shape} "
                              f"transposed), got {dst.shape}")
    eng = engine_name(instr, engine, ("unknown", "vector", "tensor"))
    if eng == "unknown":
        eng = "vector" if P <= 32 and F <= 32 else "tensor"
    lim = 32 if eng == "vector" else 128
    if P > lim or F > lim:
        raise ConstraintError(f"{instr}: on the {eng} engine data must be at most [{lim}, {lim}], "
                              f"got {data.shape}")
    if eng == "tensor":
        _onchip(instr, "data", data, allow_psum=False)
        if dst.buffer.name != "psum":
            raise ConstraintError(f"{instr}: on the tensor engine dst must be in psum, got "
                                  f"{dst.buffer.name}")
    else:
        _onchip(instr, "dst", dst)
        _onchip(instr, "data", data)
    same = dst.dtype is data.dtype and (eng == "vector" or data.dtype.kind != "int")
    if not same:
        _computable(instr, "dst", dst)
        _computable(instr, "data", data)
    dT = NkiTensor(dst.data.T, dst.dtype, dst.buffer, dst.name)
    _run_ew(instr, dT, data, raw=same)
    if eng == "tensor":     # a matmul (by the identity) wrote dst: not a non-matmul write
        discard_pending()
        psum_state(dst)[...] = PSUM_GROUP
    if eng == "vector":
        _cost.record("Vector", instr, max(MIN_II, F))
    else:
        _cost.record("Tensor", instr, max(P, min(64, F)))


_MM_DTYPES = ("float8_e4m3", "float8_e5m2", "float8_e4m3fn", "bfloat16", "float16",
              "tfloat32", "float32")


def nc_matmul(dst: NkiTensor, stationary: NkiTensor, moving: NkiTensor,
              is_stationary_onezero: bool = False, is_moving_onezero: bool = False,
              is_transpose: bool = False, accumulate: bool | None = None,
              tile_position: Sequence[Int] | None = (), tile_size: Sequence[Int] | None = (),
              perf_mode: EnumLike | None = None, name: str | None = None) -> None:
    """``dst = stationary.T @ moving`` on the Tensor engine, accumulated in float32 in PSUM.

    Parameters
    ----------
    dst : NkiTensor [M, N] in PSUM (float32 or bfloat16).
    stationary : NkiTensor [K, M] in SBUF, K <= 128, M <= 128.
    moving : NkiTensor [K, N] in SBUF, N <= 512; same K.
    dtypes of stationary / moving: fp8 (e4m3, e5m2, e4m3fn), bf16, fp16, tf32, fp32.
    accumulate : False overwrites dst and opens an accumulation group; True adds onto
        dst's current values; None (default) decides per PSUM element as the SDK 2.33
        docstring says the compiler infers it ("first write overwrites, subsequent writes
        accumulate"): an element no matmul has written since it was allocated, or whose
        accumulation group was since read by a non-matmul instruction (the PSUM tile is
        reused for the next output tile), is overwritten; an element written by an
        earlier matmul of the open group is accumulated onto.  An element a non-matmul
        instruction wrote (memset, tensor_copy ...) is accumulated onto with None or True;
        the docs call that undefined on NeuronCore-v2/v3, so fastisa warns
        (:class:`~fastisa.errors.UndefinedBehaviorWarning`) on trn1/trn2, as it does for
        True on never-written PSUM.  See :mod:`fastisa.nki.tensor` (PSUM accumulation
        state).
    is_transpose : True: transpose mode (NeuronCore-v3+): moving must be the [K, K]
        identity and ``dst[m, k] = stationary[k, m]`` bit-accurately (see
        :mod:`fastisa.nki._matmul`); on trn1 the flag only labels the instruction.
    perf_mode : ``matmul_perf_mode.none`` or ``double_row`` (fp8 [K, 2, F] operands,
        folded to a 2K contraction; same numerics).  tile_position, tile_size and
        is_*_onezero are accepted and do not change results.

    Each product ``s[k, m] * v[k, n]`` is a float32 multiply (exact for inputs of at most
    12 significant bits), summed in float32 in k order 0..K-1 onto the starting value
    (dst's value when accumulating, else 0), then rounded once to dst.dtype.  Raises
    ConstraintError.  Cost: ``max(min(64, M), N)`` Tensor cycles, x4 with float32 inputs.
    Inside ``nki.simulate`` a call from the kernel's code may return while the pool's
    workers still compute it (the kernel's Python runs meanwhile); every access to a
    tensor's elements waits for it first, so no result differs (``FASTISA_MM_OVERLAP=0``:
    off).
    Reference: the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst).
    """
    key = None
    if (_ON[0] and perf_mode is None and is_transpose is False
            and (tile_position is None or type(tile_position) is tuple and not tile_position)
            and (tile_size is None or type(tile_size) is tuple and not tile_size)):
        try:        # the plan path (issue 15): see _mm_hit
            key = _key(("nc_matmul", accumulate, is_stationary_onezero, is_moving_onezero),
                       dst, stationary, moving)
        except TypeError:       # an unhashable argument: never cached
            key = None
        if key is not None:
            plan = _MM_PLANS.get(key)
            if plan is not None:
                key = None              # planned (or no plan possible): nothing to store
                if plan is not False and _mm_hit(plan, dst, stationary, moving, accumulate,
                                                 _overlap_ok(_getframe(1))):
                    if _ACTIVE.get():   # the operands the full path's record infers
                        _cost.record("Tensor", "nc_matmul", plan[0],
                                     reads=[stationary, moving], writes=[dst], domain="nki")
                    elif not _cost.record_idle():   # (nothing to record: skipped)
                        _cost.record("Tensor", "nc_matmul", plan[0])
                    return
    instr = "nc_matmul"
    pm = _matmul.perf_mode_name(instr, perf_mode)
    if is_transpose and _matmul.transpose_mode(instr, dst, stationary, moving, _target()):
        return
    folded = None
    if pm == "double_row":    # validate the j = 0 halves, compute over the folded 2K rows
        folded = _matmul.fold_double_row(instr, stationary, moving, tile_position, tile_size,
                                         _target())
        stationary, moving = stationary[:, 0, :], moving[:, 0, :]
    K, M, N = matmul_operands(instr, dst, stationary, moving, _MM_DTYPES)
    if M > 128:
        raise ConstraintError(f"{instr}: stationary free size must be <= 128, got {M}")
    if N > 512:
        raise ConstraintError(f"{instr}: moving free size must be <= 512, got {N}")
    if dst.shape != (M, N):
        raise ConstraintError(f"{instr}: dst must have shape {(M, N)}, got {dst.shape}")
    out, state, inplace = _psum_start(instr, dst, accumulate, inplace=True)
    if folded is not None:
        stationary, moving = folded
    # operands decoded to float32 inside the kernel call (csrc/fastisa/nki_matmul.h fi_nki_matmul)
    _kernels().matmul(out, _rows(stationary), stationary.dtype.code, _rows(moving),
                      moving.dtype.code, _mm_threads(), 1 if inplace == "zero" else 0)
    if not inplace:
        _run_ew(instr, dst, NkiTensor(out, _dt.float32))
    if state is not None:
        state[...] = PSUM_GROUP
    f32 = "float32" in (stationary.dtype.name, moving.dtype.name)
    cyc = max(min(64, M), N) * (4 if f32 else 1)
    _cost.record("Tensor", instr, cyc // 2 if pm == "double_row" else cyc)
    if key is not None:
        _plans.store(_MM_PLANS, key, _mm_plan(dst, stationary, moving, cyc, key))


# ---- nc_matmul's per-signature plans (issue 15; see fastisa.plans) ------------------------
# The key: the instruction, accumulate and the onezero flags (by identity), and for dst,
# stationary and moving their class, format, buffer, storage rank, shape, strides and
# writeability (fastisa._kernels.nki.plan_key; ``.ap`` views included, keyed by their
# resolved storage).  A plan exists for the plain form only
# (no perf_mode, transpose, tile_position or tile_size; dst a writable C-contiguous 2-D
# float32 array, so the kernel accumulates in place; 2-D operand storage).  What depends
# on values runs every call: the PSUM accumulation state of dst's elements (all in one
# state, else the full path), the accumulate decision from it, and the full path whenever
# that decision is undefined behaviour (its warning depends on the target).
_MM_PLANS: dict = _plans.register({})
_ON = _plans.ON
_ACTIVE = _cost._ACTIVE
_key = None


_OVERLAP = [os.environ.get("FASTISA_MM_OVERLAP", "1").strip() != "0"]
_MACHINE = None     # fastisa.nki.language._MACHINE (bound on first use: no import cycle)


def _init_key():
    global _key
    from .._kernels import nki as _k
    _k.set_tensor_class(NkiTensor)
    _key = _k.plan_key
    env = _mm_isa.from_env()
    if env:
        set_matmul_isa(env)


# ---- matmul15 branch: the matmul kernels' instruction set (tests force each path) --------
def set_matmul_isa(name: str = "auto") -> str:
    """The instruction set nc_matmul's kernels use (``csrc/fastisa/nki_matmul.h``,
    fi_nki_set_mm_isa): ``"auto"`` (the default: the best the CPU has, chosen at run
    time), ``"avx512"`` (AVX-512F + FMA) or ``"avx2"`` (AVX2 + FMA), each with its FMA
    kernel where every product is exact and its multiply-then-add kernel otherwise, or
    ``"scalar"`` (the baseline build).  The environment variable ``FASTISA_MATMUL_ISA`` sets it at import.
    A level the CPU lacks is lowered to the best it has; returns the level now in use.
    Every level gives the same bits (each element: start + p_0 + ... + p_{K-1} in k
    order); raises ConstraintError for another name."""
    return _mm_isa.set_level(_kernels().set_matmul_isa, name, lambda n: ConstraintError(
        f"set_matmul_isa: name must be one of {sorted(_mm_isa.LEVELS)}, got {n!r}"))


def _mm_plan(dst, stationary, moving, cyc, key):
    d = dst.data
    if not (type(d) is np.ndarray and d.ndim == 2 and d.dtype == np.float32
            and dst.dtype.name == "float32" and d.flags.c_contiguous and d.flags.writeable
            and d.size and np.little_endian):
        return False
    for t in (stationary, moving):
        if type(t.data) is not np.ndarray or t.data.ndim != 2:
            return False
    return (cyc, stationary.dtype.code, moving.dtype.code,
            (dst.dtype, dst.buffer, stationary.dtype, stationary.buffer, moving.dtype,
             moving.buffer))        # the objects whose identities the key holds


def _overlap_ok(caller) -> int:
    """1 when this nc_matmul may return before its kernel finishes (issue 15): called from a
    kernel's own code (not from inside fastisa, whose helpers may hold storage arrays
    across the call; the bundled example kernels count as kernel code) inside
    ``nki.simulate``, whose kernels reach tensor elements only through fastisa (each such
    access waits for the kernel: NkiTensor.data, the plan paths, nl.ndarray, the end of
    the run).  ``FASTISA_MM_OVERLAP=0`` turns it off."""
    global _MACHINE
    if _MACHINE is None:
        from .language import _MACHINE
    m = _MACHINE.get()
    if m is None or not m.mm_overlap or not _OVERLAP[0]:
        return 0
    mod = caller.f_globals.get("__name__", "")
    if mod.startswith("fastisa.") and not mod.startswith("fastisa.examples."):
        return 0
    return 1


def _mm_hit(plan, dst, stationary, moving, accumulate, overlap=0):
    """Run a planned nc_matmul; False (nothing changed) when the call needs the full path.
    overlap=1: the kernel may still be running when this returns (see _overlap_ok)."""
    d = meta_array(dst)
    if not d.flags.c_contiguous:
        return False        # defensive (the key holds the strides): the full path
    own = _owner(d)
    ent = _PSUM_STATE.get(id(own))
    k = _kernels()
    if ent is None or ent[0]() is not own:
        # first use of this PSUM memory: no state bytes yet, so every element is
        # PSUM_FRESH (psum_state makes them zero).  They are made after the kernel has
        # started (below), so that work overlaps it (a kernel's PSUM tile allocated per
        # output tile: its first nc_matmul otherwise ran them with the pool idle)
        if not k.psum_words_ok(d, own):
            return False
        ent, u = None, PSUM_FRESH
    else:
        u = k.psum_uniform(d, own, ent[1])
        if not 0 <= u <= 0xFF:
            return False                # elements in several states: the full path
    if accumulate is None:
        acc_all, undef = u == PSUM_GROUP or u == PSUM_INIT, u == PSUM_INIT
    elif accumulate:
        acc_all, undef = True, u == PSUM_INIT or u == PSUM_FRESH
    else:
        acc_all, undef = False, False
    if undef:
        return False                    # undefined on some targets (a warning): full path
    k.matmul(d, meta_array(stationary), plan[1], meta_array(moving), plan[2], _mm_threads(),
             0 if acc_all else 1, overlap)
    if ent is None:
        psum_state(dst)                 # metadata only: never waits for the kernel
        ent = _PSUM_STATE[id(own)]
    if u != PSUM_GROUP:
        k.psum_mark(d, own, ent[1], PSUM_GROUP)
    return True


_init_key()


def _psum_start(instr, dst, accumulate, inplace=False):
    """nc_matmul's accumulate rule (see nc_matmul): the float32 [M, N] starting values of a
    matmul into PSUM tensor dst, and dst's state bytes (set to PSUM_GROUP by the caller
    when the matmul completes).  Shared with nc_matmul_mx (fastisa.nki._matmul).

    With ``inplace=True`` a third value says whether the starting values ARE dst's own
    storage (a C-contiguous float32 dst whose elements all accumulate, ``"acc"``, or all
    start from +0, ``"zero"``: the kernel then ignores dst's values), the usual case: the
    caller then adds into dst directly, with no copy in or out (the same bits: a float32 ->
    float32 store is the identity); False otherwise.  The state returned is then None when
    every element is already PSUM_GROUP (nothing to mark)."""
    M, N = dst.shape
    if accumulate is not None and not isinstance(accumulate, (bool, np.bool_, int, np.integer)):
        raise ConstraintError(f"{instr}: accumulate must be True, False or None, got "
                              f"{accumulate!r}")
    state = psum_state(dst)
    uniform = None
    mark = state                      # what the caller sets to PSUM_GROUP at the end
    words = _state_words(state, dst.data)
    if words is not None:             # one state byte per float32: compare whole words
        lo = _kernels().uniform_u32(words)
        if 0 <= lo <= 0xFF:
            uniform, mark = lo, words
    elif state.size:
        lo = int(state.min())
        if lo == int(state.max()):
            uniform = lo              # every element in one state: decide once, not per element
    if uniform is not None:
        if accumulate is None:
            acc_all, undef = uniform in (PSUM_GROUP, PSUM_INIT), uniform == PSUM_INIT
        elif accumulate:
            acc_all, undef = True, uniform in (PSUM_INIT, PSUM_FRESH)
        else:
            acc_all, undef = False, False
        if undef and _target() in ("trn1", "trn2"):
            n_init = M * N if uniform == PSUM_INIT else 0
            _warn_undefined(instr, dst, n_init, M * N - n_init)
        d = dst.data
        if (inplace and dst.dtype.name == "float32" and d.ndim == 2 and d.dtype == np.float32
                and d.flags.c_contiguous and d.flags.writeable):
            # "zero": the kernel starts every element from +0 (no fill pass); None: every
            # element is already in the open group, nothing to mark at the end
            return d, (None if uniform == PSUM_GROUP else mark), ("acc" if acc_all else "zero")
        out = np.zeros((M, N), np.float32)
        if acc_all:
            _run_ew(instr, NkiTensor(out, _dt.float32), dst)
        return (out, mark, False) if inplace else (out, mark)
    if accumulate is None:
        acc = (state == PSUM_GROUP) | (state == PSUM_INIT)
        undefined = state == PSUM_INIT
    elif accumulate:
        acc = np.ones((M, N), np.bool_)
        undefined = (state == PSUM_INIT) | (state == PSUM_FRESH)
    else:
        acc = None
        undefined = None
    if undefined is not None and _target() in ("trn1", "trn2") and undefined.any():
        n_init = int(np.count_nonzero(state[undefined] == PSUM_INIT))
        _warn_undefined(instr, dst, n_init, int(np.count_nonzero(undefined)) - n_init)
    out = np.zeros((M, N), np.float32)
    if acc is not None and acc.any():
        cur = NkiTensor(np.empty((M, N), np.float32), _dt.float32)
        _run_ew(instr, cur, dst)
        np.copyto(out, cur.data, where=acc)
    return (out, state, False) if inplace else (out, state)


def _state_words(state, d):
    """The state bytes of a C-contiguous 4-byte tensor as uint32 words (little-endian: the
    element's state is the low byte; the other three bytes belong to no float32 element and
    are 0 unless the memory is also viewed with a narrower dtype), or None."""
    if not (np.little_endian and d.dtype.itemsize == 4 and d.flags.c_contiguous and d.size):
        return None
    return np.lib.stride_tricks.as_strided(state, shape=(d.size * 4,), strides=(1,)).view(
        np.uint32)


def _warn_undefined(instr, dst, n_init, n_fresh):
    what = []
    if n_init:
        what.append(f"{n_init} element(s) initialised by a non-matmul instruction")
    if n_fresh:
        what.append(f"{n_fresh} never-written element(s)")
    warnings.warn(f"{instr}: accumulating onto {' and '.join(what)} of PSUM tensor "
                  f"{dst.name!r} is undefined on NeuronCore-v2/v3 ({_target()}); fastisa "
                  f"adds onto the current values. Start each accumulation group with "
                  f"accumulate=False", UndefinedBehaviorWarning, stacklevel=4)


def matmul_operands(instr, dst, stationary, moving, dtypes, after_rank=None, dtype_rule=None):
    """The checks every Tensor-engine matmul shares (nc_matmul, nc_matmul_mx): 2-D
    tensors, operands on chip outside PSUM, dst a float32/bfloat16 PSUM tensor, operand
    dtypes in ``dtypes``, one partition (contraction) size.  ``after_rank`` runs right after
    the rank check (nc_matmul_mx's target check).  Returns (K, M, N)."""
    for pname, t in (("dst", dst), ("stationary", stationary), ("moving", moving)):
        _tensor(instr, pname, t, note=False)
        if t.ndim != 2:
            raise ConstraintError(f"{instr}: {pname} must be 2-D, got shape {t.shape}")
    if after_rank is not None:
        after_rank(instr)
    _onchip(instr, "stationary", stationary, allow_psum=False)
    _onchip(instr, "moving", moving, allow_psum=False)
    if dst.buffer.name != "psum":
        raise ConstraintError(f"{instr}: dst must be in psum, got {dst.buffer.name}")
    if dst.dtype.name not in ("float32", "bfloat16"):
        raise ConstraintError(f"{instr}: dst dtype must be float32 or bfloat16, got "
                              f"{dst.dtype.name}")
    for pname, t in (("stationary", stationary), ("moving", moving)):
        if t.dtype.name not in dtypes:
            rule = dtype_rule or f"one of {', '.join(dtypes)}"
            raise ConstraintError(f"{instr}: {pname} dtype must be {rule}, got {t.dtype.name}")
    K, M = stationary.shape
    K2, N = moving.shape
    if K != K2:
        raise ConstraintError(f"{instr}: stationary and moving must have the same partition "
                              f"(contraction) size, got {K} and {K2}")
    return K, M, N

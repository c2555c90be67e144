"""NKI pseudo-random instructions (SDK 2.33): ``rng``, ``rand2``, ``dropout``,
``set_rng_seed``, ``rand_set_state``, ``rand_get_state``; re-exported by ``nki.isa``.

Generator: per-lane XORWOW (Marsaglia 2003; the algorithm the rand2 docstring names), 6
uint32 state words per generator -- one generator per lane on GpSimd (the documented 6
state elements per lane) and four per lane on Vector (the documented 24), element i of a
lane drawn from generator ``i % 4`` (``csrc/fastisa/rand.h``).  Deterministic and
seedable, but **the hardware's random stream is not reproduced**: the docs do not say
how a seed becomes lane states, so ``set_rng_seed`` (and the initial state of every
kernel instance, which is ``set_rng_seed(0)``) expands the seed with SplitMix64
(Steele et al., OOPSLA 2014) -- fastisa's own mapping.  ``rand_set_state`` /
``rand_get_state`` move raw state words, so a saved state replays exactly.

Uniform values: ``u = (bits >> 8) * 2^-24`` (exact, in [0, 1)).  rand2 gives
``min + u * (max - min)`` in float32 rounded once to dst; dropout drops an element when
``u < prob`` (so prob 0 keeps all, prob 1 drops all) and writes 0 there, copying kept
elements bit for bit (no 1/(1 - prob) rescaling: the docs only replace by zeros).

Each kernel instance has its own generator states (``nki.simulate`` instances start
fresh), one set per engine.

==============  ================  =================================
instruction     engine            cycles (N = elements per partition)
==============  ================  =================================
rng             Vector / GpSimd   ``max(MIN_II, N)`` / ``150 + N``
rand2           Vector            ``max(MIN_II, N)``
dropout         Vector            ``max(MIN_II, N)`` (pre-0.3 docs)
set_rng_seed,   Vector / GpSimd   ``MIN_II`` (fastisa's estimate)
rand_*_state
==============  ================  =================================

Source: aws-neuron-sdk ``nki/api/nki/isa/__init__.py`` (each instruction's docstring).
"""

from __future__ import annotations

import builtins as _builtins

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError
from . import _compute as _c
from .enums import engine_name
from .tensor import NkiTensor, PMAX

import typing as _typing

if _typing.TYPE_CHECKING:
    from .._types import EnumLike, Real

__all__ = ["rng", "rand2", "dropout", "set_rng_seed", "rand_set_state", "rand_get_state"]

MIN_II = _cost.MIN_II
GPSIMD_START = 150
_NSUB = {"vector": 4, "gpsimd": 1}
_ENGINE_ID = {"vector": 1, "gpsimd": 2}
_RNG_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")
_RAND2_DTYPES = ("float8_e4m3", "float8_e5m2", "float16", "bfloat16", "float32", "tfloat32",
                 "int8", "int16", "int32", "uint8", "uint16", "uint32")
_M64 = (1 << 64) - 1


def _k():
    from fastisa._kernels import rand
    return rand


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(_M64)
    z = x
    z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & np.uint64(_M64)
    z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & np.uint64(_M64)
    return z ^ (z >> np.uint64(31))


def seed_states(seed: int, eng: str) -> np.ndarray:
    """The [128, 6 * nsub] uint32 lane states fastisa derives from a 32-bit seed."""
    n = _NSUB[eng]
    p = np.arange(PMAX, dtype=np.uint64)[:, None, None]
    g = np.arange(n, dtype=np.uint64)[None, :, None]
    k = np.arange(6, dtype=np.uint64)[None, None, :]
    key = (np.uint64(seed & 0xFFFFFFFF) << np.uint64(32)) | (np.uint64(_ENGINE_ID[eng]) << np.uint64(24)) \
        | (p << np.uint64(16)) | (g << np.uint64(8)) | k
    with np.errstate(over="ignore"):
        st = (_splitmix64(key) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    dead = ~st[:, :, :5].any(axis=2)          # xorshift words all zero: never happens in
    st[:, :, 0][dead] = 1                     # practice, but keep the generator alive
    return np.ascontiguousarray(st.reshape(PMAX, 6 * n))


def _states(eng: str) -> np.ndarray:
    from fastisa.nki import language
    m = language._machine()
    attr = "_fastisa_rng_" + eng
    st = getattr(m, attr, None)
    if st is None:
        st = seed_states(0, eng)
        setattr(m, attr, st)
    return st


def _target():
    from fastisa.nki import language
    return language.target()


def _dst(instr, t, eng):
    _c._tensor(instr, "dst", t)
    _c._onchip(instr, "dst", t, allow_psum=eng != "gpsimd")


def _lanes(instr, P, F, eng, fn):
    """Run fn(state_rows, nsub) on a contiguous copy of lanes 0..P-1, then store it back."""
    st = _states(eng)
    rows = np.ascontiguousarray(st[:P])
    out = fn(rows, _NSUB[eng])
    st[:P] = rows
    return out


def rng(dst: NkiTensor, engine: EnumLike | None = None, name: str | None = None) -> None:
    """``dst[p, i] = low bits of the next 32-bit XORWOW output of lane p`` (see module doc).

    Parameters
    ----------
    dst : NkiTensor int8 / int16 / int32 / uint8 / uint16 / uint32 in SBUF or PSUM (GpSimd:
        SBUF only), P <= 128; each element takes the least significant bits of one draw.
    engine : ``nisa.engine.vector`` (default) or ``gpsimd`` (NeuronCore-v3+).

    Raises ConstraintError for a rule above.  Cost: Vector ``max(MIN_II, N)``, GpSimd
    ``150 + N``.
    """
    instr = "rng"
    eng = engine_name(instr, engine, ("unknown", "vector", "gpsimd"))
    eng = "vector" if eng == "unknown" else eng
    if eng == "gpsimd" and _target() == "trn1":
        raise ConstraintError(f"{instr}: engine gpsimd needs NeuronCore-v3+ (trn2 / trn3), got "
                              f"trn1")
    _dst(instr, dst, eng)
    if dst.dtype.name not in _RNG_DTYPES:
        raise ConstraintError(f"{instr}: dst dtype must be one of {', '.join(_RNG_DTYPES)}, got "
                              f"{dst.dtype.name}")
    P, F = dst.partitions, dst.free_size
    bits = np.empty((P, F), np.uint32)
    _lanes(instr, P, F, eng, lambda st, n: _k().bits(st, n, bits))
    w = dst.itemsize
    vals = bits if w == 4 else (bits & ((1 << (8 * w)) - 1)).astype({1: np.uint8, 2: np.uint16}[w])
    dst.data[...] = vals.view(dst.dtype.np_dtype).reshape(dst.shape)
    _cost.record("Vector" if eng == "vector" else "GpSimd", instr,
                 max(MIN_II, F) if eng == "vector" else GPSIMD_START + F)


def _fvec(instr, param, v, P, float_dtypes_only=False):
    if isinstance(v, NkiTensor):
        if float_dtypes_only and v.dtype.kind != "float":
            raise ConstraintError(f"{instr}: {param} must have a float dtype, got {v.dtype.name}")
    f, _ = _c._scalar_operand(instr, param, v, P)
    return np.ascontiguousarray(np.broadcast_to(f, (P,)) if f.shape[0] > 1 else f, np.float32)


def rand2(dst: NkiTensor, min: NkiTensor | Real, max: NkiTensor | Real,  # noqa: A002 (the SDK's parameter names)
          name: str | None = None) -> None:
    """``dst = min + u * (max - min)``, u uniform in [0, 1) (Vector engine, NeuronCore-v4).

    Parameters
    ----------
    dst : NkiTensor in SBUF / PSUM, P <= 128; float8_e4m3, float8_e5m2, float16, bfloat16,
        float32, tfloat32, int8, int16, int32, uint8, uint16 or uint32.
    min, max : float32 scalars or [P, 1] tensors with min < max in every partition.

    The float32 value is rounded once to dst.dtype (integers: RNE, saturate).  Raises
    ConstraintError for a rule above or a target other than trn3.  Cost: Vector
    ``max(MIN_II, N)``.
    """
    instr = "rand2"
    if _target() != "trn3":
        raise ConstraintError(f"{instr}: available only on NeuronCore-v4 (target trn3), got "
                              f"{_target()}")
    _dst(instr, dst, "vector")
    if dst.dtype.name not in _RAND2_DTYPES:
        raise ConstraintError(f"{instr}: dst dtype must be one of {', '.join(_RAND2_DTYPES)}, "
                              f"got {dst.dtype.name}")
    P, F = dst.partitions, dst.free_size
    lo = _fvec(instr, "min", min, P)
    hi = _fvec(instr, "max", max, P)
    bad = ~(np.broadcast_to(lo, (P,)) < np.broadcast_to(hi, (P,)))
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        raise ConstraintError(f"{instr}: min must be < max, got min {float(np.broadcast_to(lo, (P,))[i])} "
                              f"and max {float(np.broadcast_to(hi, (P,))[i])} (partition {i})")
    if lo.shape[0] != hi.shape[0]:
        lo = np.ascontiguousarray(np.broadcast_to(lo, (P,)))
        hi = np.ascontiguousarray(np.broadcast_to(hi, (P,)))
    out = np.empty((P, F), np.float32)
    _lanes(instr, P, F, "vector", lambda st, n: _k().uniform(st, n, lo, hi, out))
    _c._run_ew(instr, dst, NkiTensor(out, _dt.float32))
    _cost.record("Vector", instr, _builtins.max(MIN_II, F))


def dropout(dst: NkiTensor, data: NkiTensor, prob: NkiTensor | Real,
            name: str | None = None) -> None:
    """``dst = 0 where u < prob[p] else data`` element-wise, u uniform in [0, 1) (Vector).

    Parameters
    ----------
    dst, data : NkiTensor in SBUF / PSUM, the same dtype (any non-packed), partitions and
        elements per partition.  Kept elements are bit copies; dropped ones are 0.
    prob : a float scalar or a [P, 1] tensor (float32 when data is an integer type, any
        float dtype otherwise): the drop probability of each partition.

    Raises ConstraintError for a rule above.  Cost: Vector ``max(MIN_II, N)``.
    """
    instr = "dropout"
    for pname, t in (("dst", dst), ("data", data)):
        _c._tensor(instr, pname, t)
        _c._onchip(instr, pname, t)
        if t.dtype.kind == "packed":
            raise ConstraintError(f"{instr}: {pname} dtype must not be packed, got {t.dtype.name}")
    if dst.dtype is not data.dtype:
        raise ConstraintError(f"{instr}: dst dtype must match data's ({data.dtype.name}), got "
                              f"{dst.dtype.name}")
    _c._same_shape(instr, "dst", dst, "data", data)
    P, F = data.partitions, data.free_size
    if isinstance(prob, NkiTensor) and data.dtype.kind != "float" and prob.dtype.name != "float32":
        raise ConstraintError(f"{instr}: prob must be float32 when data is {data.dtype.name}, "
                              f"got {prob.dtype.name}")
    q = _fvec(instr, "prob", prob, P, float_dtypes_only=True)
    keep = np.empty((P, F), np.uint8)
    scratch = np.empty((P, F), np.uint32)
    _lanes(instr, P, F, "vector", lambda st, n: _k().keep(st, n, q, keep, scratch))
    from fastisa._kernels import move
    d, commit = _c._dst_rows(dst)
    bitt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[d.itemsize]
    db = d.view(bitt)
    src = _c._rows(data).view(bitt)
    if np.may_share_memory(src, db):
        src = np.array(src, copy=True)
    move.strided(db, src)                                   # kept elements: bit copies
    zero = np.broadcast_to(np.zeros((1, 1), bitt), (P, F))
    move.predicated(db, zero, keep, 1)                      # dropped elements: 0
    if commit is not None:
        commit()
    _cost.record("Vector", instr, max(MIN_II, F))


def set_rng_seed(src_seeds: NkiTensor, name: str | None = None) -> None:
    """Seed the Vector engine's generators from one 32-bit value (a [1, 1] tensor).

    Every lane's states become fastisa's SplitMix64 expansion of the seed (see the module
    doc), so the same seed replays the same ``rng`` / ``rand2`` / ``dropout`` values.

    Parameters
    ----------
    src_seeds : NkiTensor [1, 1] of a 32-bit dtype in SBUF or PSUM (its bit pattern is
        the seed).

    Raises ConstraintError.  Cost: Vector ``MIN_II``.
    """
    instr = "set_rng_seed"
    _c._tensor(instr, "src_seeds", src_seeds)
    _c._onchip(instr, "src_seeds", src_seeds)
    if src_seeds.shape != (1, 1):
        raise ConstraintError(f"{instr}: src_seeds must be a [1, 1] tensor, got "
                              f"{src_seeds.shape}")
    if src_seeds.itemsize != 4:
        raise ConstraintError(f"{instr}: src_seeds must hold a 32-bit value, got "
                              f"{src_seeds.dtype.name}")
    seed = int(src_seeds.data.reshape(1).view(np.uint32)[0])
    _states("vector")[...] = seed_states(seed, "vector")
    _cost.record("Vector", instr, MIN_II)


def _state_engine(instr, engine, t, param):
    eng = engine_name(instr, engine, ("unknown", "vector", "gpsimd"))
    eng = "gpsimd" if eng == "unknown" else eng
    tgt = _target()
    if tgt == "trn1":
        raise ConstraintError(f"{instr}: needs NeuronCore-v3+ (trn2 / trn3), got trn1")
    if eng == "vector" and tgt != "trn3":
        raise ConstraintError(f"{instr}: engine vector needs NeuronCore-v4 (trn3), got {tgt}")
    _c._tensor(instr, param, t)
    if t.dtype.name != "uint32":
        raise ConstraintError(f"{instr}: {param} dtype must be uint32, got {t.dtype.name}")
    need = 6 * _NSUB[eng]
    if t.free_size != need:
        raise ConstraintError(f"{instr}: {param} must have {need} elements per partition "
                              f"(XORWOW state on {eng}), got {t.free_size}")
    return eng


def rand_set_state(src_seeds: NkiTensor, engine: EnumLike | None = None,
                   name: str | None = None) -> None:
    """Load raw XORWOW states: lane p's state words = ``src_seeds[p, :]`` (6 words per
    generator: x, y, z, w, v, d; 6 on GpSimd, 24 = 4 generators on Vector).

    Parameters
    ----------
    src_seeds : NkiTensor uint32 [P, 6] (GpSimd) or [P, 24] (Vector) in SBUF.
    engine : ``gpsimd`` (default; NeuronCore-v3+) or ``vector`` (NeuronCore-v4).

    Raises ConstraintError.  Cost: ``MIN_II`` on the engine.
    """
    instr = "rand_set_state"
    eng = _state_engine(instr, engine, src_seeds, "src_seeds")
    _c._onchip(instr, "src_seeds", src_seeds, allow_psum=False)
    P = src_seeds.partitions
    _states(eng)[:P] = _c._rows(src_seeds)
    _cost.record("Vector" if eng == "vector" else "GpSimd", instr, MIN_II)


def rand_get_state(dst: NkiTensor, engine: EnumLike | None = None,
                   name: str | None = None) -> None:
    """Store raw XORWOW states: ``dst[p, :]`` = lane p's state words (see rand_set_state).

    Parameters
    ----------
    dst : NkiTensor uint32 [P, 6] (GpSimd, SBUF) or [P, 24] (Vector, SBUF / PSUM).
    engine : ``gpsimd`` (default; NeuronCore-v3+) or ``vector`` (NeuronCore-v4).

    Raises ConstraintError.  Cost: ``MIN_II`` on the engine.
    """
    instr = "rand_get_state"
    eng = _state_engine(instr, engine, dst, "dst")
    _c._onchip(instr, "dst", dst, allow_psum=eng == "vector")
    P = dst.partitions
    dst.data[...] = _states(eng)[:P].reshape(dst.shape)
    _cost.record("Vector" if eng == "vector" else "GpSimd", instr, MIN_II)

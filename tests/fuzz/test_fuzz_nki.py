"""NKI fuzzer: views and aliasing.  Random destination and source views (slices with
steps, access patterns with random partition/free steps, possibly of ONE base tensor and
overlapping each other) through tensor_scalar / tensor_tensor / tensor_copy /
activation(copy); the whole base memory after the call is compared with the oracle
"every source read first, then dst written": dst's elements hold the result, every other
element its old value.  A dst whose elements overlap each other must be an OverlapError
(except activation's dst repeating elements along its free dim: written in access order),
a read-only one a ConstraintError, and then no byte may change."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import errors
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor, repeats_only

from conftest import SEED, Case, budgets


def _view(rng, t: NkiTensor, P, F):
    """A [P, F] view of t: a strided slice or an access pattern (may self-overlap)."""
    tp, tf = t.shape
    if rng.random() < 0.5:
        sp = int(rng.integers(1, max(1, (tp - 1) // max(P - 1, 1)) + 1)) if P > 1 else 1
        sf = int(rng.integers(1, max(1, (tf - 1) // max(F - 1, 1)) + 1)) if F > 1 else 1
        p0 = int(rng.integers(0, tp - (P - 1) * sp))
        f0 = int(rng.integers(0, tf - (F - 1) * sf))
        return t[p0:p0 + (P - 1) * sp + 1:sp, f0:f0 + (F - 1) * sf + 1:sf]
    n = t.size
    for _ in range(20):
        ps = int(rng.choice([0, 1, F, tf, int(rng.integers(0, 2 * tf + 1))]))
        fs = int(rng.choice([0, 1, 1, 2, int(rng.integers(0, 4))]))
        hi = (P - 1) * ps + (F - 1) * fs
        if hi < n:
            off = int(rng.integers(0, n - hi))
            return t.ap([[ps, P], [fs, F]], offset=off)
    return t[0:P, 0:F]


def _overlaps(v):
    a = v.data
    offs = (np.arange(a.shape[0])[:, None] * a.strides[0] +
            np.arange(a.shape[1])[None, :] * a.strides[1]).ravel()
    return np.unique(offs).size != offs.size


def one_case(rng):
    tp, tf = int(rng.integers(1, 129)), int(rng.integers(1, 97))
    P, F = int(rng.integers(1, tp + 1)), int(rng.integers(1, tf + 1))
    base = NkiTensor(rng.standard_normal((tp, tf)).astype(np.float32), "float32", nl.sbuf, "b")
    other = NkiTensor(rng.standard_normal((tp, tf)).astype(np.float32), "float32", nl.sbuf,
                      "o")
    ro = rng.random() < 0.05
    if ro:
        base = NkiTensor(np.frombuffer(base.data.tobytes(), np.float32).reshape(tp, tf),
                         "float32", nl.sbuf, "ro")
    dst = _view(rng, base, P, F)
    srcs = [_view(rng, base if rng.random() < 0.6 else other, P, F) for _ in range(2)]
    before = base.data.copy()
    before_other = other.data.copy()
    s0 = srcs[0].data.astype(np.float32)      # the oracle reads every source first
    s1 = srcs[1].data.astype(np.float32)
    op = int(rng.integers(4))
    c = np.float32(rng.standard_normal())
    if op == 0:
        want, call = s0 + c, lambda: nisa.tensor_scalar(dst, srcs[0], nl.add, float(c))
    elif op == 1:
        want, call = s0 * s1, lambda: nisa.tensor_tensor(dst, srcs[0], srcs[1], nl.multiply)
    elif op == 2:
        want, call = s0, lambda: nisa.tensor_copy(dst, srcs[0])
    else:
        want, call = s0 * c, lambda: nisa.activation(dst, nl.copy, srcs[0], scale=float(c))
    selfover = _overlaps(dst)
    if op == 3 and selfover and not ro and repeats_only(dst.data):
        # activation writes a dst that repeats elements along its free dim (a zero free
        # step) in access order: each element keeps the last write
        with pytest.warns(errors.UndefinedBehaviorWarning, match="last write"):
            call()
        exp = before.copy().reshape(-1)
        off = (dst.data.__array_interface__["data"][0] - base.data.__array_interface__["data"][0])
        for i in range(dst.shape[0]):
            for j in range(dst.shape[1]):
                exp[(off + i * dst.data.strides[0] + j * dst.data.strides[1]) // 4] = want[i, j]
        np.testing.assert_array_equal(base.data.view(np.uint32),
                                      exp.reshape(base.shape).view(np.uint32))
        np.testing.assert_array_equal(other.data, before_other)
        return "repeats"
    try:
        call()
    except errors.OverlapError:
        assert selfover, "OverlapError for a dst without self-overlap"
        np.testing.assert_array_equal(base.data, before)
        return "overlap"
    except errors.ConstraintError as e:
        assert ro, f"unexpected {e!r}"
        np.testing.assert_array_equal(base.data, before)
        return "read-only"
    assert not ro, "wrote a read-only tensor"
    assert not selfover, "a self-overlapping dst was accepted"
    exp = before.copy()
    # dst's offset inside base
    off = (dst.data.__array_interface__["data"][0] - base.data.__array_interface__["data"][0])
    ev = np.lib.stride_tricks.as_strided(exp.reshape(-1)[off // 4:], shape=dst.data.shape,
                                         strides=dst.data.strides, writeable=True)
    ev[...] = want
    np.testing.assert_array_equal(base.data.view(np.uint32), exp.view(np.uint32))
    np.testing.assert_array_equal(other.data, before_other)
    return "ran"


@pytest.mark.parametrize("calls", budgets(400, 50000))
def test_nki_views_and_aliasing(calls):
    seen = {}
    for k in range(calls):
        rng = np.random.default_rng([SEED, 1, k])
        try:
            how = one_case(rng)
        except AssertionError as e:
            raise AssertionError(f"{Case('nki', k)}: {e}") from None
        seen[how] = seen.get(how, 0) + 1
    assert seen.get("ran", 0) > calls // 3 and seen.get("overlap", 0) > 0, seen

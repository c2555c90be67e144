"""Row softmax of a [128, 8192] bfloat16 tile, written as an NKI kernel.

The NKI instruction sequence of the attention tutorials (the NKI docs and simulator guide (github.com/aws-neuron/aws-neuron-sdk, nki/api/ and nki/guides/nki_simulator.rst)):
``tensor_reduce`` (row max) -> ``tensor_scalar`` (subtract it) -> ``activation`` (exp,
with the per-lane sum in the Scalar engine's accumulator) -> ``reciprocal`` (of the sum,
on the Vector engine) -> ``tensor_scalar`` (multiply).  Every instruction rounds its
result to the destination dtype (bf16 tiles, float32 [P, 1] statistics), so the output
is checked against numpy's float32 softmax with a bf16-sized tolerance, and bit for bit
against the same sequence evaluated with float64 libm exp and explicit roundings.
"""

import math

import ml_dtypes
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl

from fastisa.examples import Report

TITLE = "NKI row softmax, [128, 8192] bf16 (reduce max, subtract, exp + sum, reciprocal, scale)"
FRONTEND = "nki"
ORDER = 20


@nki.jit
def softmax_kernel(x):
    """out[p, :] = exp(x[p, :] - max(x[p, :])) / sum(exp(...)), one [P, F] SBUF tile."""
    P, F = x.shape
    t = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.sbuf, name="t")
    nisa.dma_copy(dst=t, src=x)
    row_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf, name="row_max")
    nisa.tensor_reduce(dst=row_max, op=nl.maximum, data=t, axis=1, keepdims=True)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.subtract, operand0=row_max)
    row_sum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf, name="row_sum")
    nisa.activation(dst=t, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=row_sum,
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)
    inv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf, name="inv")
    nisa.reciprocal(dst=inv, data=row_sum)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    out = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.shared_hbm, name="out")
    nisa.dma_copy(dst=out, src=t)
    return out


def _bf16(a):
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16)


def reference_sequence(x):
    """The instruction sequence in numpy: float32 arithmetic, float64 (libm) exp rounded
    once, each result rounded to its destination dtype (bf16 tiles, float32 statistics)."""
    xf = x.astype(np.float32)
    m = xf.max(axis=1, keepdims=True)
    s = _bf16(xf - m)
    e64 = np.frompyfunc(math.exp, 1, 1)(s.astype(np.float64)).astype(np.float64)
    e = _bf16_from_f64(e64)
    e32 = e64.astype(np.float32)
    ssum = np.zeros((x.shape[0], 1), np.float32)
    for j in range(x.shape[1]):           # the accumulator adds left to right in float32
        ssum[:, 0] = (ssum[:, 0] + e32[:, j]).astype(np.float32)
    inv = (np.float32(1) / ssum).astype(np.float32)
    return _bf16(e.astype(np.float32) * inv)


def _bf16_from_f64(v):
    """float64 -> bf16 with ONE rounding (RNE on the exact value; exp > 0, no NaN here)."""
    v = np.asarray(v, np.float64)
    _, e = np.frexp(np.where(v > 0, v, 1.0))
    q = np.ldexp(1.0, np.maximum(e - 1, -126) - 7)
    return (np.rint(v / q) * q).astype(np.float32).astype(ml_dtypes.bfloat16)


def demo(seed=0, F=8192):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((128, F)) * 4).astype(ml_dtypes.bfloat16)
    sim = nki.simulate(softmax_kernel)
    out = sim(x)
    r = Report("nki_softmax", TITLE, __doc__)
    r.inputs.append(("x", x))
    r.outputs.append(("out", out))
    xf = x.astype(np.float32)
    ex = np.exp(xf - xf.max(axis=1, keepdims=True))
    np_ref = ex / ex.sum(axis=1, keepdims=True)
    o = out.astype(np.float32)
    rel = np.abs(o - np_ref) / np_ref
    # bf16 rounding of d = x - max moves exp(d) by up to exp(|d| * 2^-8); three more bf16
    # roundings (exp, 1/sum applied, output) add about 3 * 2^-8
    bound = np.expm1(np.abs(xf - xf.max(axis=1, keepdims=True)) * 2.0**-8 + 3 * 2.0**-8)
    err = float(rel.max())
    r.check("matches numpy float32 softmax within the bf16 rounding bound "
            "expm1(|x - max| * 2^-8 + 3 * 2^-8), element-wise", bool(np.all(rel <= bound)))
    r.check("rows sum to 1 within 1%", np.allclose(o.sum(axis=1), 1.0, rtol=1e-2))
    r.check("bit-exact vs the instruction sequence in numpy (float64 exp, one rounding each)",
            np.array_equal(out.view(np.uint16), reference_sequence(x).view(np.uint16)))
    worst = np.unravel_index(int(np.argmax(rel)), rel.shape)
    r.notes.append(f"max relative error vs numpy float32 softmax: {err:.3g}, at an element with "
                   f"x - max = {float((xf - xf.max(axis=1, keepdims=True))[worst]):.3g} "
                   f"(bound there {float(bound[worst]):.3g}: the bf16 rounding of x - max "
                   f"dominates for the smallest probabilities)")
    r.cycles = dict(sim.profile.totals())
    return r

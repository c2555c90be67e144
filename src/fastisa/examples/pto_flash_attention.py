"""Flash-attention forward, S = 64, D = 32, float32, in the PTO Python API, following the
pto-isa CPU demo's sequence:

    TLOAD Q, K, V; TMOV Q -> Left; TTRANS K; TMOV K^T -> Right; TMATMUL (Acc, float32);
    TMOV Acc -> Vec; TMULS(scale); TROWMAX; TROWEXPANDSUB; TEXP; TROWSUM; TROWEXPANDDIV;
    TMOV P -> Left, V -> Right; TMATMUL; TMOV Acc -> Vec; TSTORE O

Checked against softmax(Q K^T / sqrt(D)) V computed in float64 numpy.
"""

import math

import numpy as np

from fastisa import cost, pto
from fastisa.examples import Report
from fastisa.pto import BLayout, Tile, TileType

TITLE = "PTO flash attention S=64, D=32 float32 (TMATMUL, row softmax, TMATMUL)"
FRONTEND = "pto"
ORDER = 2
S, D = 64, 32


def attention_kernel(q_gm, k_gm, v_gm, o_gm, scale):
    f32 = np.float32
    q = Tile(TileType.Vec, f32, S, D)
    k = Tile(TileType.Vec, f32, S, D)
    v = Tile(TileType.Vec, f32, S, D)
    kt = Tile(TileType.Vec, f32, D, S)
    q_l = Tile(TileType.Left, f32, S, D)
    kt_r = Tile(TileType.Right, f32, D, S)
    v_r = Tile(TileType.Right, f32, S, D)
    scores_acc = Tile(TileType.Acc, f32, S, S)
    scores = Tile(TileType.Vec, f32, S, S)
    tmp = Tile(TileType.Vec, f32, S, S)
    row_max = Tile(TileType.Vec, f32, S, 1, blayout=BLayout.ColMajor)
    row_sum = Tile(TileType.Vec, f32, S, 1, blayout=BLayout.ColMajor)
    p_l = Tile(TileType.Left, f32, S, S)
    o_acc = Tile(TileType.Acc, f32, S, D)
    o = Tile(TileType.Vec, f32, S, D)

    pto.TLOAD(q, pto.GlobalTensor(q_gm))
    pto.TLOAD(k, pto.GlobalTensor(k_gm))
    pto.TLOAD(v, pto.GlobalTensor(v_gm))
    pto.TMOV(q_l, q)
    pto.TTRANS(kt, k)
    pto.TMOV(kt_r, kt)
    pto.TMATMUL(scores_acc, q_l, kt_r)            # S = Q K^T, float32 accumulation
    pto.TMOV(scores, scores_acc)
    pto.TMULS(scores, scores, scale)
    pto.TROWMAX(row_max, scores, tmp)
    pto.TROWEXPANDSUB(tmp, scores, row_max)
    pto.TEXP(tmp, tmp)
    pto.TROWSUM(row_sum, tmp)
    pto.TROWEXPANDDIV(scores, tmp, row_sum)       # P = softmax(S * scale)
    pto.TMOV(p_l, scores)
    pto.TMOV(v_r, v)
    pto.TMATMUL(o_acc, p_l, v_r)                  # O = P V
    pto.TMOV(o, o_acc)
    pto.TSTORE(pto.GlobalTensor(o_gm), o)


def demo(seed=0) -> Report:
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((S, D)).astype(np.float32) for _ in range(3))
    o = np.zeros((S, D), np.float32)
    scale = 1.0 / math.sqrt(D)
    with cost.profiling() as prof:
        attention_kernel(q, k, v, o, scale)
    s64 = (q.astype(np.float64) @ k.astype(np.float64).T) * scale
    p64 = np.exp(s64 - s64.max(axis=1, keepdims=True))
    p64 /= p64.sum(axis=1, keepdims=True)
    ref = p64 @ v.astype(np.float64)
    err = float(np.max(np.abs(o - ref)))
    r = Report(name="pto_flash_attention", title=TITLE,
               description=__doc__.strip().split("\n\n")[0])
    r.inputs += [("Q", q), ("K", k), ("V", v)]
    r.outputs.append(("O = softmax(Q K^T / sqrt(D)) V", o))
    r.check(f"matches the float64 numpy reference (max abs error {err:.2e} < 1e-5)", err < 1e-5)
    r.cycles = prof.totals()
    r.notes.append("engine cycles are estimates (Vector: vector_cycles, Cube: cube_cycles, MTE)")
    return r

"""Row softmax of a [64, 128] float32 tile in the PTO Python API:

    TLOAD(x); TROWMAX(m, x); TROWEXPANDSUB(t, x, m); TEXP(t, t);
    TROWSUM(s, t); TROWEXPANDDIV(y, t, s); TSTORE(y)

and the same with the fused TROWEXPANDEXPDIF(t, x, m) (the PTO ISA docs, page TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, docs/isa/TROWEXPANDEXPDIF.md), mode 1: m is a ColMajor
[R, 1] tile).  Checked against a float64 numpy softmax: the max relative error must stay
below 1e-5 (the float32 row sum of 128 terms alone can be off by 128 * 2^-24 ~ 7.6e-6).
"""

import numpy as np

from fastisa import cost, pto
from fastisa.examples import Report
from fastisa.pto import BLayout, Tile, TileType

TITLE = "PTO row softmax [64, 128] float32 (TROWMAX, TROWEXPANDSUB/EXPDIF, TEXP, TROWSUM, TROWEXPANDDIV)"
FRONTEND = "pto"
ORDER = 1
R, C = 64, 128


def softmax_kernel(x_gm, y_gm, fused=False):
    x = Tile(TileType.Vec, np.float32, R, C)
    t = Tile(TileType.Vec, np.float32, R, C)
    y = Tile(TileType.Vec, np.float32, R, C)
    m = Tile(TileType.Vec, np.float32, R, 1, blayout=BLayout.ColMajor)   # one scalar per row
    s = Tile(TileType.Vec, np.float32, R, 1, blayout=BLayout.ColMajor)
    pto.TLOAD(x, pto.GlobalTensor(x_gm))
    pto.TROWMAX(m, x)
    if fused:
        pto.TROWEXPANDEXPDIF(t, x, m)
    else:
        pto.TROWEXPANDSUB(t, x, m)
        pto.TEXP(t, t)
    pto.TROWSUM(s, t)
    pto.TROWEXPANDDIV(y, t, s)
    pto.TSTORE(pto.GlobalTensor(y_gm), y)


def demo(seed=0) -> Report:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((R, C)) * 4).astype(np.float32)
    y = np.zeros((R, C), np.float32)
    y2 = np.zeros((R, C), np.float32)
    with cost.profiling() as prof:
        softmax_kernel(x, y)
    softmax_kernel(x, y2, fused=True)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    rel = float(np.max(np.abs(y - ref) / ref))
    r = Report(name="pto_softmax", title=TITLE, description=__doc__.strip().split("\n\n")[0])
    r.inputs.append(("x", x))
    r.outputs.append(("y = softmax(x, axis=1)", y))
    r.check(f"matches float64 numpy softmax (max relative error {rel:.2e} < 1e-5)", rel < 1e-5)
    r.check("rows sum to 1 within 1e-5", np.allclose(y.astype(np.float64).sum(axis=1), 1, atol=1e-5))
    r.check("TROWEXPANDEXPDIF form gives the same bits as TROWEXPANDSUB + TEXP",
            np.array_equal(y.view(np.uint32), y2.view(np.uint32)))
    r.cycles = prof.totals()
    r.notes.append("engine cycles are estimates (fastisa.pto.vector_cycles / the MTE model)")
    return r

"""the PTO ISA docs, page TRECIP (github.com/hw-native-sys/pto-isa, docs/isa/TRECIP.md)'s TRECIP example, mirrored in Python:

    using TileT = Tile<TileType::Vec, float, 16, 16>;
    TileT x, out;
    TRECIP(out, x);
    TRECIP<RecipAlgorithm::HIGH_PRECISION>(out, x);

x is loaded from global memory with TLOAD, the two results are stored with TSTORE and
checked bit for bit against numpy's float32 1/x (HIGH_PRECISION has effect only on A5
hardware; both give the correctly rounded reciprocal here).
"""

import numpy as np

from fastisa import cost, pto
from fastisa.examples import Report
from fastisa.pto import RecipAlgorithm, Tile, TileType

TITLE = "PTO TRECIP on Tile<TileType::Vec, float, 16, 16> (PTO ISA docs example), DEFAULT and HIGH_PRECISION"
FRONTEND = "pto"
ORDER = 0


def kernel(x_gm, out_gm, out_hp_gm):
    TileT = lambda: Tile(TileType.Vec, np.float32, 16, 16)  # noqa: E731
    x, out = TileT(), TileT()
    pto.TLOAD(x, pto.GlobalTensor(x_gm))
    pto.TRECIP(out, x)
    pto.TSTORE(pto.GlobalTensor(out_gm), out)
    pto.TRECIP(out, x, precision=RecipAlgorithm.HIGH_PRECISION)
    pto.TSTORE(pto.GlobalTensor(out_hp_gm), out)


def demo(seed=0) -> Report:
    rng = np.random.default_rng(seed)
    x = (rng.uniform(0.25, 8.0, (16, 16)) * rng.choice([-1.0, 1.0], (16, 16))).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    out_hp = np.zeros((16, 16), np.float32)
    with cost.profiling() as prof:
        kernel(x, out, out_hp)
    want = np.float32(1.0) / x
    r = Report(name="pto_trecip", title=TITLE, description=__doc__.strip().split("\n\n")[0])
    r.inputs.append(("x", x))
    r.outputs += [("out = TRECIP(x)", out), ("out = TRECIP<HIGH_PRECISION>(x)", out_hp)]
    r.check("TRECIP(out, x) equals numpy float32 1/x bit for bit",
            np.array_equal(out.view(np.uint32), want.view(np.uint32)))
    r.check("TRECIP<HIGH_PRECISION>(out, x) equals numpy float32 1/x bit for bit",
            np.array_equal(out_hp.view(np.uint32), want.view(np.uint32)))
    r.cycles = prof.totals()
    r.notes.append(f"target {pto.get_target()}; engine cycles are estimates "
                   "(fastisa.pto.vector_cycles)")
    return r

"""A row softmax written in PTO assembly text (PTO-AS), run by ``fastisa.pto.asm``.

``y[i, j] = exp(s*x[i, j] - max_j s*x[i, j]) / sum_j exp(s*x[i, j] - max_j s*x[i, j])``
for a [20, 100] float32 input and a scale ``s`` passed as a scalar argument.  The data
fills only part of a 32 x 128 tile (valid region 20 x 100), so the reductions, the row
expansions and TSTORE work on the valid region only.  The program is the string
``PTO_TEXT`` below; save it to ``softmax.pto`` and run it with
``fastisa run softmax.pto --input x=x.npy --input scale=scale.npy``.
Checked against a float64 numpy softmax.
"""

from __future__ import annotations

import numpy as np

from fastisa import cost
from fastisa.examples import Report
from fastisa.pto import asm

TITLE = "PTO-AS row softmax (text program, 20x100 float32 in a 32x128 tile)"
FRONTEND = "pto"
ORDER = 20

ROWS, COLS = 20, 100

# !T: the data tile, !V: one value per row ([R, 1] column-major, mode 1 of the row-expand ops)
PTO_TEXT = """\
// Row softmax of y = softmax(scale * x) over the last axis, x: [20, 100] float32.
module attributes {pto.target_arch = "a2a3"} {
  func.func @row_softmax(%x: !pto.ptr<f32>, %scale: f32, %y: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c20 = arith.constant 20 : index
    %c100 = arith.constant 100 : index
    %xv = pto.make_tensor_view %x, shape = [%c20, %c100], strides = [%c100, %c1] : !pto.tensor_view<?x?xf32>
    %yv = pto.make_tensor_view %y, shape = [%c20, %c100], strides = [%c100, %c1] : !pto.tensor_view<?x?xf32>
    %xp = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%c20, %c100] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<20x100xf32>
    %yp = pto.partition_view %yv, offsets = [%c0, %c0], sizes = [%c20, %c100] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<20x100xf32>

    %t = pto.alloc_tile : !pto.tile_buf<vec, 32x128xf32, valid=20x100>
    %u = pto.alloc_tile : !pto.tile_buf<vec, 32x128xf32, valid=20x100>
    %tmp = pto.alloc_tile : !pto.tile_buf<vec, 32x128xf32, valid=20x100>
    %m = pto.alloc_tile : !pto.tile_buf<vec, 32x1xf32, valid=20x1, blayout=col_major>
    %s = pto.alloc_tile : !pto.tile_buf<vec, 32x1xf32, valid=20x1, blayout=col_major>

    pto.tload ins(%xp : !pto.partition_tensor_view<20x100xf32>) outs(%t : !pto.tile_buf<vec, 32x128xf32, valid=20x100>)
    pto.set_flag ["PIPE_MTE2", "PIPE_V", "EVENT_ID0"]
    pto.wait_flag ["PIPE_MTE2", "PIPE_V", "EVENT_ID0"]
    // u = scale * x
    pto.tmuls ins(%t, %scale : !pto.tile_buf<vec, 32x128xf32, valid=20x100>, f32) outs(%u : !pto.tile_buf<vec, 32x128xf32, valid=20x100>)
    // m_i = max_j u[i, j]
    pto.trowmax ins(%u, %tmp : !pto.tile_buf<vec, 32x128xf32, valid=20x100>, !pto.tile_buf<vec, 32x128xf32, valid=20x100>) outs(%m : !pto.tile_buf<vec, 32x1xf32, valid=20x1, blayout=col_major>)
    // t = exp(u - m_i)   (spec 004, mode 1, with the tmp tile)
    pto.trowexpandexpdif ins(%u, %m, %tmp : !pto.tile_buf<vec, 32x128xf32, valid=20x100>, !pto.tile_buf<vec, 32x1xf32, valid=20x1, blayout=col_major>, !pto.tile_buf<vec, 32x128xf32, valid=20x100>) outs(%t : !pto.tile_buf<vec, 32x128xf32, valid=20x100>)
    // s_i = sum_j t[i, j]
    pto.trowsum ins(%t, %tmp : !pto.tile_buf<vec, 32x128xf32, valid=20x100>, !pto.tile_buf<vec, 32x128xf32, valid=20x100>) outs(%s : !pto.tile_buf<vec, 32x1xf32, valid=20x1, blayout=col_major>)
    // u = t / s_i
    pto.trowexpanddiv ins(%t, %s : !pto.tile_buf<vec, 32x128xf32, valid=20x100>, !pto.tile_buf<vec, 32x1xf32, valid=20x1, blayout=col_major>) outs(%u : !pto.tile_buf<vec, 32x128xf32, valid=20x100>)
    pto.set_flag ["PIPE_V", "PIPE_MTE3", "EVENT_ID0"]
    pto.wait_flag ["PIPE_V", "PIPE_MTE3", "EVENT_ID0"]
    pto.tstore ins(%u : !pto.tile_buf<vec, 32x128xf32, valid=20x100>) outs(%yp : !pto.partition_tensor_view<20x100xf32>)
    return
  }
}
"""


def reference(x: np.ndarray, scale: float) -> np.ndarray:
    """float64 numpy row softmax of ``scale * x``."""
    z = np.float64(scale) * x.astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def demo(seed: int = 0) -> Report:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((ROWS, COLS)) * 4).astype(np.float32)
    scale = np.float32(0.5)
    with cost.profiling() as prof:
        y = asm.run(PTO_TEXT, {"x": x, "scale": scale})["y"]
    want = reference(x, float(scale))
    rel = float(np.max(np.abs(y.astype(np.float64) - want) / want))
    report = Report(name="pto_softmax_asm", title=TITLE, description=__doc__.split("\n\n")[0],
                    inputs=[("x", x), ("scale", np.array(scale))], outputs=[("y", y)],
                    cycles=prof.totals())
    report.notes.append(f"max relative error vs float64: {rel:.3g} "
                        f"({rel / np.finfo(np.float32).eps:.2f} float32 eps)")
    report.check("y has shape (20, 100) and dtype float32",
                 y.shape == (ROWS, COLS) and y.dtype == np.float32)
    # bound: exp rounded once (0.5 ulp), a 100-term float32 sum, one division
    report.check("y matches the float64 softmax within 64 float32 eps (relative)",
                 rel < 64 * np.finfo(np.float32).eps)
    report.check("every row sums to 1 within 1e-5",
                 np.all(np.abs(y.astype(np.float64).sum(axis=1) - 1) < 1e-5))
    return report

"""A row softmax written in PTO assembly text (PTO-AS), run by ``fastisa.pto.asm``.

``y[i, j] = exp(s*x[i, j] - max_j s*x[i, j]) / sum_j exp(s*x[i, j] - max_j s*x[i, j])``
for a [rows, 100] float32 input (rows = 100 here) and a scale ``s``, both passed as scalar
arguments.  An ``scf.for`` loop walks the rows in blocks of 16; each block is loaded into a
16 x 128 tile whose valid region (``valid=?x?``, set with ``pto.set_validshape``) is
``min(16, rows - i) x 100``, so the last block (4 rows) and the 28 padding columns are
never touched by the reductions, the row expansions or TSTORE.  The program is the string
``PTO_TEXT`` below; save it to ``softmax.pto`` and run it with
``fastisa run softmax.pto --input x=x.npy --input rows=rows.npy --input scale=scale.npy``.
Checked against a float64 numpy softmax.
"""

from __future__ import annotations

import numpy as np

from fastisa import cost
from fastisa.examples import Report
from fastisa.pto import asm

TITLE = "PTO-AS row softmax (text program: scf.for over 16-row blocks of a 100x100 float32)"
FRONTEND = "pto"
ORDER = 20

ROWS, COLS = 100, 100

# !T: a 16-row data block, !V: one value per row ([R, 1] column-major, row-expand mode 1)
PTO_TEXT = """\
// y = softmax(scale * x) over the last axis; x, y: [rows, 100] float32.
module attributes {pto.target_arch = "a2a3"} {
  func.func @row_softmax(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %rows: index, %scale: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c100 = arith.constant 100 : index
    %xv = pto.make_tensor_view %x, shape = [%rows, %c100], strides = [%c100, %c1] : !pto.tensor_view<?x?xf32>
    %yv = pto.make_tensor_view %y, shape = [%rows, %c100], strides = [%c100, %c1] : !pto.tensor_view<?x?xf32>
    %t = pto.alloc_tile valid_row = %c16 valid_col = %c100 : !pto.tile_buf<vec, 16x128xf32, valid=?x?>
    %u = pto.alloc_tile valid_row = %c16 valid_col = %c100 : !pto.tile_buf<vec, 16x128xf32, valid=?x?>
    %tmp = pto.alloc_tile valid_row = %c16 valid_col = %c100 : !pto.tile_buf<vec, 16x128xf32, valid=?x?>
    %m = pto.alloc_tile valid_row = %c16 valid_col = %c1 : !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>
    %s = pto.alloc_tile valid_row = %c16 valid_col = %c1 : !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>
    scf.for %i = %c0 to %rows step %c16 {
      // n = min(16, rows - i): the rows of this block
      %left = arith.subi %rows, %i : index
      %n = arith.minsi %left, %c16 : index
      pto.set_validshape %t, %n, %c100 : !pto.tile_buf<vec, 16x128xf32, valid=?x?>
      pto.set_validshape %u, %n, %c100 : !pto.tile_buf<vec, 16x128xf32, valid=?x?>
      pto.set_validshape %tmp, %n, %c100 : !pto.tile_buf<vec, 16x128xf32, valid=?x?>
      pto.set_validshape %m, %n, %c1 : !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>
      pto.set_validshape %s, %n, %c1 : !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>
      %xp = pto.partition_view %xv, offsets = [%i, %c0], sizes = [%n, %c100] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x100xf32>
      %yp = pto.partition_view %yv, offsets = [%i, %c0], sizes = [%n, %c100] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x100xf32>
      pto.tload ins(%xp : !pto.partition_tensor_view<?x100xf32>) outs(%t : !pto.tile_buf<vec, 16x128xf32, valid=?x?>)
      pto.set_flag ["PIPE_MTE2", "PIPE_V", "EVENT_ID0"]
      pto.wait_flag ["PIPE_MTE2", "PIPE_V", "EVENT_ID0"]
      // u = scale * x
      pto.tmuls ins(%t, %scale : !pto.tile_buf<vec, 16x128xf32, valid=?x?>, f32) outs(%u : !pto.tile_buf<vec, 16x128xf32, valid=?x?>)
      // m_i = max_j u[i, j]
      pto.trowmax ins(%u, %tmp : !pto.tile_buf<vec, 16x128xf32, valid=?x?>, !pto.tile_buf<vec, 16x128xf32, valid=?x?>) outs(%m : !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>)
      // t = exp(u - m_i)   (the PTO ISA docs, page TROWEXPANDEXPDIF (github.com/hw-native-sys/pto-isa, docs/isa/TROWEXPANDEXPDIF.md), mode 1, with the tmp tile)
      pto.trowexpandexpdif ins(%u, %m, %tmp : !pto.tile_buf<vec, 16x128xf32, valid=?x?>, !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>, !pto.tile_buf<vec, 16x128xf32, valid=?x?>) outs(%t : !pto.tile_buf<vec, 16x128xf32, valid=?x?>)
      // s_i = sum_j t[i, j]
      pto.trowsum ins(%t, %tmp : !pto.tile_buf<vec, 16x128xf32, valid=?x?>, !pto.tile_buf<vec, 16x128xf32, valid=?x?>) outs(%s : !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>)
      // u = t / s_i
      pto.trowexpanddiv ins(%t, %s : !pto.tile_buf<vec, 16x128xf32, valid=?x?>, !pto.tile_buf<vec, 16x1xf32, valid=?x?, blayout=col_major>) outs(%u : !pto.tile_buf<vec, 16x128xf32, valid=?x?>)
      pto.set_flag ["PIPE_V", "PIPE_MTE3", "EVENT_ID0"]
      pto.wait_flag ["PIPE_V", "PIPE_MTE3", "EVENT_ID0"]
      pto.tstore ins(%u : !pto.tile_buf<vec, 16x128xf32, valid=?x?>) outs(%yp : !pto.partition_tensor_view<?x100xf32>)
    }
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
        y = asm.run(PTO_TEXT, {"x": x, "rows": ROWS, "scale": scale})["y"]
    want = reference(x, float(scale))
    rel = float(np.max(np.abs(y.astype(np.float64) - want) / want))
    report = Report(name="pto_softmax_asm", title=TITLE, description=__doc__.split("\n\n")[0],
                    inputs=[("x", x), ("rows", np.array(ROWS)), ("scale", np.array(scale))],
                    outputs=[("y", y)],
                    cycles=prof.totals())
    report.notes.append(f"max relative error vs float64: {rel:.3g} "
                        f"({rel / np.finfo(np.float32).eps:.2f} float32 eps)")
    report.check(f"y has shape ({ROWS}, {COLS}) and dtype float32",
                 y.shape == (ROWS, COLS) and y.dtype == np.float32)
    # bound: exp rounded once (0.5 ulp), a 100-term float32 sum, one division
    report.check("y matches the float64 softmax within 64 float32 eps (relative)",
                 rel < 64 * np.finfo(np.float32).eps)
    report.check("every row sums to 1 within 1e-5",
                 np.all(np.abs(y.astype(np.float64).sum(axis=1) - 1) < 1e-5))
    return report

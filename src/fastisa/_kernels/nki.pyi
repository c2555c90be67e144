"""Type stubs of the NKI compute drivers (src/fastisa/_kernels/nki.pyx over csrc/fastisa/nki.h)."""

from typing import Optional, Sequence, Tuple

import numpy as np

Stage = Tuple[int, int, int, Optional[np.ndarray], Optional[np.ndarray]]

def elementwise(dst: np.ndarray, dst_fmt: int, in0: np.ndarray, in0_fmt: int,
                in1: Optional[np.ndarray], in1_fmt: int, stages: Sequence[Stage],
                raw: int = ..., bitvec: int = ..., act: int = ..., scalar_engine: int = ...,
                alpha: float = ..., lut: Optional[np.ndarray] = ...,
                acc: Optional[np.ndarray] = ..., acc_max: int = ..., threads: int = ...,
                lutp: Optional[np.ndarray] = ..., intmode: int = ...) -> int: ...
def reduce(out: np.ndarray, out_fmt: int, inp: np.ndarray, in_fmt: int, op: int,
           bitvec: int = ..., negate: int = ..., threads: int = ...) -> None: ...
def act_table(act: int, alpha: float, scalar_engine: int, x: np.ndarray,
              out: np.ndarray) -> None: ...
def encode_f64(fmt: int, x: np.ndarray, out: np.ndarray) -> None: ...
def matmul_f32(out: np.ndarray, s: np.ndarray, v: np.ndarray, threads: int = 1) -> None: ...

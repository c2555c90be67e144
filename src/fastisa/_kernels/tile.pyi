"""Type stubs for fastisa._kernels.tile (PTO tile kernel drivers)."""
OP_COPY: int
OP_ABS: int
OP_NEG: int
OP_RELU: int
OP_RECIP: int
OP_EXP: int
OP_LOG: int
OP_SQRT: int
OP_RSQRT: int
OP_ADD: int
OP_SUB: int
OP_MUL: int
OP_DIV: int
OP_MAX: int
OP_MIN: int
OP_EXPDIF: int
OP_SUM: int
CHUNK: int

def unary(op: int, d: memoryview, dfmt: int, drs: int, dcs: int, s: memoryview, sfmt: int,
          srs: int, scs: int, R: int, C: int) -> None: ...
def binary(op: int, d: memoryview, dfmt: int, drs: int, dcs: int, a: memoryview, afmt: int,
           ars: int, acs: int, avc: int, b: memoryview, bfmt: int, brs: int, bcs: int,
           bvc: int, R: int, C: int) -> None: ...
def rowreduce(op: int, d: memoryview, dfmt: int, drs: int, s: memoryview, sfmt: int, srs: int,
              scs: int, R: int, C: int) -> None: ...
def colreduce(op: int, d: memoryview, dfmt: int, dcs: int, s: memoryview, sfmt: int, srs: int,
              scs: int, R: int, C: int) -> None: ...
def matmul(d: memoryview, dfmt: int, drs: int, dcs: int, a: memoryview, afmt: int, ars: int,
           acs: int, b: memoryview, bfmt: int, brs: int, bcs: int, M: int, K: int,
           N: int, c: memoryview | None = ..., cfmt: int = ..., crs: int = ...,
           ccs: int = ...) -> None: ...
def cvt(mode: int, d: memoryview, dfmt: int, drs: int, dcs: int, s: memoryview, sfmt: int,
        srs: int, scs: int, R: int, C: int) -> None: ...
def set_threads(n: int) -> None: ...
def set_exp_simd(on: bool) -> bool: ...

# speed family (issue 15): per-signature plans of the elementwise tile instructions
from typing import Any as _Any, Optional as _Optional

def set_plan_env(tile_class: type, plans: dict, hooks: list, active: _Any, scalar_array: _Any,
                 f32_code: int, replay: _Any) -> None: ...
def tile_key(head: tuple, a: _Any, b: _Any = ..., c: _Any = ...) -> _Optional[bytes]: ...
def tile_part(t: _Any) -> _Any: ...
class TileBase:
    def __reduce_ex__(self, protocol: int) -> _Any: ...
def cached_part(t: _Any) -> _Any: ...
def hit(head: tuple, dst: _Any, a: _Any, b: _Any = ..., scalar: _Any = ...) -> bool: ...
def hit_idle(head: tuple, dst: _Any, a: _Any, b: _Any = ..., scalar: _Any = ...) -> bool: ...

class TilePlan:
    record: tuple
    def __init__(self, op: int, nsrc: int, rev: int, R: int, C: int, dst: _Any, srcs: _Any,
                 rec: tuple, keep: _Any) -> None: ...

# matmul15 branch: the float matmul's instruction set (-1 auto, 0 portable, 1 AVX2, 2 AVX-512)
def set_matmul_isa(level: int = -1) -> int: ...

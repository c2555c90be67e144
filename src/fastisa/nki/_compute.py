"""NKI compute instructions (tensor_scalar, tensor_tensor, activation, ...).

Owned by the NKI compute work; re-exported by :mod:`fastisa.nki.isa`.
"""

__all__: list[str] = []

"""NKI operator and activation-function objects (``nl.add`` ... ``nl.reciprocal``, ``nl.exp`` ...).

Owned by the NKI compute work; re-exported by :mod:`fastisa.nki.language`.
"""

__all__: list[str] = []

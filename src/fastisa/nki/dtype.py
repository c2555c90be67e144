"""``nki.dtype`` / ``nki.language.dtypes``: the data types, as in ``nki.language``."""

from __future__ import annotations

from .language import (bfloat16, bool_, float4_e2m1fn_x4, float8_e4m3, float8_e4m3fn,  # noqa: F401
                       float8_e4m3fn_x4, float8_e5m2, float8_e5m2_x4, float8_e8m0fnu, float16,
                       float32, int8, int16, int32, tfloat32, uint8, uint16, uint32)

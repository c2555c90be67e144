"""Type stubs of src/fastisa/_kernels/span.pyx (operand byte ranges for the schedule)."""

from typing import Any, Callable, Optional, Tuple

import numpy as np

def array_span(a: np.ndarray, serial_of: Callable[[np.ndarray], int]
               ) -> Optional[Tuple[Any, int, int, int, int, int]]: ...

"""pytest plugin loaded (``-p tests.conformance._nki_plugin``) into a vendor collection's own
test run: installs fastisa's shim before the collection's conftest or tests import ``nki``,
``neuronxcc.nki`` or ``nki_cpu_simulator``, so the kernels and tests run unchanged."""

import os

from fastisa import shim

shim.install()
os.environ.setdefault("NKI_SIMULATOR", "1")

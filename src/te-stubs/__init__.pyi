# PEP 561 stub-only package shipped by fastisa: `from te import tik` type-checks as
# fastisa.tik, which is what fastisa.shim makes it at run time.
from fastisa import tik as tik
from fastisa.tik import platform as platform
from fastisa.tik.compat import tvm as tvm

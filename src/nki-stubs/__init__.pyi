# PEP 561 stub-only package shipped by fastisa: `import nki` type-checks as fastisa.nki,
# which is what fastisa.shim makes it at run time.
from fastisa.nki import *
from fastisa.nki import Kernel as Kernel, NkiTensor as NkiTensor, jit as jit
from fastisa.nki import profile as profile, simulate as simulate, target as target

from . import isa as isa, language as language

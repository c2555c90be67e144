"""pytest plugin for nki-library's own test harness on a machine without the AWS / Neuron
infrastructure packages it imports (S3 upload, CloudWatch metrics, SSH to hosts, the Neuron
compiler frontend).  Those code paths never run in ``--test-mode=simulation``; each missing
package is replaced by a stub module whose every attribute is a fresh class (usable as a
base class, an exception type or a callable).  ``neuron_dtypes.static_cast`` (used on the
reference side to round torch results to the input dtype) is provided as numpy/ml_dtypes
``astype`` (round to nearest even), ``neuron_dtypes.sizeinbytes`` as the numpy itemsize and
``neuron_dtypes.finfo`` as ``ml_dtypes.finfo``, and said so in the harness output.  Only packages that
cannot be imported are stubbed; nothing of nki-library is copied."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

import numpy as np

from . import _nki_plugin  # noqa: F401  (installs fastisa.shim)

STUBBED_TOPS = ("boto3", "botocore", "aws_embedded_metrics", "paramiko", "fabric", "fabric2",
                "plotext", "neuron_dtypes", "debugpy", "s3transfer")
#: modules nki-library's harness imports that are absent from its public checkout or are
#: compiler-only (every name below them is stubbed too)
STUBBED_MODULES = ("nki.compiler.frontend", "test.utils.scripts", "test.utils.perf_analysis_private")


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (Exception,), {"__init__": lambda self, *a, **k: None,
                                        "__call__": lambda self, *a, **k: None,
                                        "__getattr__": lambda self, n: None})
        setattr(self, name, cls)
        return cls


def _static_cast(x, dtype):
    return np.asarray(x).astype(np.dtype(dtype))


def _sizeinbytes(dtype):
    return np.dtype(dtype).itemsize


def _finfo(dtype):
    import ml_dtypes
    return ml_dtypes.finfo(np.dtype(dtype))


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        m = _StubModule(spec.name, "fastisa conformance stub (infrastructure not installed)")
        m.__path__ = []
        if spec.name == "neuron_dtypes":
            m.static_cast = _static_cast
            m.sizeinbytes = _sizeinbytes
            m.finfo = _finfo
        return m

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, tops):
        self.tops = tops

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if top in self.tops or any(fullname == m or fullname.startswith(m + ".")
                                   for m in STUBBED_MODULES):
            return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)
        return None


_missing = tuple(t for t in STUBBED_TOPS if importlib.util.find_spec(t) is None)
sys.meta_path.append(_Finder(_missing))


def pytest_configure(config):
    """nki-library's Orchestrator reads ``self._compiled_kernel`` after inference, but only
    its compile path sets it, so every simulation-mode case that ran stopped with an
    AttributeError before comparing.  Give the attribute its "not compiled" value (None;
    the code it guards then returns early) without touching the checkout."""
    try:
        from test.utils.test_orchestrator import Orchestrator
    except Exception:
        return
    if not hasattr(Orchestrator, "_compiled_kernel"):
        Orchestrator._compiled_kernel = None

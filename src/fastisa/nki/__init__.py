"""fastisa's NKI front-end: ``nki.jit``, ``nki.simulate``, ``nki.isa``, ``nki.language``.

Kernels written for AWS Neuron's ``nki`` (``import nki``, ``import nki.isa as nisa``,
``import nki.language as nl``) run unchanged with :mod:`fastisa.shim` installed::

    @nki.jit
    def kernel(a):                      # a: an HBM tensor
        t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        ...
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out

    result = nki.simulate(kernel)(a_numpy)      # numpy in, numpy out
    kernel.profile.totals()                     # {'DMA': ..., 'GpSimd': ...} engine cycles

As in the official simulator: each numpy argument becomes an HBM :class:`NkiTensor`
(``nl.hbm``; ``nl.shared_hbm`` for SPMD launches) over the caller's array, so an input
the kernel writes is updated in place; other arguments pass through; every instruction
runs eagerly, in program order; returned tensors come back as numpy arrays (same nesting:
a tensor, a tuple/list, a dict).  ``nki.simulate(kernel[n])`` (or ``kernel[n]`` for a
grid ``kernel[n, m]``) runs the ``n`` SPMD instances, each with its own
``nl.program_id()``, its own SBUF/PSUM and the same ``shared_hbm`` outputs: one after the
other unless they synchronise (``core_barrier``, ``sendrecv``), then concurrently, as
turn-taking threads (:mod:`fastisa.nki._launch`); a cross-program write-after-write to
shared HBM with no synchronisation between is warned about.
"""

from __future__ import annotations

import functools
import math
import weakref

import numpy as np

from .. import cost as _cost
from .. import dtypes as _dt
from ..errors import ConstraintError
from .._kernels import pool as _pool   # speed15 branch: recycled storage for results
from .._kernels.nki import join as _mm_join   # an overlapped nc_matmul's end (issue 15)
from . import _capacity, _launch, language
# outside a kernel instance (nki.simulate) the launch and capacity hooks do nothing
_cost.idle_when(_launch._record_hook, context=language._MACHINE)
_cost.idle_when(_capacity._record_hook, context=language._MACHINE)
from .tensor import NkiTensor

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["jit", "simulate", "target", "Kernel", "NkiTensor", "isa", "language", "profile"]

#: The profile of the most recent ``nki.simulate`` run (None before the first run).
profile = None


class Kernel:
    """A ``@nki.jit`` kernel.  ``kernel[grid]`` is the SPMD launch; calling runs it.

    Calling a Kernel with numpy arrays simulates it (like ``nki.simulate(kernel)(...)``);
    calling it with NkiTensors (from inside another kernel) just runs the function.
    ``.profile`` holds the :class:`fastisa.cost.Profile` of the last simulated run.

    A kernel is never a pytest test, even named ``test_*`` in a test module (the SDK's
    ``nki/test/test_nki_nl_broadcast.py`` names its kernel ``test_nl_broadcast``): the
    official ``nki.jit`` object is not a function, so pytest does not collect it, while
    this one carries its function's ``__wrapped__`` (for ``inspect.signature``); hence
    ``__test__ = False``.
    """

    __test__ = False

    def __init__(self, func, grid=(1,), options=None, parent=None):
        self.func = func
        self.grid = tuple(grid)
        self.options = dict(options or {})
        self._parent = parent
        self._profile = None
        functools.update_wrapper(self, func)

    @property
    def profile(self):
        return self._profile

    @profile.setter
    def profile(self, p):
        self._profile = p
        if self._parent is not None:
            self._parent.profile = p

    def __getitem__(self, grid) -> "Kernel":
        if not isinstance(grid, tuple):
            grid = (grid,)
        try:
            grid = tuple(int(g) for g in grid)
        except TypeError:
            raise ConstraintError(f"launch grid: must be ints, got {grid!r}") from None
        if not grid or any(g < 1 for g in grid):
            raise ConstraintError(f"launch grid: every dimension must be >= 1, got {grid}")
        return Kernel(self.func, grid, self.options, parent=self)

    def __call__(self, *args, **kwargs):
        # called from host code (numpy / torch arguments, or none at all): simulate it;
        # called from inside a running kernel: just run the function (a sub-kernel)
        if _has_numpy(args, kwargs) or language._MACHINE.get() is None:
            return simulate(self)(*args, **kwargs)
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        g = "" if self.grid == (1,) else f"[{', '.join(map(str, self.grid))}]"
        return f"<nki kernel {getattr(self.func, '__name__', '?')}{g}>"


def jit(func: Callable[..., object] | None = None, **options: object) -> Any:
    """Decorator: ``@nki.jit`` or ``@nki.jit(**options)`` (options are accepted and kept)."""
    if func is None:
        return lambda f: Kernel(f, options=options)
    return Kernel(func, options=options)


def _has_numpy(args, kwargs) -> bool:
    return any(isinstance(a, np.ndarray) or _is_torch(a) for a in args) or \
        any(isinstance(v, np.ndarray) or _is_torch(v) for v in kwargs.values())


def _is_torch(x) -> bool:
    t = type(x)
    return t.__name__ in ("Tensor", "Parameter") and t.__module__.startswith("torch")


def _from_torch(x):
    """A CPU numpy array for a torch tensor (bf16 through its bits, as numpy has no bf16)."""
    import torch
    x = x.detach().cpu()
    if x.dtype == torch.bfloat16:
        import ml_dtypes
        return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return x.numpy()


def _to_torch(a):
    import torch
    import ml_dtypes
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


def _wrap(x, buffer, name, writeback=None):
    if _is_torch(x):
        x = _from_torch(x)
    if isinstance(x, np.ndarray):
        if x.dtype == np.float64:
            raise ConstraintError(f"simulate: argument {name!r}: unsupported dtype float64 (NKI "
                                  f"has no float64; convert to float32 first)")
        try:
            fmt = _dt.lookup(x.dtype)
        except ConstraintError:
            raise ConstraintError(
                f"simulate: argument {name!r}: unsupported dtype {x.dtype} (NKI's types are "
                f"{', '.join(sorted(_dt.FORMATS))}; e.g. x.astype(np.int32))") from None
        data = x if x.flags.writeable else x.copy()
        if not data.flags.c_contiguous:
            # HBM holds a kernel argument contiguously (the host copies it in, as torch's
            # .contiguous() would), so .ap() patterns and reshapes see row-major storage
            # (nki-library passes torch-transposed arrays, e.g. attention_bwd's lse_ref);
            # writes are copied back into the caller's array when the kernel returns
            data = np.ascontiguousarray(data)
            if writeback is not None and x.flags.writeable:
                writeback.append((x, data))
        return NkiTensor(data, fmt, buffer, name)
    return x


def _copy_out(d: np.ndarray) -> np.ndarray:
    """``np.array(d, copy=True)`` (C order); a large result's memory comes from
    fastisa._kernels.pool (speed15 branch: a 16 MB result otherwise faults in fresh pages on
    every call; the copy is the caller's own array either way)."""
    if d.nbytes < 65536 or d.dtype.kind not in "biufV" or d.dtype.itemsize not in (1, 2, 4, 8):
        return np.array(d, copy=True)
    if d.dtype.kind == "V":     # ml_dtypes formats: np.empty would zero-fill them first
        out = _pool.empty(d.shape, f"u{d.dtype.itemsize}").view(d.dtype)
    else:
        out = _pool.empty(d.shape, d.dtype)
    np.copyto(out, d)
    return out


def _unwrap(r, allow_onchip=False):
    if isinstance(r, NkiTensor):
        if r.buffer.on_chip and not allow_onchip:
            raise ConstraintError(f"simulate: returned tensor {r.name!r} must be in HBM "
                                  f"(nl.shared_hbm), got {r.buffer.name}")
        out = _copy_out(r.data)
        if r.dtype.kind == "bool":
            out = out.astype(np.bool_)
        return out
    if isinstance(r, tuple):
        return tuple(_unwrap(v, allow_onchip) for v in r)
    if isinstance(r, list):
        return [_unwrap(v, allow_onchip) for v in r]
    if isinstance(r, dict):
        return {k: _unwrap(v, allow_onchip) for k, v in r.items()}
    return r


class Simulated:
    """What ``nki.simulate(kernel)`` returns: call it with numpy arrays.

    With ``ranks=R`` (``nki.simulate(kernel, ranks=R)``) the call runs ``R`` ranks (logical
    NeuronCores, each with its own copy of the inputs, its own HBM, SBUF and PSUM; with
    ``[lnc]`` each rank runs ``lnc`` programs) that meet in :mod:`fastisa.nki.collectives`,
    and returns the list of the ranks' results; :meth:`per_rank` gives each rank its own
    inputs.
    """

    def __init__(self, kernel, target=None, ranks=None):
        if not isinstance(kernel, Kernel):
            if not callable(kernel):
                raise TypeError(f"simulate: expected a kernel, got {type(kernel).__name__}")
            kernel = Kernel(kernel)
        if ranks is not None and (isinstance(ranks, bool) or not isinstance(ranks, int)
                                  or ranks < 1):
            raise ConstraintError(f"simulate: ranks must be an int >= 1, got {ranks!r}")
        self.kernel = kernel
        self.target = target
        self.ranks = ranks
        self.profile = None

    def __getitem__(self, grid) -> "Simulated":
        return Simulated(self.kernel[grid], self.target, self.ranks)

    def __call__(self, *args, **kwargs):
        if self.ranks is None:
            return self._run([(args, kwargs)])[0]
        return self._run([(args, kwargs)] * self.ranks)

    def per_rank(self, inputs):
        """Run one rank per element of ``inputs`` (a list of keyword dicts, or a callable
        ``rank -> dict`` with ``ranks=`` given); returns the list of the ranks' results."""
        if callable(inputs):
            if self.ranks is None:
                raise ConstraintError("simulate: per_rank(callable) needs ranks= "
                                      "(nki.simulate(kernel, ranks=N))")
            inputs = [inputs(r) for r in range(self.ranks)]
        inputs = list(inputs)
        if self.ranks is not None and len(inputs) != self.ranks:
            raise ConstraintError(f"simulate: per_rank got {len(inputs)} input sets for "
                                  f"ranks={self.ranks}")
        if not inputs:
            raise ConstraintError("simulate: per_rank needs at least one rank's inputs")
        for i, kw in enumerate(inputs):
            if not isinstance(kw, dict):
                raise ConstraintError(f"simulate: per_rank inputs[{i}] must be a dict of "
                                      f"keyword arguments, got {type(kw).__name__}")
        return self._run([((), kw) for kw in inputs])

    def _run(self, rank_inputs):
        global profile
        grid = self.kernel.grid
        nprog = math.prod(grid)
        world = len(rank_inputs)
        buf = language.shared_hbm if nprog > 1 else language.hbm
        seen: set = set()
        writeback: list = []

        def wrap(x, name):
            if world > 1 and isinstance(x, np.ndarray):   # each rank its own memory
                if id(x) in seen:
                    x = x.copy()
                seen.add(id(x))
            return _wrap(x, buf, name, writeback)

        wrapped = []
        for args, kwargs in rank_inputs:
            names = _arg_names(self.kernel.func, len(args))
            wrapped.append(([wrap(a, n) for a, n in zip(args, names)],
                            {k: wrap(v, k) for k, v in kwargs.items()}, names))
        pids = list(np.ndindex(*grid))
        total = world * nprog
        labels = None
        if world > 1:
            labels = [f"rank {i // nprog}" + (f" core {pids[i % nprog][0] if len(grid) == 1 else pids[i % nprog]}"
                                              if nprog > 1 else "") for i in range(total)]
        launch = _launch.Launch(total, [pids[i % nprog] for i in range(total)], labels) \
            if total > 1 else None
        shared = [[] for _ in range(world)]

        def program(i):
            r, c = divmod(i, nprog)
            targs, tkw, names = wrapped[r]
            with language._instance(self.target, pids[c], grid, shared[r]) as m:
                m.launch, m.launch_index = launch, i
                m.rank, m.world = r, world
                m.deferred_capacity = True      # SBUF/PSUM with liveness (fastisa.nki._capacity)
                m.mm_overlap = True             # see fastisa.nki._pe._overlap_ok
                try:
                    res = self.kernel.func(*targs, **tkw)
                except AttributeError as exc:
                    _explain_sequence_arg(exc, targs, tkw, names)
                    raise
                finally:
                    m.mm_overlap = False
                    _mm_join()                  # no nc_matmul outlives its kernel
                _capacity.check(m)
                return res

        with _cost.profiling() as p:
            if launch is None:
                results = [program(0)]
            else:                       # turn-taking threads (fastisa.nki._launch)
                results = launch.run(program)
        for orig, data in writeback:
            orig[...] = data
        self.profile = p
        self.kernel.profile = p
        profile = p
        outs = []
        for r, (args, kwargs) in enumerate(rank_inputs):
            # a rank's result: its last program's (every program returns the same tensors)
            result = results[(r + 1) * nprog - 1]
            # Beta 1 kernels (@nki.jit(mode=...), @nki.baremetal ...) may return on-chip tiles
            out = _unwrap(result, allow_onchip="mode" in self.kernel.options)
            if any(_is_torch(a) for a in list(args) + list(kwargs.values())):
                out = _map_arrays(out, _to_torch)
            outs.append(out)
        return outs


def _map_arrays(r, f):
    if isinstance(r, np.ndarray):
        return f(r)
    if isinstance(r, (tuple, list)):
        return type(r)(_map_arrays(v, f) for v in r)
    if isinstance(r, dict):
        return {k: _map_arrays(v, f) for k, v in r.items()}
    return r


def _explain_sequence_arg(exc, args, kwargs, names):
    """A list/tuple argument used as a tensor (``a.shape`` on a list): name the argument."""
    obj = getattr(exc, "obj", None)
    if not isinstance(obj, (list, tuple)):
        return
    for name, v in list(zip(names, args)) + list(kwargs.items()):
        if v is obj:
            raise ConstraintError(
                f"simulate: argument {name!r} is a {type(obj).__name__}, which is passed to the "
                f"kernel as it is, and the kernel used it as a tensor ({exc}); pass a numpy "
                f"array (np.asarray({name}, np.float32)) to get an HBM tensor") from exc


_PARAMS = weakref.WeakKeyDictionary()     # kernel function -> its parameter names


def _arg_names(func, n):
    params = None
    try:
        params = _PARAMS.get(func)
    except TypeError:           # not weak-referenceable / hashable
        pass
    if params is None:
        try:
            import inspect
            params = list(inspect.signature(func).parameters)
        except (TypeError, ValueError):
            params = []
        try:
            _PARAMS[func] = params
        except TypeError:
            pass
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def simulate(kernel: Kernel | Callable[..., object], *, target: str | None = None,
             ranks: int | None = None) -> Simulated:
    """``nki.simulate(kernel)(*numpy_arrays)``: run a kernel on fastisa, numpy in and out.

    ``kernel`` is a ``@nki.jit`` kernel, an SPMD launch ``kernel[n]`` or a plain function.
    ``target`` selects the NeuronCore generation (``"trn2"`` default, ``"trn3"``) for the
    SBUF/PSUM capacity checks.  After the call, ``.profile`` (on the returned object, on
    the kernel and as ``fastisa.nki.profile``) is the run's :class:`fastisa.cost.Profile`:
    ``.totals()`` gives estimated cycles per engine, ``.summary()`` a table.
    ``ranks=R`` runs ``R`` ranks for :mod:`fastisa.nki.collectives` (see :class:`Simulated`):
    ``nki.simulate(k, ranks=4)[2](x=a)`` (every rank the same inputs, copied) or
    ``nki.simulate(k, ranks=4)[2].per_rank(lambda r: {"x": shards[r]})``; both return the
    list of the ranks' results.
    """
    return Simulated(kernel, target, ranks)


#: nki-library's simulation harness calls ``nki.cpu_simulate(kernel)[lnc](**inputs)``.
cpu_simulate = simulate

from . import isa  # noqa: E402
from . import constants, typing, compiler, builtin  # noqa: E402,F401
from . import collectives  # noqa: E402,F401
from . import dtype  # noqa: E402,F401
from .language import NKIObject  # noqa: E402,F401

isa.constants = constants
for _n in ("matmul_perf_mode", "nc_version", "dma_engine"):
    if not hasattr(isa, _n):        # the enums kernels take from nki.isa directly
        setattr(isa, _n, getattr(constants, _n))


def _get_nc_version():
    """``nisa.get_nc_version()``: the NeuronCore generation of the current target
    (trn1 -> gen2, trn2 -> gen3, trn3 -> gen4; ``NKI_NC_VERSION=gen3`` selects one too)."""
    import os
    env = os.environ.get("NKI_NC_VERSION")
    if env and language._MACHINE.get() is None:
        return constants.nc_version[env.lower()] if env.lower() in constants.nc_version.__members__ \
            else constants.nc_version.gen3
    return {"trn1": constants.nc_version.gen2, "trn2": constants.nc_version.gen3,
            "trn3": constants.nc_version.gen4}[language.target()]


if not hasattr(isa, "get_nc_version"):
    isa.get_nc_version = _get_nc_version

from ._target import target  # noqa: E402


from .._public import make_dir as _make_dir  # noqa: E402

__dir__ = _make_dir(globals())

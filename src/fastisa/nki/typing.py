"""``nki.typing``: type annotations kernels use (``tensor[128, 512]``, ``mutable_tensor``,
``scalar``).  fastisa accepts them and does not check them."""

from __future__ import annotations

__all__ = ["tensor", "mutable_tensor", "scalar", "sbuf", "psum", "hbm"]


class _Annotation:
    def __class_getitem__(cls, item):
        return cls


class tensor(_Annotation):  # noqa: N801
    """``nt.tensor[shape...]`` / ``nt.tensor[shape, dtype]``."""


class mutable_tensor(tensor):  # noqa: N801
    """``nt.mutable_tensor[...]``: an input the kernel writes."""


class scalar(_Annotation):  # noqa: N801
    pass


class sbuf(_Annotation):  # noqa: N801
    pass


class psum(_Annotation):  # noqa: N801
    pass


class hbm(_Annotation):  # noqa: N801
    pass

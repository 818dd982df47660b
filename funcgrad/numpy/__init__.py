"""``import funcgrad.numpy as np``: NumPy's namespace for code that builds arrays from traced values.

NumPy's own functions already take Tensors (their protocols dispatch to funcgrad's op table), so every
name here is NumPy's, except the constructors, which NumPy cannot make dispatch: ``array``, ``asarray``
and ``asanyarray`` return a Tensor when the data holds Tensors (``np.array([x[0], x[1] ** 2])`` is a
stack that keeps the graph) and a plain ndarray otherwise, as ``autograd.numpy`` and ``jax.numpy`` do.
A Tensor's ``__array_namespace__`` is this module, so libraries written against the array API
(SciPy with ``SCIPY_ARRAY_API=1``) take Tensors too.

Example:
    >>> import funcgrad.numpy as np
    >>> from funcgrad.func import grad
    >>> def f(x):
    ...     return np.sum(np.array([x[0] * x[1], np.sin(x[1])]))
    >>> grad(f)(np.array([2.0, 0.0]))
    array([0., 3.])
"""
from __future__ import annotations

import sys
from typing import Any

import numpy

from funcgrad import ops
from funcgrad.core.tensor import Tensor
from funcgrad.numpy import linalg

__all__ = ["array", "asarray", "asanyarray", "linalg"]


def _holds_tensor(data: Any) -> bool:
    if isinstance(data, Tensor):
        return True
    return isinstance(data, list | tuple) and any(_holds_tensor(e) for e in data)


def _build(data: Any) -> Any:
    """Nested sequences holding Tensors as one Tensor (stacked level by level)."""
    if isinstance(data, list | tuple):
        return ops.stack([_build(e) for e in data], 0)
    return data


def array(object: Any, dtype: Any = None, *, copy: bool | None = True, ndmin: int = 0,  # noqa: A002
          **kwargs: Any) -> Any:
    """``numpy.array``, or a Tensor when ``object`` is one or holds Tensors (a copy unless ``copy=False``), with
    at least ``ndmin`` dims (leading 1s, as NumPy); ``order`` and ``subok`` change no value, so a Tensor ignores
    them."""
    if not _holds_tensor(object):
        return numpy.array(object, dtype, copy=copy, ndmin=ndmin, **kwargs)
    out = _build(object)
    if dtype is not None and numpy.dtype(dtype) != out.dtype:
        out = ops.to_copy(out, numpy.dtype(dtype))
    elif copy and out is object:
        out = ops.clone(out)
    return ops.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape)) if out.ndim < ndmin else out


def asarray(a: Any, dtype: Any = None, *, copy: bool | None = None, **kwargs: Any) -> Any:
    """``numpy.asarray``, or the Tensor itself (converted to ``dtype``) when ``a`` is one or holds Tensors."""
    if not _holds_tensor(a):
        return numpy.asarray(a, dtype, copy=copy, **kwargs)
    return array(a, dtype, copy=bool(copy))


asanyarray = asarray


def _array_namespace(self: Tensor, *, api_version: str | None = None) -> Any:
    """The array-API namespace of Tensors: ``funcgrad.numpy``."""
    return sys.modules[__name__]


Tensor.__array_namespace__ = _array_namespace  # type: ignore[attr-defined]


def __getattr__(name: str) -> Any:
    """Every other name is NumPy's (its functions dispatch on Tensors through NumPy's protocols)."""
    return getattr(numpy, name)


def __dir__() -> list[str]:
    return sorted(set(dir(numpy)) | set(__all__))

"""Structured seeds for one-pass Jacobians: the identity stays a diagonal until an op needs it dense.

A vectorized Jacobian seeds a batched pass with the rows of the identity. Stored densely, every rule
then works on an ``N x N`` array, and the first product the pass meets costs a full ``N x N x K``
matrix product where scaling ``N`` rows would do. ``BatchedDiagonal`` is that seed kept as its
diagonal: a NumPy duck array whose row ``i`` is ``d.flat[i]`` times the ``i``-th one-hot array of
``d``'s shape. Rules need no change: elementwise scaling, negation, sums of two diagonals, reshapes
of the non-batch dims and the products with a matrix that a vector's rules perform give a diagonal
(or the cheap dense result) directly; anything else sees the dense array (``__array__``), so the
structure only ever saves work and never changes a value.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

__all__ = ["BatchedDiagonal", "identity_seed"]

_SCALING = {np.multiply, np.true_divide}


class BatchedDiagonal(NDArrayOperatorsMixin):
    """The ``(N, *d.shape)`` stack, ``N = d.size``, whose ``i``-th entry is zero but ``d.flat[i]`` at flat index i.

    Args:
        d: the diagonal, shaped like one entry of the stack.
    """

    __slots__ = ("d",)

    def __init__(self, d: np.ndarray) -> None:
        self.d = d

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.d.size, *self.d.shape)

    @property
    def ndim(self) -> int:
        return self.d.ndim + 1

    @property
    def size(self) -> int:
        return self.d.size * self.d.size

    @property
    def dtype(self) -> np.dtype:
        return self.d.dtype

    def __repr__(self) -> str:
        return f"BatchedDiagonal(shape={self.shape}, d={self.d!r})"

    def dense(self) -> np.ndarray:
        """The stack as an ordinary array."""
        out = np.zeros(self.shape, self.d.dtype)
        out[self._diagonal_index()] = self.d.ravel()
        return out

    def _diagonal_index(self) -> tuple[np.ndarray, ...]:
        n = np.arange(self.d.size)
        return (n, *np.unravel_index(n, self.d.shape)) if self.d.ndim else (n,)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self.dense()
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, key: Any) -> Any:
        return self.dense()[key]

    def __len__(self) -> int:
        return self.d.size

    def __getattr__(self, name: str) -> Any:
        """Any other ndarray attribute or method, of the dense stack."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dense(), name)

    def reshape(self, *shape: Any) -> Any:
        """Reshaping the entries keeps the diagonal; other reshapes give the dense result."""
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape
        return _reshape(self, tuple(shape))

    def astype(self, dtype: Any, copy: bool = True) -> BatchedDiagonal:
        """The same stack in ``dtype``."""
        return BatchedDiagonal(self.d.astype(dtype, copy=copy))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and not kwargs:
            result = _structured_ufunc(ufunc, inputs)
            if result is not NotImplemented:
                return result
        if method == "__call__" and ufunc is np.add and len(kwargs) <= 2 and _adds_into_out(inputs, kwargs):
            out = kwargs["out"][0]
            out[_other(inputs)._diagonal_index()] += _other(inputs).d.ravel()  # type: ignore[union-attr]
            return out
        dense = [np.asarray(a) if isinstance(a, BatchedDiagonal) else a for a in inputs]
        return getattr(ufunc, method)(*dense, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if func is np.shape:
            return self.shape
        if func is np.ndim:
            return self.ndim
        if func is np.reshape:
            shape = args[1] if len(args) > 1 else kwargs["shape"]
            return _reshape(args[0], tuple(shape) if isinstance(shape, tuple | list) else (int(shape),))
        dense = [np.asarray(a) if isinstance(a, BatchedDiagonal) else a for a in args]
        return func(*dense, **kwargs)


def identity_seed(shape: tuple[int, ...], dtype: Any) -> BatchedDiagonal:
    """The rows of the identity of size ``prod(shape)``, each shaped ``shape``: a Jacobian pass's seed."""
    return BatchedDiagonal(np.ones(shape, dtype))


def _other(inputs: tuple[Any, ...]) -> Any:
    return next(a for a in inputs if isinstance(a, BatchedDiagonal))


def _adds_into_out(inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``np.add(buffer, diagonal, out=(buffer,))``: the engine summing into a buffer it owns."""
    out = kwargs.get("out")
    return (len(inputs) == 2 and isinstance(out, tuple) and len(out) == 1 and type(out[0]) is np.ndarray
            and any(a is out[0] for a in inputs) and out[0].shape == _other(inputs).shape
            and set(kwargs) <= {"out", "casting"})


def _reshape(a: BatchedDiagonal, shape: tuple[int, ...]) -> Any:
    n = a.d.size
    if shape and shape[0] in (n, -1) and -1 not in shape[1:] and math.prod(shape[1:]) == n:
        return BatchedDiagonal(a.d.reshape(shape[1:]))
    return np.reshape(a.dense(), shape)


def _fits(value: Any, diagonal: BatchedDiagonal) -> bool:
    """True if ``value`` (not a stack) broadcasts into one entry of the stack without enlarging it."""
    shape, core = np.shape(value), diagonal.d.shape
    return len(shape) <= len(core) and all(a in (1, b) for a, b in zip(reversed(shape), reversed(core)))


def _structured_ufunc(ufunc: np.ufunc, inputs: tuple[Any, ...]) -> Any:
    """The result of ``ufunc(*inputs)`` kept structured, or the cheap dense one; NotImplemented otherwise."""
    if ufunc is np.negative or ufunc is np.positive:
        return BatchedDiagonal(ufunc(inputs[0].d))
    if len(inputs) != 2:
        return NotImplemented
    a, b = inputs
    a_diag, b_diag = isinstance(a, BatchedDiagonal), isinstance(b, BatchedDiagonal)
    if ufunc in _SCALING:
        if a_diag and b_diag and a.shape == b.shape and ufunc is np.multiply:
            return BatchedDiagonal(a.d * b.d)
        if a_diag and not b_diag and _fits(b, a):
            return BatchedDiagonal(ufunc(a.d, b))
        if b_diag and not a_diag and ufunc is np.multiply and _fits(a, b):
            return BatchedDiagonal(a * b.d)
        return NotImplemented
    if ufunc is np.add or ufunc is np.subtract:
        if a_diag and b_diag and a.shape == b.shape:
            return BatchedDiagonal(ufunc(a.d, b.d))
        return _plus_diagonal(ufunc, a, b)
    if ufunc is np.matmul:
        return _matmul(a, b)
    return NotImplemented


def _plus_diagonal(ufunc: np.ufunc, a: Any, b: Any) -> Any:
    """A dense stack plus (or minus) a diagonal one: a copy of the dense one with the diagonal added."""
    a_diag = isinstance(a, BatchedDiagonal)
    diag, dense = (a, b) if a_diag else (b, a)
    if not isinstance(dense, np.ndarray) or dense.shape != diag.shape:
        return NotImplemented
    dtype = np.result_type(dense, diag.d)
    subtract = ufunc is np.subtract
    out = np.negative(dense, dtype=dtype) if subtract and a_diag else dense.astype(dtype, copy=True)
    out[diag._diagonal_index()] += -diag.d.ravel() if subtract and not a_diag else diag.d.ravel()
    return out


def _matmul(a: Any, b: Any) -> Any:
    """The products with a matrix that a vector's matmul rules perform (a vector promoted to a row or a
    column): scaled rows or columns of the matrix, no matrix product."""
    if isinstance(b, BatchedDiagonal) and isinstance(a, np.ndarray) and a.ndim == 2 and b.d.ndim == 2:
        rows, cols = b.d.shape
        if cols == 1:  # entry i is d_i e_i (a column): M @ entry = d_i M[:, i]
            return (b.d.ravel()[:, None] * a.T)[:, :, None]
        if rows == 1 and a.shape == (1, 1):  # a scalar times a row
            return BatchedDiagonal(b.d * a[0, 0])
    if isinstance(a, BatchedDiagonal) and isinstance(b, np.ndarray) and b.ndim == 2 and a.d.ndim == 2:
        rows, cols = a.d.shape
        if rows == 1:  # entry i is d_i e_iᵀ (a row): entry @ M = d_i M[i, :]
            return (a.d.ravel()[:, None] * b)[:, None, :]
        if cols == 1 and b.shape == (1, 1):
            return BatchedDiagonal(a.d * b[0, 0])
    return NotImplemented

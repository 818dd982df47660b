"""Forward kernels on plain arrays, where an op is more than one bare NumPy call.

Kernels take the op's public parameter names (``x``, ``dim``, ``keepdim``) and return arrays;
they never see a Tensor and record nothing.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sp

Dim = int | tuple[int, ...] | None


def sum_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``x`` down to ``shape`` (the inverse of broadcasting ``shape`` up to ``x.shape``)."""
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)
    out = np.sum(x, axis=axes, keepdims=True) if axes else x
    return out.reshape(shape) if lead or out.shape != shape else out


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + exp(-x)), stable for large |x|."""
    return sp.expit(x)


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0)."""
    return np.maximum(x, 0)


def rsqrt(x: np.ndarray) -> np.ndarray:
    """1 / sqrt(x)."""
    return 1.0 / np.sqrt(x)


def exp2(x: np.ndarray) -> np.ndarray:
    """2 ** x."""
    return np.exp2(x)


def clamp(x: np.ndarray, min: Any = None, max: Any = None) -> np.ndarray:  # noqa: A002
    """Limit ``x`` to [min, max]; either bound may be None (or a tensor)."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def where(condition: np.ndarray, x: Any, y: Any) -> np.ndarray:
    """Elements of ``x`` where ``condition`` holds, else of ``y``."""
    return np.where(condition, x, y)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of the digamma function."""
    return sp.polygamma(n, x)


def round(x: np.ndarray, decimals: int = 0) -> np.ndarray:  # noqa: A001
    """Round half to even, to ``decimals`` places."""
    return np.round(x, decimals)


def fill(x: np.ndarray, value: Any) -> np.ndarray:
    """An array like ``x`` filled with ``value`` (a scalar or a 0-d array)."""
    return np.full_like(x, value)


def copy(x: np.ndarray, src: Any) -> np.ndarray:
    """``src`` broadcast to ``x``'s shape and cast to its dtype, as a new array."""
    return np.array(np.broadcast_to(src, x.shape), dtype=x.dtype)


def clone(x: np.ndarray) -> np.ndarray:
    """A copy of ``x`` with its own memory."""
    return np.array(x, copy=True)


def to_copy(x: np.ndarray, dtype: Any) -> np.ndarray:
    """``x`` converted to ``dtype`` (a new array)."""
    return np.asarray(x).astype(dtype)

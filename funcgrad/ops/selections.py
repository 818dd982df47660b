"""Selections, scatters and counts that torch code calls, written with the table's ops: ``unfold`` (sliding
windows, each a view's worth of elements), ``index_copy``, ``masked_scatter``, ``hsplit``/``vsplit``/``dsplit``, and
the counts ``bincount`` and ``histc`` (no gradient, as torch). Values and errors as torch's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops.registry import composite, tensor_method

__all__ = ["index_copy", "masked_scatter", "hsplit", "vsplit", "dsplit", "bincount", "histc"]


def _data(a: Any) -> Any:
    return a.data if isinstance(a, Tensor) else a


def _like(x: Any, array: np.ndarray) -> Any:
    return Tensor(array) if isinstance(x, Tensor) else array


@tensor_method("unfold")  # a method only: torch.nn.functional.unfold is another function (im2col)
def unfold(x: Any, dimension: int, size: int, step: int) -> Any:
    """All windows of ``size`` elements along ``dimension``, ``step`` apart: that dim becomes the window count and a
    new last dim of length ``size`` holds each window, as torch's ``Tensor.unfold``."""
    shape = np.shape(_data(x))
    n = shape[dimension] if shape else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dimension % max(len(shape), 1)} is {n} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not shape:
        return F.reshape(x, (1,))
    d = dimension % len(shape)
    starts = np.arange(0, n - size + 1, step)
    windows = F.index_select(x, d, (starts[:, None] + np.arange(size)).reshape(-1))  # (..., count * size, ...)
    split = F.reshape(windows, shape[:d] + (starts.size, size) + shape[d + 1:])
    return F.movedim(split, d + 1, -1)


@composite
def index_copy(x: Any, dim: int, index: Any, source: Any) -> Any:
    """A copy of ``x`` with ``source[..., i, ...]`` written at ``index[i]`` along ``dim``, as torch.index_copy (the
    gradient reaches the written slices of ``source`` and the others of ``x``)."""
    idx = np.asarray(_data(index))
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    return F.index_put(x, (slice(None),) * (dim % max(np.ndim(_data(x)), 1)) + (idx.reshape(-1),), source, False)


@composite
def masked_scatter(x: Any, mask: Any, source: Any) -> Any:
    """A copy of ``x`` with the elements where ``mask`` (broadcast) is true replaced, in order, by the first elements
    of ``source``, as torch.masked_scatter."""
    m = np.broadcast_to(np.asarray(_data(mask)), np.shape(_data(x)))
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {m.dtype}")
    count = int(m.sum())
    if count > np.size(_data(source)):
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as the ones selected "
                           "by the mask")
    return F.index_put(x, (m,), F.getitem(F.reshape(source, (-1,)), (slice(0, count),)), False)


def _split_along(name: str, x: Any, indices_or_sections: Any, dim: int, least: int) -> tuple[Any, ...]:
    if np.ndim(_data(x)) < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor with "
                           f"{np.ndim(_data(x))} dimensions!")
    split = np.asarray(_data(indices_or_sections))
    if split.ndim == 0 and np.shape(_data(x))[dim] % int(split):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{np.shape(_data(x))[dim]} is not divisible by the split_size {int(split)}!")
    return F.tensor_split(x, indices_or_sections, dim)


@composite
def hsplit(x: Any, indices_or_sections: Any) -> tuple[Any, ...]:
    """``tensor_split`` along dim 1 (dim 0 of a vector) into equal sections or at indices, as torch.hsplit."""
    return _split_along("hsplit", x, indices_or_sections, 1 if np.ndim(_data(x)) > 1 else 0, 1)


@composite
def vsplit(x: Any, indices_or_sections: Any) -> tuple[Any, ...]:
    """``tensor_split`` along dim 0 into equal sections or at indices, as torch.vsplit."""
    return _split_along("vsplit", x, indices_or_sections, 0, 2)


@composite
def dsplit(x: Any, indices_or_sections: Any) -> tuple[Any, ...]:
    """``tensor_split`` along dim 2 into equal sections or at indices, as torch.dsplit."""
    return _split_along("dsplit", x, indices_or_sections, 2, 3)


@composite
def bincount(x: Any, weights: Any = None, minlength: int = 0) -> Any:
    """How often each value 0, 1, ... occurs in the non-negative integer vector ``x`` (the sum of ``weights`` there
    instead, when given), as torch.bincount; no gradient."""
    a = np.asarray(_data(x))
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = None if weights is None else np.asarray(_data(weights))
    return _like(x, np.bincount(a, w, minlength))


@composite
def histc(x: Any, bins: int = 100, min: float = 0, max: float = 0) -> Any:  # noqa: A002
    """A histogram of ``bins`` equal bins between ``min`` and ``max`` (the data's range when both are 0; values
    outside are ignored), in ``x``'s dtype, as torch.histc; no gradient."""
    a = np.asarray(_data(x))
    low, high = (float(a.min()), float(a.max())) if min == max == 0 and a.size else (min, max)
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = np.histogram(a, bins, (low, high))
    return _like(x, counts.astype(a.dtype))

"""Sorting and order statistics, as torch: ``argsort`` (a table op without derivative) and, built on it with
``take_along_dim``, ``sort``, ``msort``, ``topk``, ``kthvalue``, ``median``; and ``aminmax``, ``cummax``, ``cummin``.

Each value's gradient goes back to the element it came from (the one at its index), as torch's; ``median`` over
all elements shares the gradient among the elements equal to the median, as torch's. NaN counts as larger than
every number (sorted last, first when descending), as torch.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops.registry import composite, nondiff

__all__ = ["argsort", "sort", "msort", "topk", "kthvalue", "median", "nanmedian", "quantile", "nanquantile", "mode",
           "aminmax", "cummax", "cummin"]

_Sort = namedtuple("sort", ["values", "indices"])  # as torch.return_types.sort
_Topk = namedtuple("topk", ["values", "indices"])
_Kthvalue = namedtuple("kthvalue", ["values", "indices"])
_Median = namedtuple("median", ["values", "indices"])
_Aminmax = namedtuple("aminmax", ["min", "max"])
_Cummax = namedtuple("cummax", ["values", "indices"])
_Cummin = namedtuple("cummin", ["values", "indices"])


def _argsort(x, dim=-1, descending=False, stable=False):
    """Indices that sort ``x`` along ``dim``, ascending or ``descending``; equal values keep their order (so
    ``stable`` holds either way), NaN counts as the largest value."""
    a = np.atleast_1d(x)
    if not descending:
        order = np.argsort(a, axis=dim, kind="stable")
    else:  # a stable ascending sort of the reversed values, reversed: equal values keep their order, NaN first
        order = a.shape[dim] - 1 - np.flip(np.argsort(np.flip(a, dim), axis=dim, kind="stable"), dim)
    return order.reshape(np.shape(x))


argsort = nondiff("argsort", _argsort)


def _data(a: Any) -> Any:
    return a.data if isinstance(a, Tensor) else a


def _size(x: Any, dim: int) -> int:
    """The length of ``dim`` (1 for a 0-d input, whose dims are 0 and -1), with torch's error when out of range."""
    shape = np.shape(_data(x))
    n = max(len(shape), 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return shape[dim] if shape else 1


def _as_vector(fn: Any) -> Any:
    """Run ``fn(x, dim, ...)`` on a 0-d ``x`` as on a vector of one element, and make its results 0-d again
    (torch treats a scalar as having one dim of size 1 here)."""
    def wrapped(x: Any, dim: int, *args: Any) -> Any:
        _size(x, dim)
        if np.ndim(_data(x)):
            return fn(x, dim, *args)
        out = fn(F.reshape(x, (1,)), 0, *args)
        return type(out)(*(F.reshape(o, ()) for o in out))
    return wrapped


def _first(indices: Any, dim: int, k: int) -> Any:
    """The first ``k`` entries of ``indices`` along ``dim`` (a 0-d one as it is)."""
    if np.ndim(_data(indices)) == 0:
        return indices
    return F.getitem(indices, (slice(None),) * (dim % np.ndim(_data(indices))) + (slice(0, k),))


@composite
def sort(x: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """The values of ``x`` sorted along ``dim`` and the indices they came from, as torch.sort.

    Example:
        >>> import funcgrad as fg
        >>> fg.sort(fg.tensor([3.0, 1.0, 2.0]))
        sort(values=tensor([1., 2., 3.]), indices=tensor([1, 2, 0]))
    """
    return _sorted(x, dim, descending, stable)


@_as_vector
def _sorted(x: Any, dim: int, descending: bool, stable: bool) -> Any:
    indices = argsort(x, dim, descending, stable)
    return _Sort(F.take_along_dim(x, indices, dim), indices)


@composite
def msort(x: Any) -> Any:
    """``x`` sorted along dim 0 (the values only), as torch.msort."""
    return sort(x, 0).values


@composite
def topk(x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    """The ``k`` largest (``largest=False``: smallest) values along ``dim`` and their indices, as torch.topk."""
    if not 0 <= k <= _size(x, dim):
        raise RuntimeError("selected index k out of range")
    return _top(x, dim, k, largest)


@_as_vector
def _top(x: Any, dim: int, k: int, largest: bool) -> Any:
    indices = _first(argsort(x, dim, largest, True), dim, k)
    return _Topk(F.take_along_dim(x, indices, dim), indices)


@_as_vector
def _kth(x: Any, dim: int, k: int, keepdim: bool, result: Any, nan_wins: bool = False) -> Any:
    """The k-th smallest value (0-based) along ``dim`` and its index; with ``nan_wins``, NaN where a slice holds
    one (at the first)."""
    order = argsort(x, dim, False, True)
    index = F.getitem(order, (slice(None),) * (dim % np.ndim(_data(order))) + (slice(k, k + 1),))
    if nan_wins:
        nan = F.isnan(x)
        if np.any(_data(nan)):  # torch: the median of a slice with a NaN is NaN, at the first NaN
            index = F.where(F.sum(nan, dim, True) > 0, F.argmax(nan, dim, True), index)
    values = F.take_along_dim(x, index, dim)
    if not keepdim:
        values, index = F.squeeze(values, dim), F.squeeze(index, dim)
    return result(values, index)


@composite
def kthvalue(x: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest value (counting from 1) along ``dim`` and its index, as torch.kthvalue."""
    if not 1 <= k <= _size(x, dim):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    return _kth(x, dim, k - 1, keepdim, _Kthvalue)


@composite
def median(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (the smaller of the two middle values for an even count), as torch.median.

    ``median(x)`` is the median of all elements, its gradient shared by the elements equal to it;
    ``median(x, dim, keepdim=False)`` is ``(values, indices)`` along ``dim``, the gradient going to the index.
    NaN if there is a NaN.
    """
    if dim is not None:
        return _kth(x, dim, (_size(x, dim) - 1) // 2, keepdim, _Median, True)
    flat = _flat("median", x)
    return _shared(flat, _kth(flat, 0, (np.shape(_data(flat))[0] - 1) // 2, False, _Median, True).values)


@composite
def nanmedian(x: Any, dim: int | None = None, keepdim: bool = False) -> Any:
    """``median`` ignoring NaNs (NaN only where all are NaN), as torch.nanmedian."""
    if dim is not None:
        return _nan_kth(x, dim, keepdim)
    flat = _flat("nanmedian", x)
    return _shared(flat, _nan_kth(flat, 0, False).values)


def _flat(name: str, x: Any) -> Any:
    flat = F.reshape(x, (-1,))
    if np.shape(_data(flat))[0] == 0:
        raise IndexError(f"{name}() input tensor cannot be empty")
    return flat


def _shared(flat: Any, result: Any) -> Any:
    """``result`` (a value of ``flat``) with its gradient shared evenly by the elements equal to it (the NaNs when
    it is NaN), as torch's median over all elements."""
    if np.result_type(_data(flat)).kind not in "fc":
        return result  # (no gradient to share)
    value = _data(result)  # a constant: the gradient flows below
    equal = np.isnan(_data(flat)) if np.isnan(value) else _data(flat) == value
    # value + sum over the equal elements of (x - value) / count: exactly the value, and d/dx = 1 / count there
    spread = F.div(F.sum(F.where(equal, F.sub(flat, value), 0.0)), int(np.sum(equal)))
    return F.add(spread, value)


@_as_vector
def _nan_kth(x: Any, dim: int, keepdim: bool) -> Any:
    """The lower median of the non-NaN values along ``dim`` (NaNs sort last) and its index."""
    counts = np.sum(~np.isnan(_data(x)), axis=dim, keepdims=True)
    index = F.take_along_dim(argsort(x, dim, False, True), np.maximum(counts - 1, 0) // 2, dim)
    values = F.take_along_dim(x, index, dim)
    if not keepdim:
        values, index = F.squeeze(values, dim), F.squeeze(index, dim)
    return _Median(values, index)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@composite
def quantile(x: Any, q: Any, dim: int | None = None, keepdim: bool = False, *, interpolation: str = "linear") -> Any:
    """The ``q``-th quantiles along ``dim`` (of all elements when None), interpolating between the two nearest
    sorted values as ``interpolation`` says; NaN where a slice holds a NaN. A 1-D ``q`` gives one result per
    quantile, stacked in front. As torch.quantile; the gradient goes to the values interpolated."""
    return _quantile("quantile", x, q, dim, keepdim, interpolation, ignore_nan=False)


@composite
def nanquantile(x: Any, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Any:
    """``quantile`` of the non-NaN values (NaN where all are NaN), as torch.nanquantile."""
    return _quantile("nanquantile", x, q, dim, keepdim, interpolation, ignore_nan=True)


def _quantile(name: str, x: Any, q: Any, dim: int | None, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Any:
    if np.result_type(_data(x)).kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    qs = np.asarray(_data(q), dtype=np.float64)
    if qs.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if not np.all((qs >= 0) & (qs <= 1)):
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {qs.item()}" if qs.ndim == 0 else
                           f"{name}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    shape = np.shape(_data(x))
    if dim is None:
        x, d = F.reshape(x, (-1,)), 0
    else:
        _size(x, dim)
        d = dim % max(len(shape), 1)
    if np.ndim(_data(x)) == 0:
        x = F.reshape(x, (1,))
    s = F.unsqueeze(F.movedim(sort(x, d).values, d, -1), 0)  # (1, *others, n): NaN last
    data = _data(s)
    n = data.shape[-1]
    nan = np.isnan(data)
    count = np.sum(~nan, axis=-1, keepdims=True) if ignore_nan else np.full(data.shape[:-1] + (1,), n)
    rank = qs.reshape((-1,) + (1,) * (data.ndim - 1)) * np.maximum(count - 1, 0)  # (Q, *others, 1)
    if not ignore_nan:  # a slice holding a NaN: its quantile is that NaN (the last sorted), as torch
        rank = np.where(np.any(nan, axis=-1, keepdims=True), n - 1, rank)
    if interpolation == "nearest":
        rank = np.round(rank)
    lower, upper = np.floor(rank).astype(np.int64), np.ceil(rank).astype(np.int64)
    wide = F.expand(s, (rank.shape[0],) + data.shape[1:])
    low, high = F.take_along_dim(wide, lower, -1), F.take_along_dim(wide, upper, -1)
    if interpolation in ("lower", "nearest"):
        out = low
    elif interpolation == "higher":
        out = high
    else:
        weight = 0.5 if interpolation == "midpoint" else rank - lower
        out = F.add(low, F.mul(F.sub(high, low), weight))
    out = F.squeeze(out, -1)  # (Q, *others)
    if keepdim:
        kept = [1] * len(shape) if dim is None else list(np.shape(_data(out))[1:d + 1]) + [1] + list(
            np.shape(_data(out))[d + 1:])
        out = F.reshape(out, (rank.shape[0], *kept))
    return out if qs.ndim else F.squeeze(out, 0)


_Mode = namedtuple("mode", ["values", "indices"])


@composite
def mode(x: Any, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest of those tied) and the index of its last occurrence, as
    torch.mode; the gradient goes to that index."""
    return _mode(x, dim, keepdim)


@_as_vector
def _mode(x: Any, dim: int, keepdim: bool) -> Any:
    a = np.moveaxis(np.asarray(_data(x)), dim, -1)
    rows = a.reshape(-1, a.shape[-1])
    last = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        values, counts = np.unique(row, return_counts=True)
        value = values[np.argmax(counts)]  # the first of the most frequent: the smallest
        last[r] = row.size - 1 - np.argmax(row[::-1] == value)
    index = np.moveaxis(last.reshape(a.shape[:-1] + (1,)), -1, dim)
    indices = Tensor(index) if isinstance(x, Tensor) else index
    values = F.take_along_dim(x, indices, dim)
    if not keepdim:
        values, indices = F.squeeze(values, dim), F.squeeze(indices, dim)
    return _Mode(values, indices)


@composite
def aminmax(x: Any, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """``(amin(x, dim), amax(x, dim))`` as the named tuple ``(min, max)``, as torch.aminmax."""
    return _Aminmax(F.amin(x, dim, keepdim), F.amax(x, dim, keepdim))


@_as_vector
def _cumulative(x: Any, dim: int, running: Any, result: Any) -> Any:
    """Running extremes along ``dim`` and the index each came from: the last element equal to it (torch's choice
    on ties), or the last NaN once one has been seen."""
    a = _data(x)
    d = dim % a.ndim
    extremes = running.accumulate(a, axis=d)
    positions = np.arange(a.shape[d]).reshape([-1 if i == d else 1 for i in range(a.ndim)])
    hits = (a == extremes) | (np.isnan(a) if a.dtype.kind in "fc" else False)
    index = np.maximum.accumulate(np.where(hits, positions, 0), axis=d)
    indices = Tensor(index) if isinstance(x, Tensor) else index
    return result(F.take_along_dim(x, indices, dim), indices)


@composite
def cummax(x: Any, dim: int) -> Any:
    """The running maximum along ``dim`` and its indices, as torch.cummax (the gradient goes to the index)."""
    return _cumulative(x, dim, np.maximum, _Cummax)


@composite
def cummin(x: Any, dim: int) -> Any:
    """The running minimum along ``dim`` and its indices, as torch.cummin."""
    return _cumulative(x, dim, np.minimum, _Cummin)

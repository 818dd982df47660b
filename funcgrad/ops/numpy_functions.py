"""NumPy's functions on Tensors, with NumPy's signatures, written with the table's ops.

``FUNCTIONS`` maps a NumPy function (``np.sum``, ``np.linalg.solve``, ...) to its version here, which
``Tensor.__array_function__`` calls: each takes NumPy's parameters (``axis``, ``keepdims``, ``ddof``,
``axes``, ...) and means what NumPy means (``np.var`` is biased, ``np.repeat`` repeats elements,
``np.split`` takes section counts or indices), so the result equals NumPy's and carries the graph.
Functions whose results have no derivative (``argmax``, ``argsort``, ``nonzero``, ``isclose``, ...)
return plain NumPy results computed on the data. A NumPy function not listed raises a TypeError
naming it (``numpy_protocols``).
"""
from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops import linalg_options
from funcgrad.ops.derivatives.linalg import (
    linalg_det,
    linalg_inv,
    linalg_pinv,
    linalg_qr,
    linalg_slogdet,
    linalg_solve,
    linalg_svd,
    linalg_svdvals,
    linalg_vector_norm,
)
from funcgrad.ops.formulas import mH
from funcgrad.ops.linalg_norms import norm as linalg_norm

__all__ = ["FUNCTIONS", "dot"]

FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}


def implements(*numpy_functions: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as funcgrad's version of ``numpy_functions``."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for f in numpy_functions:
            FUNCTIONS[f] = fn
        return fn
    return register


def _data(a: Any) -> Any:
    return a.data if isinstance(a, Tensor) else a


def _plain(*numpy_functions: Callable[..., Any]) -> None:
    """Functions whose results carry no gradient: NumPy's own result, computed on the data."""
    def plain_on_data(f: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple([type(a)(_data(e) for e in a) if isinstance(a, list | tuple) else _data(a) for a in args])
            return f(*args, **{k: _data(v) for k, v in kwargs.items()})
        return call
    for f in numpy_functions:
        FUNCTIONS[f] = plain_on_data(f)


def _reject(name: str, out: Any = None, where: Any = np._NoValue, initial: Any = np._NoValue,
            mean: Any = np._NoValue) -> None:
    """A TypeError for NumPy options funcgrad does not offer (``out=`` an ndarray would cut the graph)."""
    if out is None and where is np._NoValue and initial is np._NoValue and mean is np._NoValue:
        return  # none given: the common call, without building a dict
    given = {"out": out, "where": where, "initial": initial, "mean": mean}
    bad = [k for k, v in given.items() if v is not None and v is not np._NoValue]
    if bad:
        raise TypeError(f"np.{name} on Tensors does not support {', '.join(bad)}=; compute without it")


def _dtype(value: Any) -> np.dtype:
    """The dtype of an array or Tensor, or of the array NumPy makes of a list or number (np.result_type would
    read a list as a dtype specification)."""
    return value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype


def _inexact(a: Any) -> Any:
    """``a`` as float64 when it holds integers or bools (NumPy's means, quantiles and covariances are floats), else
    itself (float32 stays float32)."""
    return a if _dtype(a).kind in "fc" else F.to_copy(a, np.dtype(np.float64))


def _cast(result: Any, dtype: Any) -> Any:
    if dtype is None or np.dtype(dtype) == _dtype(result):
        return result
    return F.to_copy(result, np.dtype(dtype))


def _as(a: Any, dtype: Any) -> Any:
    """``a`` converted to ``dtype`` before a reduction, as NumPy's ``dtype=`` (the type it accumulates in):
    ``np.sum([1.5, 2.7], dtype=int)`` is 1 + 2 (the result is then cast too: the op may widen small ints)."""
    if dtype is None or np.dtype(dtype) == _dtype(a):
        return a
    return F.to_copy(a, np.dtype(dtype)) if isinstance(a, Tensor) else np.asarray(a, np.dtype(dtype))


def _joined(result: Any, arrays: Sequence[Any], dtype: Any, casting: str) -> Any:
    """A join's ``result`` as ``dtype``, after NumPy's check of each input against the ``casting`` rule."""
    if dtype is None:
        return result
    for a in arrays:
        source = _dtype(a)
        if not np.can_cast(source, dtype, casting):  # type: ignore[arg-type]
            raise TypeError(f"Cannot cast array data from {source!r} to {np.dtype(dtype)!r} according to the rule "
                            f"{casting!r}")
    return _cast(result, dtype)


def _flat(a: Any) -> Any:
    return F.reshape(a, (-1,))


def _ndim(a: Any) -> int:
    try:
        return a.ndim  # a Tensor's or an array's, without a second dispatch
    except AttributeError:
        return np.ndim(a)


# ----- reductions ------------------------------------------------------------------------------------------
def _mask(where: Any) -> Any:
    """A ``where=`` mask as a Tensor or an array (NumPy takes lists too)."""
    return where if isinstance(where, Tensor) else np.asarray(where)


def _masked(a: Any, where: Any, fill: Any) -> Any:
    """``a`` with the entries a ``where=`` mask leaves out replaced by ``fill`` (no gradient reaches them)."""
    return a if where is np._NoValue else F.where(_mask(where), a, fill)


def _and_initial(result: Any, initial: Any, combine: Callable[..., Any]) -> Any:
    """``result`` combined with NumPy's ``initial=`` (a scalar converted to the result's dtype, as NumPy's)."""
    return result if initial is np._NoValue else combine(result, np.asarray(initial, _dtype(result)))


def _mean_of(a: Any, present: Any, axis: Any, keepdims: bool) -> Any:
    """The mean of ``a``'s entries where ``present`` (broadcast to ``a``) holds: NaN where none does, as NumPy."""
    count = F.sum(F.broadcast_to(present, np.shape(_data(a))), axis, keepdims)
    return F.div(F.sum(F.where(present, a, 0), axis, keepdims), F.to_copy(count, np.finfo(_dtype(a)).dtype))


@implements(np.sum)
def sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        initial: Any = np._NoValue, where: Any = np._NoValue) -> Any:
    """``np.sum`` (of the entries ``where`` selects, plus ``initial``)."""
    _reject("sum", out=out)
    return _cast(_and_initial(F.sum(_masked(_as(a, dtype), where, 0), axis, keepdims), initial, F.add), dtype)


@implements(np.mean)
def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
         where: Any = np._NoValue) -> Any:
    """``np.mean`` (of the entries ``where`` selects)."""
    _reject("mean", out=out)
    if where is np._NoValue:
        return _cast(F.mean(_as(a, dtype), axis, keepdims), dtype)
    return _cast(_mean_of(_inexact(_as(a, dtype)), _mask(where), axis, keepdims), dtype)


@implements(np.prod)
def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = np._NoValue, where: Any = np._NoValue) -> Any:
    """``np.prod`` (of the entries ``where`` selects, times ``initial``)."""
    _reject("prod", out=out)
    return _cast(_and_initial(F.prod(_masked(_as(a, dtype), where, 1), axis, keepdims), initial, F.mul), dtype)


@implements(np.var)
def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False, *,
        where: Any = np._NoValue, mean: Any = np._NoValue, correction: Any = np._NoValue) -> Any:
    """``np.var`` (biased by default, as NumPy: ``ddof=0``)."""
    _reject("var", out=out, where=where, mean=mean)
    return _cast(F.var(a, axis, ddof if correction is np._NoValue else correction, keepdims), dtype)


@implements(np.std)
def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False, *,
        where: Any = np._NoValue, mean: Any = np._NoValue, correction: Any = np._NoValue) -> Any:
    """``np.std`` (biased by default, as NumPy: ``ddof=0``)."""
    _reject("std", out=out, where=where, mean=mean)
    return _cast(F.std(a, axis, ddof if correction is np._NoValue else correction, keepdims), dtype)


def _extreme(extreme: Callable[..., Any], pair: Callable[..., Any], ufunc: str, a: Any, axis: Any, keepdims: bool,
             initial: Any, where: Any) -> Any:
    """np.max/np.min with NumPy's ``initial=`` (one more value: the result where there is nothing to reduce; a tie
    with it shares the gradient, as ``pair``'s) and ``where=`` (the entries it leaves out count as ``initial``,
    which NumPy then requires)."""
    if initial is np._NoValue:
        if where is not np._NoValue:
            raise ValueError(f"reduction operation '{ufunc}' does not have an identity, so to use a where mask one "
                             f"has to specify 'initial'")
        return extreme(a, axis, keepdims)
    if not np.size(_data(a)):  # nothing to reduce: initial, in the result's shape
        return _and_initial(F.sum(F.mul(a, 0), axis, keepdims), initial, F.add)
    return _and_initial(extreme(_masked(a, where, np.asarray(initial, _dtype(a))), axis, keepdims), initial, pair)


@implements(np.max, np.amax)
def amax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,
         where: Any = np._NoValue) -> Any:
    """``np.max`` (the values; ties share the gradient, as torch's amax)."""
    _reject("max", out=out)
    return _extreme(F.amax, F.maximum, "maximum", a, axis, keepdims, initial, where)


@implements(np.min, np.amin)
def amin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,
         where: Any = np._NoValue) -> Any:
    """``np.min``."""
    _reject("min", out=out)
    return _extreme(F.amin, F.minimum, "minimum", a, axis, keepdims, initial, where)


@implements(np.average)
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Any:
    """``np.average``: the mean, or the ``weights``-weighted mean (1-D weights run along ``axis``)."""
    if weights is None:
        avg = F.mean(a, axis, keepdims)
        count = np.size(_data(a)) // max(np.size(_data(avg)), 1)
        return (avg, np.full(np.shape(_data(avg)), float(count))) if returned else avg
    if _ndim(weights) == 1 and _ndim(a) > 1:
        if axis is None or not isinstance(axis, int | np.integer):
            raise TypeError("np.average: 1-D weights need an integer axis when a is not 1-D")
        shape = [1] * _ndim(a)
        shape[axis] = -1
        weights = F.reshape(weights, tuple(shape))
    scale = F.sum(F.broadcast_to(weights, np.shape(_data(a))), axis, keepdims)
    if np.any(_data(scale) == 0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = F.div(F.sum(F.mul(a, weights), axis, keepdims), scale)
    return (avg, scale) if returned else avg


@implements(np.cumsum)
def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.cumsum`` (over the flattened array without an axis)."""
    _reject("cumsum", out=out)
    a = _as(a, dtype)
    return _cast(F.cumsum(_flat(a), 0) if axis is None else F.cumsum(a, axis), dtype)


@implements(np.cumprod)
def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.cumprod`` (over the flattened array without an axis)."""
    _reject("cumprod", out=out)
    a = _as(a, dtype)
    return _cast(F.cumprod(_flat(a), 0) if axis is None else F.cumprod(a, axis), dtype)


@implements(np.ptp)
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """``np.ptp``: max - min ("peak to peak"; ties share each gradient, as amax/amin)."""
    _reject("ptp", out=out)
    return F.sub(F.amax(a, axis, keepdims), F.amin(a, axis, keepdims))


def _ignoring_nans(name: str, reduce: Callable[..., Any], identity: float, doc: str) -> Callable[..., Any]:
    """``np.<name>``: ``reduce`` with NaNs counted as ``identity`` (no gradient reaches them, as torch's nansum)."""
    def reduction(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
                  initial: Any = np._NoValue, where: Any = np._NoValue) -> Any:
        _reject(name, out=out)
        return reduce(F.where(F.isnan(a), identity, a), axis, dtype, keepdims=keepdims, initial=initial, where=where)
    reduction.__doc__ = doc
    return reduction


nansum = implements(np.nansum)(_ignoring_nans("nansum", sum, 0, "``np.nansum``: the sum with NaNs counted as 0."))
nanprod = implements(np.nanprod)(_ignoring_nans("nanprod", prod, 1,
                                                "``np.nanprod``: the product with NaNs counted as 1."))


@implements(np.nanmean)
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
            where: Any = np._NoValue) -> Any:
    """``np.nanmean``: the mean of the values that are not NaN (and ``where`` selects; NaN where there are none,
    as NumPy)."""
    _reject("nanmean", out=out)
    a = _inexact(a)
    present = F.logical_not(F.isnan(a))
    return _cast(_mean_of(a, present if where is np._NoValue else F.logical_and(present, _mask(where)), axis,
                          keepdims), dtype)


def _cumulative(name: str, scan: Callable[..., Any], identity: float) -> Callable[..., Any]:
    def cumulative(x: Any, /, *, axis: int | None = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
        _reject(name, out=out)
        if axis is None:
            if _ndim(x) != 1:
                raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
            axis = 0
        result = _cast(scan(_as(x, dtype), axis), dtype)
        if include_initial:
            shape = list(np.shape(_data(result)))
            shape[axis] = 1
            result = F.cat([np.full(shape, identity, _dtype(result)), result], axis)
        return result
    cumulative.__doc__ = f"``np.{name}`` (the Array API's scan: ``include_initial`` puts {identity:g} first)."
    return cumulative


cumulative_sum = implements(np.cumulative_sum)(_cumulative("cumulative_sum", F.cumsum, 0.0))
cumulative_prod = implements(np.cumulative_prod)(_cumulative("cumulative_prod", F.cumprod, 1.0))


@implements(np.trapezoid)
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """``np.trapezoid``: the trapezoidal rule along ``axis``, at sample points ``x`` (1-D, or shaped as ``y``)
    or spaced ``dx``."""
    ax = axis % _ndim(y)
    lead = (slice(None),) * ax
    if x is not None and not isinstance(x, Tensor):
        x = np.asarray(x)
    if x is None:
        d = dx
    elif _ndim(x) == 1:
        d = diff(x)
        if _ndim(y) > 1:
            d = F.reshape(d, (-1,) + (1,) * (_ndim(y) - 1 - ax))
    else:
        d = diff(x, axis=axis)
    mid = F.div(F.add(y[lead + (slice(1, None),)], y[lead + (slice(None, -1),)]), 2.0)
    return F.sum(F.mul(d, mid), ax)


@implements(np.nancumsum)
def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.nancumsum``: the cumulative sum with NaNs counted as 0."""
    return cumsum(F.where(F.isnan(a), 0, a), axis, dtype, out)


@implements(np.nancumprod)
def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.nancumprod``: the cumulative product with NaNs counted as 1."""
    return cumprod(F.where(F.isnan(a), 1, a), axis, dtype, out)


@implements(np.nanvar)
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False, *,
           where: Any = np._NoValue, mean: Any = np._NoValue, correction: Any = np._NoValue) -> Any:
    """``np.nanvar``: the variance of the values that are not NaN, sum |x - mean|^2 / (count - ddof) (NaN where
    count <= ddof, as NumPy)."""
    _reject("nanvar", out=out, where=where, mean=mean)
    ddof = ddof if correction is np._NoValue else correction
    a = _inexact(a)
    nan = F.isnan(a)
    deviation = F.where(nan, 0, F.sub(a, nanmean(a, axis, keepdims=True)))
    squares = F.real(F.mul(F.conj(deviation), deviation))
    dof = F.to_copy(F.sub(F.sum(F.logical_not(nan), axis, keepdims), ddof), np.dtype(_dtype(squares)))
    positive = F.gt(dof, 0)
    variance = F.div(F.sum(squares, axis, keepdims), F.where(positive, dof, 1))
    return _cast(F.where(positive, variance, np.nan), dtype)


@implements(np.nanstd)
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0, keepdims: bool = False, *,
           where: Any = np._NoValue, mean: Any = np._NoValue, correction: Any = np._NoValue) -> Any:
    """``np.nanstd``: the square root of ``nanvar``."""
    return F.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _nan_extreme(name: str, extreme: Callable[..., Any], fill: float) -> Callable[..., Any]:
    def nan_extreme(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = np._NoValue,
                    where: Any = np._NoValue) -> Any:
        _reject(name, out=out, initial=initial, where=where)
        if _dtype(a).kind not in "fc":  # no NaN to skip
            return extreme(a, axis, keepdims)
        nan = F.isnan(a)
        result = extreme(F.where(nan, fill, a), axis, keepdims)
        return F.where(F.amin(nan, axis, keepdims), np.nan, result)  # all NaN: NaN, as NumPy (which warns)
    nan_extreme.__doc__ = f"``np.{name}``: the {extreme.__name__[1:]} of the values that are not NaN."
    return nan_extreme


nanmax = implements(np.nanmax)(_nan_extreme("nanmax", F.amax, -np.inf))
nanmin = implements(np.nanmin)(_nan_extreme("nanmin", F.amin, np.inf))


@implements(np.quantile)
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``np.quantile`` with the default 'linear' method: between the sorted values at floor and ceil of
    q (n - 1), weighted by the fraction (the gradient splits the same way, as torch.quantile); a 1-D ``q``
    puts its axis first, as NumPy."""
    _reject("quantile", out=out)
    if method != "linear" or weights is not None:
        raise TypeError("np.quantile on Tensors supports method='linear' without weights only")
    qs = np.asarray(_data(q), dtype=float)
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    a = _inexact(a)
    ndim = _ndim(a)
    if axis is None:
        a, ax = _flat(a), 0
    else:
        (ax,) = normalize_axis_tuple(axis, ndim)
    n = np.shape(_data(a))[ax]
    position = qs * (n - 1)
    below = np.floor(position).astype(int)
    above = np.minimum(below + 1, n - 1)
    weight = (position - below).astype(np.result_type(_dtype(a), q if isinstance(q, int | float) else _dtype(q)))
    ordered = sort(a, axis=ax)
    if qs.ndim:  # one value per quantile along ax, weights shaped to broadcast there
        weight = np.reshape(weight, (-1,) + (1,) * (_ndim(ordered) - ax - 1))
    lead = (slice(None),) * ax
    low, high = ordered[lead + (below,)], ordered[lead + (above,)]
    result = F.add(low, F.mul(F.sub(high, low), weight))
    has_nan = np.any(np.isnan(_data(a)), axis=ax)  # NaN, as NumPy (sorted last, it was skipped)
    if np.any(has_nan):
        result = F.where(np.expand_dims(has_nan, ax) if qs.ndim else has_nan, np.nan, result)
    if qs.ndim:
        result = F.movedim(result, ax, 0)
    if keepdims:
        kept = (1,) * ndim if axis is None else tuple(1 if i == ax else d for i, d in enumerate(np.shape(_data(a))))
        result = F.reshape(result, qs.shape + kept)
    return result


@implements(np.percentile)
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Any:
    """``np.percentile``: ``np.quantile`` at q / 100."""
    qs = np.asarray(_data(q), dtype=float)
    if np.any((qs < 0) | (qs > 100)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    hundred = _dtype(a).type(100) if _dtype(a).kind == "f" else 100  # NumPy's division (keeps float32 for a number)
    return quantile(a, np.true_divide(_data(q), hundred), axis, out, overwrite_input, method, keepdims, weights=weights)


@implements(np.median)
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """``np.median``: the middle value, or the mean of the two middle ones (NumPy's; torch.median takes the lower)."""
    return quantile(a, 0.5, axis, out, keepdims=keepdims)


@implements(np.cov)
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """``np.cov``: the covariance of the variables in the rows (columns with ``rowvar=False``) of ``m`` and
    ``y``, normalized by N - 1 (N with ``bias``, N - ``ddof`` given ``ddof``); no frequency or analytic weights."""
    if fweights is not None or aweights is not None:
        raise TypeError("np.cov on Tensors does not support fweights= or aweights=; compute without them")
    if _ndim(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    rows = [atleast_2d(v) for v in (m, y) if v is not None]
    rows = [F.transpose(r, 0, 1) if not rowvar and np.shape(_data(r))[0] != 1 else r for r in rows]
    X = F.cat(rows, 0) if len(rows) > 1 else rows[0]
    precision = np.result_type(_dtype(X), np.float64)  # NumPy computes in float64 (complex128) at least
    if _dtype(X) != precision:
        X = F.to_copy(X, precision)
    n = np.shape(_data(X))[1] - (ddof if ddof is not None else 0 if bias else 1)
    X = F.sub(X, F.mean(X, 1, True))
    c = F.div(F.matmul(X, mH(X)), n if n > 0 else 0)
    return _cast(F.squeeze(c), dtype)


@implements(np.corrcoef)
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """``np.corrcoef``: the covariances divided by the products of the standard deviations (real results
    clipped to [-1, 1], as NumPy)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if _ndim(c) == 0:
        return F.div(c, c)
    d = F.sqrt(F.real(F.diagonal(c, 0, 0, 1)))
    c = F.div(F.div(c, F.reshape(d, (-1, 1))), F.reshape(d, (1, -1)))
    return c if _dtype(c).kind == "c" else F.clamp(c, -1.0, 1.0)


# ----- products -------------------------------------------------------------------------------------------
@implements(np.dot)
def dot(a: Any, b: Any, out: Any = None) -> Any:
    """``np.dot``: a product for scalars, the inner product of vectors, else a sum over the last axis of
    ``a`` and the second-to-last of ``b``."""
    _reject("dot", out=out)
    na, nb = _ndim(a), _ndim(b)
    if na == 0 or nb == 0:
        return F.mul(a, b)
    if nb <= 2:
        return F.matmul(a, b)
    return F.tensordot(a, b, ([na - 1], [nb - 2]))


@implements(np.vdot)
def vdot(a: Any, b: Any) -> Any:
    """``np.vdot``: the inner product of the flattened arrays (``a`` conjugated)."""
    return F.vdot(_flat(a), _flat(b))


@implements(np.inner)
def inner(a: Any, b: Any) -> Any:
    """``np.inner``: a sum over the last axes."""
    a, b = (x if isinstance(x, Tensor) else np.asarray(x) for x in (a, b))
    if _ndim(a) == 0 or _ndim(b) == 0:
        return F.mul(a, b)
    return F.tensordot(a, b, ([_ndim(a) - 1], [_ndim(b) - 1]))


@implements(np.outer)
def outer(a: Any, b: Any, out: Any = None) -> Any:
    """``np.outer`` of the flattened arrays."""
    _reject("outer", out=out)
    return F.outer(_flat(a), _flat(b))


def _from_sublists(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """NumPy's sublist form ``(op, axes, op, axes, ..., [output axes])`` as ``(subscripts, *ops)``: axis ``k``
    is the letter ``k`` of a-zA-Z (NumPy's numbering) and ``Ellipsis`` is ``...``."""
    def letters(axes: Any) -> str:
        return "".join("..." if k is Ellipsis else string.ascii_letters[k] for k in axes)
    operands, sublists = args[0:len(args) - len(args) % 2:2], args[1::2]
    inputs = ",".join(letters(axes) for axes in sublists[:len(operands)])
    output = "->" + letters(args[-1]) if len(args) % 2 else ""
    return (inputs + output, *operands)


@implements(np.einsum)
def einsum(*operands: Any, out: Any = None, optimize: Any = False, **kwargs: Any) -> Any:
    """``np.einsum`` with a subscripts string (explicit or implicit output) or in the sublist form
    ``np.einsum(a, [0, 1], b, [1], [0])``; the contraction order is funcgrad's."""
    _reject("einsum", out=out, **kwargs)
    return F.einsum(*(operands if isinstance(operands[0], str) else _from_sublists(operands)))


@implements(np.tensordot)
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``np.tensordot``."""
    a, b = (x if isinstance(x, Tensor) else np.asarray(x) for x in (a, b))
    return F.tensordot(a, b, int(axes) if isinstance(axes, int | np.integer) else ([*np.atleast_1d(axes[0])],
                                                                  [*np.atleast_1d(axes[1])]))


@implements(np.kron)
def kron(a: Any, b: Any) -> Any:
    """``np.kron``: block ``i`` of the result is ``a[i] * b``."""
    n = max(_ndim(a), _ndim(b))
    sa, sb = (1,) * (n - _ndim(a)) + np.shape(_data(a)), (1,) * (n - _ndim(b)) + np.shape(_data(b))
    # a: (s0, 1, s1, 1, ...) times b: (1, t0, 1, t1, ...) -> (s0, t0, s1, t1, ...) -> (s0 t0, s1 t1, ...)
    spread_a = F.reshape(a, tuple(d for s in sa for d in (s, 1)))
    product = F.mul(spread_a, F.reshape(b, tuple(d for t in sb for d in (1, t))))
    return F.reshape(product, tuple(s * t for s, t in zip(sa, sb)))


@implements(np.trace)
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Any:
    """``np.trace``: the sums along diagonals."""
    _reject("trace", out=out)
    return _cast(F.sum(F.diagonal(_as(a, dtype), offset, axis1, axis2), -1), dtype)


# ----- matrices and shapes --------------------------------------------------------------------------------
@implements(np.diag)
def diag(v: Any, k: int = 0) -> Any:
    """``np.diag``."""
    return F.diag(v, k)


@implements(np.diagonal)
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``np.diagonal``."""
    return F.diagonal(a, offset, axis1, axis2)


@implements(np.tril)
def tril(m: Any, k: int = 0) -> Any:
    """``np.tril``."""
    return F.tril(m, k)


@implements(np.triu)
def triu(m: Any, k: int = 0) -> Any:
    """``np.triu``."""
    return F.triu(m, k)


def _check_order(name: str, order: str) -> None:
    if order != "C":
        raise TypeError(f"np.{name} on Tensors supports order='C' only")


@implements(np.reshape)
def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None, copy: bool | None = None) -> Any:
    """``np.reshape``."""
    _check_order("reshape", order)
    shape = newshape if shape is None else shape
    return F.reshape(a, (int(shape),) if isinstance(shape, int | np.integer) else tuple(shape))


@implements(np.ravel)
def ravel(a: Any, order: str = "C") -> Any:
    """``np.ravel``."""
    _check_order("ravel", order)
    return _flat(a)


@implements(np.transpose)
def transpose(a: Any, axes: Any = None) -> Any:
    """``np.transpose``: dims permuted (reversed by default)."""
    return F.permute(a, tuple(range(_ndim(a) - 1, -1, -1)) if axes is None else tuple(axes))


@implements(np.swapaxes)
def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """``np.swapaxes``."""
    return F.transpose(a, axis1, axis2)


@implements(np.moveaxis)
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """``np.moveaxis``."""
    return F.movedim(a, source, destination)


@implements(np.squeeze)
def squeeze(a: Any, axis: Any = None) -> Any:
    """``np.squeeze``: an ``axis`` whose length is not 1 is an error, as NumPy's (torch's squeeze keeps it)."""
    if axis is not None:
        shape = np.shape(_data(a))
        axis = normalize_axis_tuple(axis, len(shape))
        if any(shape[d] != 1 for d in axis):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return F.squeeze(a, axis)


@implements(np.expand_dims)
def expand_dims(a: Any, axis: Any) -> Any:
    """``np.expand_dims`` (several axes at once given a tuple)."""
    n = _ndim(a) + (1 if isinstance(axis, int | np.integer) else len(axis))
    for ax in sorted(normalize_axis_tuple(axis, n)):  # NumPy's checks: in range, not repeated
        a = F.unsqueeze(a, ax)
    return a


@implements(np.broadcast_to)
def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    """``np.broadcast_to`` (no -1 for a kept size, as NumPy: that is torch's spelling)."""
    shape = (int(shape),) if isinstance(shape, int | np.integer) else tuple(shape)
    if any(n < 0 for n in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    return F.broadcast_to(array, shape)


def _at_least(n: int, lead: Callable[[tuple[int, ...]], tuple[int, ...]]) -> Callable[..., Any]:
    def at_least(*arys: Any) -> Any:
        out = [a if _ndim(a) >= n else F.reshape(a, lead(np.shape(_data(a)))) for a in arys]
        return out[0] if len(out) == 1 else tuple(out)
    at_least.__doc__ = f"``np.atleast_{n}d``."
    return at_least


atleast_1d = implements(np.atleast_1d)(_at_least(1, lambda s: (1,)))
atleast_2d = implements(np.atleast_2d)(_at_least(2, lambda s: (1,) * (2 - len(s)) + s))
atleast_3d = implements(np.atleast_3d)(_at_least(3, lambda s: {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)]))


# ----- joining and splitting ------------------------------------------------------------------------------
@implements(np.concatenate)
def concatenate(arrays: Sequence[Any], axis: int | None = 0, out: Any = None, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    """``np.concatenate`` (of the flattened arrays when ``axis`` is None)."""
    _reject("concatenate", out=out)
    arrays = [_flat(a) for a in arrays] if axis is None else list(arrays)
    return _joined(F.cat(arrays, 0 if axis is None else axis), arrays, dtype, casting)


@implements(np.stack)
def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """``np.stack``."""
    _reject("stack", out=out)
    return _joined(F.stack(list(arrays), axis), arrays, dtype, casting)


@implements(np.hstack)
def hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """``np.hstack``: along the first axis for 1-D arrays, else the second."""
    arrays = [atleast_1d(a) for a in tup]
    return _joined(F.cat(arrays, 0 if _ndim(arrays[0]) == 1 else 1), arrays, dtype, casting)


@implements(np.vstack)
def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """``np.vstack``: rows stacked (1-D arrays become rows)."""
    return _joined(F.cat([atleast_2d(a) for a in tup], 0), tup, dtype, casting)


@implements(np.column_stack)
def column_stack(tup: Sequence[Any]) -> Any:
    """``np.column_stack``: 1-D arrays become columns."""
    return F.cat([F.reshape(a, (-1, 1)) if _ndim(a) < 2 else a for a in tup], 1)


def _pieces(n: int, indices_or_sections: Any, even: bool) -> list[slice]:
    """The pieces NumPy's split/array_split cut a length-``n`` axis into: ``k`` sections (the first ``n % k`` one
    longer), or ``[0:i0], [i0:i1], ..., [ik:]`` for indices, sliced as Python does (out of order: empty)."""
    if isinstance(indices_or_sections, int | np.integer):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if even and n % k:
            raise ValueError("array split does not result in an equal division")
        stops = np.cumsum([n // k + 1] * (n % k) + [n // k] * (k - n % k)).tolist()
        return [slice(start, stop) for start, stop in zip([0, *stops[:-1]], stops)]
    cuts = [0, *(int(i) for i in indices_or_sections), n]
    return [slice(start, stop) for start, stop in zip(cuts[:-1], cuts[1:])]


def _split(a: Any, indices_or_sections: Any, axis: int, even: bool) -> list[Any]:
    ax = axis % _ndim(a)
    return [a[(slice(None),) * ax + (piece,)] for piece in _pieces(np.shape(_data(a))[ax], indices_or_sections, even)]


@implements(np.split)
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``np.split``: ``k`` equal sections, or cuts at the given indices."""
    return _split(ary, indices_or_sections, axis, True)


@implements(np.array_split)
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``np.array_split``: as split, the first sections one longer when ``k`` does not divide the axis."""
    return _split(ary, indices_or_sections, axis, False)


@implements(np.dstack)
def dstack(tup: Sequence[Any]) -> Any:
    """``np.dstack``: along the third axis (after ``atleast_3d``)."""
    return F.cat([atleast_3d(a) for a in tup], 2)


@implements(np.hsplit)
def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``np.hsplit``: ``np.split`` along axis 1 (0 for 1-D)."""
    if _ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(ary, indices_or_sections, 1 if _ndim(ary) > 1 else 0, True)


@implements(np.vsplit)
def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``np.vsplit``: ``np.split`` along axis 0 of an array of 2 or more dims."""
    if _ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0, True)


@implements(np.dsplit)
def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``np.dsplit``: ``np.split`` along axis 2 of an array of 3 or more dims."""
    if _ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, True)


@implements(np.append)
def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``np.append``: ``values`` after ``arr`` along ``axis`` (both flattened without one)."""
    return concatenate([arr, values], axis)


@implements(np.meshgrid)
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple[Any, ...]:
    """``np.meshgrid``: coordinate arrays from 1-D ones ('xy': the first two axes swapped, as NumPy; 'ij': as
    given); ``sparse`` keeps each spread along its own axis only."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(xi)
    axes = list(range(n))
    if indexing == "xy" and n > 1:
        axes[0], axes[1] = 1, 0
    grids = [F.reshape(x, tuple(-1 if d == axes[i] else 1 for d in range(n))) for i, x in enumerate(xi)]
    if sparse:
        return tuple(grids)
    shape = np.broadcast_shapes(*(np.shape(_data(g)) for g in grids))
    return tuple(F.clone(F.broadcast_to(g, shape)) if copy else F.broadcast_to(g, shape) for g in grids)


# ----- selection and rearrangement ------------------------------------------------------------------------
@implements(np.where)
def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``np.where(condition, x, y)``; ``np.where(condition)`` is ``nonzero`` (plain index arrays)."""
    if x is None and y is None:
        return np.nonzero(_data(condition))
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    if getattr(condition, "dtype", np.bool_) != np.bool_:  # NumPy reads the truth of the values: no derivative
        condition = F.ne(condition, 0)
    return F.where(condition, x, y)


@implements(np.select)
def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """``np.select``: where the first true condition's choice, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    result = default
    for i, (condition, choice) in reversed(list(enumerate(zip(condlist, choicelist)))):
        if _dtype(condition) != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
        result = F.where(condition, choice, result)
    return result


@implements(np.nan_to_num)
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """``np.nan_to_num``: NaN, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the
    largest and smallest finite floats); no gradient reaches the replaced entries. Complex values: each part."""
    kind = _dtype(x).kind
    if kind == "c":
        parts = [nan_to_num(part, copy, nan, posinf, neginf) for part in (F.real(x), F.imag(x))]
        return F.add(parts[0], F.mul(parts[1], 1j))
    if kind != "f":
        return F.clone(x)
    info = np.finfo(_dtype(x))
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    return F.where(F.isnan(x), nan, F.where(F.isinf(x), F.where(F.gt(x, 0), big, small), x))


@implements(np.clip)
def clip(a: Any, a_min: Any = np._NoValue, a_max: Any = np._NoValue, out: Any = None, *, min: Any = np._NoValue,  # noqa: A002
         max: Any = np._NoValue) -> Any:  # noqa: A002
    """``np.clip`` (gradient 1 at the bounds, as torch's clamp)."""
    _reject("clip", out=out)
    low = min if a_min is np._NoValue else a_min
    high = max if a_max is np._NoValue else a_max
    low, high = (None if b is np._NoValue else b for b in (low, high))
    return F.clone(a) if low is None and high is None else F.clamp(a, low, high)


@implements(np.diff)
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue, append: Any = np._NoValue) -> Any:
    """``np.diff``: ``n``-th differences along ``axis``."""
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    ax = axis % _ndim(a)
    pieces = [a]
    for value, at in ((prepend, 0), (append, 1)):
        if value is not np._NoValue:
            shape = list(np.shape(_data(a)))
            shape[ax] = 1
            edge = value if _ndim(value) == len(shape) else F.broadcast_to(value, tuple(shape))
            pieces.insert(at * len(pieces), edge)
    if len(pieces) > 1:
        a = F.cat(pieces, ax)
    lead = (slice(None),) * ax
    step = F.ne if _dtype(a) == np.bool_ else F.sub  # NumPy's difference of bools: whether they differ
    for _ in range(n):
        a = step(a[lead + (slice(1, None),)], a[lead + (slice(None, -1),)])
    return a


def _spacing(coordinates: Any, length: int) -> Any:
    """np.gradient's spacing along one axis of ``length``: a scalar as given, or the differences of 1-D coordinates
    (a Tensor's all kept, for the derivative in each coordinate; an array's one scalar when equal, as NumPy's)."""
    if _ndim(coordinates) == 0:
        return coordinates
    if _ndim(coordinates) != 1:
        raise ValueError("distances must be either scalars or 1d")
    if np.shape(_data(coordinates))[0] != length:
        raise ValueError("when 1d, distances must match the length of the corresponding dimension")
    if isinstance(coordinates, Tensor):
        return diff(_inexact(coordinates))
    coordinates = np.asarray(coordinates)
    d = np.diff(coordinates.astype(np.float64) if coordinates.dtype.kind in "iu" else coordinates)
    return d[0] if np.all(d == d[0]) else d


def _spacings(varargs: tuple[Any, ...], axes: tuple[int, ...], shape: tuple[int, ...]) -> list[Any]:
    """np.gradient's spacings, one per axis: 1 without ``varargs``, one scalar for all axes, or one each."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and _ndim(varargs[0]) == 0:
        return list(varargs) * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    return [_spacing(coordinates, shape[ax]) for ax, coordinates in zip(axes, varargs)]


def _gradient_along(f: Any, ax: int, dx: Any, edge_order: int) -> Any:
    """One axis of np.gradient: second-order central differences inside, one-sided ones of ``edge_order`` at
    both ends; ``dx`` is the spacing or the coordinates' differences (NumPy's formulas for uneven spacing)."""
    if np.shape(_data(f))[ax] < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
                         "elements are required.")
    lead = (slice(None),) * ax

    def part(start: int | None, stop: int | None) -> Any:
        return f[lead + (slice(start, stop),)]

    def spacing(i: int) -> Any:
        return dx if _ndim(dx) == 0 else dx[i]

    def point(i: int) -> Any:
        return part(i, i + 1 or None)

    def end(at: int, step: int) -> Any:
        """The one-sided derivative at the end ``at`` from the points ``at + k step``, spaced p then q (negative
        from the last end inward: its formulas are the first end's, mirrored)."""
        p = spacing(at) * step
        if edge_order == 1:
            return (point(at + step) - point(at)) / p
        q = spacing(at + step) * step
        f0, f1, f2 = (point(at + k * step) for k in range(3))
        return -(2 * p + q) / (p * (p + q)) * f0 + (p + q) / (p * q) * f1 - p / (q * (p + q)) * f2

    if _ndim(dx) == 0:
        inside = (part(2, None) - part(None, -2)) / (2.0 * dx)
    else:
        dx1, dx2 = (F.reshape(d, (-1,) + (1,) * (_ndim(f) - ax - 1)) for d in (dx[:-1], dx[1:]))
        inside = (-dx2 / (dx1 * (dx1 + dx2)) * part(None, -2) + (dx2 - dx1) / (dx1 * dx2) * part(1, -1)
                  + dx1 / (dx2 * (dx1 + dx2)) * part(2, None))
    return F.cat([end(0, 1), inside, end(-1, -1)], ax)


@implements(np.gradient)
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """``np.gradient``: the derivative of the samples ``f`` along each of ``axis`` (every axis by default; a tuple of
    them for several), by second-order central differences inside and one-sided differences of ``edge_order``
    (1 or 2) at the ends; ``varargs`` are the spacings: one scalar for all axes, or per axis a scalar or the 1-D
    coordinates (uneven spacing). Differentiable in ``f`` and in spacings and coordinates given as Tensors."""
    f = f if isinstance(f, Tensor) else np.asarray(f)
    shape = np.shape(_data(f))
    axes = tuple(range(len(shape))) if axis is None else normalize_axis_tuple(axis, len(shape))
    spacings = _spacings(varargs, axes, shape)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    dtype = _dtype(f) if _dtype(f).kind in "fc" else np.dtype(np.float64)
    f = _cast(f, dtype) if _dtype(f).kind in "iu" else f
    derivatives = tuple(_cast(_gradient_along(f, ax, dx, edge_order), dtype) for ax, dx in zip(axes, spacings))
    return derivatives[0] if len(derivatives) == 1 else derivatives


@implements(np.sort)
def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Any:
    """``np.sort``: the values in order (each gradient goes back to where its value came from)."""
    if axis is None:
        a, axis = _flat(a), 0
    return F.take_along_dim(a, np.argsort(_data(a), axis=axis, kind=kind, stable=stable), axis)


@implements(np.take)
def take(a: Any, indices: Any, axis: int | None = None, out: Any = None, mode: str = "raise") -> Any:
    """``np.take``: elements at ``indices`` along ``axis`` (of the flattened array without one); ``mode`` 'wrap'
    and 'clip' bring indices out of range into it, as NumPy's."""
    _reject("take", out=out)
    if axis is None:
        a, axis = _flat(a), 0
    axis %= _ndim(a)
    if mode != "raise":
        n = np.shape(_data(a))[axis]
        if mode not in ("wrap", "clip"):
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
        indices = np.mod(_data(indices), n) if mode == "wrap" else np.clip(_data(indices), 0, n - 1)
    return a[(slice(None),) * axis + (indices,)]  # a Tensor of indices saved as one (version-checked)


@implements(np.take_along_axis)
def take_along_axis(arr: Any, indices: Any, axis: int | None = -1) -> Any:
    """``np.take_along_axis``."""
    return F.take_along_dim(arr, indices, axis)  # a Tensor of indices saved as one (version-checked)


@implements(np.pad)
def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``np.pad`` in modes 'constant' (0 or a scalar ``constant_values``), 'reflect', 'edge' and 'wrap'."""
    modes = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}
    value = kwargs.pop("constant_values", 0)
    if mode not in modes or kwargs or _ndim(value):
        raise TypeError(f"np.pad on Tensors supports the modes {', '.join(modes)} with a scalar constant_values")
    n = _ndim(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (n, 2))
    if np.any(widths < 0):  # (torch's negative padding would crop)
        raise ValueError("index can't contain negative values")
    flat = tuple(int(w) for pair in widths[::-1] for w in pair)  # torch's order: last dim first
    padded = F.pad(array, flat, modes[mode])
    if mode != "constant" or (not isinstance(value, Tensor) and value == 0):
        return padded
    mask = np.pad(np.zeros(np.shape(_data(array)), bool), widths, constant_values=True)
    return F.where(mask, value, padded)


@implements(np.tile)
def tile(A: Any, reps: Any) -> Any:  # noqa: N803
    """``np.tile``."""
    return F.tile(A, (int(reps),) if isinstance(reps, int | np.integer) else tuple(reps))


@implements(np.repeat)
def repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    """``np.repeat``: each element repeated (not torch's tiling ``repeat``)."""
    if axis is None:
        a, axis = _flat(a), 0
    n = np.shape(_data(a))[axis]
    return take(a, np.repeat(np.arange(n), _data(repeats)), axis)


@implements(np.roll)
def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """``np.roll``."""
    return F.roll(a, shift, axis)


@implements(np.flip)
def flip(m: Any, axis: Any = None) -> Any:
    """``np.flip`` (every axis by default)."""
    return F.flip(m, tuple(range(_ndim(m))) if axis is None else axis)


@implements(np.fliplr)
def fliplr(m: Any) -> Any:
    """``np.fliplr``: the columns (axis 1) reversed."""
    if _ndim(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return F.flip(m, (1,))


@implements(np.flipud)
def flipud(m: Any) -> Any:
    """``np.flipud``: the rows (axis 0) reversed."""
    if _ndim(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return F.flip(m, (0,))


@implements(np.rot90)
def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """``np.rot90``: ``k`` quarter turns in the plane of ``axes``, from the first axis towards the second."""
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    n = _ndim(m)
    first, second = normalize_axis_tuple(axes, n)
    if first == second:
        raise ValueError("Axes must be different.")
    k %= 4
    if k == 0:
        return F.clone(m)
    if k == 2:
        return F.flip(m, (first, second))
    order = list(range(n))
    order[first], order[second] = second, first
    return F.permute(F.flip(m, (second,)), tuple(order)) if k == 1 else F.flip(F.permute(m, tuple(order)), (second,))


@implements(np.copy)
def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """``np.copy``: a differentiable copy."""
    return F.clone(a)


@implements(np.astype)
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """``np.astype``: a differentiable conversion (``x`` itself with ``copy=False`` and its own dtype)."""
    return x.astype(dtype, copy=copy)


@implements(np.round, np.around)
def round(a: Any, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001
    """``np.round`` (half to even; zero gradient, as torch)."""
    _reject("round", out=out)
    return F.round(a, decimals)


def _like(make: Callable[..., Any]) -> Callable[..., Any]:
    def like(a: Any, *args: Any, **kwargs: Any) -> Tensor:
        return Tensor._wrap(make(_data(a), *[_data(v) for v in args], **kwargs))
    like.__doc__ = f"``np.{make.__name__}``: a new Tensor that does not require grad."
    return like


for _make in (np.zeros_like, np.ones_like, np.empty_like, np.full_like):
    implements(_make)(_like(_make))


# ----- polynomials, interpolation, elementwise compositions ------------------------------------------------------
@implements(np.vander)
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803
    """``np.vander``: the columns x^(N-1), ..., x, 1 (ascending with ``increasing``), as NumPy's running products
    (in x's dtype promoted with int: bools count as ints, float32 becomes float64)."""
    if _ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = np.shape(_data(x))[0]
    N = n if N is None else N  # noqa: N806
    if N < 0:
        raise ValueError("negative dimensions are not allowed")
    x = _cast(x, np.promote_types(_dtype(x), int))
    factors = F.cat([np.ones((n, min(N, 1)), _dtype(x)), F.broadcast_to(F.reshape(x, (n, 1)), (n, max(N - 1, 0)))], 1)
    powers = F.cumprod(factors, 1)
    return powers if increasing else F.flip(powers, (1,))


@implements(np.polyval)
def polyval(p: Any, x: Any) -> Any:
    """``np.polyval``: p[0] x^(n-1) + ... + p[n-1], by Horner's rule."""
    n = np.shape(_data(p))[0]
    result = F.mul(x, 0)
    for i in range(n):
        result = F.add(F.mul(result, x), p[i])
    return result


@implements(np.interp)
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Any:
    """``np.interp``: the piecewise-linear interpolant through (xp, fp) (xp increasing) at x, ``left``/``right``
    (fp's ends by default) outside; differentiable in x, xp and fp."""
    if period is not None:
        raise TypeError("np.interp on Tensors does not support period=")
    x, xp, fp = (v if isinstance(v, Tensor) else np.asarray(v) for v in (x, xp, fp))
    n = np.shape(_data(xp))[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    left = fp[0] if left is None else left
    right = fp[n - 1] if right is None else right
    if n == 1:
        inside = F.add(F.mul(x, 0), fp[0])
    else:
        j = np.clip(np.searchsorted(_data(xp), _data(x), side="right") - 1, 0, n - 2)
        x0, f0 = F.take_along_dim(xp, j.ravel(), 0), F.take_along_dim(fp, j.ravel(), 0)
        slope = F.div(F.sub(F.take_along_dim(fp, j.ravel() + 1, 0), f0),
                      F.sub(F.take_along_dim(xp, j.ravel() + 1, 0), x0))
        inside = F.reshape(F.add(F.mul(slope, F.sub(_flat(x), x0)), f0), np.shape(_data(x)))
    return F.where(F.lt(x, xp[0]), left, F.where(F.gt(x, xp[n - 1]), right, inside))


@implements(np.sinc)
def sinc(x: Any) -> Any:
    """``np.sinc``: sin(t) / t, t = pi x; for |x| < 1e-3 its series 1 - t^2/6 + t^4/120 - t^6/5040 (exact to
    rounding there), so that every derivative is right at and near 0 (torch's rule gives 0 for the second
    derivative at 0, where it is -pi^2/3)."""
    small = F.lt(F.abs(x), 1e-3)
    t = F.mul(F.where(small, 1.0, x), np.pi)
    t2 = F.square(F.mul(F.where(small, x, 0.0), np.pi))
    series = F.add(1.0, F.mul(t2, F.add(-1 / 6, F.mul(t2, F.add(1 / 120, F.mul(t2, -1 / 5040))))))
    return F.where(small, series, F.div(F.sin(t), t))


@implements(np.fix)
def fix(x: Any, out: Any = None) -> Any:
    """``np.fix``: rounded towards zero (zero gradient, as trunc)."""
    _reject("fix", out=out)
    return F.trunc(x)


# ----- 1-D convolution (the table's convolution op) ---------------------------------------------------------
@implements(np.correlate)
def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """``np.correlate``: ``c[k] = sum_n a[n + k] conj(v[n])`` over the ``mode``'s range of ``k``."""
    a, v = (x if isinstance(x, Tensor) else np.asarray(x) for x in (a, v))
    n, m = np.shape(_data(a))[0], np.shape(_data(v))[0]
    if n < m:  # NumPy's rule: correlate the other way round, reversed and conjugated
        return F.flip(F.conj(correlate(v, a, mode)), (0,))
    pads = {"valid": (0, 0), "full": (m - 1, m - 1), "same": (m // 2, m - 1 - m // 2)}
    if mode not in pads:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")

    def real(x: Any, w: Any) -> Any:  # the table's convolution (real values): sum_n x[n + k] w[n]
        out = F.convolution(F.reshape(x, (1, 1, n)), F.reshape(w, (1, 1, m)), None, (1,), (pads[mode],), (1,), 1)
        return F.reshape(out, (-1,))

    if np.result_type(_dtype(a), _dtype(v)).kind != "c":
        return real(a, v)
    # a conj(v) = (ar ar' + ai vi) + i (ai vr - ar vi), for a = ar + i ai and v = vr + i vi
    ar, ai, vr, vi = F.real(a), _imaginary_part(a), F.real(v), _imaginary_part(v)
    return F.add(F.add(real(ar, vr), real(ai, vi)), F.mul(F.sub(real(ai, vr), real(ar, vi)), 1j))


@implements(np.convolve)
def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """``np.convolve``: the correlation with the shorter sequence reversed."""
    if np.shape(_data(v))[0] > np.shape(_data(a))[0]:
        a, v = v, a
    return correlate(a, F.conj(F.flip(v, (0,))), mode)


# ----- complex numbers -------------------------------------------------------------------------------------
@implements(np.real)
def real(val: Any) -> Any:
    """``np.real``."""
    return F.real(val)


@implements(np.imag)
def imag(val: Any) -> Any:
    """``np.imag``: zeros for real values, as NumPy (torch's imag raises there)."""
    return _imaginary_part(val)


def _imaginary_part(x: Any) -> Any:
    return F.imag(x) if _dtype(x).kind == "c" else F.mul(x, 0)


@implements(np.angle)
def angle(z: Any, deg: bool = False) -> Any:
    """``np.angle`` (in degrees with ``deg=True``)."""
    return F.mul(F.angle(z), 180.0 / np.pi) if deg else F.angle(z)


# ----- linear algebra -------------------------------------------------------------------------------------
@implements(np.linalg.norm)
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """``np.linalg.norm`` (of integers and bools converted to float64 first, as NumPy)."""
    if _dtype(x).kind not in "fc":
        x = F.to_copy(x, np.dtype(np.float64))
    return linalg_norm(x, ord, axis, keepdims)


@implements(np.linalg.eigh)
def eigh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """``np.linalg.eigh`` of the Hermitian matrix the ``UPLO`` triangle stands for (as NumPy)."""
    return linalg_options.eigh(a, UPLO)


@implements(np.linalg.eigvalsh)
def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """``np.linalg.eigvalsh``."""
    return linalg_options.eigvalsh(a, UPLO)


@implements(np.linalg.svd)
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """``np.linalg.svd``."""
    return linalg_svd(a, full_matrices) if compute_uv else linalg_svdvals(a)


@implements(np.linalg.qr)
def qr(a: Any, mode: str = "reduced") -> Any:
    """``np.linalg.qr`` in its 'reduced' mode."""
    if mode != "reduced":
        raise TypeError("np.linalg.qr on Tensors supports mode='reduced' only")
    return linalg_qr(a)


@implements(np.linalg.cholesky)
def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """``np.linalg.cholesky``: L with L L^H = a read from the lower triangle, or with ``upper=True`` U with
    U^H U = a read from the upper triangle (as torch's)."""
    return linalg_options.cholesky(a, upper=upper)


@implements(np.linalg.pinv)
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = np._NoValue) -> Any:
    """``np.linalg.pinv``, with NumPy's cutoff: ``rcond`` 1e-15 (relative) unless ``rtol`` is given, ``rtol=None``
    meaning max(m, n) * eps (torch's default)."""
    if rcond is None:
        rcond = 1e-15 if rtol is np._NoValue else rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    return linalg_pinv(a, rtol=rcond, hermitian=hermitian)


@implements(np.linalg.solve)
def solve(a: Any, b: Any) -> Any:
    """``np.linalg.solve``: ``b`` is one vector only when 1-D, else a stack of matrices (NumPy 2's rule). torch's
    also takes a ``b`` of shape ``a.shape[:-1]`` as a batch of vectors: for ``a`` (3, 3, 3) and ``b`` (3, 3) that
    gave (3, 3) where NumPy gives (3, 3, 3), so such a ``b`` is broadcast to ``a``'s batch first."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    if len(b_shape) >= 2 and b_shape == a_shape[:-1]:
        b = F.broadcast_to(b, np.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + b_shape[-2:])
    return linalg_solve(a, b)


@implements(np.linalg.inv)
def inv(a: Any) -> Any:
    """``np.linalg.inv``."""
    return linalg_inv(a)


@implements(np.linalg.det)
def det(a: Any) -> Any:
    """``np.linalg.det``."""
    return linalg_det(a)


@implements(np.linalg.slogdet)
def slogdet(a: Any) -> Any:
    """``np.linalg.slogdet``: (sign, log|det|)."""
    return linalg_slogdet(a)


@implements(np.linalg.matmul)
def linalg_matmul(x1: Any, x2: Any, /) -> Any:
    """``np.linalg.matmul``."""
    return F.matmul(x1, x2)


@implements(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose(x: Any, /) -> Any:
    """``np.matrix_transpose``: the last two axes swapped."""
    if _ndim(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return F.transpose(x, -2, -1)


@implements(np.linalg.vecdot)
def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``np.linalg.vecdot``: sum(conj(x1) * x2) along ``axis`` (broadcast)."""
    return F.sum(F.mul(F.conj(x1), x2), axis)


@implements(np.linalg.outer)
def linalg_outer(x1: Any, x2: Any, /) -> Any:
    """``np.linalg.outer`` of two vectors."""
    if _ndim(x1) != 1 or _ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={_ndim(x1)} and "
                         f"x2.ndim={_ndim(x2)}.")
    return F.outer(x1, x2)


@implements(np.cross)
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Any:
    """``np.cross`` of 3-vectors along ``axisa``/``axisb`` (``axis`` sets all three), result along ``axisc``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = F.movedim(a, axisa, -1), F.movedim(b, axisb, -1)
    if np.shape(_data(a))[-1] != 3 or np.shape(_data(b))[-1] != 3:
        raise ValueError("np.cross on Tensors supports 3-element vectors only (NumPy 2 deprecates 2-element ones)")
    ahead, behind = [1, 2, 0], [2, 0, 1]
    c = F.sub(F.mul(a[..., ahead], b[..., behind]), F.mul(a[..., behind], b[..., ahead]))
    return F.movedim(c, -1, axisc)


@implements(np.linalg.cross)
def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``np.linalg.cross`` (3-vectors along ``axis``)."""
    return cross(x1, x2, axis=axis)


@implements(np.linalg.trace)
def linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """``np.linalg.trace``: the sums along the diagonals of the last two axes."""
    return trace(x, offset, -2, -1, dtype)


@implements(np.linalg.diagonal)
def linalg_diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """``np.linalg.diagonal`` of the last two axes."""
    return F.diagonal(x, offset, -2, -1)


@implements(np.linalg.tensordot)
def linalg_tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    """``np.linalg.tensordot``."""
    return tensordot(x1, x2, axes)


@implements(np.linalg.vector_norm)
def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    """``np.linalg.vector_norm`` (``x`` as one vector without an axis)."""
    if _dtype(x).kind not in "fc":
        x = F.to_copy(x, np.dtype(np.float64))
    return linalg_vector_norm(x, ord, axis, keepdims)


@implements(np.linalg.matrix_norm)
def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """``np.linalg.matrix_norm`` of the last two axes."""
    return norm(x, ord, (-2, -1), keepdims)


@implements(np.linalg.svdvals)
def svdvals(x: Any, /) -> Any:
    """``np.linalg.svdvals``: the singular values, descending."""
    return linalg_svdvals(x)


@implements(np.linalg.matrix_power)
def matrix_power(a: Any, n: int) -> Any:
    """``np.linalg.matrix_power``: ``a`` (a stack of square matrices) to the integer power ``n`` by repeated
    squaring; ``inv(a)`` to ``-n`` for negative ``n``; the identity for 0."""
    if not isinstance(n, int | np.integer):
        raise TypeError("exponent must be an integer")
    shape = np.shape(_data(a))
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    if n == 0:  # the identity, a Tensor with a's graph (zero gradient, as torch)
        return F.add(F.mul(a, 0), np.eye(shape[-1], dtype=_dtype(a)))
    base, result, k = (linalg_inv(a) if n < 0 else a), None, abs(int(n))
    while k:
        if k & 1:
            result = base if result is None else F.matmul(result, base)
        k >>= 1
        if k:
            base = F.matmul(base, base)
    return result


@implements(np.linalg.multi_dot)
def multi_dot(arrays: Sequence[Any], *, out: Any = None) -> Any:
    """``np.linalg.multi_dot``: the product of the chain, left to right (a 1-D first or last array is a row or
    column vector, dropped from the result as NumPy)."""
    _reject("multi_dot", out=out)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    result = arrays[0]
    for array in arrays[1:]:
        result = F.matmul(result, array)
    return result


@implements(np.linalg.lstsq)
def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any, Any, Any]:
    """``np.linalg.lstsq``: (x, residuals, rank, s) with x = pinv(a) b minimizing |b - a x|, singular values below
    ``rcond`` times the largest counted as 0 (``rcond`` defaults to eps max(m, n), as NumPy); the residuals
    sum |b - a x|^2 when a has full column rank and more rows than columns (else they are empty); the rank is
    a plain int; s are a's singular values."""
    m, n = np.shape(_data(a))[-2:]
    if rcond is None:
        rcond = np.finfo(np.result_type(_data(a), 1.0)).eps * max(m, n)
    x = F.matmul(linalg_pinv(a, rtol=rcond), b)
    s = linalg_svdvals(a)
    singular = np.asarray(_data(s))
    rank = np.int32(np.sum(singular > rcond * singular.max(initial=0.0)))
    if rank == n and m > n:
        misfit = F.abs(F.sub(b, F.matmul(a, x)))
        residuals = F.reshape(F.sum(F.mul(misfit, misfit), 0), (-1,))
    else:
        residuals = np.empty((0,), np.result_type(singular))
    return x, residuals, rank, s


@implements(np.linalg.cond)
def cond(x: Any, p: Any = None) -> Any:
    """``np.linalg.cond``: the condition number, largest over smallest singular value (p None or 2, the inverse
    for -2), else norm(x, p) norm(inv(x), p)."""
    if p is None or p in (2, -2):
        s = linalg_svdvals(x)
        largest, smallest = F.amax(s, -1), F.amin(s, -1)
        return F.div(largest, smallest) if p != -2 else F.div(smallest, largest)
    return F.mul(norm(x, p, (-2, -1)), norm(linalg_inv(x), p, (-2, -1)))


# ----- no derivative: NumPy's own results on the data -----------------------------------------------------
_plain(np.argmax, np.argmin, np.argsort, np.nonzero, np.argwhere, np.flatnonzero, np.count_nonzero, np.any,
       np.all, np.isclose, np.allclose, np.array_equal, np.size, np.result_type, np.searchsorted,
       np.may_share_memory, np.shares_memory, np.iscomplexobj, np.isrealobj, np.linalg.matrix_rank, np.nanargmax,
       np.nanargmin)


@implements(np.shape)
def shape(a: Any) -> tuple[int, ...]:
    """``np.shape`` (asked often, by rules too: no generic unwrapping)."""
    return a.shape


@implements(np.ndim)
def ndim(a: Any) -> int:
    """``np.ndim``."""
    return a.ndim

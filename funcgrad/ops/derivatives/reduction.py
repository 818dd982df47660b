"""Derivatives of reductions over ``dim`` (with ``keepdim``), scans and softmax. Names as in elementwise.py.

``dim`` is an int, a tuple of ints or None (all dims); 0 and -1 are valid dims of a 0-d input, as
torch. ``g`` may carry leading batch dims, so rules address ``g``'s dims from the end (``_dims_from_end``)
and spread reduced gradients with ``R.unreduce``. The helpers below the kernels are the rules that
need more than one line, each with its math in the docstring.
"""
import math
from collections import namedtuple
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops import formulas as R
from funcgrad.ops import kernels as K
from funcgrad.ops.registry import allow_complex, composite, defop, nondiff

_MaxResult = namedtuple("max", ["values", "indices"])  # as torch.return_types.max
_MinResult = namedtuple("min", ["values", "indices"])


def _dims(dim, ndim):
    """``dim`` as a tuple of non-negative dims (all for None, none for a 0-d input)."""
    return R.normalize_dims(dim, ndim)


def _array(value):
    """A Tensor's array (a constant's: a rule reading it records nothing), anything else as it is."""
    return value.data if isinstance(value, Tensor) else value


def _dims_from_end(dim, ndim):
    """``dim`` of an ``ndim``-d input as negative dims, valid for gradients with leading batch dims."""
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, in range
        return (dim % ndim - ndim,)
    if dim is None:  # (the other common case: every dim)
        return tuple(range(-ndim, 0))
    return R.from_end(_dims(dim, ndim), ndim)


# ----- kernels --------------------------------------------------------------------------------
def _sum(x, dim=None, keepdim=False):
    """Sum over ``dim`` (all dims when None)."""
    if type(x) is np.ndarray:  # NumPy's reduction itself, without np.sum's Python wrapper
        return np.add.reduce(x, axis=None if dim is None else _dims(dim, x.ndim), keepdims=keepdim)
    return np.sum(x, axis=_dims(dim, np.ndim(x)), keepdims=keepdim)


def _sum_to(x, shape):
    """Sum ``x`` down to ``shape`` (the inverse of broadcasting ``shape`` up to ``x.shape``)."""
    out = K.sum_to(x, shape)
    return out.copy() if out is x else out  # x's own shape: a result of its own, as the op's is no view of x


def _mean(x, dim=None, keepdim=False):
    """Mean over ``dim`` (all dims when None)."""
    if type(x) is np.ndarray and x.dtype.kind in "fc" and x.dtype.itemsize >= 4:  # np.mean's own sum and divide,
        axes = _dims(dim, x.ndim)  # without its Python wrapper (float16 sums in float32 there: left to it)
        return np.add.reduce(x, axis=axes, keepdims=keepdim) / math.prod([x.shape[d] for d in axes])
    return np.mean(x, axis=_dims(dim, np.ndim(x)), keepdims=keepdim)


def _var(x, dim=None, correction=1, keepdim=False):
    """Variance over ``dim`` with ``N - correction`` in the denominator (unbiased by default).

    ``correction`` may be fractional (as NumPy's ``ddof`` and torch's) or torch's older ``unbiased`` flag
    (True = 1, False = 0).
    """
    return np.var(x, axis=_dims(dim, np.ndim(x)), ddof=correction, keepdims=keepdim)


def _std(x, dim=None, correction=1, keepdim=False):
    """Standard deviation over ``dim``: the square root of ``var``."""
    return np.std(x, axis=_dims(dim, np.ndim(x)), ddof=correction, keepdims=keepdim)


def _prod(x, dim=None, keepdim=False):
    """Product over ``dim`` (all dims when None)."""
    return np.prod(x, axis=_dims(dim, np.ndim(x)), keepdims=keepdim)


def _amax(x, dim=None, keepdim=False):
    """Largest value over ``dim`` (all dims when None)."""
    if type(x) is np.ndarray:  # (np.amax's reduction without its wrapper)
        return np.maximum.reduce(x, axis=_dims(dim, x.ndim), keepdims=keepdim)
    return np.amax(x, axis=_dims(dim, np.ndim(x)), keepdims=keepdim)


def _amin(x, dim=None, keepdim=False):
    """Smallest value over ``dim`` (all dims when None)."""
    return np.amin(x, axis=_dims(dim, np.ndim(x)), keepdims=keepdim)


def _argmax(x, dim=None, keepdim=False):
    """Index of the (first) largest value along ``dim``; of the flattened input when None."""
    return np.argmax(x, axis=dim, keepdims=keepdim)


def _argmin(x, dim=None, keepdim=False):
    """Index of the (first) smallest value along ``dim``; of the flattened input when None."""
    return np.argmin(x, axis=dim, keepdims=keepdim)


def _logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed without overflow."""
    axes = _dims(dim, np.ndim(x))
    top = _shift(x, axes)
    top = np.where(np.isfinite(top), top, 0.0)  # all -inf (or an inf, or nothing): no shift
    with np.errstate(divide="ignore"):  # log(0) = -inf: all -inf, or nothing (as torch, without a warning)
        out = np.log(np.sum(np.exp(x - top), axis=axes, keepdims=True)) + top
    return out if keepdim else np.squeeze(out, axes)


def _cumsum(x, dim):
    """Running sum along ``dim``."""
    return np.cumsum(np.atleast_1d(x), axis=dim).reshape(np.shape(x))


def _cumprod(x, dim):
    """Running product along ``dim``."""
    return np.cumprod(np.atleast_1d(x), axis=dim).reshape(np.shape(x))


def _logcumsumexp(x, dim):
    """log(cumsum(exp(x))) along ``dim``, without overflow."""
    return np.logaddexp.accumulate(np.atleast_1d(x), axis=dim).reshape(np.shape(x))


def _logcumsumexp_backward(grad_output, x, output, dim):
    """logcumsumexp's VJP from its output: B_i = sum_{j >= i} grad_output_j exp(x_i - output_j) along ``dim``
    (``grad_output`` may carry leading batch dims). Summed in log space for each sign of grad_output (torch's way:
    no overflow): exp(x_i + rlcse_i(log g+ - output)) - (the same for g-), rlcse the logcumsumexp from the end."""
    d = _scan_dim(dim, x)
    if d is None:
        return grad_output * np.exp(x - output)  # (a 0-d x: one term)
    pos, neg = (np.exp(x + np.flip(np.logaddexp.accumulate(np.flip(part - output, d), axis=d), d))
                for part in _signed_logs(grad_output))
    return pos - neg


def _logcumsumexp_tangent(tangent, x, output, dim):
    """logcumsumexp's JVP from its output: A_j = sum_{i <= j} exp(x_i - output_j) tangent_i along ``dim``
    (``tangent`` may carry leading batch dims), in log space for each sign of the tangent (as the VJP). 0 where
    the output is -inf, as torch's forward AD and the Taylor rule: inputs all -inf up to there stay -inf when moved."""
    d = _scan_dim(dim, x)
    with np.errstate(invalid="ignore"):  # exp(-inf - -inf) is NaN where the output is -inf, replaced below
        if d is None:
            tangent_out = tangent * np.exp(x - output)
        else:
            pos, neg = (np.exp(np.logaddexp.accumulate(part + x, axis=d) - output) for part in _signed_logs(tangent))
            tangent_out = pos - neg
    return np.where(output == -np.inf, 0.0, tangent_out)


def _norm(x, p=2, dim=None, keepdim=False):
    """The vector p-norm over ``dim`` (all dims when None); ``p`` > 0, inf, -inf or 'fro' (= 2)."""
    p, axes = _norm_order(p), _dims(dim, np.ndim(x))
    if p == np.inf:
        return np.amax(np.abs(x), axis=axes, keepdims=keepdim)
    if p == -np.inf:
        return np.amin(np.abs(x), axis=axes, keepdims=keepdim)
    if p == 2:
        square = (x * np.conjugate(x)).real if np.iscomplexobj(x) else x * x
        return np.sqrt(np.sum(square, axis=axes, keepdims=keepdim))
    return np.sum(np.abs(x) ** p, axis=axes, keepdims=keepdim) ** (1 / p)


def _softmax(x, dim):
    """exp(x) / sum(exp(x)) along ``dim``, shifted by the max for stability."""
    axes = _dims(dim, x.ndim if type(x) is np.ndarray else np.ndim(x))
    e = np.exp(x - _shift(x, axes))
    return e / np.add.reduce(e, axis=axes, keepdims=True)  # (sum without its wrapper)


def _log_softmax(x, dim):
    """x - logsumexp(x) along ``dim``, shifted by the max for stability."""
    axes = _dims(dim, x.ndim if type(x) is np.ndarray else np.ndim(x))
    shifted = x - _shift(x, axes)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=axes, keepdims=True))


def _shift(x, axes):
    """The max over ``axes`` (kept), by which the exponentials are shifted; -inf where there is no element (an
    empty tensor: torch's logsumexp is -inf there, its softmax empty)."""
    if np.size(x) == 0:
        return np.full(np.shape(np.sum(x, axis=axes, keepdims=True)), -np.inf, np.result_type(x, np.float16))  # exp's dtype
    return np.maximum.reduce(x, axis=axes, keepdims=True)  # (amax without its wrapper)


def _scan_dim(dim, x):
    """A scan's ``dim`` counted from the end (valid with leading batch dims), None for a 0-d ``x``."""
    dims = _dims_from_end(dim, np.ndim(x))
    return dims[0] if dims else None


def _signed_logs(t):
    """(log t where t > 0, log -t where t < 0), -inf elsewhere: t = exp(pos) - exp(neg)."""
    with np.errstate(divide="ignore"):
        log_abs = np.log(np.abs(t))
    return np.where(t > 0, log_abs, -np.inf), np.where(t < 0, log_abs, -np.inf)


def _norm_order(p):
    """The norm's order as a float ('fro' is 2); ValueError for anything norm() does not support."""
    if p == "fro":
        return 2.0
    if isinstance(p, str) or not (p > 0 or p == -np.inf):
        raise ValueError(f"norm(): p must be a positive number, inf, -inf or 'fro', got {p!r}")
    return float(p)


# ----- rules longer than one line ---------------------------------------------------------------
def _dof(shape, dim, correction):
    """var's denominator N - correction, or 0 when correction >= N: the value is then inf (NumPy's and torch's)
    and so is the derivative, not the finite 2 (x_i - mean) / (N - correction) of a negative denominator."""
    n = R.count(shape, dim) - correction
    return n if n > 0 else 0  # (this module's max is the op)


def _var_grad(g, x, dim, correction, keepdim):
    """d var / dx_i = 2 (x_i - mean(x)) / (N - correction)."""
    n = _dof(x.shape, dim, correction)
    return R.unreduce(g, x.shape, dim, keepdim) * (x - F.mean(x, dim, True)) * np.divide(2.0, n)


def _std_grad(g, x, out, dim, correction, keepdim):
    """d std = d var / (2 std); 0 where std == 0, as torch."""
    zero = F.eq(out, 0)
    return _var_grad(F.where(zero, 0.0, g / (2 * F.where(zero, 1.0, out))), x, dim, correction, keepdim)


def _spread_to_extremes(g, x, out, dim, keepdim):
    """Gradient of amax/amin: g shared evenly among the elements equal to the result (ties split, as torch); a NaN
    result shares it among the NaNs (as torch's max(); its amax gives NaN). The shares are a constant (no graph)."""
    shape = x.shape
    share = K.extreme_share(_array(x), _array(out), _dims(dim, len(shape)), R.kept_shape(shape, dim))
    return R.unreduce(g, shape, dim, keepdim) * share


def _softmax_grad(g, out, axes):
    """d softmax: out * (g - sum(g * out)) over ``axes`` (from the end); for arrays, the kernel (no op calls)."""
    if type(g) is np.ndarray and type(out) is np.ndarray:
        return K.softmax_backward(g, out, axes)
    return out * (g - F.sum(g * out, axes, True))


def _log_softmax_grad(g, out, axes):
    """d log_softmax: g - exp(out) sum(g) over ``axes`` (from the end); for arrays, the kernel (no op calls)."""
    if type(g) is np.ndarray and type(out) is np.ndarray:
        return K.log_softmax_backward(g, out, axes)
    return g - F.exp(out) * F.sum(g, axes, True)


def _logsumexp_grad(g, x, out, dim, keepdim):
    """d logsumexp(x) / dx_i = exp(x_i - logsumexp(x))."""
    return R.unreduce(g, x.shape, dim, keepdim) * F.exp(x - R.unreduce(out, x.shape, dim, keepdim))


def _others_product(x, dim):
    """prod_{j != i} x_j within each reduced group: the exclusive running products from the left
    times those from the right. No division by x, so zeros are right at every order."""
    dims = _dims(dim, x.ndim)
    last = tuple(range(-len(dims), 0))
    moved = F.movedim(x, dims, last)  # reduced dims last, then merged: (..., n)
    flat = F.reshape(moved, tuple(moved.shape[:x.ndim - len(dims)]) + (R.count(x.shape, dim),))
    others = _exclusive_cumprod(flat) * F.flip(_exclusive_cumprod(F.flip(flat, -1)), -1)
    return F.movedim(F.reshape(others, moved.shape), last, dims)


def _exclusive_cumprod(t):
    """(1, t_0, t_0 t_1, ...) along the last dim."""
    first = np.arange(t.shape[-1]) == 0
    return F.cumprod(F.where(first, 1.0, F.roll(t, 1, -1)), -1)


def _reverse_cumsum(t, dims):
    """Sums from the end along the dim in ``dims`` (``t`` itself for a 0-d input, whose ``dims`` is empty)."""
    return F.flip(F.cumsum(F.flip(t, dims), dims[0]), dims) if dims else t


def _cumprod_grad(g, x, out, dim):
    """grad_i = sum_{k >= i} g_k conj(prod_{j <= k, j != i} x_j).

    When every |x_i| is within 1e3 of the largest that is reverse_cumsum(g * out)_i / x_i. Otherwise (zeros,
    or entries so small that differentiating the division again would cancel terms of size 1/x_i) the
    products are formed from an (n, n) table whose row i has x_i replaced by 1: O(n^2), never dividing.
    """
    dims = _dims_from_end(dim, x.ndim)
    if not dims or 0 in x.shape:
        return g
    size = F.abs(x)
    if not F.sum(size < 1e-3 * F.amax(size)):
        return _reverse_cumsum(g * F.conj(out), dims) / F.conj(x)
    d = dims[0]
    summed = F.sum(F.unsqueeze(F.movedim(g, d, -1), -2) * F.conj(_cumprod_partials(x, d)), -1)  # (*batch, ..., i)
    return F.movedim(summed, -1, d)


def _cumprod_partials(x, d):
    """The table (..., i, k) of d out_k / d x_i = prod_{j <= k, j != i} x_j (0 for k < i), with dim ``d`` of x
    (from the end) moved last. O(n^2), but no division, so zeros in x are right."""
    row, col = np.ogrid[:x.shape[d], :x.shape[d]]
    factors = F.where(row == col, 1.0, F.unsqueeze(F.movedim(x, d, -1), -2))  # (..., i, j): x_j, 1 at j == i
    return F.where(col >= row, F.cumprod(factors, -1), 0.0)


def _norm_grad(g, x, out, p, dim, keepdim):
    """d ||x||_p / dx_i = sgn(x_i) |x_i|^(p-1) / ||x||_p^(p-1), 0 where ||x||_p == 0 (as torch); sgn(z) = z / |z|
    for complex x (the gradient of a real function of z, as torch).

    For p = +-inf, sgn(x_i) times g shared evenly among the extreme |x_i| (as torch).
    """
    p = _norm_order(p)
    if np.isinf(p):
        return F.sgn(x) * _spread_to_extremes(g, F.abs(x), out, dim, keepdim)
    norm = R.unreduce(out, x.shape, dim, keepdim)
    zero = F.eq(norm, 0)
    scale = F.where(zero, 0.0, R.unreduce(g, x.shape, dim, keepdim) / F.where(zero, 1.0, norm) ** (p - 1))
    if p == 2:
        return x * scale
    nonzero = F.ne(x, 0)
    return F.where(nonzero, F.sgn(x) * F.abs(F.where(nonzero, x, 1.0)) ** (p - 1), 0.0) * scale


# ----- forward-mode rules longer than one line ---------------------------------------------------
def _sum_to_jvp(x_t, x, shape):
    """sum_to is linear: the tangent summed to ``shape``, its batch dims kept in front of x's leading dims."""
    batch, shape = R.batch_shape(x_t, x), tuple(shape)
    return F.reshape(F.sum_to(x_t, batch + (1,) * (np.ndim(x) - len(shape)) + shape), batch + shape)


def _var_jvp(x_t, x, dim, correction, keepdim):
    """d var = 2 sum_i (x_i - mean(x)) dx_i / (N - correction)."""
    n = _dof(x.shape, dim, correction)
    return R.real_reduce_jvp(x_t, (x - F.mean(x, dim, True)) * np.divide(2.0, n), dim, keepdim)


def _std_jvp(x_t, x, out, dim, correction, keepdim):
    """d std = d var / (2 std); 0 where std == 0, as the VJP."""
    zero = F.eq(out, 0)
    return F.where(zero, 0.0, _var_jvp(x_t, x, dim, correction, keepdim) / (2 * F.where(zero, 1.0, out)))


def _extremes_jvp(x_t, x, out, dim, keepdim):
    """d amax (d amin): the mean of dx over the elements equal to the result (ties share, as the VJP)."""
    return R.reduce_jvp(x_t, _spread_to_extremes(R.ones(out), x, out, dim, keepdim), dim, keepdim)


def _logsumexp_jvp(x_t, x, out, dim, keepdim):
    """d logsumexp(x) = sum_i exp(x_i - logsumexp(x)) dx_i."""
    return R.reduce_jvp(x_t, _logsumexp_grad(R.ones(out), x, out, dim, keepdim), dim, keepdim)


def _norm_jvp(x_t, x, out, p, dim, keepdim):
    """d ||x||_p = sum_i (d ||x||_p / dx_i) dx_i, with the VJP's partials (so its choices at 0 and at ties)."""
    return R.real_reduce_jvp(x_t, _norm_grad(R.ones(out), x, out, p, dim, keepdim), dim, keepdim)


def _logcumsumexp_backward_jvp(grad_output_t, x_t, output_t, grad_output, x, output, dim, out):
    """dB = B(dg - g do) + dx B, for B = logcumsumexp_backward(g, x, output); tangents' batch dims in front."""
    n = np.ndim(out)
    dg = grad_output_t - grad_output * R.align(output_t, output, n)
    return F.logcumsumexp_backward(dg, x, output, dim) + R.align(x_t, x, n) * out


def _logcumsumexp_tangent_jvp(tangent_t, x_t, output_t, tangent, x, output, dim, out):
    """dA = A(dt + t dx) - do A, for A = logcumsumexp_tangent(t, x, output); tangents' batch dims in front."""
    n = np.ndim(out)
    dt = tangent_t + tangent * R.align(x_t, x, n)
    return F.logcumsumexp_tangent(dt, x, output, dim) - R.align(output_t, output, n) * out


def _cumsum_jvp(x_t, x, dim):
    """cumsum is linear: the running sum of the tangent along the same dim (counted from the end)."""
    dims = _dims_from_end(dim, np.ndim(x))
    return F.cumsum(x_t, dims[0]) if dims else x_t


def _cumprod_jvp(x_t, x, dim):
    """d out_k = sum_{i <= k} dx_i prod_{j <= k, j != i} x_j."""
    dims = _dims_from_end(dim, np.ndim(x))
    if not dims:
        return x_t
    d = dims[0]
    summed = F.sum(F.unsqueeze(F.movedim(x_t, d, -1), -1) * _cumprod_partials(x, d), -2)  # (*batch, ..., k)
    return F.movedim(summed, -1, d)


# ----- sums and moments -----------------------------------------------------------------------
sum_to = defop("sum_to", _sum_to,  x=lambda g, x_shape, shape: R.expand_to(g, shape, x_shape),
               jvp=_sum_to_jvp)
sum    = defop("sum",    _sum,     x=lambda g, x_shape, dim, keepdim: R.unreduce(g, x_shape, dim, keepdim),
               jvp=lambda x_t, x, dim, keepdim: F.sum(x_t, _dims_from_end(dim, np.ndim(x)), keepdim))
mean   = defop("mean",   _mean,
               x=lambda g, x_shape, dim, keepdim: R.unmean(g, x_shape, dim, keepdim),
               jvp=lambda x_t, x, dim, keepdim: F.mean(x_t, _dims_from_end(dim, np.ndim(x)), keepdim))
var    = defop("var",    _var,     x=_var_grad, jvp=_var_jvp)
std    = defop("std",    _std,     x=_std_grad, jvp=_std_jvp)    # 0 where std == 0, as torch
prod   = defop("prod",   _prod,
               x=lambda g, x, dim, keepdim: R.unreduce(g, x.shape, dim, keepdim) * F.conj(_others_product(x, dim)),
               jvp=lambda x_t, x, dim, keepdim: R.reduce_jvp(x_t, _others_product(x, dim), dim, keepdim))

# ----- extremes -------------------------------------------------------------------------------
amax   = defop("amax",   _amax,    x=_spread_to_extremes, jvp=_extremes_jvp)  # ties share g evenly, as torch
amin   = defop("amin",   _amin,    x=_spread_to_extremes, jvp=_extremes_jvp)
argmax = nondiff("argmax", _argmax)
argmin = nondiff("argmin", _argmin)

# ----- smooth reductions, scans and normalizations --------------------------------------------
logsumexp   = defop("logsumexp",   _logsumexp,   x=_logsumexp_grad, jvp=_logsumexp_jvp)
cumsum      = defop("cumsum",      _cumsum,
                    x=lambda g, x_shape, dim: _reverse_cumsum(g, _dims_from_end(dim, len(x_shape))), jvp=_cumsum_jvp)
cumprod     = defop("cumprod",     _cumprod,     x=_cumprod_grad, jvp=_cumprod_jvp)
logcumsumexp = defop("logcumsumexp", _logcumsumexp,
                     x=lambda g, x, out, dim: F.logcumsumexp_backward(g, x, out, dim),
                     jvp=lambda x_t, x, out, dim: F.logcumsumexp_tangent(x_t, x, out, dim))
# its VJP B and JVP A as two ops, each linear in its gradient (tangent): their rules are each other's, so
# derivatives of every order stay linear in the gradients (exact where they are 0, unlike B's log-space kernel)
logcumsumexp_backward = defop("logcumsumexp_backward", _logcumsumexp_backward,
                              grad_output=lambda g, x, output, dim: F.logcumsumexp_tangent(g, x, output, dim),
                              x=lambda g, out: g * out,
                              output=lambda g, grad_output, x, output, dim:
                                  -grad_output * F.logcumsumexp_tangent(g, x, output, dim),
                              jvp=_logcumsumexp_backward_jvp)
logcumsumexp_tangent = defop("logcumsumexp_tangent", _logcumsumexp_tangent,
                             tangent=lambda g, x, output, dim: F.logcumsumexp_backward(g, x, output, dim),
                             x=lambda g, tangent, x, output, dim: tangent * F.logcumsumexp_backward(g, x, output, dim),
                             output=lambda g, out: -g * out,
                             jvp=_logcumsumexp_tangent_jvp)
norm        = defop("norm",        _norm,        x=_norm_grad, jvp=_norm_jvp)  # 0 where the norm is 0, as torch
softmax     = defop("softmax",     _softmax,
                    x=lambda g, out, dim: _softmax_grad(g, out, _dims_from_end(dim, out.ndim)),
                    jvp=lambda x_t, out, dim: out * (x_t - F.sum(x_t * out, _dims_from_end(dim, out.ndim), True)))
log_softmax = defop("log_softmax", _log_softmax,
                    x=lambda g, out, dim: _log_softmax_grad(g, out, _dims_from_end(dim, out.ndim)),
                    jvp=lambda x_t, out, dim: x_t - F.sum(F.exp(out) * x_t, _dims_from_end(dim, out.ndim), True))


# ----- max and min: values, (values, indices) or the elementwise extreme ------------------------
def _extremes(x, dim, keepdim, other, full, arg, pairwise, result):
    """The body of max and min: ``full`` over all dims, ``result(values, indices)`` along ``dim``, or ``pairwise``."""
    if other is None and not (dim is None or isinstance(dim, int | np.integer)):
        if not isinstance(dim, Tensor | np.ndarray):  # max(x, (0, 1)) must not be an elementwise max with [0, 1]
            name = result.__name__
            raise TypeError(f"{name}() received an invalid combination of arguments: dim must be an int, or other a "
                            f"Tensor; got {type(dim).__name__}. To reduce over several dims use a{name}(x, dim=...) "
                            f"or x.{name}(axis=...); for the elementwise {name} with a number use clamp.")
        other = dim  # max(x, other_tensor)
    if other is not None:
        return pairwise(x, other)
    if dim is None:
        return full(x)
    indices = arg(x, dim, True)
    ndim = np.ndim(x)
    d = _dims(dim, ndim)[0] if ndim else None
    n = np.shape(x)[d] if ndim else 1
    positions = np.arange(n).reshape([-1 if i == d else 1 for i in range(ndim)])  # each element's index along dim
    values = F.sum(F.where(F.eq(positions, indices), x, 0), dim, keepdim)  # g reaches the indexed element only, as torch
    return result(values, indices if keepdim else F.squeeze(indices, dim))


@composite
def max(x: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:  # noqa: A001
    """The largest value, as torch.max.

    ``max(x)`` is the largest element (ties share the gradient evenly); ``max(x, dim, keepdim=False)``
    is the named tuple ``(values, indices)`` along ``dim`` (the gradient goes to the first maximum);
    ``max(x, other)`` is ``maximum(x, other)``.

    Example:
        >>> import funcgrad as fg
        >>> fg.max(fg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1)
        max(values=tensor([5., 7.]), indices=tensor([1, 0]))
    """
    return _extremes(x, dim, keepdim, other, amax, argmax, F.maximum, _MaxResult)


@composite
def min(x: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:  # noqa: A001
    """The smallest value, as torch.min: ``min(x)``, ``min(x, dim, keepdim)`` -> ``(values, indices)``
    or ``min(x, other)`` -> ``minimum(x, other)``; see ``max``."""
    return _extremes(x, dim, keepdim, other, amin, argmin, F.minimum, _MinResult)

# ----- complex inputs: var, std and norm are real (gradients as torch's); prod conjugates -------------
allow_complex(sum_to, sum, mean, var, std, prod, cumsum, cumprod, norm)

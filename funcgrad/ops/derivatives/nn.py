"""Derivatives of linear maps, the fused cross-entropy and binary cross-entropy losses, convolution and pooling. Names as in elementwise.py.

A convolution ``C(x, w)`` is bilinear; its adjoints are the transposed convolution ``T(g, w)`` (in x) and
the weight gradient ``W(x, g)`` (in w). The three are ops of this table, each the others' rules:
<h, C(x, w)> = <T(h, w), x> = <W(x, h), w>, so every order of derivative is one of the three again.
Pooling: max pooling gathers at the maxima (its adjoint ``max_unpool`` scatters back); average and
adaptive average pooling are linear, their adjoints a transposed convolution with a ones kernel and
the transposed averaging matrices. ``g`` may carry leading batch dims: the kernels broadcast them.

Arguments are normalized by ``funcgrad.nn.functional``: tuples per spatial dim, and convolution
paddings as (before, after) pairs.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.ops import formulas as R
from funcgrad.ops import nn_kernels as K
from funcgrad.ops.registry import NONDIFF, defop

__all__ = ["linear", "cross_entropy", "binary_cross_entropy", "convolution", "convolution_transpose", "convolution_weight", "max_pool", "max_unpool", "avg_pool",
           "adaptive_avg_pool"]


# ----- rules ------------------------------------------------------------------------------------
def linear_weight_grad(g: Any, input: Any) -> Any:
    """d (x Wᵀ)/dW = gᵀ x summed over x's leading dims: g (*batch, *lead, out), x (*lead, in) -> (*batch, out, in)."""
    batch = R.batch_shape(g, input)
    rows = input if np.ndim(input) == 2 else F.reshape(input, (-1, np.shape(input)[-1]))
    g_rows = g if np.ndim(g) == len(batch) + 2 else F.reshape(g, batch + (-1, np.shape(g)[-1]))
    return F.matmul(F.transpose(g_rows, -1, -2), rows)  # (matrices, as in nn.Linear, need no reshape)


def linear_jvp(input: Any, weight: Any, bias: Any, out: Any, input_t: Any = None, weight_t: Any = None,
               bias_t: Any = None) -> Any:
    """d (x Wᵀ + b) = dx Wᵀ + x dWᵀ + db, a tangent's batch dims kept in front."""
    total = _plus(None if input_t is None else F.matmul(input_t, F.transpose(weight, 0, 1)),
                  None if weight_t is None else F.matmul(input, F.transpose(weight_t, -1, -2)))
    if bias_t is not None:
        total = _plus(total, R.align(bias_t, bias, np.ndim(out)))
    batch = tuple(np.shape(total)[: np.ndim(total) - np.ndim(out)])
    return total if tuple(np.shape(total)) == batch + tuple(np.shape(out)) else F.broadcast_to(
        total, batch + tuple(np.shape(out)))


def target_shares(input: Any, target: Any, weight: Any, ignore_index: int,
                  reduction: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The targets (ignored ones set to 0), each target's weight in the reduced loss (0 where ignored; over the
    summed weights for ``mean``) and the class dim d: the loss's derivatives are those of
    -sum(share * log_softmax(x)[t]) (torch's, 0 where every target is ignored and the mean is NaN)."""
    dim = K.class_dim(input)
    index = np.asarray(target)  # integer: never part of a graph
    counted = index != ignore_index
    safe, w = K.target_weights(index, counted, weight, np.result_type(input))
    return safe, K.mean_weights(w, counted) if reduction == "mean" else w, dim


def _class_terms(input: Any, target: Any, weight: Any, ignore_index: int,
                 reduction: str) -> tuple[Any, np.ndarray, int]:
    """softmax(x) - onehot(t) along the class dim d, each target's share of the loss (``target_shares``), and d."""
    safe, share, dim = target_shares(input, target, weight, ignore_index, reduction)
    return F.softmax(input, dim) - K.one_hot(safe, np.shape(input)[dim], dim, share.dtype), share, dim


def _per_target(g: Any, w: np.ndarray, reduction: str) -> Any:
    """Each target's share of g: g (*batch, *loss shape) -> (*batch, *target shape), times its weight w."""
    if reduction == "none":
        return g * w
    return F.reshape(g, tuple(np.shape(g)) + (1,) * np.ndim(w)) * w


def cross_entropy_grad(g: Any, input: Any, target: Any, weight: Any, ignore_index: int, reduction: str) -> Any:
    """d/dx of -w[t] log_softmax(x)[t] = w[t] (softmax(x) - onehot(t)) along the class dim, scaled by each
    target's g: g (*batch, *loss shape) -> (*batch, *x.shape)."""
    diff, w, dim = _class_terms(input, target, weight, ignore_index, reduction)
    share = _per_target(g, w, reduction)
    return diff * F.unsqueeze(share, dim - np.ndim(input))  # the class dim, counted from the end


def cross_entropy_jvp(input_t: Any, input: Any, target: Any, weight: Any, ignore_index: int, reduction: str) -> Any:
    """d loss = -w[t] (dx[t] - sum_c softmax(x)_c dx_c), reduced as the loss: (*batch, *x.shape) -> (*batch, *loss)."""
    diff, w, dim = _class_terms(input, target, weight, ignore_index, reduction)
    per = F.sum(input_t * diff, dim - np.ndim(input)) * w  # (*batch, *target shape)
    if reduction == "none" or not np.ndim(w):
        return per
    return F.sum(per, tuple(range(-np.ndim(w), 0)))


BCE_EPS = float(np.float32(1e-12))  # torch's EPSILON, a float32 constant (9.99999996e-13)


def _bce_slope(input: Any, target: Any) -> Any:
    """d/dx of -(t log x + (1 - t) log(1 - x)) = (x - t) / (x (1 - x)), the denominator kept >= 1e-12 as
    torch's (finite at x = 0 and 1; the clamped logs of the loss alone would give 0 * inf there)."""
    return (input - target) / F.clamp(input * (1 - input), BCE_EPS)


def _spread(g: Any, d: Any, weight: Any, reduction: str, shape: tuple[int, ...]) -> Any:
    """g (*batch, *loss shape) times the elementwise derivative d (and the weight; over the element count for
    ``mean``): (*batch, *shape)."""
    if weight is not None:
        d = d * weight
    if reduction == "none":
        return g * d
    scale = d / math.prod(shape) if reduction == "mean" else d
    return F.reshape(g, tuple(np.shape(g)) + (1,) * len(shape)) * scale


def bce_input_grad(g: Any, input: Any, target: Any, weight: Any, reduction: str) -> Any:
    """w (x - t) / max(x (1 - x), 1e-12), spread over the elements by the reduction."""
    return _spread(g, _bce_slope(input, target), weight, reduction, tuple(np.shape(input)))


def bce_target_grad(g: Any, input: Any, weight: Any, reduction: str) -> Any:
    """d/dt = w (log(1 - x) - log x) = -w logit(x), as torch (not clamped)."""
    return _spread(g, F.log1p(-input) - F.log(input), weight, reduction, tuple(np.shape(input)))


def bce_jvp(input: Any, target: Any, weight: Any, reduction: str, input_t: Any = None, target_t: Any = None) -> Any:
    """d loss = w ((x - t) / max(x (1 - x), 1e-12) dx - logit(x) dt), reduced as the loss."""
    per = _plus(None if input_t is None else input_t * _bce_slope(input, target),
                None if target_t is None else target_t * (F.log1p(-input) - F.log(input)))
    if weight is not None:
        per = per * weight
    if reduction == "none":
        return per
    total = F.sum(per, tuple(range(-np.ndim(input), 0))) if np.ndim(input) else per
    return total / math.prod(np.shape(input)) if reduction == "mean" else total


def _output_padding(x_shape: tuple[int, ...], g: Any, kernel: tuple[int, ...], stride: Any, padding: Any,
                    dilation: Any) -> tuple[int, ...]:
    """The output_padding that brings a transposed convolution of ``g`` back to ``x``'s spatial size."""
    nd = len(stride)
    return tuple(n + lo + hi - ((m - 1) * s + d * (k - 1) + 1) for n, m, s, d, k, (lo, hi)
                 in zip(x_shape[-nd:], np.shape(g)[-nd:], stride, dilation, kernel, padding))


def _cropped(a: Any, size: tuple[int, ...]) -> Any:
    """``a`` cut to spatial ``size`` at the end of its trailing dims (a convolution that sees more rows than
    an output_padding >= stride gave its input)."""
    if tuple(np.shape(a)[-len(size):]) == tuple(size):
        return a
    return F.getitem(a, (Ellipsis,) + tuple(slice(0, n) for n in size))


def conv_input_grad(g: Any, weight: Any, input_shape: tuple[int, ...], stride: Any, padding: Any, dilation: Any,
                    groups: int) -> Any:
    """d C(x, w)/dx = T(g, w): the transposed convolution of g with the same weight, sized back to x."""
    kernel = tuple(np.shape(weight)[-len(stride):])
    return F.convolution_transpose(g, weight, None, stride, padding,
                                   _output_padding(input_shape, g, kernel, stride, padding, dilation), groups, dilation)


def conv_weight_grad(g: Any, input: Any, weight_shape: tuple[int, ...], stride: Any, padding: Any, dilation: Any,
                     groups: int) -> Any:
    """d C(x, w)/dw = W(x, g): each weight entry meets the input elements it multiplied, weighted by g."""
    return F.convolution_weight(input, g, tuple(weight_shape[-len(stride):]), stride, padding, dilation, groups)


def bias_grad(g: Any, stride: Any) -> Any:
    """d (out + b[c])/db = g summed over samples and positions: (*batch, N, C, *spatial) -> (*batch, C)."""
    nd = len(stride)
    return F.sum(g, (-nd - 2,) + tuple(range(-nd, 0)))


def transpose_input_grad(g: Any, weight: Any, input_shape: tuple[int, ...], stride: Any, padding: Any,
                         dilation: Any, groups: int) -> Any:
    """d T(y, w)/dy = C(g, w), cut to y's size."""
    return _cropped(F.convolution(g, weight, None, stride, padding, dilation, groups), input_shape[-len(stride):])


def transpose_weight_grad(g: Any, input: Any, weight_shape: tuple[int, ...], stride: Any, padding: Any,
                          dilation: Any, groups: int) -> Any:
    """d T(y, w)/dw = W(g, y), as <h, T(y, w)> = <C(h, w), y> = <w, W(h, y)>."""
    return F.convolution_weight(g, input, tuple(weight_shape[-len(stride):]), stride, padding, dilation, groups)


def weight_input_grad(g: Any, grad_output: Any, input_shape: tuple[int, ...], kernel_size: Any, stride: Any,
                      padding: Any, dilation: Any, groups: int) -> Any:
    """d W(x, y)/dx = T(y, g), as <h, W(x, y)> = <C(x, h), y> = <x, T(y, h)>."""
    return F.convolution_transpose(grad_output, g, None, stride, padding,
                                   _output_padding(input_shape, grad_output, kernel_size, stride, padding, dilation),
                                   groups, dilation)


def weight_grad_output_grad(g: Any, input: Any, grad_output_shape: tuple[int, ...], stride: Any, padding: Any,
                            dilation: Any, groups: int) -> Any:
    """d W(x, y)/dy = C(x, g), cut to y's size."""
    return _cropped(F.convolution(input, g, None, stride, padding, dilation, groups),
                    grad_output_shape[-len(stride):])


def _plus(a: Any, b: Any) -> Any:
    return a if b is None else b if a is None else a + b


def _bias_term(total: Any, bias_t: Any, bias: Any, out: Any, nd: int) -> Any:
    """``total`` plus the bias tangent (*batch, C) spread over samples and positions, full size."""
    if bias_t is not None:
        batch = R.batch_shape(bias_t, bias)
        total = _plus(total, F.reshape(bias_t, batch + (1, np.shape(bias)[0]) + (1,) * nd))
    batch = tuple(np.shape(total)[: np.ndim(total) - np.ndim(out)])
    return total if tuple(np.shape(total)) == batch + tuple(np.shape(out)) else F.broadcast_to(
        total, batch + tuple(np.shape(out)))


def _aligned(a_t: Any, a: Any, b_t: Any, b: Any) -> tuple[Any, Any]:
    """The tangents of a convolution's two operands (core dims (N, C, *L) or (C_out, C_in, *K): as many) with
    their tangent batch in front of both operands' own batch dims, so a tangent meets the other operand's
    batch (a batch of gradients, from an inner jacrev or jacfwd) by broadcasting, not dim for dim."""
    n = max(np.ndim(a), np.ndim(b))
    return (None if a_t is None else R.align(a_t, a, n)), (None if b_t is None else R.align(b_t, b, n))


def conv_jvp(input: Any, weight: Any, bias: Any, out: Any, stride: Any, padding: Any, dilation: Any, groups: int,
             input_t: Any = None, weight_t: Any = None, bias_t: Any = None) -> Any:
    """d C(x, w) + b = C(dx, w) + C(x, dw) + db."""
    input_t, weight_t = _aligned(input_t, input, weight_t, weight)
    total = _plus(None if input_t is None else F.convolution(input_t, weight, None, stride, padding, dilation, groups),
                  None if weight_t is None else F.convolution(input, weight_t, None, stride, padding, dilation, groups))
    return _bias_term(total, bias_t, bias, out, len(stride))


def transpose_jvp(input: Any, weight: Any, bias: Any, out: Any, stride: Any, padding: Any, output_padding: Any,
                  groups: int, dilation: Any, input_t: Any = None, weight_t: Any = None, bias_t: Any = None) -> Any:
    """d T(y, w) + b = T(dy, w) + T(y, dw) + db."""
    args = (stride, padding, output_padding, groups, dilation)
    input_t, weight_t = _aligned(input_t, input, weight_t, weight)
    total = _plus(None if input_t is None else F.convolution_transpose(input_t, weight, None, *args),
                  None if weight_t is None else F.convolution_transpose(input, weight_t, None, *args))
    return _bias_term(total, bias_t, bias, out, len(stride))


def weight_jvp(input: Any, grad_output: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, groups: int,
               input_t: Any = None, grad_output_t: Any = None) -> Any:
    """d W(x, y) = W(dx, y) + W(x, dy)."""
    args = (kernel_size, stride, padding, dilation, groups)
    input_t, grad_output_t = _aligned(input_t, input, grad_output_t, grad_output)
    return _plus(None if input_t is None else F.convolution_weight(input_t, grad_output, *args),
                 None if grad_output_t is None else F.convolution_weight(input, grad_output_t, *args))


def gather_spatial(a: Any, indices: Any, nd: int) -> Any:
    """a[..., index] over the flattened trailing ``nd`` dims: (*batch, N, C, *L) -> (*batch, N, C, *indices' spatial);
    0 where the index is -1 (a pooling window without elements)."""
    lead = tuple(np.shape(a)[: np.ndim(a) - nd])
    spatial = tuple(np.shape(indices)[-nd:])
    index = R.owned(indices)  # integer: never part of a graph
    index = np.broadcast_to(index.reshape(index.shape[:-nd] + (-1,)), lead + (int(np.prod(spatial)),))
    picked = F.reshape(F.take_along_dim(F.reshape(a, lead + (-1,)), np.maximum(index, 0), -1), lead + spatial)
    return picked if index.size == 0 or index.min() >= 0 else picked * (np.reshape(index, lead + spatial) >= 0)


def avg_pool_grad(g: Any, x_shape: tuple[int, ...], kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                  count_include_pad: bool, divisor_override: Any) -> Any:
    """Each window's g over its divisor, spread back over the window: a transposed convolution with a ones
    kernel of g / divisor (every sample and channel alone)."""
    nd = len(kernel_size)
    size = tuple(x_shape[-nd:])
    ones = (1,) * nd
    out_size, pairs = K.pool_geometry(size, kernel_size, stride, padding, ones, ceil_mode)
    divisor = K.avg_pool_divisor(size, kernel_size, stride, padding, out_size, count_include_pad, divisor_override)
    lead = tuple(np.shape(g)[: np.ndim(g) - nd])
    scaled = F.reshape(g / divisor, (-1, 1) + out_size)
    spread = F.convolution_transpose(scaled, np.ones((1, 1) + tuple(kernel_size), np.result_type(g)), None, stride,
                                     pairs, _output_padding(size, scaled, kernel_size, stride, pairs, ones), 1, ones)
    return F.reshape(spread, lead + size)


def adaptive_avg_pool_grad(g: Any, x_shape: tuple[int, ...], output_size: Any) -> Any:
    """The averaging matrices transposed: g (*batch, *output_size) -> (*batch, *x's spatial size)."""
    nd = len(output_size)
    mats = K.adaptive_pool_matrices(tuple(x_shape[-nd:]), output_size, np.result_type(g))
    outs, ins = "abc"[:nd], "xyz"[:nd]
    return F.einsum(f"...{outs}," + ",".join(o + i for o, i in zip(outs, ins)) + f"->...{ins}", g, *mats)


# ----- linear maps -----------------------------------------------------------------------------
linear                = defop("linear",                K.linear,                input=lambda g, weight: F.matmul(g, weight), weight=linear_weight_grad,
                              bias=lambda g: g, jvp=linear_jvp)  # the engine sums g to the bias's shape

# ----- classification losses ------------------------------------------------------------------
cross_entropy         = defop("cross_entropy",         K.cross_entropy,         input=cross_entropy_grad, target=NONDIFF,
                              jvp=cross_entropy_jvp)
binary_cross_entropy  = defop("binary_cross_entropy",  K.binary_cross_entropy,  input=bce_input_grad, target=bce_target_grad,
                              weight=NONDIFF,
                              jvp=bce_jvp)

# ----- convolutions ---------------------------------------------------------------------------
convolution           = defop("convolution",           K.convolution,           input=conv_input_grad,  weight=conv_weight_grad,
                              bias=lambda g, stride: bias_grad(g, stride), jvp=conv_jvp)
convolution_transpose = defop("convolution_transpose", K.convolution_transpose, input=transpose_input_grad, weight=transpose_weight_grad,
                              bias=lambda g, stride: bias_grad(g, stride), jvp=transpose_jvp)
convolution_weight    = defop("convolution_weight",    K.convolution_weight,    input=weight_input_grad,    grad_output=weight_grad_output_grad,
                              jvp=weight_jvp)

# ----- pooling --------------------------------------------------------------------------------
max_pool          = defop("max_pool",   K.max_pool,   multi_output=True,  # ties: the first maximum takes g, as torch
                          x=lambda g, out, x_shape, kernel_size: F.max_unpool(g[0], R.owned(out[1]), tuple(x_shape[-len(kernel_size):])),
                          jvp=lambda x_t, out, kernel_size: (gather_spatial(x_t, out[1], len(kernel_size)), None))
max_unpool        = defop("max_unpool", K.max_unpool, indices=NONDIFF,
                          x=lambda g, indices, output_size: gather_spatial(g, indices, len(output_size)),
                          jvp=lambda x_t, indices, output_size: F.max_unpool(x_t, indices, output_size))
avg_pool          = defop("avg_pool",   K.avg_pool,   x=avg_pool_grad,
                          jvp=lambda x_t, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override:
                          F.avg_pool(x_t, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override))
adaptive_avg_pool = defop("adaptive_avg_pool", K.adaptive_avg_pool, x=adaptive_avg_pool_grad,
                          jvp=lambda x_t, output_size: F.adaptive_avg_pool(x_t, output_size))

"""Forward kernels of linear maps, classification losses, convolution and pooling on plain arrays (NumPy
only; no graph).

Layout as torch: an input is ``(*batch, N, C, *spatial)`` and a weight ``(*batch, C_out, C_in / groups,
*kernel)``; the spatial dims are the last ``nd`` ones (``nd = len(stride)``, 1 or 2 or 3). Dims in front of
``N`` (or of ``C_out``) are batch dims that broadcast, so a rule may hand these kernels gradients that
carry a batch of cotangents. Paddings are ``(before, after)`` pairs per spatial dim.

A convolution (and its weight gradient) is one copy of a sliding-window view of the padded input into an
im2col matrix laid out for the matrix product that follows (per sample or over all samples, by shape); a
transposed convolution is one product followed by one strided add per kernel offset (col2im); max pooling
is one elementwise pass per kernel offset over strided views. No Python loop runs over pixels or channels.
"""
from __future__ import annotations

import math
from itertools import product
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

Ints = tuple[int, ...]
Pairs = tuple[tuple[int, int], ...]


# ----- shared pieces ---------------------------------------------------------------------------
def pad_spatial(x: np.ndarray, padding: Pairs, value: float = 0.0) -> np.ndarray:
    """``x`` padded by ``padding`` (one (before, after) pair per trailing spatial dim) with ``value``."""
    if not any(lo or hi for lo, hi in padding):
        return x
    return np.pad(x, [(0, 0)] * (np.ndim(x) - len(padding)) + list(padding), constant_values=value)


def windows(x: np.ndarray, kernel: Ints, stride: Ints, dilation: Ints, out_size: Ints) -> np.ndarray:
    """A view ``(..., *out_size, *kernel)`` of ``x``'s trailing spatial dims: entry ``(o, k)`` is
    ``x[o * stride + k * dilation]`` (per dim)."""
    nd = len(kernel)
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    view = sliding_window_view(x, span, axis=tuple(range(np.ndim(x) - nd, np.ndim(x))))
    return view[(Ellipsis,) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out_size, stride))
                + tuple(slice(None, None, d) for d in dilation)]


def offset_views(x: np.ndarray, kernel: Ints, stride: Ints, dilation: Ints,
                 out_size: Ints) -> list[tuple[Ints, np.ndarray]]:
    """One strided view ``(..., *out_size)`` of ``x``'s trailing spatial dims per kernel offset ``k``, in scan
    order: entry ``o`` of offset ``k``'s view is ``x[o * stride + k * dilation]`` (per dim)."""
    return [(offset, x[(Ellipsis,) + tuple(slice(k * d, k * d + (o - 1) * s + 1, s)
                                            for k, d, o, s in zip(offset, dilation, out_size, stride))])
            for offset in product(*(range(k) for k in kernel))]


def _places(size: Ints) -> np.ndarray:
    """What one step along each dim adds to a flat (C-order) index into ``size``."""
    return np.cumprod((1,) + tuple(size[:0:-1]), dtype=np.int64)[::-1]


def conv_output_size(size: Ints, kernel: Ints, stride: Ints, padding: Pairs, dilation: Ints) -> Ints:
    """Spatial size of a convolution's output: floor((L + lo + hi - dilation (k - 1) - 1) / stride) + 1."""
    return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                 for n, k, s, (lo, hi), d in zip(size, kernel, stride, padding, dilation))


def _split_groups(a: np.ndarray, axis_from_end: int, groups: int) -> np.ndarray:
    """``a`` with the dim ``axis_from_end`` (negative) split into ``(groups, size / groups)``: a view."""
    shape = a.shape
    at = len(shape) + axis_from_end
    return a.reshape(shape[:at] + (groups, shape[at] // groups) + shape[at + 1:])


def _letters(nd: int, first: str) -> str:
    return "".join(chr(ord(first) + i) for i in range(nd))


def _check_conv(input: np.ndarray, weight: np.ndarray, groups: int, nd: int) -> None:
    """torch's channel check: input channels must equal weight.shape[1] * groups."""
    channels, expected = np.shape(input)[-nd - 1], np.shape(weight)[-nd - 1] * groups
    if channels != expected:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(np.shape(weight)[-nd - 2:])}, expected "
                           f"input{list(np.shape(input)[-nd - 2:])} to have {expected} channels, but got "
                           f"{channels} channels instead")
    if np.shape(weight)[-nd - 2] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of shape {list(np.shape(weight)[-nd - 2:])} instead")


def _add_bias(out: np.ndarray, bias: Any, nd: int) -> np.ndarray:
    if bias is None:
        return out
    return np.add(out, np.reshape(bias, np.shape(bias) + (1,) * nd), out=out)


# ----- linear maps ------------------------------------------------------------------------------
def linear(input: np.ndarray, weight: np.ndarray, bias: Any) -> np.ndarray:
    """input @ weight.T + bias, as torch's linear (addmm for a matrix input): weight (out, in)."""
    w_shape, x_shape = np.shape(weight), np.shape(input)
    if len(w_shape) != 2:
        raise RuntimeError(f"linear: expected a 2-D weight (out_features, in_features), got {len(w_shape)}-D")
    if not x_shape:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are 0D and {len(w_shape)}D")
    if x_shape[-1] != w_shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({math.prod(x_shape[:-1])}x{x_shape[-1]} and "
                           f"{w_shape[1]}x{w_shape[0]})")
    out = np.matmul(input, weight.T if type(weight) is np.ndarray else np.transpose(weight))
    if bias is None:
        return out
    if type(out) is type(bias) is np.ndarray and np.result_type(out, bias) == out.dtype:
        try:  # into the product's own fresh array (addmm), no second temporary
            return np.add(out, bias, out=out)
        except ValueError:  # the bias would enlarge the result: torch's error
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                               f"{list(np.broadcast_shapes(out.shape, bias.shape))}") from None
    return out + bias


# ----- classification losses ---------------------------------------------------------------------
def class_dim(input: Any) -> int:
    """The class dim of a loss input: 1 for ``(N, C, *spatial)``, 0 for a single sample ``(C,)``."""
    return 1 if np.ndim(input) > 1 else 0


def class_targets(input: Any, target: Any, weight: Any, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer class targets checked against the input, as torch checks them, and the weight of each target.

    Returns the targets with ignored entries replaced by 0 (so they index safely) and ``weight[t]`` per
    target, 0 where it is ignored (1 without a weight), in the input's dtype.
    """
    index = np.asarray(target)
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {index.dtype}")
    shape, dim = np.shape(input), class_dim(input)
    expected = shape[:dim] + shape[dim + 1:]
    if index.shape != expected:
        if index.shape[:1] != expected[:1]:
            raise ValueError(f"Expected input batch_size ({expected[0] if expected else 1}) to match target "
                             f"batch_size ({index.shape[0] if index.ndim else 1}).")
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(index.shape)}")
    check_class_weight(weight, shape[dim])
    counted = index != ignore_index
    bad = index[counted & ((index < 0) | (index >= shape[dim]))]
    if bad.size:
        raise IndexError(f"Target {bad.flat[0]} is out of bounds.")
    return target_weights(index, counted, weight, np.result_type(input))


def check_class_weight(weight: Any, classes: int) -> None:
    """torch's check of a class weight: one value per class (a longer one was silently cut to the classes)."""
    if weight is not None and np.shape(weight) != (classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but got "
                           f"weight tensor of shape: {list(np.shape(weight))}")


def target_weights(index: np.ndarray, counted: np.ndarray, weight: Any,
                   dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Valid targets (ignored ones set to 0) and ``weight[t]`` per target, 0 where ignored."""
    safe = np.where(counted, index, 0)
    w = counted.astype(dtype) if weight is None else np.where(counted, np.asarray(weight, dtype)[safe], 0.0)
    return safe, w


def mean_weights(w: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Each target's share w / sum(w) of a ``mean`` loss, 0 where it is ignored: torch's gradient, which is 0 when
    every target is ignored (while the loss, 0 / 0, is NaN) and NaN where counted weights sum to 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted, w / np.sum(w), 0).astype(w.dtype, copy=False)


def one_hot(index: np.ndarray, classes: int, dim: int, dtype: np.dtype) -> np.ndarray:
    """1 at ``[n, index[n], ...]`` along the class dim ``dim``, 0 elsewhere: shape of the loss input."""
    shape = index.shape[:dim] + (classes,) + index.shape[dim:]
    out = np.zeros(shape, dtype)
    np.put_along_axis(out, np.expand_dims(index, dim), 1.0, dim)
    return out


def reduce_loss(loss: np.ndarray, w: np.ndarray, reduction: str) -> np.ndarray:
    """torch's reductions of a weighted loss: ``mean`` divides the sum by the summed weights (NaN when
    every target is ignored, as torch)."""
    if reduction == "none":
        return loss
    total = np.sum(loss)
    if reduction == "sum":
        return total
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.divide(total, np.sum(w))
    raise ValueError(f"{reduction} is not a valid value for reduction")


def cross_entropy(input: np.ndarray, target: np.ndarray, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean") -> np.ndarray:
    """-weight[t] log_softmax(input)[n, t] for the class indices ``t = target[n, ...]`` (torch's fused
    ``cross_entropy``): input (N, C, *spatial) or (C,) logits, target (N, *spatial) or () integers;
    entries equal to ``ignore_index`` count 0; ``reduction`` is ``"mean"`` (over the summed weights),
    ``"sum"`` or ``"none"``."""
    index, w = class_targets(input, target, weight, ignore_index)
    dim = class_dim(input)
    top = np.amax(input, axis=dim, keepdims=True)
    shifted = input - top
    lse = np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))  # logsumexp(input) - top
    picked = np.take_along_axis(shifted, np.expand_dims(index, dim), dim) - lse  # log_softmax at the targets
    return reduce_loss(np.squeeze(picked, dim) * -w, w, reduction)


def binary_cross_entropy(input: np.ndarray, target: np.ndarray, weight: Any = None,
                         reduction: str = "mean") -> np.ndarray:
    """-weight (t log x + (1 - t) log(1 - x)) for probabilities x, each log clamped at -100 as torch's (so x = 0
    or 1 gives a finite loss); ``reduction`` ``"mean"`` (over the elements), ``"sum"`` or ``"none"``."""
    with np.errstate(divide="ignore"):
        loss = -(target * np.maximum(np.log(input), -100.0) + (1 - target) * np.maximum(np.log1p(-input), -100.0))
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    if reduction in ("mean", "sum"):
        return np.mean(loss) if reduction == "mean" else np.sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


# ----- convolutions ----------------------------------------------------------------------------
def _per_sample(cols: np.ndarray, nd: int) -> bool:
    """Whether a convolution's products run per sample (one (C K) x O matrix each) rather than as one product
    over all samples: when each sample has at least as many positions O as products C K per position. With
    few positions (deep layers) one product is faster despite the transpose of its result (measured:
    64x20x12x12 input with 50x20x5x5 weight, forward 4.8 -> 4.3 ms, weight gradient 5.4 -> 4.8 ms); with
    many positions and few products (64x1x28x28 with 20x1x5x5) the per-sample products are (1.0 vs 1.7 ms)."""
    shape = cols.shape[cols.ndim - 2 * nd - 1:]  # (C, *O, *K)
    return math.prod(shape[1: nd + 1]) >= shape[0] * math.prod(shape[nd + 1:])


def _columns(cols: np.ndarray, nd: int, per_sample: bool) -> np.ndarray:
    """The im2col matrix of a window view ``(*rows, C, *O, *K)``, its one copy: ``(*rows, C K, O)`` (a matrix
    per sample) if ``per_sample``, else ``(C K, rows O)`` (one matrix for all samples, C K rows)."""
    lead = cols.ndim - 2 * nd - 1
    rows, channel = tuple(range(lead)), (lead,)
    positions, offsets = tuple(range(lead + 1, lead + nd + 1)), tuple(range(lead + nd + 1, cols.ndim))
    products = cols.shape[lead] * math.prod(cols.shape[lead + nd + 1:])
    places = math.prod(cols.shape[lead + 1: lead + nd + 1])  # (sizes, not -1: an empty batch has no -1)
    if per_sample:
        return np.reshape(np.transpose(cols, rows + channel + offsets + positions), cols.shape[:lead] + (products,
                                                                                                          places))
    return np.reshape(np.transpose(cols, channel + offsets + rows + positions),
                      (products, math.prod(cols.shape[:lead]) * places))


def convolution(input: np.ndarray, weight: np.ndarray, bias: Any, stride: Ints, padding: Pairs, dilation: Ints,
                groups: int) -> np.ndarray:
    """Cross-correlation, as torch's conv: out[n, o, p] = bias[o] + sum_{c, k} x_pad[n, c, p s + k d] w[o, c, k],
    input channels split into ``groups`` that each see their share of the weight's output channels."""
    nd = len(stride)
    _check_conv(input, weight, groups, nd)
    kernel = tuple(np.shape(weight)[-nd:])
    padded = pad_spatial(input, padding)
    out_size = conv_output_size(np.shape(input)[-nd:], kernel, stride, padding, dilation)
    if min(out_size) < 1:
        sizes = " x ".join(str(n) for n in np.shape(padded)[-nd:])
        raise RuntimeError(f"Calculated padded input size per channel: ({sizes}). Kernel size: "
                           f"({' x '.join(str(d * (k - 1) + 1) for k, d in zip(kernel, dilation))}). "
                           f"Kernel size can't be greater than actual input size")
    cols = windows(padded, kernel, stride, dilation, out_size)  # (*b, N, C, *O, *K)
    if groups == 1 and np.ndim(weight) == nd + 2:
        rows = cols.shape[: cols.ndim - 2 * nd - 1]  # (*b, N)
        w = np.reshape(weight, (weight.shape[0], math.prod(weight.shape[1:])))  # (C_out, C K)
        if _per_sample(cols, nd):  # w @ cols (rows, C K, O) -> (rows, C_out, O): torch's layout already
            return _add_bias(np.reshape(np.matmul(w, _columns(cols, nd, True)), rows + (w.shape[0],) + out_size),
                             bias, nd)
        out = np.reshape(w @ _columns(cols, nd, False), (w.shape[0],) + rows + out_size)  # (C_out, *rows, *O)
        return _add_bias(np.ascontiguousarray(np.moveaxis(out, 0, len(rows))), bias, nd)
    spatial, offsets = _letters(nd, "p"), _letters(nd, "i")
    out = np.einsum(f"...ngc{spatial}{offsets},...goc{offsets}->...ngo{spatial}",
                    _split_groups(cols, -2 * nd - 1, groups), _split_groups(weight, -nd - 2, groups), optimize=True)
    return _add_bias(np.reshape(out, out.shape[:-nd - 2] + (out.shape[-nd - 2] * out.shape[-nd - 1],) + out_size), bias,
                     nd)


def convolution_transpose(input: np.ndarray, weight: np.ndarray, bias: Any, stride: Ints, padding: Pairs,
                          output_padding: Ints, groups: int, dilation: Ints) -> np.ndarray:
    """The adjoint of ``convolution`` in its input, as torch's conv_transpose: every input element adds
    ``x[n, c, p] w[c, o, k]`` to out[n, o, p s + k d - lo]; weight ``(C_in, C_out / groups, *K)``. The full
    result has size (L - 1) s + d (K - 1) + 1 + output_padding before ``padding`` is cut from both ends."""
    nd = len(stride)
    if np.shape(input)[-nd - 1] != np.shape(weight)[-nd - 2]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(np.shape(weight)[-nd - 2:])}, expected "
                           f"input{list(np.shape(input)[-nd - 2:])} to have {np.shape(weight)[-nd - 2]} channels, "
                           f"but got {np.shape(input)[-nd - 1]} channels instead")
    kernel, size = tuple(np.shape(weight)[-nd:]), tuple(np.shape(input)[-nd:])
    full = tuple((n - 1) * s + d * (k - 1) + 1 + e for n, s, d, k, e in zip(size, stride, dilation, kernel,
                                                                            output_padding))
    out_size = tuple(f - lo - hi for f, (lo, hi) in zip(full, padding))
    if min(out_size) < 1:  # torch's reference kernels raise for 0 too (only oneDNN's float32 path returns it empty)
        shown = (1,) * (nd == 1)  # torch runs 1-D as 2-D of height 1, and says so
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, shown + size))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, shown + out_size))}). Output size is too small")
    if groups == 1 and np.ndim(weight) == nd + 2:
        # cols (*K, C_out, *L, rows) = w (*K, C_out, C_in) @ x (C_in, *L, rows), rows = the samples (and batch):
        # one product, laid out so each kernel offset's strided add runs over long contiguous rows
        lead = tuple(np.shape(input)[:-nd - 1])
        rows = math.prod(lead)
        x = np.reshape(input, (rows, np.shape(input)[-nd - 1]) + size)
        w = np.transpose(weight, tuple(range(2, nd + 2)) + (1, 0))
        cols = np.reshape(w, (-1, weight.shape[0])) @ np.reshape(np.moveaxis(x, 0, -1), (x.shape[1], -1))
        cols = np.reshape(cols, kernel + (weight.shape[1],) + size + (rows,))
    else:
        spatial, offsets = _letters(nd, "p"), _letters(nd, "i")
        cols = np.einsum(f"...ngc{spatial},...gco{offsets}->...ngo{offsets}{spatial}",
                         _split_groups(input, -nd - 1, groups), _split_groups(weight, -nd - 2, groups), optimize=True)
        lead = cols.shape[: -2 * nd - 2]
        out_channels = groups * cols.shape[-2 * nd - 1]
        cols = np.reshape(cols, (math.prod(lead), out_channels) + kernel + size)  # (rows, C_out, *K, *L)
        cols = np.moveaxis(cols, (0, 1), (-1, nd))  # (*K, C_out, *L, rows)
    out = np.zeros((cols.shape[nd],) + full + (cols.shape[-1],), np.result_type(input, weight))  # (C_out, *full, rows)
    for offset in product(*(range(k) for k in kernel)):  # one strided add per kernel offset (col2im)
        target = tuple(slice(k * d, k * d + (n - 1) * s + 1, s) for k, d, n, s in zip(offset, dilation, size, stride))
        out[(slice(None),) + target] += cols[offset]
    out = out[(slice(None),) + tuple(slice(lo, f - hi) for f, (lo, hi) in zip(full, padding))]
    out = np.reshape(np.moveaxis(out, -1, 0), lead + (out.shape[0],) + out_size)  # one copy, to torch's layout
    return _add_bias(out, bias, nd)


def convolution_weight(input: np.ndarray, grad_output: np.ndarray, kernel_size: Ints, stride: Ints, padding: Pairs,
                       dilation: Ints, groups: int) -> np.ndarray:
    """The adjoint of ``convolution`` in its weight: dw[o, c, k] = sum_{n, p} g[n, o, p] x_pad[n, c, p s + k d],
    shape ``(C_out, C_in / groups, *kernel_size)`` (with the operands' batch dims in front)."""
    nd = len(stride)
    out_size = tuple(np.shape(grad_output)[-nd:])
    cols = windows(pad_spatial(input, padding), kernel_size, stride, dilation, out_size)  # (*b, N, C, *O, *K)
    core = nd + 2
    if groups == 1 and np.ndim(input) == core and np.ndim(grad_output) == core:
        shape = (np.shape(grad_output)[1], np.shape(input)[1]) + tuple(kernel_size)
        g = np.reshape(grad_output, np.shape(grad_output)[:2] + (math.prod(out_size),))  # (N, C_out, O)
        if _per_sample(cols, nd):  # sum_n g[n] @ cols[n]ᵀ
            per_sample = np.matmul(g, np.swapaxes(_columns(cols, nd, True), -1, -2))  # (N, C_out, C K)
            return np.reshape(np.add.reduce(per_sample, axis=0), shape)
        g = np.reshape(np.moveaxis(g, 1, 0), (g.shape[1], g.shape[0] * g.shape[2]))  # (C_out, N O): a small copy
        return np.reshape(g @ _columns(cols, nd, False).T, shape)
    spatial, offsets = _letters(nd, "p"), _letters(nd, "i")
    out = np.einsum(f"...ngo{spatial},...ngc{spatial}{offsets}->...goc{offsets}",
                    _split_groups(grad_output, -nd - 1, groups), _split_groups(cols, -2 * nd - 1, groups),
                    optimize=True)
    return np.reshape(out, out.shape[: -nd - 3] + (out.shape[-nd - 3] * out.shape[-nd - 2],) + out.shape[-nd - 1:])


# ----- pooling ---------------------------------------------------------------------------------
def pool_geometry(size: Ints, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                  ceil_mode: bool) -> tuple[Ints, Pairs]:
    """A pooling's output size and its (before, after) padding, the after side grown so that ceil mode's
    last, partial windows fit. As torch, a last window that would start in the right padding is dropped."""
    out, pairs = [], []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation):
        span = d * (k - 1) + 1
        o = (n + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= n + p:
            o -= 1
        out.append(o)
        pairs.append((p, max(p, (o - 1) * s + span - n - p)))
    return tuple(out), tuple(pairs)


def check_pool(size: Ints, lead: Ints, kernel: Ints, padding: Ints, dilation: Ints, out_size: Ints,
               effective: bool) -> None:
    """torch's pooling checks: padding at most half the (``effective``: dilated) kernel and at most half the kernel
    itself (else a dilated window can lie wholly in the padding), an output of at least one element."""
    for k, p, d in zip(kernel, padding, dilation):
        if effective and p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k}"
                               f" and dilation={d}")
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of kernel size, but got pad={p}, kernel_size={k}")
    if min(out_size) < 1:
        given = "x".join(str(n) for n in lead[-1:] + size)
        calculated = "x".join(str(n) for n in lead[-1:] + out_size)
        raise RuntimeError(f"Given input size: ({given}). Calculated output size: ({calculated}). "
                           f"Output size is too small")


def max_pool(x: np.ndarray, kernel_size: Ints, stride: Ints, padding: Ints, dilation: Ints,
             ceil_mode: bool) -> tuple[np.ndarray, np.ndarray]:
    """The largest element of each window, and where it is: a flat index into the input's spatial dims.

    As torch's kernel, each window is scanned in order from its first element inside the input: an element
    takes over if it is larger than the maximum so far (ties keep the first) or NaN (the last NaN wins).
    The scan runs over all windows at once, one elementwise pass per kernel offset (no window copy); each
    window's winner is tracked as its offset's number k, which only grows along the scan, so "take k where
    the element takes over" is ``maximum(winner, takes_over * k)`` on small integers."""
    nd = len(kernel_size)
    size = tuple(np.shape(x)[-nd:])
    out_size, pairs = pool_geometry(size, kernel_size, stride, padding, dilation, ceil_mode)
    check_pool(size, tuple(np.shape(x)[:-nd]), kernel_size, padding, dilation, out_size, True)
    views = offset_views(pad_spatial(x, pairs, -np.inf), kernel_size, stride, dilation, out_size)
    place, offset_place = _places(size), _places(kernel_size)
    starts = [(np.arange(o) * s - p).reshape((o,) + (1,) * (nd - 1 - j))
              for j, (o, s, p) in enumerate(zip(out_size, stride, padding))]
    inside = sum(-(np.minimum(start, 0) // d) * step  # number of each window's first offset inside the input
                 for start, d, step in zip(starts, dilation, offset_place))
    number = np.min_scalar_type(len(views))
    best = views[0][1] if len(views) > 1 else views[0][1].copy()  # padding is -inf: it never takes over
    winner = np.empty(best.shape, number)
    winner[...] = inside
    for k, (_, view) in enumerate(views[1:], 1):
        np.maximum(winner, np.multiply(np.greater(view, best), number.type(k), dtype=number), out=winner)
        best = np.maximum(best, view, out=None if k == 1 else best)  # NaN spreads into its window's value
    nan = np.isnan(best)
    if nan.any():
        last_nan = np.zeros(best.shape, number)
        for k, (_, view) in enumerate(views):
            np.maximum(last_nan, np.multiply(np.isnan(view), number.type(k), dtype=number), out=last_nan)
        np.copyto(winner, last_nan, where=nan)
    shift = np.array([np.dot(np.multiply(offset, dilation), place) for offset, _ in views], np.int64)
    index = shift[winner]  # (np.take would be slower here)
    index += sum(start * step for start, step in zip(starts, place))  # + each window's offset 0
    # a dilated window that starts in the left padding can step over the whole input: no element, value -inf, index
    # -1 (torch's index there names an element outside the window, often of the next row, which got its gradient)
    empty = sum(start - np.minimum(start, 0) // d * d >= n for start, d, n in zip(starts, dilation, size))
    np.copyto(index, -1, where=empty > 0)
    return best, index


def max_unpool(x: np.ndarray, indices: np.ndarray, output_size: Ints) -> np.ndarray:
    """Each element of ``x`` added into zeros of spatial size ``output_size`` at its flat spatial index
    (where max pooling found it; -1, a window without elements, adds nowhere); elements sharing an index add up
    (the adjoint of the gather)."""
    nd = len(output_size)
    width = math.prod(output_size)
    lead = tuple(np.shape(x)[: np.ndim(x) - nd])
    rows = math.prod(lead)
    indices = np.broadcast_to(indices, np.shape(x)).reshape(rows, math.prod(np.shape(x)[np.ndim(x) - nd:]))
    index = indices + (np.arange(rows) * width)[:, None]
    weights = np.reshape(x, -1)
    if indices.size and indices.min() < 0:
        kept = indices.ravel() >= 0
        index, weights = index.ravel()[kept], weights[kept]
    out = np.bincount(index.ravel(), weights=weights, minlength=rows * width)
    return out.reshape(lead + tuple(output_size)).astype(np.result_type(x), copy=False)


def avg_pool_divisor(size: Ints, kernel: Ints, stride: Ints, padding: Ints, out_size: Ints,
                     count_include_pad: bool, divisor_override: Any) -> Any:
    """What each window's sum is divided by (torch's rule): the window's size within the padded input
    (clipped to the input itself without ``count_include_pad``), or ``divisor_override``."""
    if divisor_override is not None:
        return divisor_override
    divisor: Any = 1
    for j, (n, k, s, p, o) in enumerate(zip(size, kernel, stride, padding, out_size)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        divisor = divisor * count.reshape((o,) + (1,) * (len(size) - 1 - j))
    return divisor


def avg_pool(x: np.ndarray, kernel_size: Ints, stride: Ints, padding: Ints, ceil_mode: bool,
             count_include_pad: bool, divisor_override: Any) -> np.ndarray:
    """The mean of each window (its sum over the divisor torch uses); integer sums are divided toward zero, as
    torch divides int64 ones."""
    nd = len(kernel_size)
    size = tuple(np.shape(x)[-nd:])
    ones = (1,) * nd
    out_size, pairs = pool_geometry(size, kernel_size, stride, padding, ones, ceil_mode)
    check_pool(size, tuple(np.shape(x)[:-nd]), kernel_size, padding, ones, out_size, False)
    (_, first), *rest = offset_views(pad_spatial(x, pairs), kernel_size, stride, ones, out_size)
    total = first.copy()
    for _, part in rest:
        total += part
    divisor = avg_pool_divisor(size, kernel_size, stride, padding, out_size, count_include_pad, divisor_override)
    if total.dtype.kind in "iu":  # (fmod keeps the dividend's sign: what is left divides exactly)
        return np.floor_divide(total - np.fmod(total, divisor), divisor)
    return np.divide(total, divisor, out=total)


def adaptive_pool_matrices(size: Ints, output_size: Ints, dtype: Any) -> list[np.ndarray]:
    """Per spatial dim, the (out, in) averaging matrix of adaptive pooling: row i averages
    [floor(i L / O), ceil((i + 1) L / O))."""
    mats = []
    for n, o in zip(size, output_size):
        i = np.arange(o)
        start, end = (i * n) // o, -((-(i + 1) * n) // o)
        cols = np.arange(n)
        inside = (cols >= start[:, None]) & (cols < end[:, None])
        mats.append((inside / (end - start)[:, None]).astype(dtype))
    return mats


def adaptive_avg_pool(x: np.ndarray, output_size: Ints) -> np.ndarray:
    """Adaptive average pooling: one averaging matrix applied along each trailing spatial dim."""
    nd = len(output_size)
    out = x
    for j, mat in enumerate(adaptive_pool_matrices(tuple(np.shape(x)[-nd:]), output_size, np.result_type(x))):
        out = np.moveaxis(np.tensordot(out, mat, axes=([np.ndim(x) - nd + j], [1])), -1, np.ndim(x) - nd + j)
    return np.ascontiguousarray(out)

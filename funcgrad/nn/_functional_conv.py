"""``funcgrad.nn.functional``'s convolutions and poolings: torch's signatures, argument checks and
unbatched inputs, over the table ops ``convolution``, ``convolution_transpose``, ``max_pool``,
``avg_pool`` and ``adaptive_avg_pool`` (which take normalized tuples)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import ops
from funcgrad.ops.kernels import torch_dtype_name

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
           "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "unfold",
           "pad"]

pad = ops.pad


def as_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """An int (or a sequence of ``n`` ints) as ``n`` ints, as torch's ``_pair``."""
    if isinstance(value, int | np.integer):
        return (int(value),) * n
    if isinstance(value, Sequence) and len(value) == n:
        return tuple(int(v) for v in value)
    if isinstance(value, Sequence) and len(value) == 1:
        return (int(value[0]),) * n
    raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {value!r}")


def _check_conv_args(stride: tuple[int, ...], dilation: tuple[int, ...], padding: Any, groups: int,
                     output_padding: tuple[int, ...] = ()) -> None:
    """torch's checks of a convolution's arguments, before any size arithmetic divides by them or slices with them
    (a dilation of 0 gave a value)."""
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if not isinstance(padding, str) and min(as_tuple(padding, len(stride), "padding")) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(output_padding, default=0) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")


def _pool_args(kernel_size: Any, stride: Any, dilation: Any, nd: int) -> tuple[tuple[int, ...], ...]:
    """A pooling's kernel, stride (the kernel's when None or empty) and dilation as ``nd`` ints each, checked
    positive as torch checks them."""
    kernel = as_tuple(kernel_size, nd, "kernel_size")
    strides = kernel if stride is None or (isinstance(stride, Sequence) and not stride) else as_tuple(stride, nd,
                                                                                                       "stride")
    dilations = as_tuple(dilation, nd, "dilation")
    for values, name in ((kernel, "kernel size"), (strides, "stride"), (dilations, "dilation")):
        if min(values) < 1:
            raise RuntimeError(f"{name} should be greater than zero, but got {name}: {list(values)}")
    return kernel, strides, dilations


def _padding_pairs(padding: Any, nd: int, kernel: tuple[int, ...], stride: tuple[int, ...],
                   dilation: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """torch's conv padding (ints, "valid" or "same") as (before, after) pairs; "same" puts the odd one after."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in as_tuple(padding, nd, "padding"))


def _batched(input: Any, nd: int, name: str) -> tuple[Any, bool]:
    """The input with a batch dim (added for an unbatched one), and whether it was added."""
    ndim = np.ndim(input)
    if ndim == nd + 1:
        return ops.unsqueeze(input, 0), True
    if ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(np.shape(input))}")
    return input, False


def _unbatched(out: Any, added: bool) -> Any:
    if isinstance(out, tuple):
        return tuple(_unbatched(o, added) for o in out)
    return ops.squeeze(out, 0) if added else out


def _conv(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int, nd: int) -> Any:
    x, added = _batched(input, nd, f"conv{nd}d")
    stride, dilation = as_tuple(stride, nd, "stride"), as_tuple(dilation, nd, "dilation")
    _check_conv_args(stride, dilation, padding, groups)
    pairs = _padding_pairs(padding, nd, tuple(np.shape(weight)[-nd:]), stride, dilation)
    return _unbatched(ops.convolution(x, weight, bias, stride, pairs, dilation, groups), added)


def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """1-D cross-correlation over (N, C_in, L) (or (C_in, L)) with a (C_out, C_in / groups, k) weight, as torch."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Any:
    """2-D cross-correlation, as ``torch.nn.functional.conv2d``.

    Args:
        input: (N, C_in, H, W) or (C_in, H, W).
        weight: (C_out, C_in / groups, kH, kW).
        bias: (C_out,) or None.
        stride, dilation: an int or a pair.
        padding: an int, a pair, ``"valid"`` (none) or ``"same"`` (output as large as the input; stride 1).
        groups: input and output channels split into this many independent groups.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.nn import functional as F
        >>> F.conv2d(fg.ones(1, 1, 3, 3), fg.ones(1, 1, 2, 2)).shape
        (1, 1, 2, 2)
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def _conv_transpose(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any, groups: int,
                    dilation: Any, nd: int) -> Any:
    x, added = _batched(input, nd, f"conv_transpose{nd}d")
    stride, dilation = as_tuple(stride, nd, "stride"), as_tuple(dilation, nd, "dilation")
    extra = as_tuple(output_padding, nd, "output_padding")
    _check_conv_args(stride, dilation, padding, groups, extra)
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got output_padding: "
                           f"{extra} stride: {stride} dilation: {dilation}")
    pairs = tuple((p, p) for p in as_tuple(padding, nd, "padding"))
    return _unbatched(ops.convolution_transpose(x, weight, bias, stride, pairs, extra, groups, dilation), added)


def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """1-D transposed convolution (the gradient of conv1d in its input); weight (C_in, C_out / groups, k)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """2-D transposed convolution, as torch: weight (C_in, C_out / groups, kH, kW); the output has size
    (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1 per spatial dim."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def _max_pool(input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
              return_indices: bool, nd: int) -> Any:
    x, added = _batched(input, nd, f"max_pool{nd}d")
    kernel, stride, dilation = _pool_args(kernel_size, stride, dilation, nd)
    values, indices = ops.max_pool(x, kernel, stride, as_tuple(padding, nd, "padding"), dilation, bool(ceil_mode))
    return _unbatched((values, indices) if return_indices else values, added)


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over (N, C, L) or (C, L); with ``return_indices`` also the argmax positions."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-D max pooling, as torch: the largest element of each window (stride defaults to the kernel size;
    padding counts as -inf); with ``return_indices`` also each maximum's flat index into H * W (-1 for a dilated
    window that holds padding only: its value is -inf and it passes no gradient)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def _check_dtype(x: Any, name: str, long: bool) -> None:
    """torch's error for a dtype its average pooling has no kernel for: any but floating ones and, when ``long``,
    int64 (torch's Long)."""
    if x.dtype.kind != "f" and not (long and x.dtype == np.int64):
        raise NotImplementedError(f'"{name}" not implemented for \'{torch_dtype_name(x.dtype)}\'')


def _avg_pool(input: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, count_include_pad: bool,
              divisor_override: Any, nd: int) -> Any:
    x, added = _batched(input, nd, f"avg_pool{nd}d")
    _check_dtype(x, f"avg_pool{nd}d", long=True)
    kernel, stride, _ = _pool_args(kernel_size, stride, 1, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = ops.avg_pool(x, kernel, stride, as_tuple(padding, nd, "padding"), bool(ceil_mode), bool(count_include_pad),
                       divisor_override)
    return _unbatched(out, added)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Any:
    """1-D average pooling over (N, C, L) or (C, L)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Any = None) -> Any:
    """2-D average pooling, as torch: each window's mean (padding counted unless ``count_include_pad=False``;
    ``divisor_override`` replaces the divisor)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Any = None) -> Any:
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W), as ``avg_pool2d`` over one more dim."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _adaptive(input: Any, output_size: Any, nd: int) -> Any:
    x, added = _batched(input, nd, f"adaptive_avg_pool{nd}d")
    _check_dtype(x, f"adaptive_avg_pool{nd}d", long=False)
    sizes = (output_size,) * nd if output_size is None or isinstance(output_size, int | np.integer) else output_size
    if len(sizes) != nd:
        raise ValueError(f"adaptive_avg_pool{nd}d: output_size must be an int or {nd} ints, got {output_size!r}")
    spatial = np.shape(x)[-nd:]
    target = tuple(int(n if s is None else s) for s, n in zip(sizes, spatial))
    if min(target) < 0:
        raise RuntimeError(f"adaptive_avg_pool{nd}d: elements of output_size must be greater than or equal to 0 but "
                           f"received {target}")
    return _unbatched(ops.adaptive_avg_pool(x, target), added)


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:
    """1-D adaptive average pooling to ``output_size`` positions."""
    return _adaptive(input, output_size, 1)


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:
    """2-D adaptive average pooling: output (H_out, W_out), window i spanning [floor(i H / H_out),
    ceil((i + 1) H / H_out)); None in ``output_size`` keeps that dim's size."""
    return _adaptive(input, output_size, 2)


def adaptive_avg_pool3d(input: Any, output_size: Any) -> Any:
    """3-D adaptive average pooling to ``output_size`` (an int or three; None keeps that dim)."""
    return _adaptive(input, output_size, 3)


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:
    """Sliding blocks as columns (im2col), as torch: (N, C, H, W) -> (N, C kH kW, L) (unbatched: (C, H, W) ->
    (C kH kW, L)), channel slowest; a convolution with an identity kernel, so its gradient is the table's."""
    x, added = _batched(input, 2, "unfold")
    kernel = as_tuple(kernel_size, 2, "kernel_size")
    channels = np.shape(x)[1]
    rows = channels * kernel[0] * kernel[1]
    eye = np.eye(rows, dtype=x.dtype).reshape((rows, channels) + kernel)
    cols = conv2d(x, eye, None, stride, padding, dilation)
    blocks = math.prod(np.shape(cols)[2:])  # (not -1: N may be 0)
    return _unbatched(ops.reshape(cols, (np.shape(cols)[0], rows, blocks)), added)

"""Forward kernels on plain arrays, where an op is more than one bare NumPy call.

Kernels take the op's public parameter names (``x``, ``dim``, ``keepdim``) and return arrays;
they never see a Tensor and record nothing.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as sp

from funcgrad.core.structured import Structured, dense_copy

Dim = int | tuple[int, ...] | None


def sum_to(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``x`` down to ``shape`` (the inverse of broadcasting ``shape`` up to ``x.shape``)."""
    if x.shape[1:] == shape and type(x) is np.ndarray:  # one leading dim to sum, as a bias's gradient: the commonest
        return np.add.reduce(x, axis=0)
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    inner = tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1) if lead >= 0 else ()
    reduce = np.add.reduce if type(x) is np.ndarray else np.sum  # (np.sum's wrapper costs more than the sum)
    out = reduce(x, axis=tuple(range(lead)) + inner, keepdims=True) if inner else x
    if lead < 0 or out.shape[lead:] != shape:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(x.shape)}}}.")  # torch's text
    if inner:
        return out.reshape(shape) if lead else out
    return reduce(x, axis=tuple(range(lead))) if lead else x  # only leading dims, as for a bias: no reshape


def broadcast_view(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to ``shape``: a read-only view, as ``np.broadcast_to`` gives.

    A C-contiguous array (or a scalar) gets its view from its strides directly, a zero stride per
    broadcast dim: ``np.broadcast_to`` builds an iterator in Python and costs several microseconds,
    which a gradient that is spread back over a reduction pays once per backward pass.
    """
    if type(x) is not np.ndarray:
        if not isinstance(x, _SCALARS):
            return np.broadcast_to(x, shape)  # structured and traced arrays broadcast themselves
        x = np.asarray(x)
    if type(shape) is not tuple:
        shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    ndim = x.ndim
    if ndim:
        lead = len(shape) - ndim
        if lead < 0 or not x.size or not x.flags.c_contiguous:
            return np.broadcast_to(x, shape)  # (NumPy's errors, and the views it makes of empty arrays)
        strides = [0] * len(shape)
        for i, n in enumerate(x.shape):
            m = shape[lead + i]
            if n == m:
                strides[lead + i] = x.strides[i]
            elif n != 1:
                return np.broadcast_to(x, shape)  # (NumPy's errors)
    else:  # a 0-d x (the gradient of a full reduction): every dim broadcast
        strides = [0] * len(shape)
    try:
        view = np.ndarray(shape, x.dtype, x, 0, strides)
    except ValueError:  # a negative size
        return np.broadcast_to(x, shape)
    view.setflags(write=False)  # read-only: no write can spread (cheaper than a read-only memoryview as the buffer)
    return view


_SCALARS = (int, float, complex, np.generic)


def overlaps(x: Any) -> bool:
    """Whether elements of ``x`` share memory: a zero stride over more than one element (an expanded dim)."""
    return type(x) is np.ndarray and 0 in x.strides and any(s == 0 and n > 1 for n, s in zip(x.shape, x.strides))


def writable_view(region: Any, owner: np.ndarray) -> Any:
    """``region``, a view into ``owner``'s memory, as a writable view of that memory when it is read-only only
    because it went through an expand (broadcast views are read-only) and ``owner`` may be written: torch's
    expanded tensors may be written where their elements do not overlap (check ``overlaps`` first)."""
    if type(region) is not np.ndarray or region.flags.writeable or not owner.flags.writeable:
        return region
    while isinstance(owner.base, np.ndarray):  # (the array holding the memory: contiguous, so it gives a buffer)
        owner = owner.base
    offset = region.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return np.ndarray(region.shape, region.dtype, owner, offset, region.strides)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + exp(-x)), stable for large real |x|."""
    return 1 / (1 + np.exp(-x)) if np.result_type(x).kind == "c" else sp.expit(x)


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0)."""
    return np.maximum(x, 0)


def sign(x: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 by the sign of x, and 0 for NaN (as torch; NumPy gives NaN); z / |z| for complex z."""
    s = np.sign(x)
    return np.where(np.isnan(s), 0.0, s) if np.result_type(s).kind == "f" else s


def tanh_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    """tanh's gradient from its output y = tanh(x): g * conj(1 - y^2) (torch's ``tanh_backward``)."""
    square = np.square(output)  # (twice as fast as output * output, which NumPy does not see is a square)
    if _reusable(square, grad_output):  # (out given by position and 1.0 a float: each call ~0.1 us less)
        np.subtract(1.0, square, square)
        return np.multiply(grad_output, square, square)
    return grad_output * _conj(1 - square)


def log_softmax_backward(g: Any, out: Any, axes: tuple[int, ...]) -> Any:
    """log_softmax's gradient from its output: g - exp(out) * sum(g) over ``axes`` (torch's
    ``_log_softmax_backward_data``), in one temporary when g has out's shape (no batch dims)."""
    total = np.add.reduce(g, axis=axes, keepdims=True)
    soft = np.exp(out)
    if not _reusable(soft, g):
        return g - soft * total
    soft *= total
    return np.subtract(g, soft, out=soft)


def softmax_backward(g: Any, out: Any, axes: tuple[int, ...]) -> Any:
    """softmax's gradient from its output: out * (g - sum(g * out) over ``axes``) (torch's
    ``_softmax_backward_data``), in one temporary when g has out's shape (no batch dims)."""
    product = g * out
    total = np.add.reduce(product, axis=axes, keepdims=True)
    if not _reusable(product, g):
        return out * (g - total)
    np.subtract(g, total, out=product)
    return np.multiply(product, out, out=product)


def sigmoid_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    """sigmoid's gradient from its output y = sigmoid(x): g * conj(y - y^2) (torch's ``sigmoid_backward``)."""
    square = np.square(output)
    if _reusable(square, grad_output):
        np.subtract(output, square, square)
        return np.multiply(grad_output, square, square)
    return grad_output * _conj(output - square)


def _reusable(temporary: Any, grad_output: Any) -> bool:
    """Whether the rest of a backward kernel can run in ``temporary``, its own fresh real array: the same
    operations in the same order, two temporaries fewer (an array pass's allocation each)."""
    return (type(temporary) is type(grad_output) is np.ndarray and temporary.dtype.kind == "f"
            and temporary.dtype == grad_output.dtype and temporary.shape == grad_output.shape)


def _conj(d: Any) -> Any:
    """conj(d); a real d itself (no copy)."""
    return np.conj(d) if isinstance(d, complex) or getattr(getattr(d, "dtype", None), "kind", "") == "c" else d


def extreme_share(x: Any, out: Any, axes: tuple[int, ...], kept: tuple[int, ...]) -> Any:
    """How amax/amin share their gradient: 1 / k at the k elements of ``x`` equal to ``out`` (its max or min over
    ``axes``, shaped ``kept`` with the reduced dims kept), NaN matching NaN, and 0 elsewhere (ties evenly, as torch).

    The max or min of a group holding a NaN is NaN, and of one without none is: so the places that match are
    those equal to ``out`` or NaN (a NaN never equals anything)."""
    hit = np.logical_or(np.equal(x, out.reshape(kept)), np.isnan(x))
    return np.divide(hit, np.add.reduce(hit, axis=axes, keepdims=True), dtype=x.dtype)


def rsqrt(x: np.ndarray) -> np.ndarray:
    """1 / sqrt(x)."""
    return 1.0 / np.sqrt(x)


def exp2(x: np.ndarray) -> np.ndarray:
    """2 ** x."""
    return np.exp2(x)


def real(x: np.ndarray) -> np.ndarray:
    """The real part: a view of a complex array, or of all of a real one (as torch's ``x.real``)."""
    out = np.real(x)
    return out.view() if out is x and isinstance(out, np.ndarray) else out


def imag(x: np.ndarray) -> np.ndarray:
    """The imaginary part of a complex array, as a view."""
    if np.result_type(x).kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return np.imag(x)


def angle(x: np.ndarray) -> np.ndarray:
    """The argument of each element in radians (0 or pi for real numbers, as torch)."""
    return np.angle(x)


def polar(abs: np.ndarray, angle: np.ndarray) -> np.ndarray:  # noqa: A002
    """The complex number with modulus ``abs`` and argument ``angle``: abs * (cos(angle) + i sin(angle))."""
    return abs * np.cos(angle) + 1j * (abs * np.sin(angle))


def clamp(x: np.ndarray, min: Any = None, max: Any = None) -> np.ndarray:  # noqa: A002
    """Limit ``x`` to [min, max]; either bound may be None (or a tensor)."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


_BITS: dict[np.dtype, np.dtype] = {np.dtype(np.float64): np.dtype(np.int64), np.dtype(np.float32): np.dtype(np.int32)}


def where(condition: np.ndarray, x: Any, y: Any) -> np.ndarray:
    """Elements of ``x`` where ``condition`` holds, else of ``y``.

    Zeroing a float array under a boolean mask (``where(c, 0.0, y)`` or ``where(c, x, 0.0)``, as relu's
    gradient) is a bitwise AND of its bits with the mask (all ones where kept): np.where branches on every
    element, 2.5 against 1.0 ms on 737k entries of a random mask."""
    if type(condition) is np.ndarray and condition.dtype == np.bool_:
        if type(x) in (int, float) and x == 0 and not np.signbit(x):
            return _kept(y, condition, 1)  # (mask: c - 1 is 0 where c, -1 = all ones elsewhere)
        if type(y) in (int, float) and y == 0 and not np.signbit(y):
            return _kept(x, condition, 0)
    return np.where(condition, x, y)


def _kept(a: Any, condition: np.ndarray, drop: int) -> np.ndarray:
    """``a`` where ``condition != drop``, +0.0 elsewhere, as one bitwise AND (np.where when ``a`` is no
    float array of at least one dim and of the condition's shape)."""
    bits = _BITS.get(a.dtype) if type(a) is np.ndarray and a.ndim and a.shape == condition.shape else None
    if bits is None:
        return np.where(condition, a, 0) if drop == 0 else np.where(condition, 0, a)
    mask = np.subtract(condition, 1, dtype=bits) if drop == 1 else np.negative(condition, dtype=bits)
    return np.bitwise_and(a.view(bits), mask, out=mask).view(a.dtype)


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
    return np.broadcast_to(src, x.shape).astype(x.dtype)


def clone(x: np.ndarray, memory_format: str = "preserve_format") -> np.ndarray:
    """A copy of ``x`` with its own memory, laid out as ``x`` (torch's ``preserve_format``) or in row-major
    order (``"contiguous_format"``, what ``Tensor.contiguous`` asks for)."""
    if memory_format not in ("preserve_format", "contiguous_format"):
        raise ValueError(f"clone: memory_format must be 'preserve_format' or 'contiguous_format', "
                         f"got {memory_format!r}")
    if memory_format == "contiguous_format" and not isinstance(x, Structured):
        return np.array(x, order="C", copy=True)
    return dense_copy(x)


def xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x * log(y)``, 0 where x = 0 (unless y is NaN), as torch.xlogy (a named kernel: with SciPy's array API
    switched on, ``scipy.special.xlogy`` is a wrapper, not a ufunc)."""
    return sp.xlogy(x, y)


def erfinv(x: np.ndarray) -> np.ndarray:
    """The inverse of erf on (-1, 1) (SciPy's, named here as ``xlogy``)."""
    return sp.erfinv(x)


def frac(x: np.ndarray) -> np.ndarray:
    """The fractional part ``x - trunc(x)``, with x's sign (torch's ``frac``; floats only)."""
    if np.asarray(x).dtype.kind != "f":
        raise NotImplementedError(f'"frac_cpu" not implemented for \'{torch_dtype_name(np.asarray(x).dtype)}\'')
    return x - np.trunc(x)


TORCH_DTYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                     "int16": "Short", "int8": "Char", "uint8": "Byte", "uint16": "UInt16", "uint32": "UInt32",
                     "uint64": "UInt64", "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def torch_dtype_name(dtype: np.dtype) -> str:
    """torch's name of a NumPy dtype in its error texts and type names (``int64`` -> ``Long``)."""
    return TORCH_DTYPE_NAMES.get(dtype.name, dtype.name)


def to_copy(x: np.ndarray, dtype: Any) -> np.ndarray:
    """``x`` converted to ``dtype`` (a new array)."""
    if isinstance(x, Structured):
        return x.dense().astype(dtype, copy=False)  # already a new array
    return np.asarray(x).astype(dtype)


# ----- indexing -----
PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}  # torch: NumPy


def pick(x: np.ndarray, index: tuple[Any, ...]) -> np.ndarray:
    """``x[index]`` as an array (a view for basic indices), with torch's out-of-range message."""
    for i in index:
        if i is Ellipsis:
            break
    else:
        index = index + (Ellipsis,)  # so x[0, 0] is a 0-d view rather than a scalar copy
    try:
        return x[index]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None


def put(out: Any, index: tuple[Any, ...], values: Any, accumulate: bool) -> Any:
    """``out[index] = values`` in place (``+=`` when ``accumulate``, repeated indices adding up); returns ``out``,
    with torch's message for an index out of range."""
    try:
        if accumulate:
            np.add.at(out, index, values)
        else:
            out[index] = values
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    return out


def check_range(index: np.ndarray, size: int, dim: int) -> None:
    """Indices must lie in [0, size): gather and scatter do not wrap negatives (as torch)."""
    bad = index[(index < 0) | (index >= size)]
    if bad.size:
        raise RuntimeError(f"index {bad.flat[0]} is out of bounds for dimension {dim} with size {size}")


def along_dim(sizes: tuple[int, ...], dim: int, index: np.ndarray) -> tuple[np.ndarray, ...]:
    """A NumPy index taking ``index`` along ``dim`` (>= 0) and position i along every other dim of ``sizes``."""
    grids = list(np.ix_(*[np.arange(n) for n in sizes]))
    grids[dim] = index
    return tuple(grids)


def pad_widths(shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> list[tuple[int, int]]:
    """torch's ``pad`` (pairs from the last dim backwards) as one (before, after) pair per dim, checked."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > len(shape):
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {len(shape)}")
    if mode not in PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}; use one of {', '.join(PAD_MODES)}")
    pairs = [(0, 0)] * (len(shape) - len(pad) // 2) + [(pad[i], pad[i + 1]) for i in range(len(pad) - 2, -1, -2)]
    for d, (n, pair) in enumerate(zip(shape, pairs)):
        if (mode == "reflect" and max(pair) >= n) or (mode == "circular" and max(pair) > n):
            raise RuntimeError(f"Padding size should be less than{'' if mode == 'reflect' else ' or equal to'} the "
                               f"corresponding input dimension, but got: padding {pair} at dimension {d} of input "
                               f"{list(shape)}")
    return pairs


def pad(x: np.ndarray, pad: Any, mode: str = "constant", value: float = 0.0) -> np.ndarray:
    """Pad the last ``len(pad) // 2`` dims of ``x``; ``pad`` = (last_before, last_after, 2nd_last_before, ...),
    negative sizes crop. ``mode``: 'constant' (with ``value``), 'reflect', 'replicate' or 'circular'."""
    pairs = pad_widths(x.shape, tuple(pad), mode)
    x = x[tuple(slice(max(-b, 0), n + min(a, 0)) for (b, a), n in zip(pairs, x.shape))]
    widths = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode=PAD_MODES[mode])  # type: ignore[call-overload]

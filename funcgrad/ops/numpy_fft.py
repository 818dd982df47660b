"""``np.fft`` on Tensors: each transform is a product with its DFT matrix along the axis, so its derivatives
of every order, forward mode and jit come from ``matmul`` (O(n^2) per axis: meant for the modest lengths of
code that differentiates through a transform). Lengths ``n``/``s``, ``axis``/``axes`` and ``norm`` ('backward',
'ortho', 'forward') mean what they mean in NumPy; ``irfft`` reads the input as the half spectrum of a real
signal, as NumPy's does (the imaginary parts of the zero and Nyquist terms are ignored).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

import funcgrad.ops as F
from funcgrad.ops.numpy_functions import _data, _dtype, implements

__all__ = ["fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "fft2", "ifft2", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _scale(n: int, norm: str | None, inverse: bool) -> float:
    """The factor of a transform of length ``n``: 1 forward and 1/n inverse for 'backward' (NumPy's default),
    1/sqrt(n) both ways for 'ortho', 1/n forward and 1 inverse for 'forward'."""
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    if norm == "ortho":
        return 1 / np.sqrt(n)
    return 1 / n if (norm == "backward") == inverse else 1.0


def _resized(a: Any, n: int, axis: int) -> Any:
    """``a`` cut or zero-padded to length ``n`` along ``axis``, as NumPy's ``n=``."""
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    length = np.shape(_data(a))[axis]
    if n < length:
        return a[(slice(None),) * axis + (slice(0, n),)]
    if n > length:
        widths = [0] * (2 * np.ndim(_data(a)))
        widths[2 * (np.ndim(_data(a)) - 1 - axis) + 1] = n - length  # torch's pad order: last dim first
        return F.pad(a, tuple(widths), "constant")
    return a


def _along(a: Any, axis: int, matrix: np.ndarray) -> Any:
    """``a`` times ``matrix`` along ``axis`` (sum_j a_j M_jk), in NumPy's precision: complex64 for float32,
    float16 and complex64 inputs, complex128 otherwise."""
    precision = np.result_type(_dtype(a), np.complex64) if _dtype(a).kind in "fc" else np.dtype(np.complex128)
    return F.movedim(F.matmul(F.movedim(a, axis, -1), matrix.astype(precision)), -1, axis)


def _dft(n: int, sign: float, columns: int | None = None) -> np.ndarray:
    """exp(sign 2 pi i j k / n) for j < n, k < columns (all n by default)."""
    k = np.arange(n if columns is None else columns)
    return np.exp(sign * 2j * np.pi * np.outer(np.arange(n), k) / n)


def _complex_transform(a: Any, n: int | None, axis: int, norm: str | None, inverse: bool) -> Any:
    (ax,) = normalize_axis_tuple(axis, np.ndim(_data(a)))
    n = np.shape(_data(a))[ax] if n is None else n
    a = _resized(a, n, ax)
    return F.mul(_along(a, ax, _dft(n, 1.0 if inverse else -1.0)), _scale(n, norm, inverse))


@implements(np.fft.fft)
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """``np.fft.fft``: y_k = sum_j a_j exp(-2 pi i j k / n)."""
    if out is not None:
        raise TypeError("np.fft.fft on Tensors does not support out=; compute without it")
    return _complex_transform(a, n, axis, norm, False)


@implements(np.fft.ifft)
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """``np.fft.ifft``: a_j = (1/n) sum_k y_k exp(2 pi i j k / n)."""
    if out is not None:
        raise TypeError("np.fft.ifft on Tensors does not support out=; compute without it")
    return _complex_transform(a, n, axis, norm, True)


@implements(np.fft.rfft)
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """``np.fft.rfft``: the first n // 2 + 1 terms of the transform of a real signal."""
    if out is not None:
        raise TypeError("np.fft.rfft on Tensors does not support out=; compute without it")
    if _dtype(a).kind == "c":
        raise TypeError("rfft of a complex input: use np.fft.fft")
    (ax,) = normalize_axis_tuple(axis, np.ndim(_data(a)))
    n = np.shape(_data(a))[ax] if n is None else n
    a = _resized(a, n, ax)
    return F.mul(_along(a, ax, _dft(n, -1.0, n // 2 + 1)), _scale(n, norm, False))


@implements(np.fft.irfft)
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None) -> Any:
    """``np.fft.irfft``: the real signal of length n (2 (m - 1) by default) whose half spectrum is ``a``:
    x_j = (1/n) Re sum_k c_k a_k exp(2 pi i j k / n), c_k = 2 but for the zero (and, n even, Nyquist) term."""
    if out is not None:
        raise TypeError("np.fft.irfft on Tensors does not support out=; compute without it")
    (ax,) = normalize_axis_tuple(axis, np.ndim(_data(a)))
    n = 2 * (np.shape(_data(a))[ax] - 1) if n is None else n
    half = n // 2 + 1
    a = _resized(a, half, ax)
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    matrix = weights[:, None] * np.exp(2j * np.pi * np.outer(np.arange(half), np.arange(n)) / n)
    return F.mul(F.real(_along(a, ax, matrix)), _scale(n, norm, True))


def _axes_and_lengths(a: Any, s: Sequence[int] | None, axes: Sequence[int] | None) -> list[tuple[int, int | None]]:
    ndim = np.ndim(_data(a))
    if axes is None:
        axes = range(-len(s), 0) if s is not None else range(ndim)
    lengths = [None] * len(axes) if s is None else list(s)
    if len(lengths) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return list(zip(normalize_axis_tuple(tuple(axes), ndim, allow_duplicate=True), lengths))


def _along_each(name: str, a: Any, s: Sequence[int] | None, axes: Sequence[int] | None, norm: str | None, out: Any,
                inverse: bool) -> Any:
    """The complex transform (``inverse``: its inverse) along each of ``axes``, as ``np.fft.<name>``."""
    if out is not None:
        raise TypeError(f"np.fft.{name} on Tensors does not support out=; compute without it")
    for ax, n in _axes_and_lengths(a, s, axes):
        a = _complex_transform(a, n, ax, norm, inverse)
    return a


@implements(np.fft.fftn)
def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None,
         out: Any = None) -> Any:
    """``np.fft.fftn``: ``fft`` along each of ``axes`` (every axis by default)."""
    return _along_each("fftn", a, s, axes, norm, out, inverse=False)


@implements(np.fft.ifftn)
def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None,
          out: Any = None) -> Any:
    """``np.fft.ifftn``: ``ifft`` along each of ``axes`` (every axis by default)."""
    return _along_each("ifftn", a, s, axes, norm, out, inverse=True)


@implements(np.fft.fft2)
def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None,
         out: Any = None) -> Any:
    """``np.fft.fft2``: ``fftn`` over the last two axes."""
    return fftn(a, s, axes, norm, out)


@implements(np.fft.ifft2)
def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None,
          out: Any = None) -> Any:
    """``np.fft.ifft2``: ``ifftn`` over the last two axes."""
    return ifftn(a, s, axes, norm, out)


def _shift(x: Any, axes: Any, inverse: bool) -> Any:
    shape = np.shape(_data(x))
    axes = tuple(range(len(shape))) if axes is None else normalize_axis_tuple(axes, len(shape))
    shifts = tuple(-(shape[ax] // 2) if inverse else shape[ax] // 2 for ax in axes)
    return F.roll(x, shifts, axes)


@implements(np.fft.fftshift)
def fftshift(x: Any, axes: Any = None) -> Any:
    """``np.fft.fftshift``: the zero frequency moved to the middle of ``axes`` (every axis by default)."""
    return _shift(x, axes, False)


@implements(np.fft.ifftshift)
def ifftshift(x: Any, axes: Any = None) -> Any:
    """``np.fft.ifftshift``: the inverse of ``fftshift``."""
    return _shift(x, axes, True)

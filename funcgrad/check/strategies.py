"""Hypothesis strategies for derivative tests: shapes, broadcastable shape groups, valid dims, arrays with a
dtype and a domain (positive, bounded, away from kinks) and well-conditioned matrices.

They draw plain NumPy arrays (the inputs of ``assert_grads_close``), built from hypothesis-drawn elements so
that failures shrink to small, simple values. Checking is ``properties.py``'s job.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = ["shapes", "broadcastable_shapes", "valid_dims", "arrays", "broadcastable_arrays", "finite_floats",
           "well_conditioned_matrices"]


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4) -> st.SearchStrategy:
    """Array shapes, small by default so that finite-difference Jacobians stay cheap.

    Example:
        >>> from hypothesis import find
        >>> find(shapes(1, 2), lambda s: len(s) == 2)
        (1, 1)
    """
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_shapes(n: int = 2, min_dims: int = 0, max_dims: int = 3, max_side: int = 4) -> st.SearchStrategy:
    """Tuples of ``n`` shapes that broadcast together (size-1 and missing dimensions included).

    Example:
        >>> from hypothesis import find
        >>> a, b = find(broadcastable_shapes(2), lambda s: len(np.broadcast_shapes(*s)) == 2)
        >>> np.broadcast_shapes(a, b)
        (1, 1)
    """
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=min_dims, max_dims=max_dims,
                                             max_side=max_side).map(lambda s: s.input_shapes)


def valid_dims(ndim: int, multiple: bool = False, allow_none: bool = False) -> st.SearchStrategy:
    """A dim of an ``ndim``-dimensional array, negative ones included; or a tuple of distinct dims.

    Args:
        ndim: the number of dimensions.
        multiple: draw a tuple of distinct dims (possibly empty) instead of one int.
        allow_none: also draw None (all dims, as reductions take it).

    Example:
        >>> from hypothesis import find
        >>> find(valid_dims(2), lambda d: d < 0)
        -1
    """
    if ndim == 0:
        one = st.sampled_from([0, -1])  # a 0-d array accepts dim 0 and -1, as torch
    else:
        one = st.integers(-ndim, ndim - 1)
    if multiple:  # distinct dims, each positive or negative; only () for a 0-d array, as NumPy
        dims = st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).flatmap(
            lambda ds: st.tuples(*[st.sampled_from([d, d - ndim]) for d in ds])) if ndim else st.just(())
    else:
        dims = one  # type: ignore[assignment]
    return st.one_of(st.none(), dims) if allow_none else dims


def finite_floats(min_value: float = -3.0, max_value: float = 3.0, away_from: Sequence[float] = (),
                  margin: float = 0.1, width: int = 64) -> st.SearchStrategy:
    """Floats in ``[min_value, max_value]`` at least ``margin`` from every point in ``away_from`` (kinks).

    Example:
        >>> from hypothesis import find
        >>> abs(find(finite_floats(-1, 1, away_from=[0.0]), lambda v: True)) >= 0.1
        True
    """
    if width == 32:  # bounds rounded inwards to float32, which hypothesis requires
        low, high = np.float32(min_value), np.float32(max_value)
        min_value = float(low if low >= min_value else np.nextafter(low, np.float32(np.inf)))
        max_value = float(high if high <= max_value else np.nextafter(high, np.float32(-np.inf)))
    base = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False, width=width)  # type: ignore[arg-type]
    return base.filter(lambda v: all(abs(v - k) >= margin for k in away_from)) if away_from else base


def arrays(shape: Any = None, dtype: Any = np.float64, min_value: float = -3.0, max_value: float = 3.0,
           positive: bool = False, away_from: Sequence[float] = (), margin: float = 0.1,
           layouts: bool = False) -> st.SearchStrategy:
    """Float arrays of a (drawn) shape with a domain constraint.

    Args:
        shape: a shape, a strategy of shapes, or None for ``shapes()``.
        dtype: float64 or float32.
        min_value, max_value: the bounds of the elements.
        positive: draw from ``[margin, max_value]`` instead (logs, square roots, powers).
        away_from: points to keep ``margin`` away from, e.g. ``[0.0]`` for abs and relu.
        margin: the distance from kinks and from zero.
        layouts: also draw non-contiguous arrays with the same values (transposed, strided, reversed), which the
            checks keep as they are: a derivative wrong only for some memory layout then fails.

    Example:
        >>> from hypothesis import find
        >>> x = find(arrays((2, 3), positive=True), lambda a: True)
        >>> x.shape, bool((x > 0).all())
        ((2, 3), True)
    """
    width = 32 if np.dtype(dtype) == np.float32 else 64
    low = margin if positive else min_value
    elements = finite_floats(low, max_value, away_from, margin, width)
    shape = shapes() if shape is None else shape
    drawn = hnp.arrays(np.dtype(dtype), shape, elements=elements)
    return st.tuples(drawn, st.sampled_from(_LAYOUTS)).map(lambda pair: pair[1](pair[0])) if layouts else drawn


def _strided(a: np.ndarray) -> np.ndarray:
    """``a``'s values in every other element of a buffer twice as long in the last dim."""
    if not a.ndim:
        return a
    out = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)[..., ::2]
    out[...] = a
    return out


def _contiguous(a: np.ndarray) -> np.ndarray:
    """``a``'s values in C order (a 0-d array stays 0-d, which ``np.ascontiguousarray`` makes 1-d)."""
    return np.array(a, order="C")


def _transposed(a: np.ndarray) -> np.ndarray:
    """``a``'s values in Fortran order (a transposed C array; 0-d stays 0-d, unlike ``np.asfortranarray``)."""
    return np.array(a, order="F")


def _reversed(a: np.ndarray) -> np.ndarray:
    """``a``'s values in a buffer read backwards (negative strides)."""
    return np.flip(np.flip(a).copy())


_LAYOUTS = (_contiguous, _transposed, _strided, _reversed)


def broadcastable_arrays(n: int = 2, **kwargs: Any) -> st.SearchStrategy:
    """Tuples of ``n`` arrays whose shapes broadcast together; ``kwargs`` as ``arrays``.

    Example:
        >>> from hypothesis import find
        >>> a, b = find(broadcastable_arrays(2), lambda xs: xs[0].ndim == 1)
        >>> a.shape, b.shape
        ((1,), ())
    """
    return broadcastable_shapes(n).flatmap(lambda ss: st.tuples(*[arrays(s, **kwargs) for s in ss]))


def well_conditioned_matrices(n: int | st.SearchStrategy = st.integers(1, 4), batch_shape: tuple[int, ...] = (),
                              symmetric_positive: bool = False, dtype: Any = np.float64) -> st.SearchStrategy:
    """Square matrices with bounded condition number: ``M + (n + 1) I`` with ``M`` in [-1, 1] is strictly
    diagonally dominant by rows and columns with margin 1, so its singular values lie in ``[1, 2n + 1]`` and
    its condition number is at most ``2n + 1``.

    Args:
        n: the size, or a strategy of sizes.
        batch_shape: leading batch dimensions.
        symmetric_positive: symmetrise ``M`` first, which makes the matrix symmetric positive definite.
        dtype: float64 or float32.

    Example:
        >>> from hypothesis import find
        >>> a = find(well_conditioned_matrices(3, symmetric_positive=True), lambda m: m[0, 1] != 0)
        >>> bool(np.all(np.linalg.eigvalsh(a) > 0))
        True
    """
    sizes = n if isinstance(n, st.SearchStrategy) else st.just(n)

    def build(m: np.ndarray) -> np.ndarray:
        size = m.shape[-1]
        if symmetric_positive:
            m = (m + np.swapaxes(m, -1, -2)) / 2
        return (m + (size + 1) * np.eye(size)).astype(dtype)

    return sizes.flatmap(lambda k: hnp.arrays(np.float64, (*batch_shape, k, k),
                                              elements=finite_floats(-1.0, 1.0)).map(build))

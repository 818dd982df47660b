"""Named helpers for derivative rules longer than one line, each with its math in the docstring.

Every helper is written with funcgrad ops (``F.*``) and operators, so it works on arrays (the
fast backward path) and on Tensors (``create_graph=True``, which records it for higher derivatives).
Gradients ``g`` may carry extra leading batch dimensions; helpers index dims from the end.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.ops as F


def pow_base_grad(g: Any, x: Any, y: Any) -> Any:
    """d(x**y)/dx = y * x**(y-1); 0 where y == 0 (so 0**0 has gradient 0, as torch)."""
    if isinstance(y, int | float) and not isinstance(y, bool):
        return g * (y * x ** (y - 1)) if y != 0 else g * 0 * x
    return F.where(F.eq(y, 0), 0.0, g * y * x ** (y - 1))


def pow_exponent_grad(g: Any, x: Any, y: Any, out: Any) -> Any:
    """d(x**y)/dy = x**y * log(x); taken as 0 where x == 0 and y >= 0 (as torch)."""
    mask = F.logical_and(F.eq(x, 0), F.ge(y, 0))
    return F.where(mask, 0.0, g * out * F.log(F.where(mask, 1.0, x)))


def select_grad(g: Any, chosen: Any) -> Any:
    """Gradient through a selection: g where ``chosen`` is true, 0 elsewhere."""
    return F.where(chosen, g, 0.0)


def tie_split(g: Any, x: Any, y: Any, pick_x: Any) -> Any:
    """Gradient of maximum/minimum w.r.t. x: g where x wins, g/2 on ties (as torch)."""
    return F.where(F.eq(x, y), g / 2, F.where(pick_x, g, 0.0))


def clamp_grad(g: Any, x: Any, min: Any, max: Any) -> Any:  # noqa: A002
    """d clamp(x)/dx = 1 inside [min, max] (bounds included, as torch), 0 outside."""
    inside = np.True_
    if min is not None:
        inside = F.logical_and(inside, F.ge(x, min))
    if max is not None:
        inside = F.logical_and(inside, F.le(x, max))
    return F.where(inside, g, 0.0)


def clamp_bound_grad(g: Any, x: Any, bound: Any, other: Any, is_min: bool) -> Any:
    """d clamp(x, min, max)/d bound: g where the bound is the active one (strictly), else 0."""
    active = F.lt(x, bound) if is_min else F.gt(x, bound)
    if other is not None:
        active = F.logical_and(active, F.le(bound, other) if is_min else F.ge(bound, other))
    return F.where(active, g, 0.0)


def expand_to(g: Any, shape: tuple[int, ...], to: tuple[int, ...]) -> Any:
    """Broadcast ``g`` of shape ``batch + shape`` up to ``batch + to`` (inverse of ``sum_to``)."""
    batch = tuple(g.shape[: len(g.shape) - len(shape)])
    lead = len(to) - len(shape)
    return F.broadcast_to(F.reshape(g, batch + (1,) * lead + tuple(shape)), batch + tuple(to))


def zeros(g: Any) -> Any:
    """A zero gradient shaped like ``g`` (for piecewise-constant ops: sign, floor, round)."""
    return np.zeros(np.shape(g), g.dtype)


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """``dim`` (None, an int or a sequence, negatives allowed) as sorted non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int | np.integer) else tuple(dim)
    out = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {d})")
        out.append(d % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def unreduce(g: Any, shape: tuple[int, ...], dim: Any, keepdim: bool) -> Any:
    """Spread the gradient of a reduction over ``dim`` back over the reduced input of ``shape``.

    g: (*batch, *reduced_shape) -> (*batch, *shape), each input element getting its output's g.
    """
    if not keepdim:
        g = F.reshape(g, tuple(g.shape[: len(g.shape) - _reduced_ndim(shape, dim)]) +
                      kept_shape(shape, dim))
    batch = tuple(g.shape[: len(g.shape) - len(shape)])
    return F.broadcast_to(g, batch + tuple(shape))


def kept_shape(shape: tuple[int, ...], dim: Any) -> tuple[int, ...]:
    """The shape a reduction over ``dim`` gives with keepdim=True."""
    axes = normalize_dims(dim, len(shape))
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reduced_ndim(shape: tuple[int, ...], dim: Any) -> int:
    return len(shape) - len(normalize_dims(dim, len(shape)))


def batch_shape(g: Any, core: Any) -> tuple[int, ...]:
    """The leading batch dims of ``g`` in front of an array like ``core`` (anything with a shape)."""
    return tuple(np.shape(g)[: np.ndim(g) - np.ndim(core)])


def from_end(dims: Any, ndim: int, g: Any = None) -> tuple[int, ...]:
    """Dims of an ``ndim``-d array counted from the end, so they hold with leading batch dims too.

    With ``g`` given, return a full permutation of g's dims: its batch dims first, unmoved.
    """
    negative = tuple(int(d) % ndim - ndim if ndim else -1 for d in dims)
    if g is None:
        return negative
    lead = np.ndim(g) - ndim
    return tuple(range(lead)) + tuple(lead + ndim + d for d in negative)


def count(shape: tuple[int, ...], dim: Any) -> int:
    """How many elements a reduction over ``dim`` combines into each output element."""
    return int(np.prod([shape[d] for d in normalize_dims(dim, len(shape))], dtype=np.int64))

"""Forward mode's Jacobians for the checks: one batched forward pass per input (identity tangents), confirmed by
unbatched ones."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.check.numerical import real_view
from funcgrad.core.tensor import Tensor

__all__ = ["forward_jacobian"]

_CONFIRMATIONS = 2  # random unbatched tangents that confirm a batched Jacobian


def forward_jacobian(func: Callable[..., Any], inputs: Sequence[Any], index: int) -> list[np.ndarray]:
    """Forward mode's Jacobian of every floating output of ``func`` w.r.t. ``inputs[index]``.

    One batched pass of identity tangents stands in for a pass per column when it reproduces the jvps of two random
    unbatched tangents (the ones users push); otherwise, it is column by column, so the verdict never depends on
    batching.

    Args:
        func: takes ``*inputs`` and returns a Tensor or a tuple.
        inputs: the arguments; ``inputs[index]`` is a float Tensor.
        index: the input to push the tangents from.

    Returns:
        One float64 matrix per floating output, rows and columns in real coordinates (``real_view``): complex
        values count twice (real, imaginary). Zeros where an output has no tangent.

    Example:
        >>> import funcgrad as fg
        >>> forward_jacobian(lambda x: x * x, (fg.tensor([1.0, 2.0]),), 0)[0]
        array([[2., 0.],
               [0., 4.]])
    """
    x = inputs[index]
    n = real_view(x.data).size  # a complex input: its real and imaginary parts are separate columns
    batched = _batched(func, inputs, index, n)
    if batched is not None and _confirmed(batched, func, inputs, index):
        return batched
    return _one_by_one(func, inputs, index, np.eye(n))


def _confirmed(batched: list[np.ndarray], func: Callable[..., Any], inputs: Sequence[Any], index: int) -> bool:
    """True when the batched Jacobians reproduce the jvps of random unbatched tangents."""
    rng = np.random.default_rng(2)
    for _ in range(_CONFIRMATIONS):
        u = rng.standard_normal(batched[0].shape[1] if batched else 0)
        for block, column in zip(batched, _one_by_one(func, inputs, index, u[None])):
            if not np.allclose(column[:, 0], block @ u, rtol=1e-6, atol=1e-9 * max(1.0, np.abs(block).max(initial=0))):
                return False
    return True


def _as_tangents(x: Tensor, directions: np.ndarray) -> np.ndarray:
    """Directions (k, x's real size) as k tangents of ``x`` (complex: pairs of real coordinates)."""
    return np.ascontiguousarray(directions, dtype=x.data.real.dtype).view(x.dtype).reshape((len(directions), *x.shape))


def _batched(func: Callable[..., Any], inputs: Sequence[Any], index: int, n: int) -> list[np.ndarray] | None:
    """The Jacobians by one batched pass of the ``n`` identity tangents, or None if it fails."""
    try:
        return [t.T for t in _tangents(func, inputs, index, _as_tangents(inputs[index], np.eye(n)))]
    except Exception:  # any failure to batch: one direction at a time decides
        return None


def _one_by_one(func: Callable[..., Any], inputs: Sequence[Any], index: int,
                directions: np.ndarray) -> list[np.ndarray]:
    """``J @ directions.T`` per floating output (real coordinates), one unbatched pass per direction."""
    per = [_tangents(func, inputs, index, t) for t in _as_tangents(inputs[index], directions)]
    return [np.stack([p[j] for p in per], axis=1) for j in range(len(per[0]))] if per else []


def _tangents(func: Callable[..., Any], inputs: Sequence[Any], index: int, tangent: np.ndarray) -> list[np.ndarray]:
    """The tangent of every floating output (float64, real coordinates, with ``tangent``'s batch dim if any)."""
    x = inputs[index]
    lead = tangent.shape[:tangent.ndim - x.ndim]
    with forward_ad.dual_level():
        args = list(inputs)
        args[index] = forward_ad.make_dual(x, tangent)
        result = func(*args)
        outputs = [o for o in (result if isinstance(result, tuple | list) else (result,))
                   if isinstance(o, Tensor) and o.dtype.kind in "fc"]
        found = []
        for out in outputs:
            t = forward_ad.unpack_dual(out).tangent
            size = real_view(out.data).size
            # a real tangent of a complex output (real x + complex z, pushed from x) has zero imaginary parts
            found.append(np.zeros(lead + (size,)) if t is None else
                         real_view(t.data.astype(np.promote_types(t.dtype, out.dtype), copy=False))
                         .astype(np.float64).reshape(lead + (size,)))
    return found

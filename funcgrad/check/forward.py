"""Forward mode's Jacobians for the checks: one batched forward pass per input (identity tangents), confirmed by
unbatched ones; each output's tangent must have the output's shape and a dtype it can have."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.check.numerical import real_view
from funcgrad.core.tensor import Tensor

__all__ = ["forward_jacobian", "jvps", "TangentError"]

_CONFIRMATIONS = 2  # random unbatched tangents that confirm a batched Jacobian


class TangentError(ValueError):
    """A forward-mode rule gave output ``output_index`` a tangent of the wrong shape or dtype."""

    def __init__(self, output_index: int, message: str) -> None:
        super().__init__(message)
        self.output_index = output_index


def forward_jacobian(func: Callable[..., Any], inputs: Sequence[Any], index: int,
                     exact_dtypes: bool = False) -> list[np.ndarray]:
    """Forward mode's Jacobian of every floating output of ``func`` w.r.t. ``inputs[index]``.

    One batched pass of identity tangents stands in for a pass per column when it reproduces the jvps of two random
    unbatched tangents (the ones users push); otherwise, it is column by column, so the verdict never depends on
    batching.

    Args:
        func: takes ``*inputs`` and returns a Tensor or a tuple.
        inputs: the arguments; ``inputs[index]`` is a float Tensor.
        index: the input to push the tangents from.
        exact_dtypes: a tangent must have its output's precision too (float32 for a float32 output).

    Returns:
        One float64 matrix per floating output, rows and columns in real coordinates (``real_view``): complex
        values count twice (real, imaginary). Zeros where an output has no tangent.

    Raises:
        TangentError: an unbatched tangent has a shape other than its output's, is complex for a real output, is
            not floating point, or (``exact_dtypes``) has another precision.

    Example:
        >>> import funcgrad as fg
        >>> forward_jacobian(lambda x: x * x, (fg.tensor([1.0, 2.0]),), 0)[0]
        array([[2., 0.],
               [0., 4.]])
    """
    x = inputs[index]
    n = real_view(x.data).size  # a complex input: its real and imaginary parts are separate columns
    try:
        batched = jvps(func, inputs, index, np.eye(n), batched=True, exact_dtypes=exact_dtypes)
    except Exception:  # any failure to batch: one direction at a time decides
        batched = None
    if batched is not None and _confirmed(batched, func, inputs, index, exact_dtypes):
        return batched
    return jvps(func, inputs, index, np.eye(n), batched=False, exact_dtypes=exact_dtypes)


def jvps(func: Callable[..., Any], inputs: Sequence[Any], index: int, directions: np.ndarray, *, batched: bool,
         exact_dtypes: bool = False) -> list[np.ndarray]:
    """``J @ directions.T`` per floating output of ``func`` w.r.t. ``inputs[index]`` (real coordinates).

    Args:
        func, inputs, index, exact_dtypes: as ``forward_jacobian``.
        directions: ``(k, real size of the input)``, in real coordinates.
        batched: push the ``k`` tangents as one batch in one pass, else one pass per direction.

    Raises:
        TangentError: a tangent has the wrong shape or dtype (see ``forward_jacobian``).
    """
    tangents = _as_tangents(inputs[index], directions)
    if batched:
        return [t.T for t in _tangents(func, inputs, index, tangents, exact_dtypes)]
    per = [_tangents(func, inputs, index, t, exact_dtypes) for t in tangents]
    return [np.stack([p[j] for p in per], axis=1) for j in range(len(per[0]))] if per else []


def _confirmed(batched: list[np.ndarray], func: Callable[..., Any], inputs: Sequence[Any], index: int,
               exact_dtypes: bool) -> bool:
    """True when the batched Jacobians reproduce the jvps of random unbatched tangents."""
    rng = np.random.default_rng(2)
    for _ in range(_CONFIRMATIONS):
        u = rng.standard_normal(batched[0].shape[1] if batched else 0)
        for block, column in zip(batched, jvps(func, inputs, index, u[None], batched=False,
                                               exact_dtypes=exact_dtypes)):
            if not np.allclose(column[:, 0], block @ u, rtol=1e-6, atol=1e-9 * max(1.0, np.abs(block).max(initial=0))):
                return False
    return True


def _as_tangents(x: Tensor, directions: np.ndarray) -> np.ndarray:
    """Directions (k, x's real size) as k tangents of ``x`` (complex: pairs of real coordinates)."""
    return np.ascontiguousarray(directions, dtype=x.data.real.dtype).view(x.dtype).reshape((len(directions), *x.shape))


def _tangents(func: Callable[..., Any], inputs: Sequence[Any], index: int, tangent: np.ndarray,
              exact_dtypes: bool) -> list[np.ndarray]:
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
        for j, out in enumerate(outputs):
            t = forward_ad.unpack_dual(out).tangent
            if t is not None:
                _validate(j, t, out, lead, exact_dtypes)
            size = real_view(out.data).size
            # a real tangent of a complex output (real x + complex z, pushed from x) has zero imaginary parts
            found.append(np.zeros(lead + (size,)) if t is None else
                         real_view(t.data.astype(np.promote_types(t.dtype, out.dtype), copy=False))
                         .astype(np.float64).reshape(lead + (size,)))
    return found


def _validate(j: int, tangent: Tensor, out: Tensor, lead: tuple[int, ...], exact_dtypes: bool) -> None:
    """Raise a ``TangentError`` unless ``tangent`` can be output ``j``'s (with ``lead`` batch dims)."""
    if tangent.shape != lead + out.shape:
        batch = f" with a batch of {lead[0]} in front" if lead else ""
        raise TangentError(j, f"has shape {list(tangent.shape)} while the output has shape {list(out.shape)}{batch}:"
                           " the jvp must return a tangent of its output's shape")
    if tangent.dtype.kind == "c" and out.dtype.kind != "c":
        raise TangentError(j, f"has dtype {tangent.dtype} while the output is real ({out.dtype}): the tangent of a "
                           "real output is real. Fix the jvp rule that makes it complex (return .real if its "
                           "imaginary part is meant to be zero)")
    if tangent.dtype.kind not in "fc":
        raise TangentError(j, f"has dtype {tangent.dtype} while the output has dtype {out.dtype}: a tangent is "
                           "floating point; cast it in the jvp")
    if exact_dtypes and np.finfo(tangent.dtype).dtype != np.finfo(out.dtype).dtype:
        raise TangentError(j, f"has dtype {tangent.dtype} while the output has dtype {out.dtype}: cast the "
                           "tangent in the jvp (check_grad_dtypes=True)")

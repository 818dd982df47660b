"""Finite-difference derivatives: full Jacobians (``jacobian_fd``), directional ones (``jvp_fd``) and the
jumps in the derivative that reveal kinks
(``derivative_jumps``).

A step is a float (PyTorch's fixed central difference) or ``"auto"``: a step per dtype and input scale with two
Richardson extrapolations, whose difference (plus the rounding noise) is returned as an error estimate; where they
do not converge (a step far too large for the function), Ridders' ladder from that step down (``steps.py``). This
module only measures; comparing with autograd is ``gradcheck``'s job.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import no_grad
from funcgrad.check.steps import derivative
from funcgrad.core.tensor import Tensor
from funcgrad.functional._blocks import Progress

__all__ = ["Step", "evaluate", "jacobian_fd", "jvp_fd", "derivative_jumps", "auto_step", "real_view", "real_shape",
           "Cells", "perturbable", "COMPLEX_COORDINATES"]

Step = float | str
_UNCONVERGED = 1e-3  # eps="auto": a relative error estimate beyond this sends the shift down a ladder of steps
COMPLEX_COORDINATES = ("complex values are compared as (real, imaginary) pairs: a complex tensor's last coordinate "
                       "is 0 for the real part, 1 for the imaginary part")  # (reports say so when one is complex)
_Shifted = Callable[[float], list[np.ndarray]]


def real_view(a: np.ndarray) -> np.ndarray:
    """``a`` flattened, a complex array as its (real, imaginary) pairs: the real coordinates that checks
    perturb and compare separately, as PyTorch's. Shares memory with a contiguous ``a``."""
    flat = np.ascontiguousarray(a).reshape(-1)  # (a broadcast view would reshape to a 0-stride one)
    return flat.view(flat.real.dtype) if flat.dtype.kind == "c" else flat


def real_shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a`` in real coordinates: a trailing (real, imaginary) dim for complex values."""
    return tuple(a.shape) + ((2,) if a.dtype.kind == "c" else ())


class Cells:
    """The real coordinates of a non-contiguous array in ``real_view``'s order, read and written in place (a
    contiguous array has them as a flat view): what finite differences perturb, whatever the strides."""

    def __init__(self, a: np.ndarray) -> None:
        real = a.real  # a view with a's strides, also for complex a (its real parts)
        if a.dtype.kind == "c":  # (..., 2): each element's real and imaginary parts, in place
            real = np.lib.stride_tricks.as_strided(real, a.shape + (2,), real.strides + (real.itemsize,))
        self._flat = real.flat
        self.size, self.dtype = real.size, real.dtype

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, k: Any) -> Any:
        return self._flat[k]

    def __setitem__(self, k: Any, value: Any) -> None:
        self._flat[k] = value

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self._flat.copy().astype(dtype or self.dtype, copy=False)

    def copy(self) -> np.ndarray:
        return self._flat.copy()

    def astype(self, dtype: Any) -> np.ndarray:
        return self._flat.copy().astype(dtype)


def perturbable(a: np.ndarray) -> np.ndarray | Cells:
    """``a``'s real coordinates (``real_view``'s order) as something written in place: a flat view of a contiguous
    ``a``, ``Cells`` otherwise."""
    flat = real_view(a)
    return flat if not flat.size or np.shares_memory(flat, a) else Cells(a)


def evaluate(func: Callable[..., Any], inputs: Sequence[Any]) -> list[np.ndarray]:
    """The floating-point Tensor outputs of ``func(*inputs)`` as flat real arrays (``real_view``).

    Runs without recording a graph: finite differences need values only.
    """
    with no_grad():
        return [v.copy() for v in _values(func(*inputs))]


def auto_step(x: np.ndarray | Cells) -> np.ndarray:
    """The ``eps="auto"`` base step per element: ``finfo(dtype).eps ** (1/5) * max(1, |x|)``.

    The fifth root balances the O(h⁴) truncation error of one Richardson step against rounding noise.

    Example:
        >>> float(auto_step(np.zeros(1, np.float64))[0]) < float(auto_step(np.zeros(1, np.float32))[0])
        True
    """
    return float(np.finfo(x.dtype).eps) ** 0.2 * np.maximum(1.0, np.abs(x.astype(np.float64)))


def _central(shifted: _Shifted, h: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Central difference at step ``h`` and its rounding noise, both in float64."""
    plus, minus = shifted(h), shifted(-h)
    values, noise = [], []
    for p, m in zip(plus, minus):
        p64, m64 = p.astype(np.float64), m.astype(np.float64)
        values.append((p64 - m64) / (2 * h))
        noise.append(float(np.finfo(p.dtype).eps) * np.maximum(np.abs(p64), np.abs(m64)) / h)
    return values, noise


def _derivative(shifted: _Shifted, h: float, auto: bool,
                applied: Callable[[float], float] = float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The derivative along the shift and an error estimate (zero for a fixed step, as PyTorch); ``applied``: the
    shift the input's dtype really makes of ``t`` (for the ladder's small steps)."""
    d1, noise = _central(shifted, h)
    if not auto:
        return d1, [np.zeros_like(d) for d in d1]
    d2, _ = _central(shifted, h / 2)
    d4, _ = _central(shifted, h / 4)
    # two Richardson extrapolations cancel the h² term; their gap bounds the error of the first one
    r1 = [(4 * b - a) / 3 for a, b in zip(d1, d2)]
    r2 = [(4 * b - a) / 3 for a, b in zip(d2, d4)]
    errors = [np.abs(b - a) + 4 * n for a, b, n in zip(r1, r2, noise)]
    if all(np.all(e <= _UNCONVERGED * np.abs(v).max(initial=0.0)) for e, v in zip(errors, r2)):
        return r2, errors
    return _laddered(shifted, h, r2, errors, applied)


def _laddered(shifted: _Shifted, h: float, values: list[np.ndarray], errors: list[np.ndarray],
              applied: Callable[[float], float]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Where Richardson from ``h`` did not converge (``h`` far too large for the function: softmax of float32 inputs
    near 1000 has h = 41), Ridders' ladder of halving steps from ``h`` down, element by element the better
    estimate."""
    eps = max((float(np.finfo(o.dtype).eps) for o in shifted(0.0)), default=0.0)
    ladder = derivative(lambda t: (np.concatenate([o.astype(np.float64) for o in shifted(t)] or [np.zeros(0)]),
                                   applied(t)), h, eps)
    cuts = np.cumsum([v.size for v in values])[:-1]
    better = [(np.where(e2 < e, v2, v), np.minimum(e2, e)) for v, e, v2, e2 in
              zip(values, errors, np.split(ladder.value, cuts), np.split(ladder.error, cuts))]
    return [v for v, _ in better], [e for _, e in better]


def _applied(x: Any) -> Callable[[float], float]:
    """The shift that moving ``x`` (a scalar in its dtype) by ``t`` really makes: ``x + t`` rounded, minus ``x``."""
    def shift(t: float) -> float:
        return float(x + t) - float(x)
    return shift


def _column_shift(func: Callable[..., Any], inputs: Sequence[Any], flat: np.ndarray | Cells, k: int) -> _Shifted:
    """Evaluate ``func`` with element ``k`` of ``flat`` moved by ``t`` (and put back)."""
    def shifted(t: float) -> list[np.ndarray]:
        orig = flat[k].copy()
        flat[k] = orig + t
        try:
            return evaluate(func, inputs)
        finally:
            flat[k] = orig
    return shifted


def jacobian_fd(func: Callable[..., Any], inputs: Sequence[Any], index: int,
                eps: Step = 1e-6, progress: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The Jacobians of every output w.r.t. ``inputs[index]`` by central differences, one column per element.

    Args:
        func: the function; its floating-point Tensor outputs are differentiated.
        inputs: its arguments; ``inputs[index]`` is a contiguous Tensor, perturbed in place and restored.
        index: which argument to perturb.
        eps: the step, or ``"auto"``.
        progress: show a progress bar over the columns.

    Returns:
        ``(jacobians, errors)``: per output a float64 ``(out.size, in.size)`` matrix and an error estimate.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor([1.0, 2.0])
        >>> jac, _ = jacobian_fd(lambda t: t * t, (x,), 0)
        >>> np.round(jac[0], 6)
        array([[2., 0.],
               [0., 4.]])
    """
    flat = perturbable(inputs[index].data)
    centre = evaluate(func, inputs)
    sizes = [o.size for o in centre]
    bar = Progress(flat.size, f"finite differences of input {index}", progress)
    try:
        if eps != "auto":
            jacobians = _fixed_step_columns(func, inputs, flat, float(eps), centre, bar)
            return jacobians, [np.zeros_like(jac) for jac in jacobians]
        steps = auto_step(flat)
        columns = []
        for k in range(flat.size):
            columns.append(_derivative(_column_shift(func, inputs, flat, k), float(steps[k]), True,
                                       _applied(flat[k])))
            bar.update(1)
    finally:
        bar.close()
    return ([np.stack([c[0][j] for c in columns], axis=1) if columns else np.zeros((n, 0))
             for j, n in enumerate(sizes)],
            [np.stack([c[1][j] for c in columns], axis=1) if columns else np.zeros((n, 0))
             for j, n in enumerate(sizes)])


def _fixed_step_columns(func: Callable[..., Any], inputs: Sequence[Any], flat: np.ndarray | Cells, h: float,
                        centre: list[np.ndarray], bar: Progress) -> list[np.ndarray]:
    """PyTorch's central differences ``(f(x + h e_k) - f(x - h e_k)) / 2h``, written column by column into the
    Jacobians (float64, in real coordinates): the hot loop of slow mode, so one grad-mode switch
    and no per-column allocation beyond f's own."""
    jacobians = [np.empty((c.size, flat.size), np.promote_types(c.dtype, np.float64)) for c in centre]
    k, orig = 0, None
    try:
        with no_grad():
            for k in range(flat.size):
                orig = flat[k].copy()
                flat[k] = orig + h
                plus = [p.copy() for p in _values(func(*inputs))]  # a copy: an output may be a view of the input
                flat[k] = orig - h
                for jac, p, m in zip(jacobians, plus, _values(func(*inputs))):
                    np.subtract(p, m, out=jac[:, k], casting="unsafe")
                flat[k] = orig
                bar.update(1)
    finally:
        if orig is not None:
            flat[k] = orig
    for jac in jacobians:
        jac /= 2 * h
    return jacobians


def _values(outs: Any) -> list[np.ndarray]:
    """The floating-point Tensor outputs among ``outs`` as flat real arrays (``real_view``; views, not copies)."""
    outs = tuple(outs) if isinstance(outs, tuple | list) else (outs,)
    return [real_view(o.data) for o in outs if isinstance(o, Tensor) and o.dtype.kind in "fc"]


def jvp_fd(func: Callable[..., Any], inputs: Sequence[Any], index: int, u: np.ndarray,
           eps: Step = 1e-6) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``J u`` for every output, with one directional central difference along ``u`` in ``inputs[index]`` (both
    in real coordinates, ``real_view``).

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor([1.0, 2.0])
        >>> jvp, _ = jvp_fd(lambda t: t * t, (x,), 0, np.array([1.0, 1.0]))
        >>> np.round(jvp[0], 6)
        array([2., 4.])
    """
    x = perturbable(inputs[index].data)
    orig = x.copy()
    h = float(auto_step(np.array([np.abs(orig).max(initial=0.0)], orig.dtype))[0]) if eps == "auto" else float(eps)

    def shifted(t: float) -> list[np.ndarray]:
        x[...] = orig + t * u.reshape(-1)
        try:
            return evaluate(func, inputs)
        finally:
            x[...] = orig

    return _derivative(shifted, h, eps == "auto")


def derivative_jumps(func: Callable[..., Any], inputs: Sequence[Any], index: int, k: int,
                     h: float) -> list[np.ndarray]:
    """Jumps in the derivative of every output along element ``k`` of ``inputs[index]`` within ``h``.

    The gap between the forward and backward one-sided differences is about ``h f''`` for a smooth function,
    so it halves with the step; when the stencil straddles a kink it stays at the jump. An element whose gap
    does not shrink (and rises above the rounding noise) reports its gap; the others report 0, and so do all
    elements when two evaluations at the same point differ.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor([1e-7, 1.0])
        >>> [round(float(j), 1) for j in derivative_jumps(lambda t: fg.abs(t), (x,), 0, 0, 1e-6)[0]]
        [1.6, 0.0]
    """
    shifted = _column_shift(func, inputs, perturbable(inputs[index].data), k)
    centre = shifted(0.0)
    if any(not np.array_equal(c, a, equal_nan=True) for c, a in zip(centre, shifted(0.0))):
        return [np.zeros(c.size) for c in centre]  # jitter of a non-deterministic function would look like kinks

    def gap(step: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
        plus, minus = shifted(step), shifted(-step)
        gaps = [(p.astype(np.float64) - 2 * c.astype(np.float64) + m.astype(np.float64)) / step
                for p, c, m in zip(plus, centre, minus)]
        noise = [4 * float(np.finfo(c.dtype).eps) * np.abs(c.astype(np.float64)) / step for c in centre]
        return gaps, noise

    (big, _), (small, noise) = gap(h), gap(h / 2)
    return [np.where((np.abs(s) > 0.75 * np.abs(b)) & (np.abs(s) > 8 * n), s, 0.0)
            for b, s, n in zip(big, small, noise)]

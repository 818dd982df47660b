"""Finite differences whose steps fit the input, with error estimates: the numerical side of three-valued checks.

``derivative`` runs Ridders' method: central differences along a shift at a ladder of halving steps, combined in
a Richardson tableau, keeping per output element the entry whose estimated error (the gap to its neighbours in
the tableau, never below the rounding noise of the difference) is smallest. ``first_step`` picks the top of the
ladder per element from the dtype and the magnitude; ``kink`` tells a derivative jump within the step from
curvature. This module measures only; deciding pass, fail or inconclusive is ``judge.py``'s job.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Shift", "Rounding", "Estimate", "first_step", "derivative", "finest", "slopes", "Kink", "kink"]

# t -> (every checked output at the shifted input, flattened into one float64 vector; the shift really applied)
Shift = Callable[[float], tuple[np.ndarray, float]]
# t -> the absolute rounding error of every checked output at the shifted input, as far as measured
Rounding = Callable[[float], np.ndarray]

_SHRINK = 2.0
_LEVELS = 16  # steps tried: down to h0 / 2**15
_NOISE = 4.0  # rounding noise estimates are taken this many times over
_FINEST = 1024  # spacings of the input in the finest step that tests resolution


@dataclass
class Estimate:
    """A derivative along a shift, per output element.

    Attributes:
        value: the best extrapolated derivative.
        error: its estimated absolute error (truncation from the tableau, and rounding).
        noise: the rounding noise of one central difference at the last step tried.
        step: the last (smallest) step tried.
    """

    value: np.ndarray
    error: np.ndarray
    noise: np.ndarray
    step: float


def first_step(x: np.ndarray) -> np.ndarray:
    """The top step of the ladder per element: ``finfo(dtype).eps ** (1/5) * max(|x|, 1)``.

    Relative for large values (so ``x = 1e8`` is shifted by far more than its spacing) and sized by the dtype
    (float32 starts about 50 times higher than float64). The fifth root balances rounding against the error left
    after one Richardson step; the ladder then halves it as far as the function needs.

    Example:
        >>> [float(np.round(h, 8)) for h in first_step(np.array([0.5, 1e8]))]
        [0.0007401, 74009.59797414]
    """
    return float(np.finfo(x.dtype).eps) ** (1 / 5) * np.maximum(np.abs(x.astype(np.float64)), 1.0)


def _central(shifted: Shift, h: float, eps: float, floor: float = 0.0,
             realized: Any = 0.0) -> tuple[np.ndarray, np.ndarray] | None:
    """One central difference and its rounding noise, or None when the dtype cannot move the input by ``h``;
    ``floor``: the outputs' absolute spacing near zero (their subnormals), where ``eps`` relative underestimates it;
    ``realized``: the outputs' rounding as measured, where it exceeds ``eps`` relative (see ``derivative``)."""
    plus, up = shifted(h)
    minus, down = shifted(-h)
    span = up - down
    if span <= 0:
        return None
    # rounding noise, also where both sides are bit-identical: a change below the outputs' spacing is lost
    noise = _NOISE * (np.maximum(eps * np.maximum(np.abs(plus), np.abs(minus)), realized) + floor) / span
    with np.errstate(invalid="ignore", over="ignore"):
        return (plus - minus) / span, noise


def derivative(shifted: Shift, h0: float, eps: float,
               decided: Callable[[np.ndarray, np.ndarray], bool] | None = None,
               rounding: Rounding | None = None) -> Estimate:
    """The derivative along ``shifted`` by Ridders' extrapolation from step ``h0`` down.

    Args:
        shifted: evaluates the outputs at the input shifted by ``t`` (see ``Shift``).
        h0: the largest step.
        eps: the relative rounding error of the outputs (their dtype's machine epsilon).
        decided: called with ``(value, error)`` after each step; True stops the ladder early.
        rounding: the outputs' realized absolute rounding at shift ``t`` (measured against a more precise evaluation):
            where the function cancels (``x * x - x * x * 1.0001``), it is far above ``eps`` times the outputs. The
            largest seen so far on the ladder counts at every step (at one point it may vanish by chance).

    Returns:
        The estimate; elements that never saw a finite difference (NaN everywhere) have infinite error.

    Example:
        >>> x = np.array([1e-3])
        >>> def shifted(t):
        ...     return np.log(x + t), t
        >>> est = derivative(shifted, 1e-5, float(np.finfo(float).eps))
        >>> bool(abs(est.value[0] - 1e3) < 1e-6) and bool(est.error[0] < 1e-5)
        True
    """
    row: list[np.ndarray] = []
    value = error = noise = None
    realized: Any = 0.0
    h = h0
    for _ in range(_LEVELS):
        if rounding is not None:
            realized = np.maximum(realized, np.maximum(rounding(h), rounding(-h)))
        central = _central(shifted, h, eps, realized=realized)
        if central is None:
            break
        d, noise = central
        if value is None:
            value, error = d.copy(), np.full(d.shape, np.inf)
        if not np.all(np.isfinite(d)):  # the step crossed a singularity or left the domain: restart smaller
            row = []
            h /= _SHRINK
            continue
        new = [d]
        factor = _SHRINK ** 2
        for prev in row:
            new.append((new[-1] * factor - prev) / (factor - 1))
            factor *= _SHRINK ** 2
        for k in range(1, len(new)):
            gap = np.maximum(np.abs(new[k] - new[k - 1]), np.abs(new[k] - row[k - 1]))
            gap = np.maximum(gap, noise)
            better = gap < error
            value = np.where(better, new[k], value)
            error = np.where(better, gap, error)  # type: ignore[assignment]
        row = new
        if decided is not None and len(row) > 1 and decided(value, error):  # type: ignore[arg-type]
            break
        h /= _SHRINK
    if value is None:  # not even one step: the dtype cannot resolve any shift
        empty = shifted(0.0)[0]
        return Estimate(np.zeros(empty.shape), np.full(empty.shape, np.inf), np.full(empty.shape, np.inf), h)
    return Estimate(value, error, noise, h)  # type: ignore[arg-type]


def finest(shifted: Shift, x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """The central difference at the finest step that still spans many (``_FINEST``) spacings of the input
    element ``x`` (a 0-d array in its dtype), and its rounding noise: where it disagrees with a converged estimate
    beyond that noise, the function changes on a scale the dtype cannot resolve. At ``x = 0`` the step is
    subnormal and so are the outputs of a function vanishing there: their absolute spacing counts in the noise
    (``0.64 x`` at 0 is resolved, only rounded to a thousandth).

    Example:
        >>> x = np.float32(1e8)
        >>> def shifted(t):
        ...     moved = np.float32(x + np.float32(t))
        ...     return np.array([np.sin(moved)], dtype=np.float64), float(moved) - float(x)
        >>> value, noise = finest(shifted, x, float(np.finfo(np.float32).eps))
        >>> bool(abs(value[0] - np.cos(1e8)) > 100 * noise[0])
        True
    """
    h = _FINEST * float(np.spacing(np.abs(x)))
    central = _central(shifted, h, eps, float(np.finfo(x.dtype).smallest_subnormal))
    if central is None:
        empty = shifted(0.0)[0]
        return np.full(empty.shape, np.nan), np.full(empty.shape, np.inf)
    return central


def slopes(shifted: Shift, h: float) -> np.ndarray:
    """The larger of the two one-sided slopes ``|f(x ± h) - f(x)| / h``: how fast the function moves near the point
    at the scale of step ``h``, the scale a derivative's error is resolved against where the derivative and the
    function vanish at the point (``x * x`` at 0: the tableau gives 0 ± 1e-23, about nothing).

    Example:
        >>> x = np.array([0.0])
        >>> float(slopes(lambda t: (np.square(x + t), t), 1e-3)[0])
        0.001
    """
    centre = shifted(0.0)[0]
    (plus, up), (minus, down) = shifted(h), shifted(-h)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return np.maximum(np.abs(plus - centre) / abs(up), np.abs(centre - minus) / abs(down))


@dataclass
class Kink:
    """Where the derivative jumps within a step, per output element.

    Attributes:
        jump: the jump of the derivative (0 where the function is smooth within the step).
        left, right: the one-sided derivatives, the ends of the subgradient interval.
        distance: an estimate of the kink's distance from the point.
    """

    jump: np.ndarray
    left: np.ndarray
    right: np.ndarray
    distance: np.ndarray


def kink(shifted: Shift, h: float, eps: float) -> Kink:
    """Compare one-sided differences at steps ``h`` and ``h/2``: their gap halves with the step where the function
    is smooth (it is about ``h f''``) and stays at the jump where a kink lies within the step.

    Example:
        >>> x = np.array([1e-7])
        >>> found = kink(lambda t: (np.abs(x + t), t), 1e-6, float(np.finfo(float).eps))
        >>> round(float(found.jump[0]), 3), round(float(found.distance[0]), 9)
        (2.0, 1e-07)
    """
    centre = shifted(0.0)[0]

    def one_sided(step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        plus, up = shifted(step)
        minus, down = shifted(-step)
        with np.errstate(invalid="ignore", over="ignore"):
            right, left = (plus - centre) / up, (centre - minus) / -down
        return right - left, left, right

    noise = _NOISE * 2 * eps * np.abs(centre) / h
    big, _, _ = one_sided(h)
    small, left, right = one_sided(h / 2)
    is_kink = (np.abs(small) > 0.6 * np.abs(big)) & (np.abs(small) > 4 * noise) & np.isfinite(small)
    with np.errstate(invalid="ignore", divide="ignore"):
        # a kink at distance d < step leaves a gap of jump * (1 - d / step): two steps give jump and d
        jump = (big * h - small * h / 2) / (h / 2)
        distance = np.clip(h - big * h / np.where(jump == 0, np.inf, jump), 0.0, h / 2)
    return Kink(np.where(is_kink, jump, 0.0), left, right, np.where(is_kink, distance, np.inf))

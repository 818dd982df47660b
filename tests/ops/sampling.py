"""Helpers for the per-family sample files: ``S`` (one call), ``A``/``P`` (seeded arrays), ``away_from``.

``S(*args, **kwargs)`` is one call. Float arrays among the args become float64 leaves that require grad;
everything else (ints, bools, Python numbers, integer arrays) is passed as is. ``A(*shape)`` draws a
float array from a fixed seed, within ``[lo, hi]``; ``P(*shape)`` a positive one; ``C(*shape)`` a complex one
(complex arrays become complex128 leaves).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

_rng = np.random.default_rng(1234)


def A(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    """A float64 array of ``shape`` with values in [lo, hi]."""
    return _rng.uniform(lo, hi, size=shape)


def P(*shape: int) -> np.ndarray:
    """A float64 array of ``shape`` with values in [0.5, 2]."""
    return A(*shape, lo=0.5, hi=2.0)


def C(*shape: int, lo: float = -2.0, hi: float = 2.0, im: float = 2.0) -> np.ndarray:
    """A complex128 array of ``shape``: real parts in [lo, hi], imaginary parts in [-im, im]."""
    return A(*shape, lo=lo, hi=hi) + 1j * A(*shape, lo=-im, hi=im)


@dataclass
class S:
    """One sample call: positional and keyword arguments."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs


def away_from(values: np.ndarray, points: tuple[float, ...], gap: float = 0.1) -> np.ndarray:
    """``values`` nudged at least ``gap`` away from each kink in ``points``."""
    out = values.copy()
    for p in points:
        near = np.abs(out - p) < gap
        out[near] = p + gap * np.where(out[near] >= p, 1, -1)
    return out



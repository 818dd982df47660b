"""steps.py: Ridders' ladder near singularities and domain edges, rounding-aware errors, kinks and resolution."""
from __future__ import annotations

import numpy as np

from funcgrad.check.steps import derivative, finest, first_step, kink

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)


def shift(f, x: np.ndarray):
    """Shift every element of ``x`` together, in x's dtype; the applied shift is what the dtype allowed."""
    def shifted(t: float):
        moved = (x + x.dtype.type(t)).astype(x.dtype)
        return np.asarray(f(moved), dtype=np.float64), float(moved[0]) - float(x[0])
    return shifted


def test_ladder_leaves_the_domain_and_converges_next_to_a_singularity() -> None:
    x = np.array([1e-3])
    est = derivative(shift(np.log, x), 0.5, EPS64)  # the first steps cross 0: NaN, restarted smaller
    assert abs(est.value[0] - 1e3) < 1e-6 and est.error[0] < 1e-5 and abs(est.value[0] - 1e3) <= est.error[0] * 4


def test_float32_error_estimate_covers_the_truth() -> None:
    x = np.array([2.75], dtype=np.float32)
    est = derivative(shift(lambda t: 1 / (1 + np.exp(-t)), x), float(first_step(x)[0]), EPS32)
    truth = np.exp(-2.75) / (1 + np.exp(-2.75)) ** 2
    assert abs(est.value[0] - truth) <= 4 * est.error[0] + 1e-6 and est.error[0] < 1e-3 * truth


def test_relative_steps_for_large_values() -> None:
    assert first_step(np.array([1e8]))[0] > 1e4 * np.spacing(1e8)
    assert first_step(np.array([1.0], np.float32))[0] > 10 * first_step(np.array([1.0]))[0]


def test_kink_distance_and_one_sided_derivatives() -> None:
    x = np.array([3e-8])
    found = kink(shift(lambda t: np.maximum(t, 0.0), x), 1e-6, EPS64)
    assert abs(found.jump[0] - 1) < 1e-6 and abs(found.distance[0] - 3e-8) < 1e-9
    assert 0 <= found.left[0] < 0.1 and found.right[0] == 1.0  # a one-sided step across the kink mixes slopes
    smooth = kink(shift(np.sin, np.array([0.3])), 1e-6, EPS64)
    assert smooth.jump[0] == 0 and np.isinf(smooth.distance[0])


def test_finest_step_exposes_a_function_the_dtype_cannot_resolve() -> None:
    x = np.array([1e8], dtype=np.float32)
    value, noise = finest(shift(np.sin, x), x[0], EPS32)
    assert abs(value[0] - np.cos(np.float64(x[0]))) > 100 * noise[0]
    value, noise = finest(shift(np.sin, np.array([0.3])), np.float64(0.3), EPS64)
    assert abs(value[0] - np.cos(0.3)) <= noise[0]

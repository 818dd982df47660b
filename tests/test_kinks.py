"""Derivatives at kinks and NaN follow PyTorch where NumPy's conventions differ (the list is in the header of
funcgrad/ops/derivatives/elementwise.py): each case is checked against the documented value and, when torch is
installed, against torch itself."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg

nan = np.nan

# name: (function of the module m (funcgrad or torch), inputs, expected gradients of out.sum())
CASES: dict[str, tuple[Callable[..., Any], list[list[float]], list[list[float]]]] = {
    "relu'(nan) = 1, relu'(0) = 0": (lambda m, x: m.relu(x), [[nan, 0.0, -1.0, 1.0]], [[1.0, 0.0, 0.0, 1.0]]),
    "abs'(nan) = abs'(0) = 0": (lambda m, x: m.abs(x), [[nan, 0.0, -0.0, -2.0]], [[0.0, 0.0, 0.0, -1.0]]),
    "max() with a NaN": (lambda m, x: x.max(), [[1.0, nan, 3.0]], [[0.0, 1.0, 0.0]]),
    "max() with two NaNs": (lambda m, x: x.max(), [[nan, nan, 3.0]], [[0.5, 0.5, 0.0]]),
    "min() with a NaN": (lambda m, x: x.min(), [[1.0, nan, 3.0]], [[0.0, 1.0, 0.0]]),
    "max(dim) with a NaN": (lambda m, x: x.max(0).values, [[1.0, nan, 3.0]], [[0.0, 1.0, 0.0]]),
    "maximum(nan, 1)": (lambda m, x, y: m.maximum(x, y), [[nan, 1.0, nan, 2.0], [1.0, nan, nan, 2.0]],
                        [[1.0, 1.0, 1.0, 0.5], [1.0, 1.0, 1.0, 0.5]]),
    "minimum(nan, 1)": (lambda m, x, y: m.minimum(x, y), [[nan, 1.0, 3.0], [1.0, nan, 2.0]],
                        [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]),
    "atan2 at (0, 0)": (lambda m, x, y: m.atan2(x, y), [[0.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 0.0]]),
    "vector_norm(ord=0.5) at 0": (lambda m, x: m.linalg.vector_norm(x, ord=0.5), [[0.0, 0.0]], [[0.0, 0.0]]),
    "vector_norm(ord=0.5), one 0": (lambda m, x: m.linalg.vector_norm(x, ord=0.5), [[0.0, 1.0]], [[0.0, 1.0]]),
    "vector_norm(ord=3) at 0": (lambda m, x: m.linalg.vector_norm(x, ord=3), [[0.0, 0.0]], [[0.0, 0.0]]),
    "norm(p=0.5) at 0": (lambda m, x: m.norm(x, 0.5), [[0.0, 0.0]], [[0.0, 0.0]]),
    "clamp'(nan) = 0": (lambda m, x: m.clamp(x, 0.0, 1.0), [[nan, 0.0, 1.0]], [[0.0, 1.0, 1.0]]),
    "clamp with tensor bounds, min >= max": (lambda m, x, lo, hi: m.clamp(x, lo, hi),
                                             [[0.3, -0.7, 0.45, 0.2, 0.1, 0.9], [-0.5, -0.5, 0.5, 0.2, 0.5, 0.5],
                                              [-0.9, -0.9, 0.4, 0.2, 0.5, 0.5]],
                                             [[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                                              [1.0, 1.0, 1.0, 0.0, 0.0, 1.0]]),  # max's was 0 where max < min
    "logaddexp at inf": (lambda m, x, y: m.logaddexp(x, y), [[np.inf, -np.inf, 0.0], [0.0, 0.0, np.inf]],
                         [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]),  # was nan: exp(x - out) = exp(inf - inf)
}


def _gradients(module: Any, f: Callable[..., Any], values: list[list[float]]) -> tuple[list[np.ndarray], Any]:
    leaves = [module.tensor(np.array(v), requires_grad=True) for v in values]
    out = f(module, *leaves)
    out.sum().backward()
    return [np.asarray(leaf.grad.detach().numpy() if module is not fg else leaf.grad.data) for leaf in leaves], out


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_follows_the_documented_convention(name: str) -> None:
    f, values, expected = CASES[name]
    grads, _ = _gradients(fg, f, values)
    for got, want in zip(grads, expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_and_value_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    f, values, _ = CASES[name]
    grads, out = _gradients(fg, f, values)
    torch_grads, torch_out = _gradients(torch, f, values)
    for got, want in zip(grads, torch_grads):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out.data, torch_out.detach().numpy())


def test_sign_of_nan_is_zero_as_torch() -> None:
    np.testing.assert_array_equal(fg.sign(fg.tensor([nan, -2.0, 0.0, 3.0])).data, [0.0, -1.0, 0.0, 1.0])
    np.testing.assert_array_equal(fg.sign(np.array([nan])), [0.0])


def test_forward_mode_uses_the_same_conventions() -> None:
    from funcgrad.autograd import forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(fg.tensor([nan, 0.0, 2.0]), np.ones(3))
        np.testing.assert_array_equal(fwAD.unpack_dual(fg.relu(x)).tangent.data, [1.0, 0.0, 1.0])
        np.testing.assert_array_equal(fwAD.unpack_dual(fg.abs(x)).tangent.data, [0.0, 0.0, 1.0])

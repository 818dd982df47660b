"""Differences from PyTorch found in code written for torch, each fixed and kept fixed: the expected value or error
is asserted as it is (without torch), and compared with torch itself where torch is installed."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad as fg


# ----- copysign: the sign's source gets a zero gradient, not none ------------------------------------------------
def _copysign_grads(lib: Any, x: list[float], other: list[list[float]]) -> list[np.ndarray]:
    """First and second derivatives of sum(copysign(x, other)) with respect to both inputs, by ``lib``'s grad
    (``lib`` is funcgrad or torch)."""
    a = lib.tensor(np.array(x), requires_grad=True)
    b = lib.tensor(np.array(other), requires_grad=True)
    first = lib.autograd.grad(lib.copysign(a, b).sum(), (a, b), create_graph=True)
    second = lib.autograd.grad(first[0].sum(), (a, b))
    return [np.asarray(g.detach().numpy()) for g in first + second]


def test_copysign_gives_other_a_zero_gradient_of_first_and_second_order() -> None:
    x, other = [1.0, -2.0, 0.0, 3.0], [[-1.0, 3.0, -1.0, -0.0]]
    grad_x, grad_other, grad_xx, grad_x_other = _copysign_grads(fg, x, other)
    np.testing.assert_array_equal(grad_x, [-1.0, -1.0, 0.0, -1.0])  # 0 at x = 0; -0.0 counts as negative
    np.testing.assert_array_equal(grad_other, np.zeros((1, 4)))
    np.testing.assert_array_equal(grad_xx, np.zeros(4))
    np.testing.assert_array_equal(grad_x_other, np.zeros((1, 4)))
    assert fg.copysign(fg.tensor([1.0], requires_grad=True), fg.tensor([-1.0])).grad_fn.name() == "CopysignBackward0"
    torch = pytest.importorskip("torch")
    x[2] = 0.5  # (torch's second derivative at x = 0 is NaN: its rule divides the result by x)
    for ours, theirs in zip(_copysign_grads(fg, x, other), _copysign_grads(torch, x, other)):
        np.testing.assert_array_equal(ours, theirs)

"""Nested reverse mode at orders 2-6 through ops whose rules hide a higher-order term: against closed forms
and mpmath (torch, where it is right, too)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.func as ff
import funcgrad.nn.functional as FF


def nested(f: Callable[[Any], Any], x: np.ndarray, orders: int) -> list[np.ndarray]:
    """Derivatives 1..orders of the elementwise f by nested ``grad(g.sum(), x, create_graph=True)``."""
    t = fg.tensor(x, requires_grad=True)
    g, out = f(t), []
    for _ in range(orders):
        (g,) = fg.autograd.grad(g.sum(), t, create_graph=True)
        out.append(g.data.copy())
    return out


def test_x_to_the_x_at_orders_1_to_6_against_mpmath() -> None:
    """d/dx of x ** y is y * x ** (y - 1), 0 where y == 0; masking every y == 0 (as torch does) cut the
    derivative in y of that term, 1 there: x ** x at x = 1 had third derivative 2 (torch's too), not 3."""
    mpmath = pytest.importorskip("mpmath")
    points = [0.7, 1.0, 2.0]
    with mpmath.workdps(30):
        expected = [[float(mpmath.diff(lambda t: t ** t, p, n)) for p in points] for n in range(1, 7)]
    np.testing.assert_allclose(nested(lambda x: x ** x, np.array(points), 6), expected, rtol=1e-10)


def test_the_mixed_second_derivative_of_x_to_the_y_at_y_zero() -> None:
    """d2/dx dy x ** y = x ** (y - 1) (1 + y log x): 1 / x at y = 0 (it was 0, as torch gives)."""
    x, y = fg.tensor(np.array([1.5, 0.5]), requires_grad=True), fg.tensor(np.zeros(2), requires_grad=True)
    (dx,) = fg.autograd.grad((x ** y).sum(), x, create_graph=True)
    (dxdy,) = fg.autograd.grad(dx.sum(), y)
    np.testing.assert_allclose(dxdy.data, 1 / np.array([1.5, 0.5]))
    zero = fg.zeros(1, requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 * 0 ** -1, masked
        (d0,) = fg.autograd.grad((zero ** fg.zeros(1)).sum(), zero)  # 0 ** 0: gradient 0 in the base, as torch
    np.testing.assert_array_equal(d0.data, [0.0])


def test_third_derivative_of_abs_cubed_where_gradients_of_both_kinds_meet() -> None:
    """A gradient slot the engine had summed into an array of its own then got a Tensor: np.add(array, Tensor,
    out=array) raised "np.add on Tensors does not support the keyword(s) casting"."""
    x = np.array([0.5, -1.0, 2.0, -3.0])
    got = nested(lambda t: fg.abs(t) ** 3, x, 3)
    np.testing.assert_allclose(got, [3 * x * np.abs(x), 6 * np.abs(x), 6 * np.sign(x)])


# A JVP rule that calls a two-operand op on one operand's tangent (C(dx, w) + C(x, dw)) meets, one level up, a
# tangent with an inner batch dim next to a primal without it: each tangent's batch must stay in front of the
# other operand's own batch dims (the convolutions and polar broadcast them dim for dim: jacfwd(jacfwd) paired
# equal-sized batches silently, jacfwd(jacrev) raised an einsum size error).
SECOND_ORDER: dict[str, Callable[[Any], Any]] = {
    "conv1d": lambda x: FF.conv1d(x[:6].reshape(1, 1, 6), x[6:9].reshape(1, 1, 3), x[9:10]).reshape(-1) ** 2,
    "conv2d": lambda x: FF.conv2d(x[:6].reshape(1, 1, 2, 3), x[6:10].reshape(1, 1, 2, 2), padding=1).reshape(-1),
    "conv1d groups": lambda x: FF.conv1d(x[:8].reshape(1, 2, 4), x[8:12].reshape(2, 1, 2), groups=2).reshape(-1),
    "conv_transpose1d": lambda x: FF.conv_transpose1d(x[:6].reshape(1, 1, 6), x[6:9].reshape(1, 1, 3),
                                                      stride=2).reshape(-1),
    "polar": lambda x: fg.real(fg.polar(fg.abs(x[:6]), x[6:])),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_forward_over_forward_and_reverse_of_bilinear_rules(name: str) -> None:
    f = SECOND_ORDER[name]
    x = np.random.default_rng(7).standard_normal(12) * 0.8
    expected = np.asarray(ff.jacrev(ff.jacrev(f))(x))
    for transform in (ff.jacfwd(ff.jacfwd(f)), ff.jacfwd(ff.jacrev(f)), ff.jacrev(ff.jacfwd(f))):
        np.testing.assert_allclose(np.asarray(transform(x)), expected, rtol=1e-10, atol=1e-12)


def test_the_conv_hessian_against_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(7).standard_normal(12)

    def f(m: Any, F: Any, t: Any) -> Any:
        return (F.conv1d(t[:6].reshape(1, 1, 6), t[6:9].reshape(1, 1, 3), t[9:10]) ** 2).sum() * m.sin(t[10:]).sum()

    expected = torch.autograd.functional.hessian(lambda t: f(torch, torch.nn.functional, t), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ff.hessian(lambda t: f(fg, FF, t))(x), expected, rtol=1e-10, atol=1e-12)

"""Nested reverse mode at orders 2-6 through ops whose rules hide a higher-order term: against closed forms
and mpmath (torch, where it is right, too)."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.func as ff
import funcgrad.nn.functional as FF
from funcgrad.check import gradcheck, gradgradcheck
from funcgrad.func import directional_derivative


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


# ----- logcumsumexp: its VJP and JVP are ops linear in the gradient (tangent), exact where it is 0 ----------------
# h(x) = sum((logcumsumexp(x) - c)^2) at x = _X, where the residual and so the g reaching logcumsumexp's VJP is 0:
# the VJP was summed in log space of g, a function of g whose derivative in g is 0 at g = 0, so H came out 0
_X = np.array([0.3, -1.2, 2.0, 0.9, -0.4])
_C = np.logaddexp.accumulate(_X)
_J = np.tril(np.exp(_X[None, :] - _C[:, None]))  # d logcumsumexp(x)_j / d x_i = exp(x_i - out_j), i <= j
_H = 2 * _J.T @ _J  # h's Hessian at _X: the residual's second derivatives are multiplied by it, 0
_V = np.array([1.0, -0.5, 0.25, 2.0, -1.0])


def _h(x: Any) -> Any:
    return fg.sum((fg.logcumsumexp(x, 0) - fg.tensor(_C)) ** 2)


def test_logcumsumexp_hessian_where_the_residual_is_zero() -> None:
    """Forward-over-reverse, reverse-over-reverse (jacrev seeds one-hot rows, exact zeros, as one batch of
    gradients) and is_grads_batched itself give 2 J^T J, as central differences of the gradient do."""
    x = fg.tensor(_X)
    step = 1e-6
    differences = np.stack([(ff.grad(_h)(fg.tensor(_X + step * e)).data - ff.grad(_h)(fg.tensor(_X - step * e)).data)
                            / (2 * step) for e in np.eye(5)])
    np.testing.assert_allclose(differences, _H, atol=1e-8)
    t = fg.tensor(_X, requires_grad=True)
    (g,) = fg.autograd.grad(_h(t), t, create_graph=True)
    (rows,) = fg.autograd.grad(g, t, fg.eye(5), is_grads_batched=True)
    for H in (ff.hessian(_h)(x), ff.jacrev(ff.grad(_h))(x), rows):
        np.testing.assert_allclose(H.data, _H, rtol=1e-12)


def test_logcumsumexp_hvp_forward_over_reverse_and_reverse_over_reverse_agree() -> None:
    x, v = fg.tensor(_X), fg.tensor(_V)
    forward = ff.jvp(ff.grad(_h), (x,), (v,))[1]
    reverse = ff.grad(lambda y: fg.sum(ff.grad(_h)(y) * v))(x)
    for hvp in (forward, reverse):
        np.testing.assert_allclose(hvp.data, _H @ _V, rtol=1e-12)


def test_logcumsumexp_third_order_gradgradcheck_where_the_residual_is_zero() -> None:
    """gradcheck and gradgradcheck of a gradient (second and third derivatives) of a matrix scanned along dim 1,
    the residual 0 in row 0."""
    x = np.stack([_X, 0.5 * _X[::-1]], 1).T  # (2, 5), scanned along dim 1
    c = np.logaddexp.accumulate(x, axis=1) + np.array([[0.0], [0.3]])  # row 0: residual 0, row 1: not
    f = ff.grad(lambda y: fg.sum(fg.sin(fg.logcumsumexp(y, 1) - fg.tensor(c)) ** 2 + fg.logcumsumexp(y * y, 1)))
    assert gradcheck(f, (fg.tensor(x, requires_grad=True),))
    assert gradgradcheck(f, (fg.tensor(x, requires_grad=True),))


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_logcumsumexp_directional_derivatives_of_jet_and_nested_modes_agree(n: int) -> None:
    """Taylor mode (logcumsumexp's rule runs its JVP op on the series) against nested reverse mode; order 2 is
    v^T H v."""
    taylor = directional_derivative(_h, n)(_X, _V)
    t = fg.tensor(0.0, requires_grad=True)
    y = _h(fg.tensor(_X) + t * fg.tensor(_V))
    for _ in range(n):
        (y,) = fg.autograd.grad(y, t, create_graph=True)
    np.testing.assert_allclose(float(taylor), float(y.data), rtol=1e-10)
    if n == 2:
        np.testing.assert_allclose(float(taylor), _V @ _H @ _V, rtol=1e-12)


def test_logcumsumexp_tangent_is_zero_where_the_output_is_minus_infinity() -> None:
    """A leading run of -inf stays -inf when moved: its tangent is 0, as torch's forward AD and the Taylor rule give
    (the JVP op gave NaN there, exp(-inf - -inf)); a batch of tangents (jacfwd) too. Later entries keep theirs."""
    torch = pytest.importorskip("torch")
    x, t = np.array([-np.inf, -np.inf, 0.5, 1.0]), np.array([1.0, 2.0, 3.0, -4.0])
    expected = torch.func.jvp(lambda y: torch.logcumsumexp(y, 0), (torch.tensor(x),), (torch.tensor(t),))[1]
    forward = ff.jvp(lambda y: fg.logcumsumexp(y, 0), (fg.tensor(x),), (fg.tensor(t),))[1]
    taylor = directional_derivative(lambda y: fg.logcumsumexp(y, 0), 1)(x, t)
    for tangent in (forward.data, taylor, ff.jacfwd(lambda y: fg.logcumsumexp(y, 0))(fg.tensor(x)).data @ t):
        np.testing.assert_allclose(tangent, expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("ord", [2, 3, 1.5, 0.5])  # (p = 1, inf: piecewise linear, no graph to order 3)
def test_vector_norm_is_flat_at_the_zero_vector_at_every_order(ord: float) -> None:
    """vector_norm's rule masked only the division by a zero norm (x / 1 for p = 2), so nested reverse mode and
    forward-over-reverse gave it the Hessian I at x = 0, where norm gives 0; now 0 at every order, as norm and
    torch's mask of the first derivative (torch's own second derivative there is NaN for p = 2, 1.5 and 0.5, 0 for
    p = 1, 3 and inf). A row away from 0 keeps torch's derivatives."""
    torch = pytest.importorskip("torch")
    x = np.array([[0.0, 0.0, 0.0], [0.3, -0.5, 1.2]])
    got = nested(lambda t: fg.linalg.vector_norm(t, ord, 1), x, 3)
    t = torch.tensor(x, requires_grad=True)
    g, expected = torch.linalg.vector_norm(t, ord, 1), []
    for _ in range(3):
        (g,) = torch.autograd.grad(g.sum(), t, create_graph=True, allow_unused=True, materialize_grads=True)
        expected.append(g.detach().numpy(force=True)[1])
    for k in range(3):
        np.testing.assert_array_equal(got[k][0], 0.0)
        np.testing.assert_allclose(got[k][1], expected[k], rtol=1e-12)
    hessian = ff.hessian(lambda v: fg.linalg.vector_norm(v, ord))(fg.tensor(x[0]))
    np.testing.assert_array_equal(hessian.data, np.zeros((3, 3)))


def test_sinc_at_orders_1_to_5_near_zero_against_its_series() -> None:
    """sinc's rule (cos(pi x) - sinc(x)) / x cancels near 0: at x = 1e-8 nested reverse mode gave -5.4 for the second
    derivative (-pi^2 / 3) and 6e8 for the third (pi^4 x / 5 = 2e-7); below 1/2 it is sinc''s power series."""
    x = np.array([1e-8, -1e-5, 1e-3, 0.0, 0.3, -0.49, 0.51, 2.3])
    k = np.arange(40)
    coefficients = (-1.0) ** k * np.pi ** (2 * k) / np.array([math.factorial(2 * j + 1) for j in k])  # of x^(2k)

    def derivative(n: int, at: float) -> float:
        """The n-th derivative of sinc's series at ``at`` (40 terms: exact to rounding for |at| < 3)."""
        powers = 2 * k
        kept = powers >= n
        factors = np.array([math.perm(int(p), n) for p in powers[kept]], float)
        return float(np.sum(coefficients[kept] * factors * at ** (powers[kept] - n)))

    for n, got in enumerate(nested(fg.sinc, x, 5), start=1):
        expected = np.array([derivative(n, v) for v in x])
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12 * np.pi ** n)

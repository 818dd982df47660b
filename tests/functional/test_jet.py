"""Taylor mode (funcgrad.func.jet) and the derivatives built on it: known series, agreement with nested
reverse mode on drawn elementwise chains and small linear-algebra programs, high orders against a
high-precision reference, JAX's conventions, errors, and jit.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.func as ff
from funcgrad.core.dispatch import DISPATCH
from funcgrad.func import directional_derivative, jet, jit, nth_derivative
from funcgrad.func.jet import NoTaylorRule
from funcgrad.ops.registry import OPS
from tests.budget import examples

rng = np.random.default_rng(3)


def nested(f: Callable[[fg.Tensor], fg.Tensor], x: np.ndarray, orders: int) -> list[np.ndarray]:
    """Derivatives 1..orders of an elementwise f by nested reverse mode (the reference)."""
    t = fg.tensor(x, requires_grad=True)
    g, out = f(t), []
    for _ in range(orders):
        (g,) = fg.autograd.grad(g.sum(), t, create_graph=True)
        out.append(g.data)
    return out


def nested_directional(f: Callable[[fg.Tensor], fg.Tensor], x: np.ndarray, v: np.ndarray,
                       orders: int) -> list[np.ndarray]:
    """d^k/dt^k f(x + t v) at t = 0, k = 1..orders, by reverse-over-reverse in the scalar t."""
    t = fg.tensor(0.0, requires_grad=True)
    y, out = f(fg.tensor(x) + t * fg.tensor(v)), []
    for _ in range(orders):
        if not y.requires_grad:  # a polynomial ran out of derivatives
            out.append(np.zeros(y.shape))
            continue
        u = fg.zeros(y.shape, requires_grad=True)
        (dt,) = fg.autograd.grad(y, t, grad_outputs=u, create_graph=True)
        (y,) = fg.autograd.grad(dt, u, create_graph=True)
        out.append(y.data)
    return out


# ----- known series ---------------------------------------------------------------------------------------
def derivatives_at_zero(f: Callable[[Any], Any], K: int) -> np.ndarray:
    _, terms = jet(f, (np.array(0.0),), ([np.array(1.0)] + [np.array(0.0)] * (K - 1),))
    return np.array([float(t) for t in terms])


@pytest.mark.parametrize("f, expected", [
    (fg.exp, [1.0] * 8),
    (fg.sin, [1, 0, -1, 0, 1, 0, -1, 0]),
    (fg.cos, [0, -1, 0, 1, 0, -1, 0, 1]),
    (lambda x: 1 / (1 - x), [math.factorial(k) for k in range(1, 9)]),
    (fg.log1p, [(-1) ** (k - 1) * math.factorial(k - 1) for k in range(1, 9)]),
    # tanh t = t - t^3/3 + 2 t^5/15 - 17 t^7/315: the k-th derivative is k! times the coefficient
    (fg.tanh, [1, 0, -2, 0, 16, 0, -272, 0]),
    (fg.atan, [1, 0, -2, 0, 24, 0, -720, 0]),
    (lambda x: fg.sqrt(1 + x), [0.5, -0.25, 0.375, -0.9375, 3.28125, -14.765625, 81.2109375, -527.87109375]),
])
def test_known_series_at_zero(f: Callable[[Any], Any], expected: list[float]) -> None:
    np.testing.assert_allclose(derivatives_at_zero(f, 8), expected, rtol=1e-12, atol=1e-12)


def test_jax_docstring_example_sin_of_a_cubic_curve() -> None:
    """jax.experimental.jet's example: the curve x(t) = t^3 at t0 = 0.5 pushed through sin."""
    x0, x1, x2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    y0, (y1, y2) = jet(fg.sin, (x0,), ((x1, x2),))
    assert np.isclose(y0, np.sin(x0))
    assert np.isclose(y1, np.cos(x0) * x1)
    assert np.isclose(y2, -np.sin(x0) * x1 ** 2 + np.cos(x0) * x2)


def test_normalized_coefficients_without_factorial_scaling() -> None:
    _, terms = jet(fg.exp, (np.array(0.0),), ((np.array(1.0), np.array(0.0), np.array(0.0)),), factorial_scaled=False)
    np.testing.assert_allclose([float(t) for t in terms], [1.0, 0.5, 1 / 6])


# ----- against nested reverse mode --------------------------------------------------------------------------
SAFE: dict[str, Callable[[Any], Any]] = {  # each maps any real to a bounded value, smooth everywhere
    "sin": fg.sin, "cos": fg.cos, "tanh": fg.tanh, "sigmoid": fg.sigmoid, "atan": fg.atan, "erf": fg.erf,
    "exp(tanh)": lambda x: fg.exp(fg.tanh(x)),
    "log(2 + sin)": lambda x: fg.log(2 + fg.sin(x)),
    "sqrt(2 + cos)": lambda x: fg.sqrt(2 + fg.cos(x)),
    "1 / (2 + tanh)": lambda x: 1 / (2 + fg.tanh(x)),
    "(1.5 + sin) ** 1.5": lambda x: (1.5 + fg.sin(x)) ** 1.5,
    "x^2 / (1 + x^2)": lambda x: fg.square(x) / (1 + x * x),
    "rsqrt(1 + x^2)": lambda x: fg.rsqrt(1 + fg.square(x)),
    "asinh": fg.asinh, "sinh(tanh)": lambda x: fg.sinh(fg.tanh(x)),
    "log1p(exp(-x^2))": lambda x: fg.log1p(fg.exp(-x * x)),
}


def chain(steps: list[tuple[str, int]]) -> Callable[[Any], Any]:
    """Each step applies a SAFE op to the running value and combines it (mul, add, sub) with the input."""
    def f(x: Any) -> Any:
        y = x
        for name, how in steps:
            z = SAFE[name](y)
            y = z * x if how == 0 else z + y if how == 1 else z - 0.5 * y
        return y
    return f


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(SAFE)), st.integers(0, 2)), min_size=1, max_size=3),
       st.floats(-1.5, 1.5))
def test_jet_matches_nested_reverse_mode_on_elementwise_chains(steps: list[tuple[str, int]], start: float) -> None:
    f = chain(steps)
    x = start + np.array([0.0, 0.3, -0.4])
    expected = nested(f, x, 6)
    for n in range(1, 7):
        got = nth_derivative(f, n)(x)
        np.testing.assert_allclose(got, expected[n - 1], rtol=1e-9, atol=1e-9 * (1 + np.abs(expected[n - 1]).max()))


W = rng.standard_normal((3, 4))
PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "layer": lambda x: fg.sum(fg.tanh(W @ x + 0.5) ** 2),
    "quadratic form": lambda x: x @ (fg.outer(x, fg.sin(x)) @ x),
    "matrix product": lambda x: fg.mm(x.reshape(2, 2), fg.exp(x).reshape(2, 2)).flatten(),
    "gram": lambda x: fg.matmul(x.reshape(2, 2).T, x.reshape(2, 2)),
    "dot and mean": lambda x: fg.dot(x, fg.cos(x)) * fg.mean(x),
    "cat, stack, index": lambda x: fg.stack([fg.cat([x[:2] * x[2:], fg.exp(x[1:3])]), x * 2], 0)[:, [0, 2, 3]],
    "reductions": lambda x: fg.sum(fg.outer(x, x) ** 2, 1, True) / (2 + fg.sum(x * x)),
    "tensordot": lambda x: fg.tensordot(fg.outer(x, x), fg.outer(x, fg.sigmoid(x)), 2),
    "division by a vector": lambda x: fg.transpose(fg.outer(x, x), 0, 1) / (2 + x),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_directional_derivatives_match_nested_reverse_mode_on_linear_algebra(name: str) -> None:
    f = PROGRAMS[name]
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    expected = nested_directional(f, x, v, 5)
    for n in range(1, 6):
        got = directional_derivative(f, n)(x, v)
        np.testing.assert_allclose(got, expected[n - 1], rtol=1e-9, atol=1e-9)


def test_jet_of_several_arguments_and_a_pytree_output() -> None:
    def f(x: Any, y: Any) -> Any:
        return {"p": x * y, "q": (fg.exp(x), 3.0)}

    x0, y0 = np.array([0.5, 1.0]), np.array([2.0, -1.0])
    x1, y1 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    zero = np.zeros(2)
    out, terms = jet(f, (x0, y0), ((x1, zero, zero), (y1, zero, zero)))
    np.testing.assert_allclose(out["p"], x0 * y0)
    # x(t) y(t) = (x0 + x1 t)(y0 + y1 t): derivatives x1 y0 + x0 y1, 2 x1 y1, 0
    np.testing.assert_allclose(terms["p"][0], x1 * y0 + x0 * y1)
    np.testing.assert_allclose(terms["p"][1], 2 * x1 * y1)
    np.testing.assert_allclose(terms["p"][2], 0.0)
    np.testing.assert_allclose(terms["q"][0][2], np.exp(x0) * x1 ** 3)
    assert isinstance(terms["q"][1], list) and all(np.all(t == 0) for t in terms["q"][1])  # a constant output


# ----- high orders --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [16, 32])
def test_high_orders_of_exp_sin_against_mpmath(n: int) -> None:
    mpmath = pytest.importorskip("mpmath")
    points = [-0.7, 0.3, 1.1]
    with mpmath.workdps(60):
        expected = [float(mpmath.taylor(lambda t: mpmath.exp(mpmath.sin(t)), mpmath.mpf(p), n)[n]
                          * mpmath.factorial(n)) for p in points]
    got = nth_derivative(lambda x: fg.exp(fg.sin(x)), n)(np.array(points))
    np.testing.assert_allclose(got, expected, rtol=1e-10)


# ----- errors and fallbacks ------------------------------------------------------------------------------------
@pytest.fixture(autouse=True, scope="module")
def _angle_without_a_taylor_rule() -> Iterator[None]:
    """Every elementwise op has a Taylor rule: angle's is taken away in this module, for ``no_rule``. (Module scope:
    hypothesis refuses function-scoped fixtures.)"""
    spec = OPS["angle"]
    rule, spec.taylor = spec.taylor, None
    yield
    spec.taylor = rule


def no_rule(x: Any) -> Any:
    """0 computed by an op without a Taylor rule (angle, of a positive x, its rule taken away): it sends jet's users
    to nested reverse mode."""
    return 0 * fg.angle(x)


def test_an_op_without_a_taylor_rule_is_named_and_leaves_no_layer_installed() -> None:
    with pytest.raises(NoTaylorRule, match="'angle' has no Taylor-mode rule"):
        jet(lambda x: fg.softmax(x, 0) + no_rule(x), (np.ones(3),), ((np.ones(3),),))
    assert not DISPATCH.active
    assert isinstance(NoTaylorRule(), NotImplementedError)


def test_derivatives_fall_back_to_nested_reverse_mode_without_a_taylor_rule() -> None:
    x = np.array([1.5, 2.5])
    np.testing.assert_allclose(nth_derivative(lambda t: fg.lgamma(t) + no_rule(t), 3)(x),
                               fg.polygamma(2, fg.tensor(x)).data, rtol=1e-10)
    v = np.array([1.0, -2.0, 0.5])
    z = np.array([0.1, 0.2, 0.3])
    f = lambda x: fg.softmax(x, 0) * fg.exp(x) + no_rule(x)  # noqa: E731
    expected = nested_directional(f, z, v, 3)[2]
    np.testing.assert_allclose(directional_derivative(f, 3)(z, v), expected, rtol=1e-10)


def test_input_errors() -> None:
    with pytest.raises(ValueError, match="inconsistent lengths"):
        jet(lambda x, y: x * y, (1.0, 2.0), ((1.0,), (1.0, 0.0)))
    with pytest.raises(ValueError, match="not an array"):
        jet(fg.sin, ([1.0, 2.0],), ((1.0,),))
    with pytest.raises(ValueError, match="primal's shape"):
        jet(fg.sin, (np.ones(2),), ((np.ones(3),),))
    with pytest.raises(TypeError, match="tuples"):
        jet(fg.sin, np.ones(2), ((np.ones(2),),))
    with pytest.raises(ValueError, match="non-negative int"):
        nth_derivative(fg.sin, -1)


def test_order_zero_and_tensor_inputs() -> None:
    x = np.array([0.2, 0.4])
    np.testing.assert_allclose(nth_derivative(fg.sin, 0)(x), np.sin(x))
    out = nth_derivative(fg.sin, 2)(fg.tensor(x))
    assert isinstance(out, fg.Tensor) and not out.requires_grad
    np.testing.assert_allclose(out.data, -np.sin(x))


def test_numpy_code_goes_through_the_taylor_rules() -> None:
    """NumPy's functions on Tensors dispatch to the op table, so plain NumPy code has a jet too."""
    x = np.linspace(-1.0, 1.0, 5)
    expected = nested(lambda t: fg.exp(fg.sin(t)) * fg.tanh(t), x, 5)[4]
    np.testing.assert_allclose(nth_derivative(lambda t: np.exp(np.sin(t)) * np.tanh(t), 5)(x), expected, rtol=1e-10)


@pytest.mark.parametrize("f", [
    lambda x: fg.tanh_backward(fg.sin(x), fg.tanh(x)),         # both inputs vary along the curve
    lambda x: fg.sigmoid_backward(x * x, fg.sigmoid(x / 2)),
    lambda x: fg.tanh_backward(np.array(1.5), fg.cos(x)),      # a constant gradient
    lambda x: fg.sigmoid_backward(fg.exp(x), np.array(0.3)),   # a constant output
], ids=["tanh_backward", "sigmoid_backward", "constant g", "constant y"])
def test_the_fused_backward_ops_of_tanh_and_sigmoid_have_taylor_rules(f: Callable[[Any], Any]) -> None:
    """tanh's and sigmoid's gradients are single ops (tanh_backward, sigmoid_backward); a jet through them
    agrees with nested reverse mode."""
    x = np.linspace(-1.0, 1.0, 5)
    expected = nested(f, x, 5)
    for n in range(1, 6):
        np.testing.assert_allclose(nth_derivative(f, n)(x), expected[n - 1], rtol=1e-10, atol=1e-10)


def test_a_line_skips_its_zero_coefficients_with_the_same_result() -> None:
    """nth_derivative pushes the line x + t (degree 1); jet with explicit zero terms computes them all."""
    f = lambda x: fg.sinh(fg.exp(fg.sigmoid(fg.cos(x)))) * fg.tan(x / 2)  # noqa: E731
    x = np.linspace(-1.0, 1.0, 5)
    _, terms = jet(f, (x,), ([np.ones(5)] + [np.zeros(5)] * 5,))
    np.testing.assert_allclose(nth_derivative(f, 6)(x), terms[5], rtol=1e-12, atol=1e-12)


# ----- jit -------------------------------------------------------------------------------------------------
def test_nth_derivative_under_jit_is_recorded_and_replays_on_new_inputs() -> None:
    f = lambda x: fg.exp(fg.sin(x)) * fg.tanh(x)  # noqa: E731
    compiled = jit(nth_derivative(f, 5))
    x = np.linspace(-1.0, 1.0, 6)
    np.testing.assert_allclose(compiled(x), nested(f, x, 5)[4], rtol=1e-10, atol=1e-10)
    assert all(type(p).__name__ == "_Compiled" for p in compiled.programs.values())
    np.testing.assert_allclose(compiled(x + 0.25), nested(f, x + 0.25, 5)[4], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("r", [0, 3, 9, 12])
def test_natural_powers_at_zero(r: int) -> None:
    """x ** r for a natural r multiplies series (the recurrence divides by x_0): x ** 9 and x ** 12 at 0 gave
    NaN at every order, x ** 0 too."""
    x = np.array([0.0, -1.5, 0.5])
    got = [nth_derivative(lambda t: t ** r, n)(x) for n in range(1, 9)]
    expected = [math.perm(r, n) * x ** max(r - n, 0) if n <= r else 0 * x for n in range(1, 9)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# ----- nth_derivative is elementwise ---------------------------------------------------------------------
@pytest.mark.parametrize("f, op", [
    (lambda x: fg.sum(x) ** 2, "sum"),                   # gave 6.0 (d/dt (sum(x + t))^2), vmap(grad) gives 2 x
    (lambda x: fg.cumsum(x ** 2, 0), "cumsum"),          # gave [1, 3]: column sums of the Jacobian
    (lambda x: fg.flip(x ** 2, [0]), "flip"),            # gave [2, 1], derivatives at the other element
    (lambda x: x[::-1] ** 2, "getitem"),                 # a view of x, in another order
    (lambda x: x + 0.5 * fg.sum(x * x), "sum"),          # one-element shaped result of a mixing op, broadcast back
    (lambda x: fg.softmax(x, 0), "softmax"),
    (lambda x: (fg.lgamma(x) + no_rule(x)) * fg.mean(x), "mean"),  # nested reverse mode, the mixing op first
    (lambda x: x @ fg.tensor(np.ones((2, 2))), "matmul"),
    (lambda x: fg.tensor(np.zeros(2)).index_put((fg.tensor(np.array([1, 0])),), x), "index_put"),
], ids=["sum", "cumsum", "flip", "reversed view", "sum broadcast", "softmax", "mean (nested)", "matmul", "index_put"])
def test_nth_derivative_refuses_a_function_that_is_not_elementwise(f: Callable[[Any], Any], op: str) -> None:
    """vmap(grad(f)) applies f to each element alone; a derivative of an f mixing elements (pushed along x + t,
    or nested grad of the sum) is not that, so it is an error naming the op rather than a wrong array."""
    with pytest.raises(ValueError, match=f"the op '{op}' mixes elements of x"):
        nth_derivative(f, 2)(np.array([0.5, 1.0]))
    assert not DISPATCH.active


def test_an_in_place_write_counts_as_mixing() -> None:
    def f(x: Any) -> Any:
        y = x * 1.0
        y[0] = 2.0
        return y

    with pytest.raises(ValueError, match=r"the op 'index_put_ \(in place\)' mixes"):
        nth_derivative(f, 1)(np.array([0.5, 1.0]))


def _add_into_zeros(x: Any) -> Any:
    y = fg.zeros(2)
    y += x ** 2
    return y


def _write_a_view(x: Any) -> Any:
    y = x * 1.0
    y[0:1].mul_(3.0)
    return y


def _write_a_constant(x: Any) -> Any:
    y = x * 1.0
    y[0] = 5.0
    return y


def _read_a_written_base(x: Any) -> Any:
    y = x * 1.0
    view = y[0:1]
    y.mul_(3.0)
    return view


@pytest.mark.parametrize("f, op, expected", [
    (_add_into_zeros, "add_", [[1.0, 2.0], [2.0, 2.0]]),       # gave zeros: the series of y stayed none
    (_write_a_view, "mul_", [[3.0, 1.0], [0.0, 0.0]]),         # gave [1, 1]: the base kept its series
    (_write_a_constant, "index_put_", [[0.0, 1.0], [0.0, 0.0]]),  # gave [1, 1]
    (_read_a_written_base, "mul_", [[3.0], [0.0]]),            # gave [1]: the view kept its series
], ids=["add into zeros", "write a view", "write a constant", "read a written base"])
def test_jet_refuses_in_place_writes_of_values_with_a_series(f: Callable[[Any], Any], op: str,
                                                             expected: list[list[float]]) -> None:
    """A write into memory is not an op result the jet layer can give a series to: an error naming the op (the
    state intact), and derivatives built on jet take nested reverse mode, which follows writes."""
    x, v = np.array([0.5, 1.0]), np.ones(2)
    with pytest.raises(NoTaylorRule, match=f"in-place op '{op}'"):
        jet(f, (x,), ((v, 0 * v),))
    assert not DISPATCH.active
    for n in (1, 2):
        np.testing.assert_allclose(directional_derivative(f, n)(x, v), expected[n - 1])


@pytest.mark.parametrize("f", [
    lambda x: fg.where(x > 0.7, x ** 3, fg.sin(x)) * fg.tensor(np.array([2.0, 3.0, 4.0])),  # constant factor
    lambda x: fg.clamp(fg.exp(x), 1.0, 2.0) + fg.tensor(1.5) * x.reshape(3),              # same-shape reshape
    lambda x: fg.maximum(x, 0.8) ** 2 / (1 + fg.abs(x)),
    lambda x: fg.nn.functional.elu(x) * fg.clamp(x, max=0.9),  # None tensor arguments (clamp's min) are no input
    lambda x: x[...] ** 2 + fg.sin(x[:]),                       # views of x's elements in x's order
], ids=["where", "clamp, reshape", "maximum, abs", "elu, clamp(max=)", "x[...], x[:]"])
def test_elementwise_functions_pass_on_both_paths(f: Callable[[Any], Any]) -> None:
    x = np.array([0.5, 0.75, 1.0])
    expected = nested(f, x, 3)
    for n in (1, 2, 3):
        np.testing.assert_allclose(nth_derivative(f, n)(x), expected[n - 1], rtol=1e-12, atol=1e-12)
        nested_f = lambda t: f(t) + no_rule(t)  # noqa: E731
        np.testing.assert_allclose(nth_derivative(nested_f, n)(x), expected[n - 1], rtol=1e-12, atol=1e-12)


def test_one_element_and_constant_functions() -> None:
    """A one-element x has nothing to mix: any f of it works, its result in x's shape; a constant f has
    zero derivatives in x's shape."""
    np.testing.assert_allclose(nth_derivative(lambda x: fg.sum(fg.stack([x, x ** 3])), 2)(np.array([2.0])), [12.0])
    np.testing.assert_array_equal(nth_derivative(lambda x: fg.ones(3), 2)(np.ones(3)), np.zeros(3))
    with pytest.raises(ValueError, match="one value per element of x"):
        nth_derivative(lambda x: fg.stack([x, x]), 1)(np.array(0.5))


def test_directional_derivatives_of_a_pytree_result() -> None:
    """A tuple result gave one array of zeros shaped (2, 2); now each leaf has its derivative, on both paths."""
    x, v = np.array([0.5, 1.0]), np.array([1.0, -2.0])
    for extra in (lambda t: 0.0, lambda t: fg.sum(no_rule(t + 2))):
        def f(t: Any, extra: Callable[[Any], Any] = extra) -> Any:
            return {"sin": fg.sin(t) + extra(t), "pair": (fg.sum(t ** 3), 2.0)}

        got = directional_derivative(f, 3)(x, v)
        np.testing.assert_allclose(got["sin"], -np.cos(x) * v ** 3, rtol=1e-12)
        np.testing.assert_allclose(got["pair"][0], np.sum(6 * v ** 3), rtol=1e-12)
        np.testing.assert_array_equal(got["pair"][1], 0.0)


# ----- derivatives of derivatives, dtypes ------------------------------------------------------------------
def test_reverse_mode_over_nth_and_directional_derivatives() -> None:
    """An x requiring grad takes nested reverse mode with its graph kept: grad and jacrev of the result, and
    nth_derivative of nth_derivative, are right (they were zeros: the jet's arrays are constants)."""
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(ff.grad(lambda t: fg.sum(nth_derivative(fg.sin, 2)(t)))(x), -np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(ff.jacrev(nth_derivative(fg.sin, 1))(x), np.diag(-np.sin(x)), rtol=1e-12)
    np.testing.assert_allclose(nth_derivative(nth_derivative(fg.sin, 1), 2)(x), -np.cos(x), rtol=1e-12)
    v = np.array([1.0, -2.0])
    got = ff.grad(lambda t: fg.sum(directional_derivative(lambda u: u ** 4, 2)(t, v)))(x)
    np.testing.assert_allclose(got, 24 * x * v ** 2, rtol=1e-12)


@pytest.mark.parametrize("transform", [
    lambda g, x: ff.jacfwd(g)(x),
    lambda g, x: ff.jvp(g, (x,), (np.ones(2),)),
    lambda g, x: jet(g, (x,), ((np.ones(2),),)),
], ids=["jacfwd", "jvp", "jet"])
def test_forward_mode_over_derivatives_and_jet_under_grad_are_errors(transform: Callable[..., Any]) -> None:
    """Forward mode and jet cannot see through the arrays these compute: an error, where they gave zeros."""
    x = np.array([0.5, 1.0])
    with pytest.raises(NotImplementedError, match="x carries"):
        transform(nth_derivative(fg.sin, 1), x)
    assert not DISPATCH.active
    with pytest.raises(NotImplementedError, match="carries a gradient"):
        ff.grad(lambda t: fg.sum(fg.tensor(jet(fg.sin, (t,), ((np.ones(2),),))[1][0])))(x)


def test_a_float32_argument_gives_float32_derivatives_and_lists_are_arrays() -> None:
    x = np.array([0.5, 1.0], np.float32)
    for got in (nth_derivative(fg.sin, 2)(x), nth_derivative(lambda t: fg.sin(t) + no_rule(t), 2)(x),
                directional_derivative(fg.sin, 2)(x, np.ones(2))):
        assert got.dtype == np.float32
    np.testing.assert_allclose(nth_derivative(fg.sin, 2)(x), -np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(nth_derivative(fg.sin, 1)([0.5, 1.0]), np.cos([0.5, 1.0]))


def test_a_value_with_a_series_read_as_a_plain_array_is_an_error() -> None:
    """np.asarray(x), x.numpy(), float(x[0]), x.item(), x.tolist() inside jet made the value a constant along the
    curve (its series dropped, silently); now NoTaylorRule names it, and nth_derivative's nested reverse mode
    raises torch's "Can't call numpy()" (float() and item() warn there, as torch)."""
    x, v = np.array([0.5, 1.0]), np.ones(2)
    for f in (lambda t: np.sin(np.asarray(t)), lambda t: fg.sin(fg.tensor(t.numpy())) * t):
        with pytest.raises(NoTaylorRule, match="read as a plain NumPy array"):
            jet(f, (x,), ((v,),))
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            nth_derivative(f, 1)(x)
    for f in (lambda t: t * float(t[0]), lambda t: t * t[1].item(), lambda t: t * fg.tensor(t.tolist())):
        with pytest.raises(NoTaylorRule, match="Python number"):  # x * float(x[0]) gave the series of 0.5 x
            jet(f, (x,), ((v,),))
    assert not DISPATCH.active
    # values without a series (constants, NumPy's plain results of comparisons and arg-functions) are fine
    _, (term,) = jet(lambda t: t * np.argmax(t) + np.asarray(fg.ones(2)) * np.isclose(t, 1.0), (x,), ((v,),))
    np.testing.assert_array_equal(term, [1.0, 1.0])


def test_an_array_of_exponents_at_zero() -> None:
    """x ** r for an array r: its natural exponents by products (the recurrence divides by x_0, so x ** [2, 3]
    at 0 gave NaN where the derivatives are 2 x, 3 x^2 -> 0, 0), the others by the recurrence."""
    x = np.array([0.0, 0.0, 1.5, 0.0, -2.0])
    r = np.array([2.0, 3.0, 2.5, 0.0, 4.0])
    for n in range(1, 6):
        falling = np.prod([r - i for i in range(n)], axis=0)  # r (r - 1) ... (r - n + 1): 0 for a natural r < n
        with np.errstate(divide="ignore", invalid="ignore"):  # (0 ** -1 where the falling factorial is 0)
            expected = np.where(falling == 0, 0.0, falling * x ** (r - n))
        np.testing.assert_allclose(nth_derivative(lambda u: u ** r, n)(x), expected, rtol=1e-12)
        np.testing.assert_allclose(nth_derivative(lambda u: u ** fg.tensor(r), n)(x), expected, rtol=1e-12)
    vandermonde = directional_derivative(lambda u: u[:, None] ** np.arange(4.0), 2)
    np.testing.assert_allclose(vandermonde(np.zeros(2), np.ones(2)), [[0.0, 0.0, 2.0, 0.0]] * 2)


def test_a_real_series_meets_a_complex_one() -> None:
    """The result of a product or quotient of a real and a complex series is complex: it was allocated with the
    first operand's type, and the imaginary parts were dropped (x * z gave [1, 2] for [1 + 1.5j, 2 + 1j])."""
    x, z = np.array([0.5, 2.0]), np.array([1 + 1j, 2 - 1j])
    dx, dz = np.ones(2), np.full(2, 1j)
    np.testing.assert_allclose(jet(lambda x, z: x * z, (x, z), ((dx,), (dz,)))[1][0], dx * z + x * dz)
    np.testing.assert_allclose(jet(lambda x, z: z / x, (x, z), ((dx,), (dz,)))[1][0], (dz * x - z * dx) / x ** 2)
    np.testing.assert_allclose(jet(lambda x: 1j / x, (x,), ((dx,),))[1][0], -1j / x ** 2)
    np.testing.assert_allclose(nth_derivative(lambda u: fg.abs(u) * u, 1)(np.array([0.3 + 0.4j])), [0.68 + 0.24j])


# ----- broadcasting between arguments ----------------------------------------------------------------------
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "mul": lambda a, b: a * b, "div": lambda a, b: a / (2 + b * b), "pow": lambda a, b: (1.5 + fg.sin(a)) ** b,
    "sub": lambda a, b: a - fg.exp(b), "maximum": lambda a, b: fg.maximum(a, b) * a,
    "where": lambda a, b: fg.where(a > b, a * b, b), "matmul": lambda a, b: fg.matmul(a, fg.tanh(b)),
}
SHAPES = [((3, 1), (1, 4)), ((4,), (3, 4)), ((), (2, 3)), ((2, 4, 4), (4, 4))]


def nested_along_curves(f: Callable[..., Any], primals: list[np.ndarray], terms: list[list[np.ndarray]],
                        orders: int) -> list[np.ndarray]:
    """d^k/dt^k f(x_1(t), ...) at t = 0 for x_i(t) = x_i + sum_k terms_i[k] t^k / k!, by reverse-over-reverse in t."""
    t = fg.tensor(0.0, requires_grad=True)
    curves = [fg.tensor(p) + sum(fg.tensor(c) * t ** k / math.factorial(k) for k, c in enumerate(s, 1))
              for p, s in zip(primals, terms)]
    y, out = f(*curves), []
    for _ in range(orders):
        u = fg.zeros(y.shape, requires_grad=True)
        (dt,) = fg.autograd.grad(y, t, grad_outputs=u, create_graph=True)
        (y,) = fg.autograd.grad(dt, u, create_graph=True)
        out.append(y.data.copy())
    return out


@settings(max_examples=examples(20), deadline=None)
@given(st.sampled_from(sorted(BINARY)), st.sampled_from(SHAPES), st.integers(0, 2 ** 16), st.booleans())
def test_jet_of_two_broadcasting_arguments_matches_nested_reverse_mode(name: str, shapes: Any, seed: int,
                                                                       swap: bool) -> None:
    shapes = SHAPES[3] if name == "matmul" else shapes  # (batches of square matrices: either way round)
    shapes = shapes[::-1] if swap else shapes
    rng = np.random.default_rng(seed)
    primals = [rng.uniform(-1, 1, s) for s in shapes]
    terms = [[rng.uniform(-1, 1, s) for _ in range(4)] for s in shapes]
    f = BINARY[name]
    _, got = jet(f, primals, terms)
    for k, expected in enumerate(nested_along_curves(f, primals, terms, 4)):
        np.testing.assert_allclose(got[k], expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["exp * tanh", "x * y", "x / y", "pow", "sqrt", "erf", "sigmoid", "sum", "matmul"])
def test_jet_agrees_with_jax_jet(name: str) -> None:
    """Same signature, coefficient convention (derivatives along the curve) and results as jax.experimental.jet."""
    jax = pytest.importorskip("jax")
    from jax.experimental.jet import jet as jax_jet
    jnp = jax.numpy
    pairs: dict[str, tuple[Callable[..., Any], Callable[..., Any], int]] = {
        "exp * tanh": (lambda x: fg.exp(x) * fg.tanh(x), lambda x: jnp.exp(x) * jnp.tanh(x), 1),
        "x * y": (lambda x, y: x * y, lambda x, y: x * y, 2),
        "x / y": (lambda x, y: x / (2 + y), lambda x, y: x / (2 + y), 2),
        "pow": (lambda x, y: (2 + x) ** y, lambda x, y: (2 + x) ** y, 2),
        "sqrt": (lambda x: fg.sqrt(2 + x), lambda x: jnp.sqrt(2 + x), 1),
        "erf": (fg.erf, jax.scipy.special.erf, 1),
        "sigmoid": (fg.sigmoid, jax.nn.sigmoid, 1),
        "sum": (lambda x: fg.sum(x ** 2), lambda x: jnp.sum(x ** 2), 1),
        "matmul": (fg.matmul, jnp.matmul, 2),
    }
    ours, theirs, n_args = pairs[name]
    rng = np.random.default_rng(4)
    primals = tuple(rng.uniform(-0.9, 0.9, (3, 3)) for _ in range(n_args))
    series = tuple([rng.uniform(-1, 1, (3, 3)) for _ in range(5)] for _ in range(n_args))
    y0, terms = jet(ours, primals, series)
    with jax.enable_x64(True):
        j0, jterms = jax_jet(theirs, tuple(map(jnp.asarray, primals)), tuple(list(map(jnp.asarray, s)) for s in series))
        np.testing.assert_allclose(y0, np.asarray(j0), rtol=1e-12)
        for got, expected in zip(terms, jterms, strict=True):
            np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-10, atol=1e-12)


def test_the_modulus_of_a_complex_series() -> None:
    """|z| is not piecewise linear in a complex z: its series was its JVP applied to every coefficient, so the
    second derivative of |z + t| at 0.3 + 0.4j was 0 where it is Im(z)^2 / |z|^3 = 1.28."""
    mpmath = pytest.importorskip("mpmath")
    z = np.array([0.3 + 0.4j, -1.0 + 0.2j])
    for n in (1, 2, 3, 4):
        expected = [float(mpmath.diff(lambda t, w=w: mpmath.sqrt((w.real + t) ** 2 + w.imag ** 2), 0, n)) for w in z]
        np.testing.assert_allclose(nth_derivative(fg.abs, n)(z), expected, rtol=1e-10)
    _, (d1, d2) = jet(fg.abs, (z,), ((np.full(2, 1j), np.zeros(2, complex)),))  # along the imaginary axis
    np.testing.assert_allclose([d1, d2], [z.imag / np.abs(z), z.real ** 2 / np.abs(z) ** 3], rtol=1e-12)


def test_an_op_with_real_rules_refuses_a_complex_series() -> None:
    """sign of a complex series got a zero series (NumPy's sign of z is z / |z|): ops whose rules are real ones
    raise NoTaylorRule for complex values, as they refuse a complex gradient in reverse mode."""
    z = np.array([0.3 + 0.4j])
    for f in (fg.sign, fg.erf, lambda u: fg.maximum(u, 0.0)):
        with pytest.raises(NoTaylorRule, match="for complex values"):
            jet(f, (z,), ((np.ones(1, complex),),))
    assert not DISPATCH.active


def test_a_fractional_power_at_zero_has_its_zero_coefficients_below_the_exponent() -> None:
    """x ** 2.5 at 0 starts at t^2.5: its first and second derivatives are 0 (as nested reverse mode gives); the
    recurrence, which divides by x_0, gave NaN for all of them. Above the exponent they do not exist (NaN)."""
    x = np.array([0.0, 1.0])
    for r in (2.5, 1.5):
        for n in range(1, int(r) + 1):
            falling = math.prod(r - i for i in range(n))  # r (r - 1) ... (r - n + 1), the value at x = 1
            np.testing.assert_allclose(nth_derivative(lambda t, r=r: t ** r, n)(x), [0.0, falling])
    np.testing.assert_array_equal(nth_derivative(lambda t: t ** np.array([2.5, 1.5]), 1)(np.zeros(2)), [0.0, 0.0])
    assert np.isnan(nth_derivative(lambda t: t ** 2.5, 3)(x)[0])


_W = np.array([1.0, 2.0])
_INNER_TRANSFORMS = {  # a function of x calling a transform: of x, or of a value closing over x
    "grad": lambda x: fg.sum(ff.grad(lambda y: fg.sum(fg.tanh(y) ** 3))(x) * _W),
    "jvp": lambda x: fg.sum(ff.jvp(lambda y: fg.tanh(y) ** 3, (x,), (np.ones(2),))[1] * _W),
    "jacfwd": lambda x: fg.sum(ff.jacfwd(lambda y: fg.tanh(y) ** 3)(x) * _W),
    "jacrev": lambda x: fg.sum(ff.jacrev(lambda y: fg.tanh(y) ** 3)(x) * _W),
    "hessian": lambda x: fg.sum(ff.hessian(lambda y: fg.sum(fg.tanh(y) ** 3))(x)),
    "grad closing over x": lambda a: fg.sum(ff.grad(lambda y: fg.sum(fg.sin(y * a)))(np.array([0.2, 0.7])) * _W),
    "grad closing over exp(x)": lambda a: fg.sum(ff.grad(lambda y: fg.sum(fg.exp(y + a)))(np.array([0.2, 0.7])) * _W),
}


@pytest.mark.parametrize("name", list(_INNER_TRANSFORMS))
def test_a_transform_inside_jet_is_refused_and_the_derivatives_go_nested(name: str) -> None:
    # jet gave all-zero terms (an inner transform's leaves, backward pass and results were constants along the curve)
    f, x, v = _INNER_TRANSFORMS[name], np.array([0.3, -0.5]), np.ones(2)
    with pytest.raises(NoTaylorRule, match="Taylor"):
        jet(f, (x,), ((v, np.zeros(2)),))
    nested = ff.jvp(lambda t: ff.jvp(f, (t,), (v,))[1], (x,), (v,))[1]
    np.testing.assert_allclose(directional_derivative(f, 2)(x, v), nested, rtol=1e-12)


def test_nth_derivative_of_a_transform_closing_over_x() -> None:
    f = lambda a: ff.grad(lambda y: fg.sin(y * a))(0.2)  # a cos(0.2 a)
    expected = ff.grad(ff.grad(f))(0.3)
    np.testing.assert_allclose(nth_derivative(f, 2)(0.3), expected, rtol=1e-12)
    a = 0.3
    np.testing.assert_allclose(expected, -2 * 0.2 * np.sin(0.2 * a) - a * 0.04 * np.cos(0.2 * a), rtol=1e-12)

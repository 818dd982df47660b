"""NumPy's finite differences and quadrature (``np.gradient``, ``np.trapezoid``), ``np.vander``, ``np.cbrt``,
``np.float_power`` and the reductions' ``where=``/``initial=`` on Tensors (they raised "no derivative rule" or
"does not support where="): NumPy's values and dtypes, properties that hold exactly, forward mode, and the
derivative conventions at cbrt's kink."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import func
from funcgrad.check import gradcheck
from tests.budget import examples

_rng = np.random.default_rng(11)


def _coordinates(seed: int, n: int) -> np.ndarray:
    """``n`` increasing coordinates, at least 0.1 apart."""
    return np.cumsum(np.random.default_rng(seed).uniform(0.1, 1.0, n))


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(3, 7), st.floats(-3, 3), st.floats(-3, 3), st.sampled_from([1, 2]), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_gradient_of_a_linear_function_is_its_slope(n: int, slope: float, intercept: float, edge_order: int,
                                                    uneven: bool, seed: int) -> None:
    """At every point, ends included, for even and uneven spacing; and its derivative in the coordinates is 0
    (the slope does not depend on where the samples are)."""
    x = fg.tensor(_coordinates(seed, n) if uneven else np.arange(n) * 0.5, requires_grad=True)

    def slopes(x: Any) -> Any:
        return np.gradient(slope * x + intercept, x if uneven else 0.5, edge_order=edge_order)

    np.testing.assert_allclose(slopes(x).detach().numpy(), slope, atol=1e-9)
    if uneven:
        np.testing.assert_allclose(func.jacrev(slopes)(x.detach()).numpy(), 0.0, atol=1e-8)


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(3, 7), st.tuples(*[st.floats(-2, 2)] * 3), st.integers(0, 2**32 - 1))
def test_second_order_gradient_is_exact_for_quadratics(n: int, c: tuple[float, float, float], seed: int) -> None:
    """``edge_order=2`` at uneven coordinates: c0 + c1 x + c2 x^2 has derivative c1 + 2 c2 x at every sample."""
    x = _coordinates(seed, n)
    f = fg.tensor(c[0] + c[1] * x + c[2] * x**2, requires_grad=True)
    np.testing.assert_allclose(np.gradient(f, x, edge_order=2).detach().numpy(), c[1] + 2 * c[2] * x, atol=1e-8)


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(2, 7), st.floats(-3, 3), st.integers(0, 2**32 - 1))
def test_trapezoid_of_a_constant_is_it_times_the_length(n: int, c: float, seed: int) -> None:
    x = fg.tensor(_coordinates(seed, n), requires_grad=True)
    area = np.trapezoid(c + 0 * x, x)
    np.testing.assert_allclose(area.item(), c * (x[-1] - x[0]).item(), rtol=1e-12, atol=1e-12)
    (dx,) = fg.autograd.grad(area, x)  # only the ends move the area
    np.testing.assert_allclose(dx.numpy(), np.r_[-c, np.zeros(n - 2), c], atol=1e-12)


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_vandermonde_determinant_is_the_product_of_differences(n: int, seed: int) -> None:
    """det(vander(x)) = prod_{i<j} (x_i - x_j), values and gradients."""
    x = fg.tensor(np.random.default_rng(seed).uniform(-2, 2, n), requires_grad=True)

    def differences(x: Any) -> Any:
        return math.prod((x[i] - x[j] for i in range(n) for j in range(i + 1, n)), start=x[0] * 0 + 1)

    det = np.linalg.det(np.vander(x))
    np.testing.assert_allclose(det.item(), differences(x).item(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fg.autograd.grad(det, x)[0].numpy(), fg.autograd.grad(differences(x), x)[0].numpy(),
                               rtol=1e-7, atol=1e-10)


# ----- cbrt and float_power -----------------------------------------------------------------------------------
CBRT_POINTS = np.array([0.0, -0.0, 1e-300, -1e-300, 1e-170, -1e-170, 1e-100, -1e-10, 1e-5, 0.7, -8.0, 27.0, np.inf])


def test_cbrt_is_numpys_to_the_bit() -> None:
    """np.cbrt on a Tensor is the table op cbrt, whose kernel is np.cbrt: the same bits (-0.0 kept), not
    sign(x) |x|^(1/3), which was 1 ulp off and gave +0.0 at -0.0."""
    x = np.concatenate([CBRT_POINTS, _rng.uniform(-30, 30, 200)])
    got = np.cbrt(fg.tensor(x)).numpy()
    assert np.array_equal(got.view(np.int64), np.cbrt(x).view(np.int64))
    assert np.cbrt(fg.tensor(x, requires_grad=True)).grad_fn.name() == "CbrtBackward0"


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value", "ignore:overflow")
def test_cbrt_derivatives_at_and_near_zero_are_jaxs() -> None:
    """1 / (3 cbrt(x)^2) is inf at 0, and the next orders -inf, inf at 0 and inf, inf at -0.0 (jax.grad of
    jnp.cbrt, nested); near 0 they overflow as JAX's do. Forward mode too."""
    d1 = func.grad(np.cbrt)
    d2 = func.grad(d1)
    assert [d1(0.0), d2(0.0), func.grad(d2)(0.0)] == [np.inf, -np.inf, np.inf]
    assert [d1(-0.0), d2(-0.0), func.grad(d2)(-0.0)] == [np.inf, np.inf, np.inf]
    _, tangent = func.jvp(np.cbrt, (fg.tensor(0.0),), (fg.tensor(1.0),))
    assert tangent.item() == np.inf
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        ours, theirs = [np.cbrt], [jax.numpy.cbrt]
        for _ in range(3):
            ours.append(func.grad(ours[-1]))
            theirs.append(jax.grad(theirs[-1]))
        for x in CBRT_POINTS:
            np.testing.assert_allclose([float(d(x)) for d in ours[1:]], [float(d(x)) for d in theirs[1:]],
                                       rtol=1e-13, err_msg=f"at {x}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_cbrt_and_float_power_give_numpys_dtypes(dtype: Any) -> None:
    """cbrt keeps float32 and makes ints and bools float64; float_power computes in float64 whatever the input."""
    a = np.array([-8, 0, 1, 27]).astype(dtype)
    for call in (np.cbrt, lambda v: np.float_power(v, 3), lambda v: np.float_power(2, v)):
        got, expected = call(fg.tensor(a)), call(a)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


# ----- where= and initial= ------------------------------------------------------------------------------------
_MASKED_CALLS = {
    "sum": lambda a, m: np.sum(a, axis=0, where=m, initial=0.5), "prod": lambda a, m: np.prod(a, where=m),
    "mean": lambda a, m: np.mean(a, axis=1, where=m | m[::-1], keepdims=True),
    "max": lambda a, m: np.max(a, axis=1, where=m, initial=-3.0), "min": lambda a, m: np.min(a, where=m, initial=3.0),
    "nansum": lambda a, m: np.nansum(a, axis=1, where=m), "nanmean": lambda a, m: np.nanmean(a, where=m),
    "nanprod": lambda a, m: np.nanprod(a, axis=0, where=m, initial=-1.0),
}


@settings(max_examples=examples(25), deadline=None)
@given(st.sampled_from(sorted(_MASKED_CALLS)), st.integers(0, 2**32 - 1))
def test_masked_reductions_equal_numpys_and_leave_what_they_skip_alone(name: str, seed: int) -> None:
    """NumPy's value; the gradient (reverse and forward mode) is 0 at every entry ``where`` leaves out and at
    NaNs that the nan-reductions skip."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1, 1], (3, 4))
    a[rng.random((3, 4)) < 0.15] = np.nan if name.startswith("nan") else 1.0
    mask = rng.random((3, 4)) < 0.6
    call = _MASKED_CALLS[name]
    t = fg.tensor(a, requires_grad=True)
    with np.errstate(all="ignore"):  # a mean of nothing: NaN, as NumPy's
        expected, got = call(a, mask), call(t, mask)
    np.testing.assert_allclose(got.detach().numpy(), expected, rtol=1e-12)
    (grad,) = fg.autograd.grad(got.sum(), t)
    skipped = ~(mask | mask[::-1]) if name == "mean" else ~mask | np.isnan(a)
    assert not np.any(grad.numpy()[skipped])


@pytest.mark.parametrize("call", [
    lambda x: np.gradient(x, np.array([0.0, 0.5, 1.5]), axis=0, edge_order=2), lambda x: np.gradient(x, 0.3)[1],
    lambda x: np.vander(x[0], 4), np.cbrt, lambda x: np.float_power(x + 3.0, x[0]),
    lambda x: np.sum(x, axis=1, where=np.array([True, False, True, True]), initial=2.0),
    lambda x: np.mean(x, where=x.detach().numpy() > 0), lambda x: np.max(x, axis=0, where=x.detach().numpy() < 1.5,
                                                                          initial=-9.0),
])
def test_forward_mode(call: Any) -> None:
    assert gradcheck(call, (fg.tensor(_rng.uniform(-2, 2, (3, 4)), requires_grad=True),), check_forward_ad=True)


def test_an_empty_max_with_initial_is_initial() -> None:
    """np.max/np.min over nothing, as NumPy: ``initial`` in the result's shape (F.amax would raise)."""
    t = fg.tensor(np.zeros((0, 3)), requires_grad=True)
    for call in (lambda a: np.max(a, axis=0, initial=1.0), lambda a: np.min(a, initial=-2.0, keepdims=True)):
        got, expected = call(t), call(np.zeros((0, 3)))
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.detach().numpy(), expected)
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        np.min(t, where=np.array([True, False, True]))

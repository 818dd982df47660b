"""Nested forward mode: dual levels nest (as in JAX and functorch), so forward transforms compose with
themselves and with reverse mode. Checked against reverse-mode Hessians and third derivatives and
against derivatives by hand."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.func as ff
import funcgrad.functional as F
from funcgrad.autograd import Function
from funcgrad.autograd import forward_ad as fwAD
from funcgrad.core import tangents
from funcgrad.core.dispatch import DISPATCH
from tests.budget import examples

A = np.random.default_rng(0).normal(size=(4, 3))


def coupled(x: Any) -> Any:
    """Every pair of inputs interacts: the Hessian and the third derivative are dense."""
    return fg.logsumexp(fg.tensor(A) @ x, dim=0) + fg.sum(fg.tanh(x) * x ** 2) + fg.prod(fg.cos(x))


HESSIANS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "jacfwd(jacfwd)": lambda f: ff.jacfwd(ff.jacfwd(f)),
    "jacrev(jacfwd)": lambda f: ff.jacrev(ff.jacfwd(f)),
    "hessian": ff.hessian,
}
THIRD: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "jacfwd(jacfwd(jacfwd))": lambda f: ff.jacfwd(ff.jacfwd(ff.jacfwd(f))),
    "jacfwd(hessian)": lambda f: ff.jacfwd(ff.hessian(f)),
    "jacrev(jacfwd(jacfwd))": lambda f: ff.jacrev(ff.jacfwd(ff.jacfwd(f))),
    "jacfwd(jacrev(jacfwd))": lambda f: ff.jacfwd(ff.jacrev(ff.jacfwd(f))),
}


@settings(max_examples=examples(15), deadline=None)
@given(st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3))
def test_forward_over_forward_hessians_equal_reverse_mode(x: list[float]) -> None:
    x0 = np.array(x)
    expected = ff.jacrev(ff.jacrev(coupled))(x0)
    for name, transform in HESSIANS.items():
        np.testing.assert_allclose(transform(coupled)(x0), expected, rtol=1e-10, atol=1e-12, err_msg=name)


@settings(max_examples=examples(8), deadline=None)
@given(st.lists(st.floats(-1.5, 1.5), min_size=3, max_size=3))
def test_third_derivatives_through_nested_forward_mode_equal_reverse_mode(x: list[float]) -> None:
    x0 = np.array(x)
    expected = ff.jacrev(ff.jacrev(ff.jacrev(coupled)))(x0)
    for name, transform in THIRD.items():
        np.testing.assert_allclose(transform(coupled)(x0), expected, rtol=1e-10, atol=1e-12, err_msg=name)


def test_third_derivative_by_hand() -> None:
    """d^3/dx^3 exp(x^2) = (12 x + 8 x^3) exp(x^2)."""
    x0 = np.array(0.7)
    got = ff.jacfwd(ff.jacfwd(ff.jacfwd(lambda x: fg.exp(x * x))))(x0)
    np.testing.assert_allclose(got, (12 * 0.7 + 8 * 0.7 ** 3) * np.exp(0.49), rtol=1e-13)


def test_jvp_of_jvp_is_the_hessian_between_the_directions() -> None:
    rng = np.random.default_rng(1)
    x0, u, v = rng.normal(size=(3, 3)) * 0.5
    inner = lambda x: ff.jvp(coupled, (x,), (v,))[1]  # noqa: E731
    _, uHv = ff.jvp(inner, (x0,), (u,))
    np.testing.assert_allclose(uHv, u @ ff.jacrev(ff.jacrev(coupled))(x0) @ v, rtol=1e-12)


def test_linearize_inside_jacfwd() -> None:
    x0 = np.array([0.2, -0.4, 0.9])
    v = np.array([1.0, 2.0, -1.0])
    got = ff.jacfwd(lambda x: ff.linearize(coupled, x)[1](v))(x0)
    np.testing.assert_allclose(got, ff.jacrev(ff.jacrev(coupled))(x0) @ v, rtol=1e-12)


def test_functional_hessian_forward_mode_keeps_working() -> None:
    x0 = np.array([0.3, -0.8, 0.5])
    H = F.hessian(coupled, fg.tensor(x0), outer_jacobian_strategy="forward-mode", vectorize=True)
    np.testing.assert_allclose(H.numpy(), ff.jacrev(ff.jacrev(coupled))(x0), rtol=1e-12)
    hv = F.hvp(lambda t: coupled(t), fg.tensor(x0), fg.tensor([1.0, 0.0, -1.0]))[1]
    np.testing.assert_allclose(hv.numpy(), ff.jacrev(ff.jacrev(coupled))(x0) @ [1.0, 0.0, -1.0], rtol=1e-12)


# ----- the levels themselves ----------------------------------------------------------------------
def test_levels_nest_and_each_keeps_its_own_tangent() -> None:
    with fwAD.dual_level() as outer:
        x = fwAD.make_dual(fg.tensor(0.5), fg.tensor(1.0))
        with fwAD.dual_level() as inner:
            y = fwAD.make_dual(x, fg.tensor(1.0))
            z = fg.exp(y * y)
            assert (outer, inner) == (0, 1)
            dz = fwAD.unpack_dual(z).tangent  # inner: 2 x exp(x^2), itself dual at the outer level
            np.testing.assert_allclose(fwAD.unpack_dual(z, level=0).tangent.item(), np.exp(0.25))  # 2x exp(x^2)
            assert [t.item() for t in (dz,)] == pytest.approx([np.exp(0.25)])
        assert tangents.tangents_of(z).keys() == {tangents.current()}  # the inner tangent is gone
        assert fwAD.unpack_dual(dz).tangent.item() == pytest.approx(3 * np.exp(0.25))  # (2 + 4x^2) exp(x^2)
    assert not DISPATCH.active and tangents.levels() == []


def test_make_dual_at_an_outer_level() -> None:
    with fwAD.dual_level(), fwAD.dual_level():
        x = fwAD.make_dual(fg.tensor([1.0, 2.0]), fg.tensor([1.0, 0.0]), level=0)
        y = fg.sin(x)
        assert fwAD.unpack_dual(y).tangent is None
        np.testing.assert_allclose(fwAD.unpack_dual(y, level=0).tangent.numpy(), [np.cos(1.0), 0.0])


def test_levels_end_innermost_first() -> None:
    fwAD.enter_dual_level()
    fwAD.enter_dual_level()
    with pytest.raises(RuntimeError, match="innermost active level is 1"):
        fwAD.exit_dual_level(level=0)
    fwAD.exit_dual_level(level=1)
    with pytest.raises(RuntimeError, match="no active dual level 3"):
        fwAD.make_dual(fg.tensor(1.0), fg.tensor(1.0), level=3)
    fwAD.exit_dual_level()
    assert tangents.levels() == [] and not DISPATCH.active


class Cube(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return fg.tensor(x.numpy() ** 3)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2

    @staticmethod
    def jvp(ctx: Any, x_t: Any) -> Any:
        (x,) = ctx.saved_tensors
        return x_t * 3 * x ** 2


def test_a_custom_function_serves_one_level_and_refuses_nested_tangents() -> None:
    with fwAD.dual_level(), fwAD.dual_level():
        x = fwAD.make_dual(fg.tensor(2.0), fg.tensor(1.0), level=0)
        np.testing.assert_allclose(fwAD.unpack_dual(Cube.apply(x), level=0).tangent.item(), 12.0)
        y = fwAD.make_dual(x, fg.tensor(1.0))
        with pytest.raises(NotImplementedError, match="nested dual levels"):
            Cube.apply(y)
    assert tangents.levels() == [] and not DISPATCH.active


@pytest.mark.parametrize("activation", [fg.tanh, fg.sigmoid])
def test_forward_over_reverse_through_fused_activation_backward(activation: Any) -> None:
    """tanh/sigmoid differentiate through one ``*_backward`` op; its JVP rule must align a batch of tangents
    with a batch of cotangents (jacrev's) instead of broadcasting one against the other."""
    rng = np.random.default_rng(3)
    W = fg.tensor(rng.normal(size=(4, 4)))

    def f(x: Any) -> Any:
        y = activation(W @ x)
        return y.sum() * y[0]

    x = fg.tensor(rng.normal(size=4))
    expected = ff.jacrev(ff.jacrev(f))(x).data
    np.testing.assert_allclose(ff.hessian(f)(x).data, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ff.jacfwd(ff.jacrev(f))(x).data, expected, rtol=1e-12, atol=1e-14)

"""funcgrad.functional (torch.autograd.functional): the seeds' examples, closed forms, finite
differences, result nesting, vectorize/forward-mode equal the loop, create_graph, strict errors.

Forward-mode paths use ops that already have JVP rules (elementwise, reductions, shape ops).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.functional as F
from funcgrad.check.numerical import jacobian_fd
from funcgrad.check.strategies import arrays, shapes
from tests.budget import examples

rng = np.random.default_rng(0)
MODES = [dict(vectorize=False), dict(vectorize=True), dict(vectorize=True, strategy="forward-mode")]
HESSIAN_MODES = [dict(vectorize=False), dict(vectorize=True),
                 dict(vectorize=True, outer_jacobian_strategy="forward-mode")]


def t(a: object) -> fg.Tensor:
    return fg.tensor(np.asarray(a, dtype=float))


def close(a: object, b: object) -> bool:
    return np.allclose(np.asarray(a), np.asarray(b), atol=1e-8)


# ----- the seeds' examples ----------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_jacobian_of_scalar_function_is_its_gradient(mode: dict) -> None:
    x = t(rng.standard_normal(4))
    jac = F.jacobian(lambda x: fg.sum(x ** 2), x, **mode)
    assert jac.shape == (4,) and close(jac, 2 * x.data)


def test_jacobian_of_linear_layer_is_the_weight() -> None:
    w, b = rng.standard_normal((3, 5)), rng.standard_normal(3)
    for mode in MODES[:2]:  # matmul: reverse mode
        assert close(F.jacobian(lambda x: t(w) @ x + t(b), t(rng.standard_normal(5)), **mode), w)


@pytest.mark.parametrize("mode", MODES)
def test_jacobian_of_average_pooling(mode: dict) -> None:
    def pool(x: fg.Tensor) -> fg.Tensor:
        return x.reshape(2, 2, 2, 2).permute(0, 2, 1, 3).reshape(2, 2, 4).mean(-1)

    jac = F.jacobian(pool, t(rng.standard_normal((4, 4))), **mode)
    expected = np.zeros((2, 2, 4, 4))
    for i, j in np.ndindex(2, 2):
        expected[i, j, 2 * i:2 * i + 2, 2 * j:2 * j + 2] = 0.25
    assert jac.shape == (2, 2, 4, 4) and close(jac, expected)


@pytest.mark.parametrize("mode", HESSIAN_MODES)
def test_hessian_of_sum_of_squares(mode: dict) -> None:
    assert close(F.hessian(lambda x: fg.sum(x ** 2), t(rng.standard_normal(3)), **mode), 2 * np.eye(3))


# ----- closed forms and finite differences ------------------------------------------------------

@settings(max_examples=examples(8), deadline=None)
@given(x=arrays(shapes(max_dims=2, max_side=3), min_value=-2, max_value=2), mode=st.sampled_from(MODES))
def test_jacobian_matches_finite_differences(x: np.ndarray, mode: dict) -> None:
    def f(x: fg.Tensor) -> fg.Tensor:
        return fg.sin(x) * x ** 2

    jac = F.jacobian(f, t(x), **mode)
    fd = jacobian_fd(f, (t(x),), 0)[0][0]
    assert jac.shape == x.shape * 2 and np.allclose(jac.data.reshape(fd.shape), fd, atol=1e-6)


@settings(max_examples=examples(6), deadline=None)
@given(n=st.integers(1, 5), m=st.integers(1, 4))
def test_hessian_of_softplus_regression_is_analytic(n: int, m: int) -> None:
    a, x = rng.standard_normal((m, n)), rng.standard_normal(n)
    s = 1 / (1 + np.exp(-(a @ x)))
    expected = a.T @ ((s * (1 - s))[:, None] * a) + np.eye(n)
    for vectorize in (False, True):
        h = F.hessian(lambda x: fg.sum(fg.log1p(fg.exp(t(a) @ x))) + 0.5 * x @ x, t(x), vectorize=vectorize)
        assert close(h, expected)


# ----- nesting ----------------------------------------------------------------------------------

def two_by_two(x: fg.Tensor, y: fg.Tensor) -> tuple[fg.Tensor, fg.Tensor]:
    return fg.sin(x) * y, fg.sum(x * x)


@pytest.mark.parametrize("mode", MODES)
def test_jacobian_nesting_and_shapes(mode: dict) -> None:
    x, y = t(rng.standard_normal(3)), t(rng.standard_normal((2, 3)))
    jac = F.jacobian(two_by_two, (x, y), **mode)
    assert [[j.shape for j in row] for row in jac] == [[(2, 3, 3), (2, 3, 2, 3)], [(3,), (2, 3)]]
    assert close(jac[1][0], 2 * x.data) and close(jac[1][1], 0)
    assert close(jac[0][1], np.einsum("j,ik,jl->ijkl", np.sin(x.data), np.eye(2), np.eye(3)))
    single_in = F.jacobian(lambda x: (x * 2, x.sum()), x, **mode)
    assert isinstance(single_in, tuple) and single_in[0].shape == (3, 3) and single_in[1].shape == (3,)
    single_out = F.jacobian(lambda x, y: fg.sum(x) + fg.sum(y), (x, y), **mode)
    assert isinstance(single_out, tuple) and [j.shape for j in single_out] == [(3,), (2, 3)]
    assert isinstance(F.jacobian(lambda x: x * 2, (x,), **mode), tuple)


@pytest.mark.parametrize("mode", HESSIAN_MODES)
def test_hessian_of_two_inputs_is_a_tuple_of_tuples(mode: dict) -> None:
    x, y = t(rng.standard_normal(2)), t(rng.standard_normal(3))
    h = F.hessian(lambda x, y: fg.sum(x ** 2) * fg.sum(y), (x, y), **mode)
    assert [[b.shape for b in row] for row in h] == [[(2, 2), (2, 3)], [(3, 2), (3, 3)]]
    assert close(h[0][0], 2 * y.data.sum() * np.eye(2)) and close(h[0][1], np.tile(2 * x.data[:, None], 3))
    assert close(h[1][1], 0)


def test_vjp_jvp_hvp_vhp_against_closed_forms() -> None:
    x, y = t(rng.standard_normal(3)), t(rng.standard_normal(3))
    u, v = t(rng.standard_normal(3)), t(rng.standard_normal(3))
    out, (gx, gy) = F.vjp(lambda x, y: x * y, (x, y), u)
    assert close(out, x.data * y.data) and close(gx, u.data * y.data) and close(gy, u.data * x.data)
    out, tangent = F.jvp(lambda x: fg.sin(x), x, v)
    assert close(tangent, np.cos(x.data) * v.data)
    for product in (F.hvp, F.vhp):
        value, hv = product(lambda x: fg.sum(x ** 3), x, v)
        assert close(value, np.sum(x.data ** 3)) and close(hv, 6 * x.data * v.data)
    assert close(F.vjp(lambda x: fg.sum(x), x)[1], np.ones(3))  # v=None: one-element output


# ----- vectorize equals the loop; create_graph ----------------------------------------------------

def test_vectorized_and_forward_mode_equal_the_loop() -> None:
    x, y = t(rng.standard_normal(3)), t(rng.standard_normal((2, 3)))
    loop, *others = [F.jacobian(two_by_two, (x, y), **mode) for mode in MODES]
    for other in others:
        for row_a, row_b in zip(loop, other):
            assert all(close(a, b) for a, b in zip(row_a, row_b))


@pytest.mark.parametrize("mode", MODES)
def test_create_graph_results_are_differentiable(mode: dict) -> None:
    x = fg.tensor(rng.standard_normal(3), requires_grad=True)
    jac = F.jacobian(lambda x: x ** 3, x, create_graph=True, **mode)
    assert jac.requires_grad
    (g,) = fg.autograd.grad(fg.sum(jac), x)
    assert close(g, 6 * x.data)
    plain = F.jacobian(lambda x: x ** 3, x, **mode)
    assert not plain.requires_grad


def test_create_graph_of_products() -> None:
    x, v = fg.tensor(rng.standard_normal(3), requires_grad=True), t(np.ones(3))
    for product in (F.hvp, F.vhp):  # d/dx sum(H v) with H = diag(12 x^2)
        _, res = product(lambda x: fg.sum(x ** 4), x, v, create_graph=True)
        assert close(fg.autograd.grad(fg.sum(res), x)[0], 24 * x.data)
    for product in (F.jvp, F.vjp):  # d/dx sum(J v) with J = diag(4 x^3)
        _, res = product(lambda x: x ** 4, x, v, create_graph=True)
        assert close(fg.autograd.grad(fg.sum(res), x)[0], 12 * x.data ** 2)
    h = F.hessian(lambda x: fg.sum(x ** 4), x, create_graph=True)
    assert close(fg.autograd.grad(fg.sum(h), x)[0], 24 * x.data)


# ----- strict and misuse ------------------------------------------------------------------------

def test_strict_errors() -> None:
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1"):
        F.jacobian(lambda x, y: x * 2, (x, y), strict=True)
    assert close(F.jacobian(lambda x, y: x * 2, (x, y))[1], 0)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        F.vjp(lambda x, y: x * 2, (x, y), t([1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        F.vjp(lambda x: t([1.0, 1.0]), x, t([1.0, 1.0]), strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is "
                                           "independent"):
        F.hessian(lambda x: fg.sum(x * 2), x, strict=True)
    with pytest.raises(RuntimeError, match="hessian of the user-provided function is independent of input 0"):
        F.vhp(lambda x: fg.sum(x * 2) + fg.sum(x ** 2), x, y, strict=True, create_graph=True)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not supported together"):
        F.jacobian(lambda x: x, x, strict=True, vectorize=True)
    # forward-over-reverse (no recorded gradient graph): "depends on the inputs" is read from the tangents
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is "
                                           "independent"):
        F.hvp(lambda x: fg.sum(x * 2), x, y, strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        F.hvp(lambda x, y: fg.sum(x ** 2), (x, y), (y, y), strict=True)
    assert close(F.hvp(lambda x: fg.sum(x ** 3), x, y, strict=True)[1], 6 * x.data * y.data)


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_with_create_graph_the_product_is_differentiable_in_v(name: str) -> None:
    """As torch's: v requiring grad keeps its graph under create_graph (d/dv was missing, silently)."""
    x = fg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    v = fg.tensor([1.0, 2.0, -1.0], requires_grad=True)
    if name in ("vjp", "jvp"):  # J = diag(cos(x) x + sin(x))
        slope = np.cos(x.data) * x.data + np.sin(x.data)
        product = getattr(F, name)(lambda x: fg.sin(x) * x, x, v, create_graph=True)[1]
    else:  # H = diag(6 x)
        slope = 6 * x.data
        product = getattr(F, name)(lambda x: fg.sum(x ** 3), x, v, create_graph=True)[1]
    fg.sum(product * product).backward()
    np.testing.assert_allclose(v.grad.data, 2 * slope ** 2 * v.data)


def test_jvp_strict_errors() -> None:
    """As torch's: an input the outputs do not use, and with create_graph a tangent independent of the inputs."""
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    with pytest.raises(RuntimeError, match="output of the user-provided function is independent of input 1. This "
                                           "is not allowed in strict mode"):
        F.jvp(lambda x, y: x ** 2, (x, y), (y, y), strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0. This "
                                           "is not allowed in strict mode when create_graph=True"):
        F.jvp(lambda x: 3 * x, x, y, strict=True, create_graph=True)
    assert close(F.jvp(lambda x: 3 * x, x, y, strict=True)[1], 3 * y.data)
    assert close(F.jvp(lambda x: x ** 2, x, y, strict=True, create_graph=True)[1].detach().data, 2 * x.data * y.data)


def test_misuse_errors() -> None:
    x = t([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda x: x, x, strategy="forward-mode")
    with pytest.raises(ValueError, match="Expected strategy"):
        F.jacobian(lambda x: x, x, strategy="sideways")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        F.jacobian(lambda x: x, [1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        F.vjp(lambda x: x, x, t([1.0]))
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(lambda x: x, x)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda x: x ** 2, x)
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.hvp(lambda x: (fg.sum(x), fg.sum(x)), x, x)

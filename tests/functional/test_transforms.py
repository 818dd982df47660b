"""funcgrad.func (JAX-style transforms): pytrees, argnums, has_aux, NumPy in and out, Tensors in and
out, composition, and the error cases. Forward-mode transforms use ops that have JVP rules.
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

import funcgrad as fg
import funcgrad.func as ff
from funcgrad.check.strategies import arrays, shapes
from funcgrad.functional._pytree import ravel, tree_flatten, tree_map, tree_unflatten
from tests.budget import examples

rng = np.random.default_rng(1)
X = rng.standard_normal(3)
Y = rng.standard_normal((2, 3))


def close(a: Any, b: Any) -> bool:
    la, sa = tree_flatten(a)
    lb, sb = tree_flatten(b)
    return sa == sb and all(np.allclose(np.asarray(x), np.asarray(y), atol=1e-8) for x, y in zip(la, lb))


def params_loss(p: dict) -> fg.Tensor:
    return fg.sum(fg.sin(p["w"]) * p["b"][0]) + p["b"][1] ** 2


PARAMS = {"w": X, "b": (2.0, np.array(0.5))}
PARAMS_GRAD = {"w": np.cos(X) * 2.0, "b": (np.sin(X).sum(), 1.0)}


# ----- pytrees ----------------------------------------------------------------------------------

def test_pytree_roundtrip_and_ravel() -> None:
    point = namedtuple("point", "x y")
    tree = {"a": [1.0, (2, None)], "p": point(np.ones(2), 3.0)}
    leaves, spec = tree_flatten(tree)
    assert len(leaves) == 4 and tree_unflatten(spec, leaves)["p"].y == 3.0
    assert tree_map(lambda v: v, tree)["a"] == [1.0, (2, None)]
    flat, unravel = ravel(tree)
    assert flat.shape == (5,) and close(unravel(flat), tree_map(np.asarray, tree))
    with pytest.raises(ValueError, match="has 4 leaves, got 1"):
        tree_unflatten(spec, [1.0])


# ----- grad family ------------------------------------------------------------------------------

def test_grad_of_pytree_argument() -> None:
    assert close(ff.grad(params_loss)(PARAMS), PARAMS_GRAD)


def test_grad_argnums_and_aux() -> None:
    def f(x: Any, y: Any, scale: float) -> tuple[fg.Tensor, dict]:
        return fg.sum(x * y) * scale, {"x": x}

    gx, gy = ff.grad(lambda *a: f(*a)[0], argnums=(0, 1))(X, X * 2, 3.0)
    assert close(gx, 6 * X) and close(gy, 3 * X)
    g, aux = ff.grad(f, argnums=-3, has_aux=True)(X, X, 1.0)
    assert close(g, X) and close(aux, {"x": X})
    (value, aux), g = ff.value_and_grad(f, has_aux=True)(X, X, 1.0)
    assert close(value, np.sum(X * X)) and close(g, X) and close(aux, {"x": X})
    g, (value, aux) = ff.grad_and_value(f, has_aux=True)(X, X, 1.0)
    assert close(value, np.sum(X * X)) and close(g, X)
    assert close(ff.grad(lambda x: x * x)(3.0), 6.0)  # Python scalars in


def test_numpy_in_numpy_out_and_tensors_in_tensors_out() -> None:
    g = ff.grad(lambda x: fg.sum(x ** 2))(X)
    assert type(g) is np.ndarray
    gt = ff.grad(lambda x: fg.sum(x ** 2))(fg.tensor(X))
    assert isinstance(gt, fg.Tensor) and not gt.requires_grad and close(gt.data, 2 * X)


def test_grad_composes_with_outer_autograd() -> None:
    x = fg.tensor(X, requires_grad=True)
    g = ff.grad(lambda x: fg.sum(x ** 3))(x)
    assert g.requires_grad and close(fg.autograd.grad(fg.sum(g), x)[0].data, 6 * X)


# d/dx sum(d/dy sum(sin(x * y))) = d/dx sum(x cos(x y)) = cos(x y) - x y sin(x y), elementwise
def _mixed(x: Any, y: Any) -> Any:
    return np.cos(x * y) - x * y * np.sin(x * y)


def _sin_xy(x: Any, y: Any) -> Any:
    return fg.sum(fg.sin(x * y))


def test_inner_transform_of_a_closure_keeps_what_the_outer_one_traces() -> None:
    """An inner transform given arrays, whose function closes over (or takes beside its differentiated argument)
    a value the outer transform traces, stays attached to it: it gave zeros (the inner result was an array)."""
    y, v, u = Y[0], np.array([1.0, -2.0, 0.5]), np.array([0.3, 1.0, -1.0])
    expected = _mixed(X, y)
    np.testing.assert_allclose(ff.grad(lambda x: fg.sum(ff.grad(lambda y: _sin_xy(x, y))(y)))(X), expected)
    np.testing.assert_allclose(ff.grad(lambda x, y: fg.sum(ff.grad(_sin_xy, 1)(x, y)))(X, y), expected)
    np.testing.assert_allclose(ff.jacrev(lambda x: ff.jacrev(lambda y: fg.sin(x * y))(y))(X).sum(1), np.diag(expected))
    np.testing.assert_allclose(ff.grad(lambda x: ff.jvp(lambda y: _sin_xy(x, y), (y,), (v,))[1])(X), v * expected)
    _, tangent = ff.jvp(lambda x: ff.jvp(lambda y: _sin_xy(x, y), (y,), (v,))[1], (X,), (u,))
    np.testing.assert_allclose(tangent, np.sum(u * v * expected))
    _, tangent = ff.jvp(lambda x: fg.sum(ff.grad(lambda y: _sin_xy(x, y))(y)), (X,), (u,))
    np.testing.assert_allclose(tangent, np.sum(u * expected))


def test_transforms_over_tangents_and_cotangents() -> None:
    """The Jacobian of ``v -> J v`` is J and of ``c -> J^T c`` is J^T, by either mode (it was zero)."""
    A = np.arange(6.0).reshape(2, 3) - 2

    def f(x: Any) -> Any:
        return fg.as_tensor(A) @ x

    for jac in (ff.jacrev, ff.jacfwd):
        np.testing.assert_allclose(jac(lambda v: ff.jvp(f, (X,), (v,))[1])(np.ones(3)), A)
        np.testing.assert_allclose(jac(lambda c: ff.vjp(f, X)[1](c)[0])(np.ones(2)), A.T)


def test_transform_on_tensors_keeps_the_graph_of_a_closed_over_tensor() -> None:
    w = fg.tensor(X, requires_grad=True)
    g = ff.grad(lambda y: _sin_xy(w, y))(fg.tensor(Y[0]))  # w cos(w y)
    fg.sum(g).backward()
    np.testing.assert_allclose(w.grad.data, _mixed(X, Y[0]))


# ----- vjp / jvp / linearize --------------------------------------------------------------------

def test_vjp_of_pytrees_with_aux() -> None:
    def f(p: dict, y: Any) -> tuple[Any, str]:
        return (fg.sin(p["w"]) * y, {"s": fg.sum(p["w"])}), "aux"

    out, pullback, aux = ff.vjp(f, {"w": X}, Y, has_aux=True)
    assert aux == "aux" and close(out, (np.sin(X) * Y, {"s": X.sum()}))
    ct_out, ct_y = pullback((np.ones_like(Y), {"s": 1.0}))
    assert close(ct_out, {"w": np.cos(X) * Y.sum(0) + 1}) and close(ct_y, np.broadcast_to(np.sin(X), Y.shape))
    assert close(pullback((Y, {"s": 0.0}))[1], Y * np.sin(X))  # the pullback can be reused


def test_jvp_and_linearize() -> None:
    out, tangent = ff.jvp(lambda p, y: {"z": fg.sin(p[0]) * y}, ((X,), Y), ((np.ones(3),), np.zeros_like(Y)))
    assert close(out, {"z": np.sin(X) * Y}) and close(tangent, {"z": np.cos(X) * Y})
    out, jvp_fn = ff.linearize(lambda x: x ** 3, X)
    assert close(out, X ** 3) and close(jvp_fn(np.ones(3)), 3 * X ** 2)


def test_pullback_and_linearization_keep_the_values_they_were_given() -> None:
    """Arrays written into after vjp/linearize returned do not change the pullback or the linearization point
    (JAX's semantics; the pullback read the caller's array by reference)."""
    x0, w0 = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])
    x, p = x0.copy(), {"w": w0.copy()}
    _, pullback = ff.vjp(lambda x, p: fg.sin(x) * fg.sum(p["w"]), x, p)
    _, jvp_fn = ff.linearize(lambda x: fg.sin(x) * x, x)
    x[0], p["w"][0] = 100.0, 7.0
    ct_x, ct_p = pullback(np.ones(3))
    np.testing.assert_allclose(ct_x, np.cos(x0) * w0.sum())
    np.testing.assert_allclose(ct_p["w"], np.full(2, np.sin(x0).sum()))
    np.testing.assert_allclose(jvp_fn(np.ones(3)), np.cos(x0) * x0 + np.sin(x0))


def test_writing_into_a_view_of_a_tensor_input_raises_and_leaves_it_unchanged() -> None:
    """As for an array input (and torch): the input is a leaf that requires grad. A Tensor input was aliased by a
    view of itself, so the write went through to the caller's Tensor and the Jacobian missed it (identity)."""
    def f(x: Any) -> Any:
        x[1:].mul_(3.0)
        return x * 1.0

    x = fg.tensor([0.5, -1.0, 2.0])
    for jacobian in (ff.jacrev(f), lambda x: fg.functional.jacobian(f, x, create_graph=True)):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            jacobian(x)
        np.testing.assert_array_equal(x.data, [0.5, -1.0, 2.0])


# ----- Jacobians and Hessians -------------------------------------------------------------------

def nested(x: Any, y: Any) -> dict:
    return {"a": fg.sin(x) * y, "b": (fg.sum(x * x),)}


@pytest.mark.parametrize("jac", [ff.jacrev, ff.jacfwd])
def test_jacobian_nesting_output_tree_outside_argnums_inside(jac: Callable[..., Any]) -> None:
    result = jac(nested, argnums=(0, 1))(X, Y)
    assert set(result) == {"a", "b"} and isinstance(result["b"], tuple)
    (da_dx, da_dy), ((db_dx, db_dy),) = result["a"], result["b"]
    assert da_dx.shape == (2, 3, 3) and da_dy.shape == (2, 3, 2, 3) and db_dx.shape == (3,) and db_dy.shape == (2, 3)
    assert close(da_dx, np.einsum("ij,jk->ijk", np.cos(X) * Y, np.eye(3))) and close(db_dx, 2 * X)
    assert close(db_dy, np.zeros((2, 3)))
    assert close(jac(nested)(X, Y), {"a": da_dx, "b": (db_dx,)})  # a single argnum adds no tuple level


@pytest.mark.parametrize("jac", [ff.jacrev, ff.jacfwd])
def test_jacobian_with_aux_and_pytree_input(jac: Callable[..., Any]) -> None:
    j, aux = jac(lambda p: (p["w"] * p["s"], p["s"]), has_aux=True)({"w": X, "s": 2.0})
    assert aux == 2.0 and close(j, {"w": 2.0 * np.eye(3), "s": X})


@settings(max_examples=examples(6), deadline=None)
@given(x=arrays(shapes(min_dims=1, max_dims=2, max_side=3), min_value=-2, max_value=2))
def test_jacrev_equals_jacfwd_and_hessians_agree(x: np.ndarray) -> None:
    def f(x: Any) -> Any:
        return fg.sin(x) * x ** 2

    assert close(ff.jacrev(f)(x), ff.jacfwd(f)(x))
    h = ff.hessian(lambda x: fg.sum(f(x)))(x)
    assert h.shape == x.shape * 2 and close(h, ff.jacrev(ff.jacrev(lambda x: fg.sum(f(x))))(x))
    expected = np.diag(((2 - x ** 2) * np.sin(x) + 4 * x * np.cos(x)).ravel()).reshape(x.shape * 2)
    assert close(h, expected)


def test_hessian_argnums_tuple() -> None:
    h = ff.hessian(lambda x, y: fg.sum(x ** 2 * y), argnums=(0, 1))(X, X)
    assert close(h[0][0], np.diag(2 * X)) and close(h[0][1], np.diag(2 * X)) and close(h[1][1], np.zeros((3, 3)))


# ----- errors -----------------------------------------------------------------------------------

def test_errors() -> None:
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"):
        ff.grad(lambda x: x * 2)(X)
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions. Output was a tree"):
        ff.grad(lambda x: (fg.sum(x), fg.sum(x)))(X)
    for transform in (ff.grad, ff.jacrev):
        with pytest.raises(TypeError, match="pass floats instead"):
            transform(lambda x: fg.sum(x * 1.0))(np.arange(3))
    with pytest.raises(ValueError, match=r"tangent 0 has shape \(2,\) but its primal has shape \(3,\)"):
        ff.jvp(lambda x: x, (X,), (np.ones(2),))
    with pytest.raises(ValueError, match="same tree structure"):
        ff.jvp(lambda x: x, (X,), ([X],))
    with pytest.raises(TypeError, match="primals and tangents must be tuples"):
        ff.jvp(lambda x: x, X, X)
    with pytest.raises(ValueError, match="argnums=2 is out of range"):
        ff.grad(lambda x: fg.sum(x), argnums=2)(X)
    for transform in (ff.grad, ff.jacrev, ff.jacfwd):  # a repeated argument got zeros in one place (as torch)
        with pytest.raises(RuntimeError, match=r"argnums elements must be unique, got \(1, 1\)"):
            transform(lambda x, y: fg.sum(x * y), argnums=(1, -1))(X, X)
    with pytest.raises(TypeError, match="has_aux=True"):
        ff.grad(lambda x: fg.sum(x), has_aux=True)(X)
    _, pullback = ff.vjp(lambda x: x * 2, X)
    with pytest.raises(ValueError, match=r"cotangent 0 has shape \(2,\)"):
        pullback(np.ones(2))


def test_forward_over_reverse_through_saved_outputs() -> None:
    def f(x: Any) -> Any:
        return fg.sum(fg.exp(x) * x)

    assert close(ff.hessian(f)(X), ff.jacrev(ff.jacrev(f))(X))


def test_forward_over_reverse_records_the_backward_pass_only_under_an_outer_reverse_transform() -> None:
    """``jvp(grad(f))``: the tangents flow through the unrecorded backward pass of ``grad`` (nothing re-records
    it); under an outer ``grad`` the backward pass is recorded, so third derivatives come out."""
    x0, v = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -0.5])
    recorded: list[bool] = []

    def gradient(x: Any) -> Any:
        g = ff.grad(lambda y: fg.sum(y ** 3))(x)
        recorded.append(g.requires_grad)
        return g

    _, hvp = ff.jvp(gradient, (x0,), (v,))
    np.testing.assert_allclose(hvp, 6 * x0 * v)  # the Hessian of sum(x^3) is diag(6x)
    assert recorded == [False]
    third = ff.grad(lambda x: fg.sum(ff.jvp(gradient, (x,), (v,))[1]))(x0)
    np.testing.assert_allclose(third, 6 * v)
    assert recorded[1:] == [True]


@pytest.mark.parametrize("activation", [fg.tanh, fg.sigmoid])
def test_forward_over_reverse_hessian_of_fused_backward_ops_equals_reverse_over_reverse(activation: Any) -> None:
    """tanh and sigmoid differentiate through one op (tanh_backward/sigmoid_backward) whose explicit JVP rule
    meets a batch of tangents and a batched backward pass at once in ``hessian`` (= jacfwd(jacrev))."""
    W = np.random.default_rng(3).normal(size=(4, 4))

    def f(x: Any) -> Any:
        y = activation(fg.as_tensor(W) @ x)
        return y.sum() * y[0]

    x = np.random.default_rng(4).normal(size=4)
    np.testing.assert_allclose(ff.hessian(f)(x), ff.jacrev(ff.jacrev(f))(x), rtol=1e-12, atol=1e-14)

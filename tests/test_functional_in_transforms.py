"""torch-style ``funcgrad.functional`` calls inside ``funcgrad.func`` transforms: with ``create_graph=True`` they
are differentiated like any other code (torch raises there; we give the right answer), without it they would
return a constant, so they raise (as torch) instead of letting the transform give zeros."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import func, functional


def cubic(y):
    return (y ** 3) * y[0]


def scalar(x):
    return (x ** 4).sum() + x[0] * x[1] ** 3 + fg.sin(x).prod()


X = np.array([0.7, -1.3])


@pytest.mark.parametrize("outer", [func.jacfwd, func.jacrev])
def test_jacobian_with_create_graph_is_differentiated(outer):
    x = fg.tensor(X)
    got = outer(lambda x: functional.jacobian(cubic, x, create_graph=True))(x)
    np.testing.assert_allclose(got.data, func.jacfwd(func.jacrev(cubic))(x).data, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("outer", [func.jacfwd, func.jacrev])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_hessian_with_create_graph_gives_third_derivatives(outer, strategy):
    x = fg.tensor(X)
    got = outer(lambda x: functional.hessian(scalar, x, create_graph=True, vectorize=True,
                                             outer_jacobian_strategy=strategy))(x)
    expected = func.jacfwd(func.hessian(scalar))(x)
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-10, atol=1e-12)
    assert np.abs(expected.data).max() > 1  # a real third-derivative tensor, not zeros


@pytest.mark.parametrize("call", [
    lambda x: functional.jacobian(cubic, x),
    lambda x: functional.jacobian(cubic, x, vectorize=True, chunk_size=1),
    lambda x: functional.hessian(scalar, x),
    lambda x: functional.vjp(cubic, x, fg.ones(2))[1],
    lambda x: functional.jvp(cubic, x, fg.ones(2))[1],
    lambda x: functional.hvp(scalar, x, fg.ones(2))[1],
    lambda x: functional.vhp(scalar, x, fg.ones(2))[1],
])
@pytest.mark.parametrize("outer", [func.jacfwd, func.jacrev])
def test_without_create_graph_inside_a_transform_raises(call, outer):
    with pytest.raises(RuntimeError, match="create_graph=True"):
        outer(lambda x: call(x).sum())(fg.tensor(X))


@pytest.mark.parametrize("call", [
    lambda x: functional.jacobian(lambda y: cubic(y) * x[0], fg.ones(2)),
    lambda x: functional.jacobian(lambda y: cubic(y) * x[0], fg.ones(2), vectorize=True),
    lambda x: functional.hessian(lambda y: scalar(y * x), fg.ones(2)),
    lambda x: functional.vjp(lambda y: cubic(y * x), fg.ones(2), fg.ones(2))[1],
    lambda x: functional.jvp(lambda y: cubic(y * x), fg.ones(2), fg.ones(2))[1],
    lambda x: functional.hvp(lambda y: scalar(y * x), fg.ones(2), fg.ones(2))[1],
    lambda x: functional.vhp(lambda y: scalar(y * x), fg.ones(2), fg.ones(2))[1],
    lambda x: func.jacrev(lambda y: cubic(y * x), chunk_size=1)(np.ones(2)),
    lambda x: func.jacfwd(lambda y: cubic(y * x), chunk_size=1)(np.ones(2)),
])
@pytest.mark.parametrize("outer", [func.jacfwd, func.jacrev])
def test_without_create_graph_a_function_closing_over_a_traced_value_raises(call, outer):
    """The inputs are constants but the function closes over the transform's ``x``: the result, detached, was
    a constant and the transform gave zeros."""
    with pytest.raises((RuntimeError, ValueError), match="create_graph=True"):
        outer(lambda x: call(x).sum())(fg.tensor(X))


def test_with_create_graph_a_function_closing_over_a_traced_value_is_differentiated():
    # d/dx sum(d/dy sin(x * y)) at y = 1: d/dx sum(x cos(x)) = cos(x) - x sin(x)
    got = func.grad(lambda x: functional.vjp(lambda y: fg.sin(x * y), fg.ones(2), fg.ones(2),
                                             create_graph=True)[1].sum())(X)
    np.testing.assert_allclose(got, np.cos(X) - X * np.sin(X))


def test_outside_transforms_a_traced_input_still_gives_a_detached_result():
    x = fg.tensor(X, requires_grad=True)
    jac = functional.jacobian(cubic, x)  # torch's semantics: no graph without create_graph
    assert not jac.requires_grad
    np.testing.assert_allclose(jac.data, func.jacrev(cubic)(fg.tensor(X)).data)


def test_constants_inside_a_transform_need_no_graph():
    A = fg.tensor(np.array([[2.0, 1.0], [0.5, 3.0]]))
    total = float(func.jacrev(lambda a: a @ a)(A).data.sum())
    got = func.grad(lambda x: (functional.jacobian(lambda a: a @ a, A).sum() * x).sum())(fg.tensor(X))
    np.testing.assert_allclose(got.data, np.full(2, total))


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_a_traced_vector_needs_create_graph(name):
    """``v`` traced by the transform: without create_graph the product was a constant (zeros); with it, J."""
    x = fg.tensor(X)
    with pytest.raises(RuntimeError, match="create_graph=True"):
        func.jacrev(lambda v: getattr(functional, name)(fg.sin, x, v)[1])(np.ones(2))
    got = func.jacrev(lambda v: getattr(functional, name)(fg.sin, x, v, create_graph=True)[1])(np.ones(2))
    np.testing.assert_allclose(got, np.diag(np.cos(X)))

"""funcgrad.optimize: the SciPy bridge (objective for minimize, matrix-free operators)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, rosen, rosen_der, rosen_hess, rosen_hess_prod
from scipy.sparse.linalg import cg, eigsh

import funcgrad as fg
from funcgrad.optimize import hessian_operator, jacobian_operator, scipy_objective


def rosenbrock(p: dict) -> fg.Tensor:
    x = p["x"]
    return fg.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


X0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])


def test_objective_matches_scipys_rosenbrock_derivatives() -> None:
    obj = scipy_objective(rosenbrock, {"x": X0})
    value, g = obj.fun(X0)
    assert np.isclose(value, rosen(X0)) and np.allclose(g, rosen_der(X0))
    assert obj.fun(X0)[1] is g  # cached for the same x
    p = np.arange(5.0)
    assert np.allclose(obj.hessp(X0, p), rosen_hess_prod(X0, p)) and np.allclose(obj.hess(X0), rosen_hess(X0))


@pytest.mark.parametrize("method", ["trust-ncg", "Newton-CG", "trust-exact"])
def test_minimize_converges_on_rosenbrock(method: str) -> None:
    obj = scipy_objective(rosenbrock, {"x": X0})
    second = {"hess": obj.hess} if method == "trust-exact" else {"hessp": obj.hessp}
    result = minimize(obj.fun, obj.x0, jac=True, method=method, **second)
    assert result.success and np.allclose(obj.unravel(result.x)["x"], 1.0, atol=1e-3)


def test_operators_without_dense_matrices() -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 4))

    def f(x: fg.Tensor) -> fg.Tensor:
        return 0.5 * fg.sum(x ** 2) + 0.25 * fg.sum(x ** 4)

    x = rng.standard_normal(4)
    h = hessian_operator(f, x)
    dense = np.diag(1 + 3 * x ** 2)
    b = rng.standard_normal(4)
    solution, info = cg(h, b)
    assert info == 0 and np.allclose(dense @ solution, b, atol=1e-4)
    assert np.allclose(np.sort(eigsh(h, k=2, return_eigenvectors=False)), np.sort(np.diag(dense))[-2:])
    j = jacobian_operator(lambda x: fg.sin(x) * fg.tensor(a), x)  # (6, 4) output, flattened
    v, u = rng.standard_normal(4), rng.standard_normal(24)
    full = np.einsum("ij,jk->ijk", np.cos(x) * a, np.eye(4)).reshape(24, 4)
    assert j.shape == (24, 4) and np.allclose(j.matvec(v), full @ v) and np.allclose(j.rmatvec(u), full.T @ u)

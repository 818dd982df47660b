"""The scale examples run and give right answers at small sizes."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

import funcgrad.func as ff

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reaction_diffusion_with_the_sparse_jacobian() -> None:
    example = _example("reaction_diffusion")
    n = 30
    y0 = example.initial_state(n)

    def rhs(y):
        return example.brusselator(y, n)

    np.testing.assert_allclose(ff.sparse_jacobian(rhs)(y0).toarray(), ff.jacrev(rhs)(y0), atol=1e-13)
    runs = example.solve(n, t_end=1.0)
    (_, exact), (_, differences) = runs["funcgrad sparse Jacobian"], runs["SciPy sparse finite differences"]
    assert exact.success and differences.success
    np.testing.assert_allclose(exact.y[:, -1], differences.y[:, -1], rtol=1e-5, atol=1e-7)


def test_trust_constr_with_the_sparse_hessian() -> None:
    example = _example("sparse_hessian_optimize")
    result = example.optimize(60)
    assert result.success
    u = np.concatenate([[0.0], result.x, [0.0]])
    h = 1.0 / 61
    residual = -(u[2:] - 2 * u[1:-1] + u[:-2]) / h ** 2 + np.sinh(u[1:-1]) - 1  # the minimum solves -u'' + sinh u = 1
    assert np.abs(residual).max() < 1e-5

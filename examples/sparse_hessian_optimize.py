"""``scipy.optimize.minimize(method="trust-constr")`` with an exact sparse Hessian from funcgrad.

The extended Rosenbrock function couples each variable with its neighbours only, so its Hessian is
tridiagonal: ``funcgrad.func.sparse_hessian`` recovers it from three Hessian-vector products (one batched
forward-over-reverse pass), whatever ``n`` is. Run ``python examples/sparse_hessian_optimize.py [n]``.
"""
from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
from scipy.optimize import minimize

import funcgrad as fg
import funcgrad.func as ff


def rosenbrock(x: Any) -> Any:
    """``sum(100 (x[i+1] - x[i]**2)**2 + (1 - x[i])**2)``."""
    return fg.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def optimize(n: int) -> Any:
    """Minimize from the classic start (-1.2, 1, -1.2, 1, ...); the result of ``minimize``."""
    x0 = np.tile([-1.2, 1.0], n // 2)
    value_and_grad = ff.value_and_grad(rosenbrock)
    hessian = ff.sparse_hessian(rosenbrock, sparsity=ff.hessian_sparsity(rosenbrock)(x0))
    return minimize(value_and_grad, x0, jac=True, hess=hessian, method="trust-constr",
                    options={"gtol": 1e-10, "xtol": 1e-12, "maxiter": 5000})


def main(n: int = 2000) -> None:
    """Print the solve: iterations, time and the distance to the minimum at (1, ..., 1)."""
    start = time.perf_counter()
    result = optimize(n)
    seconds = time.perf_counter() - start
    print(f"extended Rosenbrock, n = {n}: {result.nit} iterations, {seconds:.2f} s, "
          f"max |x - 1| = {np.abs(result.x - 1).max():.1e} ({result.message})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)

"""``scipy.optimize.minimize(method="trust-constr")`` with an exact sparse Hessian from funcgrad.

The discretised energy of a stretched string in a convex potential, ``E(u) = sum((u[i+1] - u[i])**2) / (2 h)
+ h sum(cosh(u) - u)`` (fixed ends), couples each value with its neighbours only, so its Hessian is
tridiagonal: ``funcgrad.func.sparse_hessian`` recovers it from three Hessian-vector products (one batched
forward-over-reverse pass), whatever ``n`` is. The minimum solves ``-u'' + sinh(u) = 1``.
Run ``python examples/sparse_hessian_optimize.py [n]``.
"""
from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
from scipy.optimize import minimize

import funcgrad as fg
import funcgrad.func as ff


def energy(u: Any) -> Any:
    """``E(u)`` on the ``n`` interior points of [0, 1], ``u = 0`` at both ends."""
    h = 1.0 / (len(u) + 1)
    ends = fg.zeros(1)
    padded = fg.cat([ends, u, ends])
    return fg.sum((padded[1:] - padded[:-1]) ** 2) / (2 * h) + h * fg.sum(fg.cosh(u) - u)


def optimize(n: int) -> Any:
    """Minimize from ``u = 0``; the result of ``minimize``."""
    x0 = np.zeros(n)
    value_and_grad = ff.value_and_grad(energy)
    hessian = ff.sparse_hessian(energy, sparsity=ff.hessian_sparsity(energy)(x0))
    return minimize(value_and_grad, x0, jac=True, hess=hessian, method="trust-constr",
                    options={"gtol": 1e-10, "xtol": 1e-12, "maxiter": 5000})


def main(n: int = 2000) -> None:
    """Print the solve: iterations, time, the gradient's size at the result and the residual of the ODE."""
    start = time.perf_counter()
    result = optimize(n)
    seconds = time.perf_counter() - start
    u = np.concatenate([[0.0], result.x, [0.0]])
    h = 1.0 / (n + 1)
    residual = -(u[2:] - 2 * u[1:-1] + u[:-2]) / h ** 2 + np.sinh(u[1:-1]) - 1
    print(f"string energy, n = {n}: {result.nit} iterations, {seconds:.2f} s, |grad| = "
          f"{np.abs(result.grad).max():.1e}, max |-u'' + sinh(u) - 1| = {np.abs(residual).max():.1e} "
          f"({result.message})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)

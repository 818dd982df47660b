"""A stiff 1-D reaction-diffusion system (the Brusselator) with 10,000 unknowns, solved with BDF.

    u' = a + u**2 v - (b + 1) u + alpha u_xx,     v' = b u - u**2 v + alpha v_xx

on ``n`` grid points each (``y = [u, v]``, fixed boundary values). The right-hand side is written once
with funcgrad operations; ``funcgrad.func.sparse_jacobian`` gives its exact Jacobian as a sparse matrix
from one batched forward pass over a handful of colors, which is what an implicit solver needs. The
solve is timed beside SciPy's sparse finite differences (``jac_sparsity``), which cost one evaluation
per color and are only approximate. Run ``python examples/reaction_diffusion.py [n]``.
"""
from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

import funcgrad as fg
import funcgrad.func as ff

A, B = 1.0, 3.0


def brusselator(y: Any, n: int) -> Any:
    """The right-hand side for ``y = [u, v]`` (``2 n`` values); works on arrays and on Tensors."""
    alpha = 0.02 * (n + 1) ** 2 / 50 ** 2  # a diffusion that keeps the problem stiff as n grows
    u, v = y[:n], y[n:]

    def laplacian(w: Any, boundary: float) -> Any:
        edge = fg.full((1,), boundary)
        padded = fg.cat([edge, w, edge])
        return padded[:-2] - 2 * padded[1:-1] + padded[2:]

    u2v = u * u * v
    du = A + u2v - (B + 1) * u + alpha * laplacian(u, A)
    dv = B * u - u2v + alpha * laplacian(v, B / A)
    return fg.cat([du, dv])


def initial_state(n: int) -> np.ndarray:
    """``u = 1 + sin(2 pi x)``, ``v = 3`` on the interior grid points."""
    x = np.arange(1, n + 1) / (n + 1)
    return np.concatenate([1 + np.sin(2 * np.pi * x), np.full(n, 3.0)])


def solve(n: int, t_end: float = 10.0) -> dict[str, Any]:
    """Solve with funcgrad's sparse Jacobian and with SciPy's sparse finite differences; timings and results."""
    y0 = initial_state(n)

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        return np.asarray(brusselator(y, n))

    pattern = ff.jacobian_sparsity(lambda y: brusselator(y, n))(y0)
    jacobian = ff.sparse_jacobian(lambda y: brusselator(y, n), sparsity=pattern)
    runs: dict[str, Any] = {}
    for name, options in (("funcgrad sparse Jacobian", {"jac": lambda t, y: jacobian(y)}),
                          ("SciPy sparse finite differences", {"jac_sparsity": pattern})):
        start = time.perf_counter()
        solution = solve_ivp(rhs, (0.0, t_end), y0, method="BDF", rtol=1e-6, atol=1e-9, **options)
        runs[name] = (time.perf_counter() - start, solution)
    runs["pattern"] = pattern
    return runs


def main(n: int = 5000) -> None:
    """Print the problem's size, the Jacobian's sparsity and coloring, and both solves."""
    runs = solve(n)
    pattern = runs.pop("pattern")
    print(f"Brusselator, {2 * n} unknowns: Jacobian {pattern.shape[0]} x {pattern.shape[1]} with {pattern.nnz} "
          f"nonzeros ({pattern.nnz / pattern.shape[0]:.1f} per row)")
    reference = None
    for name, (seconds, solution) in runs.items():
        if reference is None:
            reference = solution.y[:, -1]
        difference = np.abs(solution.y[:, -1] - reference).max()
        print(f"{name:<33} {seconds:7.2f} s   {solution.nfev:5d} f evaluations, {solution.njev:3d} Jacobians, "
              f"{solution.nlu:4d} LU; |y(T) - y_funcgrad(T)| = {difference:.1e}   ({solution.message})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)

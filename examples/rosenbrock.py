"""Minimise the Rosenbrock function with SciPy's second-order methods, derivatives by funcgrad.

``scipy_objective`` hands ``scipy.optimize.minimize`` a fused value+gradient (``jac=True``) and
Hessian-vector products (``hessp``, forward-over-reverse), so no derivative is written by hand.
The parameters are a pytree (a dict), flattened for SciPy and rebuilt for the function.

Run: ``python examples/rosenbrock.py``
"""
import numpy as np
from scipy.optimize import minimize

import funcgrad as fg
from funcgrad.optimize import scipy_objective


def rosenbrock(params: dict) -> fg.Tensor:
    """The n-dimensional Rosenbrock function of ``params["x"]``; its minimum is 0 at all ones."""
    x = params["x"]
    return fg.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def main() -> None:
    objective = scipy_objective(rosenbrock, {"x": np.array([1.3, 0.7, 0.8, 1.9, 1.2])})
    for method in ("trust-ncg", "Newton-CG"):
        result = minimize(objective.fun, objective.x0, jac=True, hessp=objective.hessp, method=method,
                          options={"gtol": 1e-8} if method == "trust-ncg" else {"xtol": 1e-10})
        x = objective.unravel(result.x)["x"]
        print(f"{method:>9}: success={result.success} f={result.fun:.3e} nit={result.nit} "
              f"nfev={result.nfev} x={np.round(x, 6)}")


if __name__ == "__main__":
    main()

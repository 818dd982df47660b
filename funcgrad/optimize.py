"""SciPy bridge: funcgrad-differentiable functions as ``scipy.optimize`` objectives and ``LinearOperator``s.

``scipy_objective`` gives ``scipy.optimize.minimize`` what it wants (a fused, cached value and
gradient for ``jac=True``, ``hess``, ``hessp(x, p)``) for parameters that may be any pytree;
``jacobian_operator`` and ``hessian_operator`` give matrix-free operators for ``cg``, ``eigsh``,
``lsqr``... Everything here is a few lines over ``funcgrad.func``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.sparse.linalg import LinearOperator

from funcgrad.func import grad, hessian, jvp, value_and_grad, vjp
from funcgrad.functional._pytree import ravel

__all__ = ["Objective", "scipy_objective", "jacobian_operator", "hessian_operator"]


class Objective:
    """A scalar function of a pytree of parameters, seen by SciPy as a function of one flat vector.

    Attributes:
        x0: the initial parameters, flattened to a float64 vector.
        unravel: turns a flat vector (e.g. ``result.x``) back into the parameters' pytree.
    """

    def __init__(self, f: Callable[[Any], Any], params: Any) -> None:
        self.x0, self.unravel = ravel(params)
        self._f = f
        self._value_and_grad = value_and_grad(self.flat)
        self._hessian = hessian(self.flat)
        self._grad = grad(self.flat)
        self._last: tuple[np.ndarray, float, np.ndarray] | None = None

    def flat(self, x: Any) -> Any:
        """The function of the flat vector ``x``."""
        return self._f(self.unravel(x))

    def fun(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(value, gradient)`` at ``x`` in one pass, cached for the last ``x`` (use with ``jac=True``)."""
        if self._last is None or not np.array_equal(self._last[0], x):
            value, g = self._value_and_grad(np.array(x, dtype=np.float64))
            self._last = (np.array(x, copy=True), float(value), g)
        return self._last[1], self._last[2]

    def hess(self, x: np.ndarray) -> np.ndarray:
        """The dense Hessian at ``x``, shape ``(n, n)`` (forward-over-reverse)."""
        return self._hessian(np.asarray(x, dtype=np.float64))

    def hessp(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The Hessian at ``x`` times ``p`` (SciPy's argument order), by forward-over-reverse."""
        return jvp(self._grad, (np.asarray(x, dtype=np.float64),), (np.asarray(p, dtype=np.float64),))[1]


def scipy_objective(f: Callable[[Any], Any], params: Any) -> Objective:
    """Wrap a scalar function of ``params`` (an array or a pytree of them) for ``scipy.optimize.minimize``.

    Args:
        f: takes a pytree shaped like ``params``, returns a scalar.
        params: the initial parameters.

    Returns:
        An ``Objective``: pass ``obj.fun`` with ``jac=True``, and ``obj.hess`` or ``obj.hessp``; turn the
        result back into parameters with ``obj.unravel(result.x)``.

    Example:
        >>> import numpy as np
        >>> from scipy.optimize import minimize
        >>> obj = scipy_objective(lambda p: ((p["w"] - 3.0) ** 2).sum() + p["b"] ** 2, {"w": np.zeros(2), "b": 1.0})
        >>> res = minimize(obj.fun, obj.x0, jac=True, hessp=obj.hessp, method="trust-ncg")
        >>> {k: np.round(v, 6) for k, v in obj.unravel(res.x).items()}
        {'w': array([3., 3.]), 'b': np.float64(0.0)}
    """
    return Objective(f, params)


def jacobian_operator(f: Callable[[Any], Any], x: Any) -> LinearOperator:
    """The Jacobian of ``f`` at ``x`` as a matrix-free ``LinearOperator``.

    ``matvec`` is a forward-mode Jacobian-vector product; ``rmatvec`` applies the pullback recorded
    once at ``x``. Input and output pytrees are flattened.

    Returns:
        A ``LinearOperator`` of shape ``(output size, input size)``.

    Example:
        >>> import numpy as np
        >>> J = jacobian_operator(lambda x: x ** 2, np.array([1.0, 2.0]))
        >>> J.matvec(np.ones(2)), J.rmatvec(np.ones(2))
        (array([2., 4.]), array([2., 4.]))
    """
    x_flat, unravel = ravel(x)

    def flat(v: Any) -> Any:
        return f(unravel(v))

    out, pullback = vjp(flat, x_flat)
    out_flat, unravel_out = ravel(out)

    def matvec(v: np.ndarray) -> np.ndarray:
        return ravel(jvp(flat, (x_flat,), (np.ravel(v).astype(np.float64),))[1])[0]

    def rmatvec(u: np.ndarray) -> np.ndarray:
        return pullback(unravel_out(np.ravel(u).astype(np.float64)))[0]

    return LinearOperator((out_flat.size, x_flat.size), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)


def hessian_operator(f: Callable[[Any], Any], x: Any) -> LinearOperator:
    """The Hessian of a scalar ``f`` at ``x`` as a matrix-free ``LinearOperator``: the gradient's Jacobian.

    ``matvec`` is forward-over-reverse, ``rmatvec`` reverse-over-reverse (equal: the Hessian is symmetric).

    Example:
        >>> import numpy as np
        >>> from scipy.sparse.linalg import cg
        >>> H = hessian_operator(lambda x: (x ** 2).sum() + x[0] * x[1], np.zeros(2))
        >>> np.round(cg(H, np.array([3.0, 3.0]))[0], 6)
        array([1., 1.])
    """
    return jacobian_operator(grad(f), x)

"""Jacobians, Hessians and Hessian-vector products (issues 4 and 6), against torch and the analytic limit.

Row kinds (each a funcgrad row ``fg <kind>`` and a torch row ``torch <kind>``; ``funcgrad`` is the
workload's subject):

- ``vec`` / ``loop``: ``functional.jacobian`` or ``hessian`` with ``vectorize=True`` (one batched
  backward pass) / ``False`` (a backward pass per output);
- ``fwd``: the same with ``vectorize=True`` and forward mode (``strategy="forward-mode"``, or
  ``outer_jacobian_strategy="forward-mode"``: forward-over-reverse);
- ``func``: the ``func`` transform (``jacrev``, ``jacfwd``, ``hessian`` = ``jacfwd(jacrev)``, or
  ``jvp(grad)`` for the hvp);
- ``hvp`` / ``vhp``: ``functional.hvp`` (forward-over-reverse) / ``functional.vhp`` (reverse-over-reverse).

The NumPy limits are the analytic formulas, float64 throughout.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.frameworks import Problem
from benchmarks.harness import Target
from benchmarks.variants import Call, transform_workload

NEAR_NUMPY_3X = Target(("numpy",), 3.0, "within 3x of the analytic NumPy limit")
JIT_NEAR_NUMPY_3X = Target(("numpy",), 3.0, "jit-compiled (fg jit), within 3x of the analytic NumPy limit", "fg jit")


# ----- tanh(W @ x + b): a square Jacobian ----------------------------------------------------------
def layer_setup(rng: np.random.Generator, n: int) -> Problem:
    """``W`` (n x n, unit-variance rows of ``W @ x``) and ``b`` (constants), then ``x``."""
    return (rng.standard_normal((n, n)) / np.sqrt(n), 0.1 * rng.standard_normal(n)), (rng.standard_normal(n),)


def layer(m: Any, W: Any, b: Any, x: Any) -> Any:
    """``tanh(W @ x + b)``."""
    return m.tanh(W @ x + b)


def layer_jacobian_numpy(W: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``(1 - t**2)[:, None] * W`` with ``t = tanh(W @ x + b)``."""
    t = W @ x
    t += b
    np.tanh(t, out=t)
    slope = np.square(t)
    np.subtract(1.0, slope, out=slope)
    return slope[:, None] * W


# ----- sum(log1p(exp(A @ x))) + 0.5 * x @ x: Hessian and Hessian-vector product --------------------
def objective_setup(rng: np.random.Generator, rows: int, n: int, vectors: int = 0) -> Problem:
    """``A`` (rows x n, ``A @ x`` of unit variance) as the constant, then ``x`` and ``vectors`` directions."""
    A = rng.standard_normal((rows, n)) / np.sqrt(n)
    return (A,), (rng.standard_normal(n), *rng.standard_normal((vectors, n)))


def objective(m: Any, A: Any, x: Any) -> Any:
    """``sum(log1p(exp(A @ x))) + 0.5 * x @ x``: softplus of a linear map plus a ridge term."""
    return m.sum(m.log1p(m.exp(A @ x))) + 0.5 * (x @ x)


def _softplus_curvature(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``s * (1 - s)`` with ``s = sigmoid(A @ x)``, the second derivative of softplus at ``A @ x``."""
    e = np.exp(A @ x)
    e /= np.square(1.0 + e)  # e / (1 + e)**2 = s * (1 - s)
    return e


def objective_hessian_numpy(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A.T @ (s*(1-s))[:, None] * A + I``."""
    H = (A.T * _softplus_curvature(A, x)) @ A
    H.flat[::len(x) + 1] += 1.0
    return H


def objective_hvp_numpy(A: np.ndarray, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``A.T @ (s*(1-s) * (A @ v)) + v``."""
    u = A @ v
    u *= _softplus_curvature(A, x)
    out = u @ A
    out += v
    return out


# ----- the calls, written once for funcgrad and torch ----------------------------------------------
JACOBIAN: dict[str, Call] = {
    "vec": lambda api, f, x: api.functional.jacobian(f, x, vectorize=True),
    "loop": lambda api, f, x: api.functional.jacobian(f, x),
    "func": lambda api, f, x: api.func.jacrev(f)(x),
}
JACFWD: dict[str, Call] = {
    "func": lambda api, f, x: api.func.jacfwd(f)(x),
    "fwd": lambda api, f, x: api.functional.jacobian(f, x, vectorize=True, strategy="forward-mode"),
}
HESSIAN: dict[str, Call] = {
    "vec": lambda api, f, x: api.functional.hessian(f, x, vectorize=True),
    "loop": lambda api, f, x: api.functional.hessian(f, x),
    "func": lambda api, f, x: api.func.hessian(f)(x),
}
HESSIAN_FWD: dict[str, Call] = {
    "fwd": lambda api, f, x: api.functional.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode"),
}
HVP: dict[str, Call] = {
    "hvp": lambda api, f, x, v: api.functional.hvp(f, x, v)[1],
    "vhp": lambda api, f, x, v: api.functional.vhp(f, x, v)[1],
    "func": lambda api, f, x, v: api.func.jvp(api.func.grad(f), (x,), (v,))[1],
}

LAYER, LAYER_SMALL = {"n": 256}, {"n": 5}
OBJECTIVE, OBJECTIVE_SMALL = {"rows": 512, "n": 128}, {"rows": 7, "n": 4}

WORKLOADS = [
    transform_workload("jacobian", "256x256 Jacobian of tanh(W @ x + b); funcgrad = functional vectorize=True, "
                       "func = jacrev", layer_setup, layer, JACOBIAN, "vec", LAYER, LAYER_SMALL,
                       numpy_limit=layer_jacobian_numpy, jit=True,
                       targets=(Target(("torch vec", "torch func"), 1.0, "faster than torch's fastest "
                                       "(vectorize=True or torch.func.jacrev)"),
                                Target(("numpy",), 5.0, "within 5x of the analytic NumPy limit"))),
    transform_workload("jacfwd", "the same Jacobian in forward mode; funcgrad = func.jacfwd, fwd = functional "
                       "strategy='forward-mode'", layer_setup, layer, JACFWD, "func", LAYER, LAYER_SMALL,
                       numpy_limit=layer_jacobian_numpy, jit=True),
    transform_workload("hessian", "128x128 Hessian of sum(log1p(exp(A @ x))) + x@x/2, A 512x128; funcgrad = "
                       "functional vectorize=True, func = jacfwd(jacrev)", objective_setup, objective, HESSIAN,
                       "vec", OBJECTIVE, OBJECTIVE_SMALL, numpy_limit=objective_hessian_numpy, jit=True,
                       targets=(Target(("torch vec", "torch func"), 1.0, "faster than torch's fastest "
                                       "(vectorize=True or torch.func.hessian)"), NEAR_NUMPY_3X)),
    transform_workload("hessian-fwd", "the same Hessian forward-over-reverse; funcgrad = functional "
                       "outer_jacobian_strategy='forward-mode', vectorize=True", objective_setup, objective,
                       HESSIAN_FWD, "fwd", OBJECTIVE, OBJECTIVE_SMALL, numpy_limit=objective_hessian_numpy,
                       jit=True, targets=(NEAR_NUMPY_3X, JIT_NEAR_NUMPY_3X)),
    transform_workload("hvp", "Hessian-vector product of the same function; funcgrad = functional.hvp, "
                       "func = jvp(grad)", objective_setup, objective, HVP, "hvp", {**OBJECTIVE, "vectors": 1},
                       {**OBJECTIVE_SMALL, "vectors": 1}, numpy_limit=objective_hvp_numpy, jit=True,
                       targets=(NEAR_NUMPY_3X, JIT_NEAR_NUMPY_3X)),
]

"""Higher-order derivatives (issue 16): the k-th derivative of f(x) = exp(sin(x)) * tanh(x) at 1000 points.

Rows (each returns d^k f / dx^k at every point):

- ``funcgrad`` / ``torch``: k nested ``autograd.grad(g.sum(), x, create_graph=True)`` (f is elementwise,
  so the gradient of the sum is the derivative at every point);
- ``fg jet``: ``funcgrad.func.nth_derivative(f, k)``, one Taylor-mode pass (``jet``) of order k;
- ``jax jet`` / ``jax jit``: ``jax.experimental.jet.jet`` eagerly, and under ``jax.jit`` (when JAX is installed);
- ``numpy``: the same Taylor propagation written by hand for this f (the limit, and the reference).

Timed with the garbage collector running (the harness's default; ``--gc-off`` pauses it): a nested graph
is many small Python objects, and collecting them is part of what funcgrad costs (torch's graph is C++).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from benchmarks.frameworks import installed
from benchmarks.harness import Runner, Sizes, Target, Workload

NO_SLOWER_THAN_TORCH = Target(("torch",), 1.0, "nested create_graph no slower than torch's")
JET_NEAR_NUMPY_2X = Target(("numpy",), 2.0, "jet within 2x of the hand-written NumPy Taylor limit", "fg jet")
JET_FASTER_THAN_JAX = Target(("jax jet",), 1.0, "jet faster than JAX's eager jet", "fg jet")


def f(m: Any, x: Any) -> Any:
    """``exp(sin(x)) * tanh(x)`` with the namespace ``m`` (funcgrad, torch or jax.numpy)."""
    return m.exp(m.sin(x)) * m.tanh(x)


def numpy_limit(x: np.ndarray, k: int) -> np.ndarray:
    """d^k f / dx^k by Taylor propagation along x(t) = x + t, normalized coefficients, plain NumPy.

    sin and cos of x + t have their coefficients in closed form; exp(s) and tanh(x + t) follow
    y' = d x' (d = y for exp, 1 - y^2 for tanh); the k-th coefficient of the product closes it.
    """
    s, c = [np.sin(x)], [np.cos(x)]
    for j in range(1, k + 1):
        s.append(c[j - 1] / j)
        c.append(-s[j - 1] / j)
    S = np.stack(s)
    JS = S[1:] * np.arange(1, k + 1, dtype=float)[:, None]
    E = np.empty_like(S)
    E[0] = np.exp(s[0])
    T = np.empty_like(S)
    T[0] = np.tanh(x)
    D = np.empty_like(S)
    D[0] = 1 - T[0] * T[0]
    for j in range(1, k + 1):
        E[j] = np.add.reduce(JS[:j] * E[j - 1::-1], 0) / j
        T[j] = D[j - 1] / j  # x(t) = x + t: x_1 = 1, the others 0
        D[j] = -np.add.reduce(T[: j + 1] * T[j::-1], 0)
    return np.add.reduce(E * T[::-1], 0) * math.factorial(k)


def _funcgrad_nested(x: np.ndarray, k: int) -> Runner:
    import funcgrad as fg

    def run() -> list[np.ndarray]:
        t = fg.tensor(x, requires_grad=True)
        g = f(fg, t)
        for _ in range(k):
            (g,) = fg.autograd.grad(g.sum(), t, create_graph=True)
        return [g.data]
    return run


def _funcgrad_jet(x: np.ndarray, k: int) -> Runner:
    import funcgrad as fg
    from funcgrad.func import nth_derivative

    derivative = nth_derivative(lambda t: f(fg, t), k)
    return lambda: [derivative(x)]


def _torch_nested(x: np.ndarray, k: int) -> Runner:
    import torch

    def run() -> list[np.ndarray]:
        t = torch.tensor(x, requires_grad=True)
        g = f(torch, t)
        for _ in range(k):
            (g,) = torch.autograd.grad(g.sum(), t, create_graph=True)
        return [g.detach().numpy()]
    return run


def _jax_jet(x: np.ndarray, k: int, compiled: bool) -> Runner:
    import jax
    import jax.numpy as jnp
    from jax.experimental.jet import jet

    jax.config.update("jax_enable_x64", True)
    terms = [jnp.ones_like(x)] + [jnp.zeros_like(x)] * (k - 1)

    def derivative(x: Any) -> Any:
        return jet(lambda t: f(jnp, t), (x,), (terms,))[1][-1]

    run = jax.jit(derivative) if compiled else derivative
    xj = jnp.asarray(x)
    return lambda: [np.asarray(run(xj).block_until_ready())]


def _build(k: int) -> Any:
    def build(sizes: Sizes, frameworks: frozenset[str] | None) -> dict[str, Runner]:
        x = np.linspace(-1.0, 1.0, sizes["n"])
        makers = {"funcgrad": ("funcgrad", lambda: _funcgrad_nested(x, k)),
                  "fg jet": ("funcgrad", lambda: _funcgrad_jet(x, k)),
                  "torch": ("torch", lambda: _torch_nested(x, k)),
                  "jax jet": ("jax", lambda: _jax_jet(x, k, False)),
                  "jax jit": ("jax", lambda: _jax_jet(x, k, True))}
        variants: dict[str, Runner] = {"numpy": lambda: [numpy_limit(x, k)]}
        for label, (module, make) in makers.items():
            if installed(module) and (frameworks is None or bool({label, module} & frameworks)):
                variants[label] = make()
        return variants
    return build


def _workload(k: int) -> Workload:
    targets = (NO_SLOWER_THAN_TORCH,) + ((JET_NEAR_NUMPY_2X, JET_FASTER_THAN_JAX) if k == 8 else ())
    return Workload(f"higher-order-{k}", f"d^{k}/dx^{k} of exp(sin(x)) * tanh(x) at n points (nested, jet)",
                    _build(k), {"n": 1000}, {"n": 16}, targets=targets, rtol=1e-9)


WORKLOADS = [_workload(k) for k in (1, 2, 3, 4, 8)]  # the targets are about orders 1-8

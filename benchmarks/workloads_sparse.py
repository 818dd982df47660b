"""Sparse Jacobians (issue 17): F(u) = L u + u**3 - sin(u), L the 1-D Laplacian written with slicing.

Rows: ``funcgrad`` is ``func.sparse_jacobian`` with the sparsity pattern detected once (as a user passes it to
every call, e.g. to ``solve_ivp``); ``fg detect`` detects the pattern and colors it at every call; ``fg dense``,
``torch func`` (``torch.func.jacrev``), ``autograd`` (``autograd.jacobian``) and ``jax jit`` (``jax.jacrev``
under ``jax.jit``) build the dense Jacobian. The NumPy limit is the analytic tridiagonal matrix built with
``scipy.sparse.diags_array``. Every row returns the three diagonals' entries in CSR order, so rows agree
without forming an n x n array.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sps

from benchmarks.frameworks import installed
from benchmarks.harness import Runner, Sizes, Target, Workload


def residual(cat: Callable[[list[Any]], Any], sin: Callable[[Any], Any], u: Any) -> Any:
    """``L u + u**3 - sin(u)`` with Dirichlet boundaries, written once for every framework."""
    lap = cat([-2 * u[:1] + u[1:2], u[:-2] - 2 * u[1:-1] + u[2:], u[-2:-1] - 2 * u[-1:]])
    return lap + u ** 3 - sin(u)


def analytic(u: np.ndarray) -> sps.csr_array:
    """The limit: ``L + diag(3 u**2 - cos u)`` as a CSR matrix."""
    n = len(u)
    off = np.ones(n - 1)
    return sps.csr_array(sps.diags_array([off, -2.0 + 3.0 * u ** 2 - np.cos(u), off], offsets=[-1, 0, 1]))


def _band(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of the tridiagonal entries, in CSR order."""
    pattern = sps.csr_array(sps.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1]))
    pattern.sort_indices()
    return np.repeat(np.arange(n), np.diff(pattern.indptr)), pattern.indices


def _variants(sizes: Sizes, frameworks: frozenset[str] | None, dense_peers: bool) -> dict[str, Runner]:
    import funcgrad as fg
    import funcgrad.func as ff

    n = sizes["n"]
    u = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    rows, cols = _band(n)

    def f(x: Any) -> Any:
        return residual(fg.cat, fg.sin, x)

    jac = ff.sparse_jacobian(f, sparsity=ff.jacobian_sparsity(f)(u))
    detecting = ff.sparse_jacobian(f)

    def entries(matrix: sps.csr_array) -> list[np.ndarray]:
        matrix.sort_indices()
        return [matrix.data]

    def want(label: str) -> bool:
        return frameworks is None or label in frameworks or label in ("funcgrad", "numpy")

    variants: dict[str, Runner] = {"funcgrad": lambda: entries(jac(u)), "numpy": lambda: entries(analytic(u))}
    if want("fg detect"):
        variants["fg detect"] = lambda: entries(detecting(u))
    if not dense_peers:
        return variants
    if want("fg dense"):
        dense = ff.jacrev(f)
        variants["fg dense"] = lambda: [dense(u)[rows, cols]]
    if installed("torch") and want("torch func"):
        import torch
        import torch.func

        tu = torch.tensor(u)
        torch_jac = torch.func.jacrev(lambda x: residual(torch.cat, torch.sin, x))
        variants["torch func"] = lambda: [torch_jac(tu).numpy()[rows, cols]]
    if installed("autograd") and want("autograd"):
        import autograd
        import autograd.numpy as anp

        autograd_jac = autograd.jacobian(lambda x: residual(anp.concatenate, anp.sin, x))
        variants["autograd"] = lambda: [autograd_jac(u)[rows, cols]]
    if installed("jax") and want("jax jit"):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jax_jac = jax.jit(jax.jacrev(lambda x: residual(jnp.concatenate, jnp.sin, x)))
        ju = jnp.asarray(u)
        variants["jax jit"] = lambda: [np.asarray(jax_jac(ju).block_until_ready())[rows, cols]]
    return variants


WORKLOADS = [
    Workload("sparse-jacobian", "Jacobian of L u + u**3 - sin(u), n = 2000: sparse (3 colors) against dense peers",
             lambda sizes, frameworks: _variants(sizes, frameworks, dense_peers=True), {"n": 2000}, {"n": 12},
             targets=(Target(("fg dense", "torch func", "autograd", "jax jit"), 1 / 20,
                             "at least 20x faster than the fastest dense Jacobian"),)),
    Workload("sparse-jacobian-20k", "the same at n = 20,000, against the analytic limit only",
             lambda sizes, frameworks: _variants(sizes, frameworks, dense_peers=False), {"n": 20_000}, {"n": 12},
             targets=(Target(("numpy",), 10.0, "within 10x of the analytic scipy.sparse limit"),)),
]

"""Sparse Jacobians and Hessians: one batched pass over a few colors instead of one seed per column.

``sparse_jacobian`` colors the columns of the sparsity pattern (forward mode: one batched JVP pushes
every color at once) or its rows (reverse mode: one batched VJP), whichever needs fewer colors, and
reads each nonzero from the compressed product. ``sparse_hessian`` star-colors the symmetric pattern and
reads each entry from one batch of Hessian-vector products (forward over reverse). The coloring is
worked out once per pattern; the passes run through ``funcgrad.functional._blocks``, so ``chunk_size``,
``executor`` and ``progress`` apply to the colors.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, Literal

import numpy as np
import scipy.sparse as sps

from funcgrad.core.tensor import Tensor
from funcgrad.func.coloring import column_coloring, row_coloring, seed_matrix, star_coloring, symmetric_recovery
from funcgrad.func.sparsity import hessian_sparsity, jacobian_sparsity
from funcgrad.func.transforms import jacrev
from funcgrad.functional._blocks import Products, blocked, check_scale_options

__all__ = ["sparse_jacobian", "sparse_hessian"]


def _as_pattern(sparsity: Any, shape: tuple[int, int], what: str) -> sps.csr_array:
    pattern = sps.csr_array(sparsity, dtype=bool)
    if pattern.shape != shape:
        raise ValueError(f"{what}: the sparsity pattern has shape {pattern.shape} but the function's "
                         f"{'Jacobian' if what == 'sparse_jacobian' else 'Hessian'} has shape {shape} "
                         "(rows over the flattened output, columns over the flattened input)")
    pattern.sum_duplicates()
    pattern.sort_indices()
    return pattern


class _Plan:
    """A pattern, its coloring and where each nonzero is read from the compressed product: made once."""

    def __init__(self, pattern: sps.csr_array, seeds: np.ndarray, read_rows: np.ndarray, read_cols: np.ndarray,
                 mode: str) -> None:
        self.pattern, self.seeds, self.read_rows, self.read_cols, self.mode = pattern, seeds, read_rows, read_cols, mode

    def matrix(self, compressed: np.ndarray, dtype: Any) -> sps.csr_array:
        """The sparse result from ``compressed`` (one row per color)."""
        data = compressed[self.read_rows, self.read_cols].astype(dtype, copy=False)
        return sps.csr_array((data, self.pattern.indices, self.pattern.indptr), shape=self.pattern.shape)


class _Planner:
    """The plan of each call: made at the first call for a given pattern, at every call for a detected one."""

    def __init__(self, sparsity: Any, detect: Callable[[np.ndarray], Any],
                 make: Callable[[Any, np.ndarray], _Plan]) -> None:
        self.sparsity, self.detect, self.make = sparsity, detect, make
        self.fixed: _Plan | None = None

    def __call__(self, data: np.ndarray) -> _Plan:
        if self.fixed is not None:
            return self.fixed
        plan = self.make(self.sparsity if self.sparsity is not None else self.detect(data), data)
        if self.sparsity is not None:
            self.fixed = plan
        return plan


def _compressed(plan: _Plan, products: Products, dtype: Any, chunk_size: int | None, executor: Executor | None,
                progress: bool) -> np.ndarray:
    """The products of every color's seed, one row each (in chunks of colors, on the executor if any)."""
    seeds = plan.seeds.astype(dtype)
    return blocked(products, len(seeds), lambda start, stop: seeds[start:stop], chunk_size, None, executor,
                   progress)


def _jacobian_plan(pattern: sps.csr_array, mode: str) -> _Plan:
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    cols = pattern.indices
    if mode == "auto":
        by_column, by_row = column_coloring(pattern), row_coloring(pattern)
        mode = "forward" if by_column.max(initial=-1) <= by_row.max(initial=-1) else "reverse"
        colors = by_column if mode == "forward" else by_row
    else:
        colors = column_coloring(pattern) if mode == "forward" else row_coloring(pattern)
    if mode == "forward":  # compressed[c] = J @ seed_c: entry (i, j) sits at row colors[j], column i
        return _Plan(pattern, seed_matrix(colors), colors[cols], rows, mode)
    return _Plan(pattern, seed_matrix(colors), colors[rows], cols, mode)  # compressed[c] = seed_c @ J


def _hessian_plan(given: Any, data: np.ndarray) -> _Plan:
    pattern = _as_pattern(given, (data.size, data.size), "sparse_hessian")
    pattern = sps.csr_array((pattern + pattern.T).astype(bool))
    pattern.sort_indices()
    colors = star_coloring(pattern)
    read = symmetric_recovery(pattern, colors)
    assert read is not None  # star_coloring falls back to a coloring that always recovers
    return _Plan(pattern, seed_matrix(colors), read[0], read[1], "forward")


def _flat_input(x: Any, caller: str) -> np.ndarray:
    data = np.asarray(x.data if isinstance(x, Tensor) else x)
    if data.dtype.kind not in "fc":
        raise TypeError(f"{caller} requires a real- or complex-valued input, got dtype {data.dtype}: pass floats")
    return data


def sparse_jacobian(f: Callable[..., Any], sparsity: Any = None, mode: Literal["auto", "forward", "reverse"] = "auto",
                    *, chunk_size: int | None = None, executor: Executor | None = None,
                    progress: bool = False) -> Callable[[Any], sps.csr_array]:
    """The Jacobian of ``f`` as a sparse matrix, by a coloring of its sparsity pattern.

    Args:
        f: a function of one array returning one array.
        sparsity: the pattern (anything ``scipy.sparse.csr_array`` accepts, rows over the flattened output,
            columns over the flattened input); None to detect it with ``jacobian_sparsity`` at each call.
        mode: ``"forward"`` (color columns, one batched JVP), ``"reverse"`` (color rows, one batched VJP) or
            ``"auto"`` (the one with fewer colors).
        chunk_size: colors per pass; ``executor``, ``progress``: as for ``jacrev``.

    Returns:
        A function of ``x`` returning a ``scipy.sparse.csr_array`` of shape ``(out.size, x.size)`` holding
        the Jacobian's entries at the pattern's positions (an entry outside the pattern is taken as zero).

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> J = sparse_jacobian(lambda u: u[1:] ** 2 - u[:-1])(np.array([1.0, 2.0, 3.0]))
        >>> J.toarray()
        array([[-1.,  4.,  0.],
               [ 0., -1.,  6.]])
    """
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f'sparse_jacobian: mode must be "auto", "forward" or "reverse", got {mode!r}')
    check_scale_options(chunk_size, None, executor, "sparse_jacobian")
    planner = _Planner(sparsity, jacobian_sparsity(f), lambda pattern, data: _jacobian_plan(
        _as_pattern(pattern, (pattern.shape[0], data.size), "sparse_jacobian"), mode))

    @functools.wraps(f)
    def jacobian(x: Any) -> sps.csr_array:
        data = _flat_input(x, "sparse_jacobian")
        plan = planner(data)
        products = Products(f, (data,), 0, plan.mode, "sparse_jacobian")  # type: ignore[arg-type]
        compressed = _compressed(plan, products, data.dtype, chunk_size, executor, progress)
        outputs = sum(int(np.prod(shape)) for shape in products.out_shapes)
        if outputs != plan.pattern.shape[0]:
            raise ValueError(f"sparse_jacobian: the sparsity pattern has {plan.pattern.shape[0]} rows but f's output "
                             f"has {outputs} elements; give a pattern of shape (out.size, x.size)")
        return plan.matrix(compressed, compressed.dtype)

    return jacobian


def sparse_hessian(f: Callable[..., Any], sparsity: Any = None, *, chunk_size: int | None = None,
                   executor: Executor | None = None, progress: bool = False) -> Callable[[Any], sps.csr_array]:
    """The Hessian of a scalar function as a sparse matrix, by a star coloring and Hessian-vector products.

    Args:
        f: a function of one array returning a scalar.
        sparsity: the (symmetric) pattern, ``(x.size, x.size)``; None to detect it with ``hessian_sparsity``.
        chunk_size: colors per pass; ``executor``, ``progress``: as for ``jacrev``.

    Returns:
        A function of ``x`` returning the Hessian as a ``scipy.sparse.csr_array``.

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> H = sparse_hessian(lambda u: fg.sum(u[1:] * u[:-1] ** 2))(np.array([1.0, 2.0, 3.0]))
        >>> H.toarray()
        array([[4., 2., 0.],
               [2., 6., 4.],
               [0., 4., 0.]])
    """
    check_scale_options(chunk_size, None, executor, "sparse_hessian")
    planner = _Planner(sparsity, hessian_sparsity(f), _hessian_plan)

    @functools.wraps(f)
    def hessian(x: Any) -> sps.csr_array:
        data = _flat_input(x, "sparse_hessian")
        plan = planner(data)
        products = Products(f, (data,), 0, "forward", "sparse_hessian", inner=jacrev)
        compressed = _compressed(plan, products, data.dtype, chunk_size, executor, progress)
        if sum(int(np.prod(shape)) for shape in products.out_shapes) != data.size:  # f's gradient is not x-shaped
            raise ValueError("sparse_hessian: f must return a scalar (one element): its Hessian is (x.size, x.size)")
        return plan.matrix(compressed.T, compressed.dtype)  # compressed.T[i, c] = (H @ seed_c)[i]

    return hessian

"""Colorings of sparsity patterns: which columns (or rows) one batched pass can carry together.

Columns of a Jacobian that share no row can be seeded by one tangent (their sum): its product with
the Jacobian holds each column's entries in distinct rows. A greedy coloring of the columns' conflict
graph gives the groups (``column_coloring``; ``row_coloring`` is the same for a reverse pass). A
symmetric Hessian needs less: with a *star* coloring (adjacent vertices differ, and no path on four
vertices uses only two colors), every entry can be read directly from one Hessian-vector product,
either in its row or, by symmetry, in its column (``star_coloring``, ``symmetric_recovery``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sps

__all__ = ["column_coloring", "row_coloring", "star_coloring", "symmetric_recovery", "seed_matrix"]


def _adjacency(graph: sps.csr_array) -> list[list[int]]:
    """Each vertex's neighbours (itself excluded) in a symmetric boolean matrix, as Python lists."""
    graph = sps.csr_array(graph)
    graph.sort_indices()
    indptr, indices = graph.indptr.tolist(), graph.indices.tolist()
    return [[w for w in indices[indptr[v]:indptr[v + 1]] if w != v] for v in range(graph.shape[0])]


def _greedy(neighbours: list[list[int]], order: np.ndarray) -> np.ndarray:
    """Smallest color not used by a vertex's neighbours, vertices taken in ``order``."""
    colors = [-1] * len(neighbours)
    for v in order.tolist():
        used = {colors[w] for w in neighbours[v]}
        c = 0
        while c in used:
            c += 1
        colors[v] = c
    return np.array(colors, dtype=np.int64)


def _conflicts(pattern: sps.csr_array) -> list[list[int]]:
    """For each column, the other columns sharing a row with it."""
    ones = sps.csr_array(pattern, dtype=np.int32)
    return _adjacency(sps.csr_array(ones.T @ ones))


def column_coloring(pattern: sps.csr_array) -> np.ndarray:
    """A color per column such that columns of one color share no row (largest columns first).

    Example:
        >>> import scipy.sparse as sps
        >>> tridiagonal = sps.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(5, 5))
        >>> column_coloring(tridiagonal).tolist()
        [2, 0, 1, 2, 0]
    """
    counts = np.diff(sps.csc_array(pattern).indptr)
    return _greedy(_conflicts(pattern), np.argsort(-counts, kind="stable"))


def row_coloring(pattern: sps.csr_array) -> np.ndarray:
    """A color per row such that rows of one color share no column."""
    return column_coloring(sps.csr_array(pattern.T))


def seed_matrix(colors: np.ndarray) -> np.ndarray:
    """The ``(number of colors, len(colors))`` 0/1 matrix whose row ``c`` sums the unit vectors of color ``c``."""
    seeds = np.zeros((int(colors.max(initial=-1)) + 1, len(colors)))
    seeds[colors, np.arange(len(colors))] = 1.0
    return seeds


def star_coloring(pattern: sps.csr_array) -> np.ndarray:
    """A star coloring of a symmetric pattern's graph (off-diagonal entries are its edges), greedy.

    The result is checked by ``symmetric_recovery``'s condition; a coloring that would not allow direct
    recovery of every entry is replaced by the (always recoverable, larger) column coloring.
    """
    sym = sps.csr_array((pattern + pattern.T).astype(bool))
    adj = _adjacency(sym)
    colors = [-1] * len(adj)
    for v in np.argsort([-len(a) for a in adj], kind="stable").tolist():
        forbidden: set[int] = set()
        colored = [w for w in adj[v] if colors[w] >= 0]
        forbidden.update(colors[w] for w in colored)
        for w in colored:
            for x in adj[w]:  # v - w - x - y with colors c, a, c, a
                if x == v or colors[x] < 0:
                    continue
                if any(colors[y] == colors[w] for y in adj[x] if y != w):
                    forbidden.add(colors[x])
        for w in colored:  # w - v - x - y with colors a, c, a, c: v's neighbours w and x share a color
            for x in colored:
                if x != w and colors[x] == colors[w]:
                    forbidden.update(colors[y] for y in adj[x] if y != v and colors[y] >= 0)
        c = 0
        while c in forbidden:
            c += 1
        colors[v] = c
    star = np.array(colors, dtype=np.int64)
    return star if symmetric_recovery(sym, star) is not None else column_coloring(sym)


def symmetric_recovery(pattern: sps.csr_array, colors: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Where each entry of a symmetric matrix with this ``pattern`` is read from ``B = H @ seed_matrix(colors).T``.

    Returns:
        ``(rows, cols)`` of ``B`` for the entries in ``pattern``'s CSR order (entry ``(i, j)`` is
        ``B[i, colors[j]]`` when ``j`` is the only one of its color in row ``i``, else ``B[j, colors[i]]``),
        or None when some entry can be read from neither place.
    """
    csr = sps.csr_array(pattern, dtype=bool)
    csr.sort_indices()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    cols = csr.indices
    if not len(rows):  # no entries (SciPy indexes a sparse array by empty index arrays into a sparse result)
        return rows, cols.astype(np.int64)
    n_colors = int(colors.max(initial=-1)) + 1
    counts = sps.csr_array((np.ones(len(rows), np.int64), (rows, colors[cols])), shape=(csr.shape[0], n_colors))
    in_row = counts[rows, colors[cols]] == 1
    in_column = counts[cols, colors[rows]] == 1
    if not np.all(in_row | in_column):
        return None
    return np.where(in_row, rows, cols), np.where(in_row, colors[cols], colors[rows])

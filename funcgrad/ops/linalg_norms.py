"""torch.linalg's matrix and general norms, built from the table's ``linalg_*`` ops (public as
``funcgrad.linalg.matrix_norm`` and ``funcgrad.linalg.norm``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.ops import formulas as R
from funcgrad.ops.derivatives.linalg import linalg_svdvals, linalg_vector_norm

__all__ = ["matrix_norm", "norm"]

_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)


def matrix_norm(A: Any, ord: Any = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False) -> Any:  # noqa: A002
    """The matrix norm of A over the two dims ``dim``, as ``torch.linalg.matrix_norm``.

    Args:
        A: a Tensor or array with at least 2 dims.
        ord: ``"fro"`` (Frobenius), ``"nuc"`` (sum of singular values), ``2`` / ``-2`` (largest /
            smallest singular value), ``1`` / ``-1`` (max / min absolute column sum), ``inf`` /
            ``-inf`` (max / min absolute row sum).
        dim: the (row, column) dims of the matrices.
        keepdim: keep the two reduced dims with size 1.

    Returns:
        The norms, shaped like A without ``dim`` (or with size-1 dims when ``keepdim``).

    Raises:
        RuntimeError: A has fewer than 2 dims, ``dim`` is not a pair of distinct dims, or ``ord`` is unknown.

    Example:
        >>> import numpy as np
        >>> float(matrix_norm(np.array([[3.0, 0.0], [0.0, 4.0]]), "nuc"))
        7.0
    """
    ndim = np.ndim(A)
    if ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if isinstance(dim, int | np.integer) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    row, col = (d % ndim for d in dim)
    if row == col:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if not any(ord == o and type(ord) is not bool for o in _MATRIX_ORDS):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord == "fro":
        return linalg_vector_norm(A, 2, (row, col), keepdim)
    if ord in ("nuc", 2, -2):
        S = linalg_svdvals(F.movedim(A, (row, col), (-2, -1)))
        out = F.sum(S, -1) if ord == "nuc" else F.amax(S, -1) if ord == 2 else F.amin(S, -1)
    else:  # 1: max over columns of the sum over rows; inf: max over rows of the sum over columns
        summed, kept = (row, col) if ord in (1, -1) else (col, row)
        sums = F.sum(F.abs(A), summed, True)
        out = F.amax(sums, kept, True) if ord > 0 else F.amin(sums, kept, True)
    shape = R.kept_shape(np.shape(A), (row, col))
    return F.reshape(out, shape if keepdim else tuple(n for i, n in enumerate(shape) if i not in (row, col)))


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """A vector or matrix norm, as ``torch.linalg.norm``.

    With ``dim`` an int (or a 1-tuple) it is ``vector_norm``; with a pair, ``matrix_norm``. Without
    ``dim``: ``ord=None`` gives the 2-norm of A flattened (Frobenius for matrices); otherwise A must be
    1-D (vector norm) or 2-D (matrix norm).

    Args:
        A: a Tensor or array.
        ord: the order; ``None`` means 2 for vectors and ``"fro"`` for matrices.
        dim: None, an int, or a tuple of 1 or 2 ints.
        keepdim: keep the reduced dims with size 1.

    Returns:
        The norm(s).

    Raises:
        RuntimeError: ``dim`` has more than 2 dims, or ``ord`` is given without ``dim`` for A not 1-D or 2-D.

    Example:
        >>> import numpy as np
        >>> float(norm(np.array([3.0, 4.0])))
        5.0
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int | np.integer) else tuple(dim)
        if len(dims) == 1:
            return linalg_vector_norm(A, 2 if ord is None else ord, dims, keepdim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    if ord is None:
        return linalg_vector_norm(A, 2, None, keepdim)
    if np.ndim(A) == 1:
        return linalg_vector_norm(A, ord, None, keepdim)
    if np.ndim(A) == 2:
        return matrix_norm(A, ord, (0, 1), keepdim)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                       f"Got {np.ndim(A)}D.")

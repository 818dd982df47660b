"""torch.linalg's options over the table's decompositions: ``cholesky(upper=)``, ``eigh``/``eigvalsh(UPLO=)``,
``solve(left=)``, ``qr(mode=)``, ``svd(driver=)`` (for ``funcgrad.linalg``). An option that reads the other
triangle works on the conjugate transpose, whose lower triangle holds the Hermitian matrix that triangle stands
for, so the derivatives stay those of exactly the function torch computes."""
from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.ops.compositions import cross as _cross
from funcgrad.ops.derivatives.linalg import (
    linalg_cholesky,
    linalg_eigh,
    linalg_eigvalsh,
    linalg_qr,
    linalg_solve,
    linalg_svd,
)
from funcgrad.ops.formulas import mH, mT

__all__ = ["cholesky", "eigh", "eigvalsh", "solve", "qr", "svd", "cross"]


def _lower_reads(A: Any, UPLO: str) -> Any:  # noqa: N803
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return A if UPLO == "L" else mH(A)


def cholesky(A: Any, *, upper: bool = False) -> Any:  # noqa: N803
    """L with A = L L^H, A read from its lower triangle; with ``upper`` U with A = U^H U, read from the upper one.

    Example:
        >>> import funcgrad as fg
        >>> cholesky(fg.tensor([[4.0, 2.0], [2.0, 5.0]]), upper=True)
        tensor([[2., 1.],
                [0., 2.]])
    """
    return mH(linalg_cholesky(mH(A))) if upper else linalg_cholesky(A)


def eigh(A: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """(eigenvalues ascending, eigenvectors as columns) of the Hermitian matrix the ``UPLO`` triangle of A holds."""
    return linalg_eigh(_lower_reads(A, UPLO))


def eigvalsh(A: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """The eigenvalues (ascending) of the Hermitian matrix the ``UPLO`` triangle of A holds."""
    return linalg_eigvalsh(_lower_reads(A, UPLO))


def solve(A: Any, B: Any, *, left: bool = True) -> Any:  # noqa: N803
    """X with A X = B, or with ``left=False`` X A = B (solved as A^T X^T = B^T)."""
    return linalg_solve(A, B) if left else mT(linalg_solve(mT(A), mT(B)))


def qr(A: Any, mode: str = "reduced") -> tuple[Any, Any]:  # noqa: N803
    """(Q, R) with A = QR: 'reduced' (Q with min(m, n) columns), 'r' (an empty Q, as torch), or 'complete' (Q
    square), which is the reduced one for m <= n and is not offered for m > n (the extra columns are arbitrary)."""
    m, n = np.shape(A)[-2:]
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    if mode == "complete" and m > n:
        raise NotImplementedError("linalg.qr: mode='complete' of a tall matrix is not supported (its extra columns "
                                  "of Q are arbitrary); use mode='reduced'")
    Q, R = linalg_qr(A)
    return (F.reshape(Q[..., :0, :0], (0,)), R) if mode == "r" else (Q, R)


def svd(A: Any, full_matrices: bool = True, *, driver: str | None = None) -> Any:  # noqa: N803
    """(U, S, Vh) with A = U diag(S) Vh; ``driver`` (a CUDA option in torch) is accepted and changes nothing."""
    return linalg_svd(A, full_matrices)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:  # noqa: A002 (torch's parameter name)
    """The cross product of 3-vectors along ``dim``: the last by default, as ``torch.linalg.cross`` (``funcgrad.cross``
    takes the first dim of size 3), the other dims broadcast; differentiable."""
    return _cross(input, other, dim)

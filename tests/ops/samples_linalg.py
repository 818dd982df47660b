"""Samples of funcgrad.linalg ops (funcgrad/ops/derivatives/linalg.py).

Inputs are well conditioned: invertible, positive-definite where needed, and with distinct
eigenvalues and singular values, so every derivative exists near them.
"""
import numpy as np

from tests.ops.sampling import A, C, S


def W(*shape: int) -> np.ndarray:
    """Random square matrices (or a stack) far from singular: A + 4 I."""
    return A(*shape) + 4 * np.eye(shape[-1])


def SPD(*shape: int) -> np.ndarray:
    """Symmetric positive-definite matrices with distinct, well separated eigenvalues."""
    X = A(*shape, lo=-0.5, hi=0.5)
    return X @ np.swapaxes(X, -1, -2) + np.diag(np.arange(1.0, shape[-1] + 1) * 2)


def D(*shape: int) -> np.ndarray:
    """Matrices with well separated singular values (about n + 1, n, ..., 2), of any m, n."""
    m, n = shape[-2:]
    return A(*shape, lo=-0.3, hi=0.3) + np.eye(m, n) * np.arange(n + 1.0, 1, -1)


SAMPLES: dict[str, list[S]] = {
    "linalg_inv": [S(W(3, 3)), S(W(2, 3, 3))],
    "linalg_det": [S(W(3, 3)), S(W(2, 3, 3)), S(W(1, 1))],
    "linalg_slogdet": [S(W(3, 3)), S(W(2, 3, 3)), S(-W(3, 3))],
    "linalg_solve": [S(W(3, 3), A(3)), S(W(3, 3), A(3, 2)), S(W(2, 3, 3), A(2, 3)), S(W(2, 3, 3), A(3)),
                     S(W(2, 3, 3), A(3, 2)), S(W(3, 3), A(2, 3, 2))],
    "linalg_cholesky": [S(SPD(3, 3)), S(SPD(2, 3, 3))],
    "linalg_qr": [S(D(4, 3)), S(D(3, 3)), S(D(2, 4)), S(D(2, 4, 3)), S(D(2, 2, 4))],
    "linalg_eigh": [S(SPD(3, 3)), S(SPD(2, 3, 3))],
    "linalg_eigvalsh": [S(SPD(3, 3)), S(SPD(2, 3, 3)), S(SPD(1, 1))],
    "linalg_svd": [S(D(3, 3)), S(D(4, 3), full_matrices=False), S(D(2, 4), full_matrices=False),
                   S(D(2, 4, 3), False), S(D(2, 3, 3))],
    "linalg_svdvals": [S(D(3, 3)), S(D(4, 3)), S(D(2, 2, 4))],
    "linalg_pinv": [S(D(3, 3)), S(D(4, 3)), S(D(2, 4)), S(D(2, 4, 3))],
    "linalg_vector_norm": [S(A(4)), S(A(2, 3), 2, 1), S(A(2, 3), 1, (0, 1), True), S(A(2, 3), 3.5, -1),
                           S(A(2, 3), np.inf, 0), S(A(2, 3), -np.inf), S(A(2, 3), 0, 1)],
}
SAMPLES["linalg_vector_norm"] = SAMPLES["linalg_vector_norm"] + [  # complex values: real norms, as torch
    S(C(4)), S(C(2, 3), 1, 1), S(C(2, 3), 0.5, -1), S(C(2, 3), np.inf, 0)]
COMPLEX: dict[str, list[S]] = {  # complex matrices: well conditioned, gradients with A^{-H} (as torch)
    "linalg_inv": [S(W(3, 3) + 0.3j * A(3, 3))], "linalg_det": [S(W(3, 3) + 0.3j * A(3, 3))],
    "linalg_solve": [S(W(3, 3) + 0.3j * A(3, 3), C(3)), S(W(2, 3, 3) + 0.3j * A(3, 3), C(3, 2)),
                     S(W(3, 3), C(3))],
}
for _name, _cases in COMPLEX.items():
    SAMPLES[_name] = SAMPLES[_name] + _cases

"""Derivatives of linear-algebra ops (``funcgrad.linalg``). Names as in elementwise.py.

Every op works on a matrix or a stack of matrices ``(*, m, n)``. Ops are named ``linalg_<name>``
(node ``Linalg<Name>Backward0``, as torch) and re-exported under torch.linalg's names by
``funcgrad.linalg``. Gradients may carry leading batch dims, so rules address dims from the end.
Singular or not positive-definite inputs raise ``LinAlgError`` with torch's wording, never NaN.

eigh and cholesky read only the lower triangle of A (torch's UPLO='L'; of a complex A the real part of the
diagonal), and their gradient is the derivative of exactly that function: it lives on the lower triangle.
Torch returns its Hermitian part instead; both give the same gradient through any Hermitian input such as
``X @ X.mH``. Complex rules are the real ones with the conjugate transpose (torch's convention).
"""
import numpy as np
from scipy.linalg.lapack import get_lapack_funcs

import funcgrad.ops as F
from funcgrad.ops import formulas as R
from funcgrad.ops.registry import allow_complex, composite, defop

__all__ = ["LinAlgError", "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_solve", "linalg_cholesky",
           "linalg_qr", "linalg_eigh", "linalg_eigvalsh", "linalg_svd", "linalg_svdvals", "linalg_pinv",
           "linalg_vector_norm", "logdet"]


class LinAlgError(RuntimeError, np.linalg.LinAlgError):
    """A matrix is singular or not positive-definite (a RuntimeError, as torch's; NumPy's too)."""


# ----- forward kernels ------------------------------------------------------------------------
def _check_square(op, A):
    if np.ndim(A) < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    m, n = np.shape(A)[-2:]
    if m != n:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {m} by {n} matrices")


def _failure(op, A, routine, message, **options):
    """The LinAlgError for the first matrix of A on which LAPACK's ``routine`` fails.

    ``message`` is formatted with LAPACK's ``info`` (the 1-based order at which it failed).
    """
    mats = np.reshape(A, (-1,) + np.shape(A)[-2:])
    lapack = get_lapack_funcs(routine, (mats,))
    for b, a in enumerate(mats):
        info = lapack(a, **options)[-1]
        if info > 0:
            batch = f"(Batch element {b}): " if np.ndim(A) > 2 else ""
            return LinAlgError(f"{op}: {batch}{message.format(info)}")
    return LinAlgError(f"{op}: {message.format('?')}")  # NumPy failed where LAPACK did not: still say so


def _singular(op, A):
    return _failure(op, A, "getrf", "The diagonal element {} is zero, the inversion could not be completed "
                                    "because the input matrix is singular.")


def _inv(A):
    """The inverse of a square matrix A (or of each matrix in a batch)."""
    _check_square("linalg.inv", A)
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError:
        raise _singular("linalg.inv", A) from None


def _det(A):
    """The determinant of a square matrix A (or of each matrix in a batch)."""
    _check_square("linalg.det", A)
    return np.linalg.det(A)


def _slogdet(A):
    """(sign, log|det A|) of a square matrix A; log|det A| is -inf when A is singular."""
    _check_square("linalg.slogdet", A)
    sign, logabsdet = np.linalg.slogdet(A)
    return sign, logabsdet


def _is_vector_rhs(A_shape, B_shape):
    """torch's rule: B is a (batch of) vector(s) when it is 1-D or has A's shape without the last dim."""
    return len(B_shape) == 1 or tuple(B_shape) == tuple(A_shape[:-1])


def _solve(A, B):
    """The solution X of A X = B; B is a vector, a matrix or a batch of either (batch dims broadcast)."""
    _check_square("linalg.solve", A)
    vector = _is_vector_rhs(np.shape(A), np.shape(B))
    B = np.expand_dims(B, -1) if vector else np.asarray(B)
    n = np.shape(A)[-1]
    if B.ndim < 2 or B.shape[-2] != n:
        rhs = "x".join(map(str, B.shape[-2:])) if B.ndim >= 2 else f"{B.size}x1"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and {rhs})")
    try:
        X = np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        raise _failure("torch.linalg.solve", A, "getrf",
                       "The solver failed because the input matrix is singular.") from None
    return X[..., 0] if vector else X


def _cholesky(A):
    """The lower-triangular L with L L^T = A, for a symmetric positive-definite A (read from its lower triangle)."""
    _check_square("linalg.cholesky", A)
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise _failure("linalg.cholesky", A, "potrf", "The factorization could not be completed because the "
                       "input is not positive-definite (the leading minor of order {} is not positive-definite).",
                       lower=True) from None


def _qr(A):
    """The reduced QR decomposition (Q, R) of A: Q (*, m, k) orthonormal columns, R (*, k, n) upper, k = min(m, n)."""
    Q, R_ = np.linalg.qr(A, mode="reduced")
    return Q, R_


def _eigh(A):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric A, read from its lower triangle."""
    _check_square("linalg.eigh", A)
    L, V = np.linalg.eigh(A, UPLO="L")
    return L, V


def _eigvalsh(A):
    """The eigenvalues (ascending) of a symmetric A, read from its lower triangle."""
    _check_square("linalg.eigvalsh", A)
    return np.linalg.eigvalsh(A, UPLO="L")


def _svd(A, full_matrices=True):
    """The SVD (U, S, Vh) of A with A = U diag(S) Vh, S descending; U, Vh square when ``full_matrices``."""
    U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
    return U, S, Vh


def _svdvals(A):
    """The singular values of A, descending."""
    return np.linalg.svd(A, compute_uv=False)


def _pinv(A, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse of A; singular values below max(atol, rtol * largest) count as 0.

    As torch, rtol defaults to max(m, n) * eps when neither tolerance is given, else to 0.
    """
    return np.linalg.pinv(A, rtol=_relative_cutoff(A, atol, rtol), hermitian=hermitian)


def _relative_cutoff(A, atol, rtol):
    """pinv's cutoff relative to the largest singular value: rtol, or atol / largest if larger."""
    if rtol is None:
        rtol = _rounding(A) if not atol else 0.0
    if atol:
        largest = np.linalg.norm(A, 2, axis=(-2, -1))
        rtol = np.maximum(rtol, atol / np.where(largest == 0, 1, largest))
    return rtol


def _rounding(A):
    """max(m, n) eps: singular values this small relative to the largest are zero to rounding."""
    return max(np.shape(A)[-2:]) * np.finfo(np.result_type(A, 1.0)).eps


def _vector_norm(x, ord=2, dim=None, keepdim=False):  # noqa: A002
    """The ``ord``-norm of x over ``dim`` (all dims when None) treated as one vector."""
    if isinstance(ord, str):
        raise TypeError(f"linalg.vector_norm: ord must be a number, not '{ord}'; for matrix norms use "
                        f"linalg.matrix_norm")
    axes = R.normalize_dims(dim, np.ndim(x))
    a = np.abs(x)
    if ord == np.inf:
        return np.amax(a, axis=axes, keepdims=keepdim)
    if ord == -np.inf:
        return np.amin(a, axis=axes, keepdims=keepdim)
    if ord == 0:
        return np.sum(a != 0, axis=axes, keepdims=keepdim).astype(np.result_type(a, 1.0))  # real, as |x|
    return np.sum(a ** ord, axis=axes, keepdims=keepdim) ** (1 / ord)


# ----- rules --------------------------------------------------------------------------------
def _right_solve(B, R_):
    """B R^{-H} without forming the inverse: (R^{-1} B^H)^H (R^{-T} for real R)."""
    return R.mH(linalg_solve(R_, R.mH(B)))


def _matrix_scale(s):
    """(...) -> (..., 1, 1): a per-matrix scalar (with any batch dims) ready to scale matrices."""
    return F.reshape(s, tuple(np.shape(s)) + (1, 1))


def _cofactor(A, det):
    """The cofactor matrix adj(A)^T = d det(A)/dA, for any square A (``det`` = det(A)): det(A) A^{-T} when A is
    invertible; at an exactly singular A (as torch) det(U V^T) U diag(prod_{j != i} S_j) V^T from the SVD
    A = U diag(S) V^T, right at every rank and differentiable without dividing by any S_j."""
    try:
        return _matrix_scale(det) * R.mT(linalg_inv(A))
    except LinAlgError:
        if R.is_complex(A):
            raise RuntimeError("linalg.det: the gradient at a singular complex matrix is not implemented") from None
        U, S, Vh = linalg_svd(A)
        others = F.prod(F.where(np.eye(S.shape[-1], dtype=bool), 1.0, R.as_row(S)), -1)  # prod_{j != i} S_j
        sign = R.constant(F.sign(linalg_det(U) * linalg_det(Vh)))  # det(U V^T) = +-1, piecewise constant
        return (U * R.as_row(others * R.as_column(sign))) @ Vh


def _inverse_t(A):
    """A^{-T} = cofactor(A) / det(A); at an exactly singular A that quotient is read with IEEE rules (+-inf,
    NaN where the cofactor is 0 too), as torch's gradients of slogdet there are not finite either."""
    try:
        return R.mT(linalg_inv(A))
    except LinAlgError:
        det = linalg_det(A)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _cofactor(A, det) / _matrix_scale(det)


def det_grad(g, A, out):
    """d det(A)/dA = cofactor(A) = det(A) A^{-T} (A invertible), conjugated for complex A (as torch); the
    adjugate's transpose at a singular (real) A."""
    return _matrix_scale(g) * F.conj(_cofactor(A, out))


def slogdet_grad(g, A, out):
    """d log|det A|/dA = A^{-T} (not finite at a singular A); for real A the sign is piecewise constant, so it adds
    nothing. For complex A (torch's rule), with d log|det A| = Re tr(A^{-1} dA) and d sign = i sign Im tr(A^{-1} dA):
    gA = (g_logabsdet - i Im(conj(g_sign) sign)) A^{-H}."""
    g_sign, g_log = g
    if not R.is_complex(A) or g_sign is None:
        return None if g_log is None else _matrix_scale(g_log) * F.conj(_inverse_t(A))
    c = -1j * F.imag(F.conj(g_sign) * out[0])
    return _matrix_scale(c if g_log is None else g_log + c) * F.conj(_inverse_t(A))


def solve_B_grad(g, A, B_shape):
    """X = A^{-1} B: gB = A^{-H} g, solved, not inverted (A^{-T} for real A)."""
    vector = _is_vector_rhs(np.shape(A), B_shape)
    gB = linalg_solve(R.mH(A), R.as_column(g) if vector else g)  # a column keeps batched vector g unambiguous
    return F.reshape(gB, tuple(gB.shape[:-1])) if vector else gB


def solve_A_grad(g, A, out, B_shape):
    """X = A^{-1} B: gA = -gB X^H with gB = A^{-H} g."""
    gB = solve_B_grad(g, A, B_shape)
    if _is_vector_rhs(np.shape(A), B_shape):
        return -(R.as_column(gB) * R.as_row(F.conj(out)))
    return -(gB @ R.mH(out))


def cholesky_grad(g, out):
    """A = L L^H: gA = lower(L^{-H} Phi(L^H g) L^{-1}), Phi(X) = tril(X) with its diagonal halved."""
    L_inv = linalg_inv(out)
    P = R.mH(out) @ g
    P = R.lower_part(P) - 0.5 * P * np.eye(P.shape[-1])
    return R.lower_grad(R.mH(L_inv) @ P @ L_inv)


def qr_grad(g, out):
    """A = QR (reduced). For m >= n (Liao et al. 2019):
    gA = (gQ + Q copyltu(M)) R^{-H}, M = R gR^H - gQ^H Q, copyltu(M) = tril(M, -1) + tril(M, -1)^H + Re diag(M)
    (for complex A, whose R has a real diagonal, as LAPACK's). For m < n split A = [X | Y], R = [U | V] with
    X = QU square: gY = Q gV and gX is the square case with gQ + Y gV^H in place of gQ. An output that received
    no gradient counts as 0."""
    gQ, gR = R.zeros_for_undefined(g, out)
    Q, R_ = out
    m, n = Q.shape[-2], R_.shape[-1]
    if m >= n:
        return _qr_square_grad(gQ, gR, Q, R_)
    U, gU, V, gV = R.column_slice(R_, 0, m), R.column_slice(gR, 0, m), R.column_slice(R_, m, n), R.column_slice(gR, m, n)
    gX = _qr_square_grad(gQ + (Q @ V) @ R.mH(gV), gU, Q, U)
    gY = Q @ gV
    return gX @ np.eye(n)[:m] + gY @ np.eye(n)[m:]  # [gX | gY]


def _qr_square_grad(gQ, gR, Q, R_):
    M = R_ @ R.mH(gR) - R.mH(gQ) @ Q
    return _right_solve(gQ + Q @ _hermitian_from_lower(M), R_)


def eigh_grad(g, out):
    """A = V diag(L) V^H: gA = lower(V (diag(gL) + (V^H gV) o E) V^H), E_ij = 1/(L_j - L_i) off the
    diagonal, 0 on it (distinct eigenvalues). The term of an output that received no gradient is skipped,
    as torch: the eigenvalues alone give lower(V diag(gL) V^H), finite at repeated eigenvalues too. Complex
    eigenvectors are defined up to a phase each: a loss that depends on the phases raises torch's error."""
    gL, gV = g
    L, V = out
    if gV is None:
        return _eigenvalues_grad(gL, V)
    VhgV = R.mH(V) @ gV
    phases = np.imag(np.asarray(R.constant(VhgV)).diagonal(0, -2, -1)) if R.is_complex(VhgV) else 0.0
    if not np.allclose(phases, 0, rtol=1e-2, atol=1e-2):  # torch's check and tolerances
        raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")
    inner = VhgV * R.off_diagonal_inverse(R.as_row(L) - R.as_column(L))
    if gL is not None:
        inner = inner + R.as_column(gL) * np.eye(L.shape[-1])
    return R.lower_grad(V @ inner @ R.mH(V))


def _eigenvalues_grad(gL, V):
    """The eigenvalues L of A = V diag(L) V^H alone: gA = lower(V diag(gL) V^H)."""
    return R.lower_grad((V * R.as_row(gL)) @ R.mH(V))


def eigvalsh_grad(g, A):
    """gA = lower(V diag(g) V^T), with V from A's eigh (as torch, which takes eigh's rule without gV)."""
    return _eigenvalues_grad(g, linalg_eigh(A)[1])


def svd_grad(g, out, full_matrices):
    """A = U diag(S) V^H, V = Vh^H, k = min(m, n), E_ij = 1/(S_j^2 - S_i^2) off the diagonal, 0 on it:
    gA = U [(skew(U^H gU) o E) S + S (skew(V^H gV) o E) + diag(gS) + diag(i Im(U^H gU)_ii / S_i)] V^H
         + (I - U U^H) gU S^{-1} V^H + U S^{-1} gV^H (I - V V^H),   skew(X) = X - X^H
    (the Im term for complex A only). The terms of an output that received no gradient are skipped, as torch:
    the singular values alone give U diag(gS) V^H, finite at repeated (or zero) singular values too. With
    ``full_matrices`` the columns of U and V past k are arbitrary bases: their gradients are ignored, as torch.
    Complex singular vectors are defined up to a common phase per pair: a loss that depends on it raises
    torch's error."""
    gU, gS, gVh = g
    U, S, Vh = out
    m, n = U.shape[-2], Vh.shape[-1]
    k = min(m, n)
    if full_matrices and m != n:
        U, Vh = R.column_slice(U, 0, k), R.mH(R.column_slice(R.mH(Vh), 0, k))
        gU = None if gU is None else R.column_slice(gU, 0, k)
        gVh = None if gVh is None else R.mH(R.column_slice(R.mH(gVh), 0, k))
    if gU is None and gVh is None:
        return (U * R.as_row(gS)) @ Vh
    E = R.off_diagonal_inverse(R.as_row(S * S) - R.as_column(S * S))
    terms = [] if gS is None else [R.as_column(gS) * np.eye(k)]
    UhgU = None if gU is None else R.mH(U) @ gU
    VhgV = None if gVh is None else Vh @ R.mH(gVh)
    if R.is_complex(U):
        _check_phase_free(UhgU, VhgV)
    if gU is not None:
        terms.append((UhgU - R.mH(UhgU)) * E * R.as_row(S))
        if R.is_complex(UhgU):
            terms.append(1j * F.imag(UhgU * np.eye(k)) / R.as_row(S))
    if gVh is not None:
        terms.append(R.as_column(S) * (VhgV - R.mH(VhgV)) * E)
    gA = U @ sum(terms[1:], terms[0]) @ Vh
    if m > k and gU is not None:
        gA = gA + ((gU - U @ UhgU) / R.as_row(S)) @ Vh
    if n > k and gVh is not None:
        gA = gA + U @ ((gVh - R.mH(VhgV) @ Vh) / R.as_column(S))
    return gA


def _check_phase_free(UhgU, VhgV):
    """torch's check (and tolerances) that a loss of complex singular vectors does not depend on their phases:
    Im diag(U^H gU) = -Im diag(V^H gV)."""
    u, v = (0.0 if X is None else np.imag(np.asarray(R.constant(X)).diagonal(0, -2, -1)) for X in (UhgU, VhgV))
    if not np.allclose(u, -v, rtol=1e-2, atol=1e-2):
        raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
                           "making it ill-defined.")


def svdvals_grad(g, A):
    """d S/dA = U diag(gS) V^H, with U, V from A's reduced SVD."""
    U, _, Vh = linalg_svd(A, full_matrices=False)
    return (U * R.as_row(g)) @ Vh


def pinv_grad(g, A, out, atol, rtol):
    """X = pinv(A), constant rank (Golub & Pereyra 1973):
    gA = -X^H g X^H + (I - A X) g^H X X^H + X^H X g^H (I - X A).
    When the tolerances drop singular values that are not zero to rounding, X = V S^+ U^H is not of A's rank and
    that formula is not its derivative (torch uses it all the same): the gradient then goes through the SVD."""
    kept = _truncated(A, atol, rtol)
    if kept is not None:
        U, S, Vh = linalg_svd(A, full_matrices=False)
        inverse = F.where(kept, 1 / F.where(kept, S, 1.0), 0.0)
        V, Uh, gh = R.mH(Vh), R.mH(U), R.mH(g)
        gS = -F.real(F.diagonal(Vh @ g @ U, 0, -2, -1)) * inverse * inverse
        return svd_grad(((gh @ V) * R.as_row(inverse), gS, R.as_column(inverse) * (Uh @ gh)), (U, S, Vh), False)
    X, Xh, gh = out, R.mH(out), R.mH(g)
    return (-(Xh @ g @ Xh) + (gh - A @ (X @ gh)) @ (X @ Xh)
            + (Xh @ X) @ (gh - (gh @ X) @ A))


def _truncated(A, atol, rtol):
    """Where pinv keeps A's singular values (a bool array), when its cutoff drops some that are not zero to
    rounding; None when it keeps all those (pinv then has A's rank)."""
    a = np.asarray(R.constant(A))
    S = np.linalg.svd(a, compute_uv=False)
    largest = S[..., :1]
    kept = S > np.asarray(_relative_cutoff(a, atol, rtol))[..., None] * largest
    return kept if np.any(~kept & (S > _rounding(a) * largest)) else None


def vector_norm_grad(g, x, out, ord, dim, keepdim):  # noqa: A002
    """d||x||_p/dx = sgn(x) |x|^(p-1) / ||x||^(p-1) (x / ||x|| for p = 2), 0 where x = 0 (also for p < 1, where
    |x|^(p-1) is infinite) or ||x|| = 0; p = +-inf: sgn(x) shared evenly by the entries where |x| = ||x||; p = 0: 0
    (all as torch). sgn(z) = z / |z| for complex x, whose gradient is that of a real function of z."""
    shape = np.shape(x)
    g, norm = R.unreduce(g, shape, dim, keepdim), R.unreduce(out, shape, dim, keepdim)
    if ord == 0:
        return R.zeros(g)
    if ord in (np.inf, -np.inf):
        hit = F.eq(F.abs(x), norm)
        return g * F.sgn(x) * hit / R.unreduce(F.sum(hit, dim, True), shape, dim, True)
    nonzero = F.ne(x, 0)
    scaled = x if ord == 2 else F.where(nonzero, F.sgn(x) * F.abs(F.where(nonzero, x, 1.0)) ** (ord - 1), 0.0)
    zero = F.eq(norm, 0)  # g masked, not only the division: x / 1 there would have the derivative 1 in x
    return scaled * F.where(zero, 0.0, g / F.where(zero, 1.0, norm) ** (ord - 1))


# ----- forward-mode rules (tangents may carry leading batch dims) ------------------------------
def _hermitian_from_lower(X):
    """The Hermitian matrix the lower triangle of X stands for (what eigh and cholesky read):
    tril(X, -1) + tril(X, -1)^H + diag(Re X) (tril(X) + tril(X, -1)^T for real X)."""
    low = R.lower_part(X)
    return low + R.mH(low) - 0.5 * (X + F.conj(X)) * np.eye(X.shape[-1])


def _trace_product(P, X):
    """sum_ij P_ij X_ij over the last two dims = tr(P^T X)."""
    return F.sum(P * X, (-2, -1))


def det_jvp(A_t, A, out):
    """d det(A) = <cofactor(A), dA> = det(A) tr(A^{-1} dA) (A invertible)."""
    return _trace_product(_cofactor(A, out), A_t)


def slogdet_jvp(A_t, A, out):
    """d log|det A| = tr(A^{-1} dA) (its real part for complex A); the sign is piecewise constant for real A (no
    tangent), and d sign = i sign Im tr(A^{-1} dA) for complex A."""
    trace = _trace_product(_inverse_t(A), A_t)
    if not R.is_complex(trace):
        return None, trace
    return 1j * out[0] * F.imag(trace), F.real(trace)


def solve_jvp(A_t, B_t, A, B, out):
    """X = A^{-1} B: dX = A^{-1} (dB - dA X), solved, not inverted; a vector B is solved as a column."""
    vector = _is_vector_rhs(np.shape(A), np.shape(B))
    X = R.as_column(out) if vector else out
    dB = R.align(B_t, B, np.ndim(out))
    dX = linalg_solve(A, (R.as_column(dB) if vector else dB) - R.align(A_t, A, np.ndim(X)) @ X)
    return F.reshape(dX, tuple(dX.shape[:-1])) if vector else dX


def cholesky_jvp(A_t, out):
    """A = L L^H (A read from its lower triangle): dL = L Phi(L^{-1} dA L^{-H}), Phi(X) = tril(X) with its
    diagonal halved."""
    L_inv = linalg_inv(out)
    P = L_inv @ _hermitian_from_lower(A_t) @ R.mH(L_inv)
    return out @ (R.lower_part(P) - 0.5 * P * np.eye(P.shape[-1]))


def qr_jvp(A_t, out):
    """A = QR (reduced). For m >= n, with C = Q^H dA R^{-1} = Omega + dR R^{-1} (Omega skew-Hermitian, dR R^{-1}
    upper with a real diagonal): Omega = tril(C, -1) - tril(C, -1)^H + i Im diag(C), dR = (C - Omega) R,
    dQ = dA R^{-1} - Q (C - Omega). For m < n split A = [X | Y], R = [U | V] with X = QU square: (dQ, dU) as
    above from dX, and dV = Q^H (dY - dQ V)."""
    Q, R_ = out
    m, n = Q.shape[-2], R_.shape[-1]
    if m >= n:
        return _qr_square_jvp(A_t, Q, R_)
    dQ, dU = _qr_square_jvp(R.column_slice(A_t, 0, m), Q, R.column_slice(R_, 0, m))
    dV = R.mH(Q) @ (R.column_slice(A_t, m, n) - dQ @ R.column_slice(R_, m, n))
    return dQ, dU @ np.eye(n)[:m] + dV @ np.eye(n)[m:]  # [dU | dV]


def _qr_square_jvp(dA, Q, R_):
    dA_Rinv = _right_solve(dA, R.mH(R_))  # dA R^{-1}
    C = R.mH(Q) @ dA_Rinv
    diagonal = C * np.eye(C.shape[-1])
    strict = R.lower_part(C) - diagonal
    upper = C - strict + R.mH(strict)  # C - Omega = dR R^{-1}
    if R.is_complex(C):
        upper = upper - 1j * F.imag(diagonal)
    return dA_Rinv - Q @ upper, upper @ R_


def eigh_jvp(A_t, out):
    """A = V diag(L) V^H (A read from its lower triangle), P = V^H dA V: dL = diag(P) (real),
    dV = V (P o E), E_ij = 1/(L_j - L_i) off the diagonal, 0 on it (distinct eigenvalues)."""
    L, V = out
    P = R.mH(V) @ _hermitian_from_lower(A_t) @ V
    return _real_diagonal(P), V @ (P * R.off_diagonal_inverse(R.as_row(L) - R.as_column(L)))


def _real_diagonal(P):
    """The diagonal of a Hermitian P, as the real values it holds."""
    d = F.diagonal(P, 0, -2, -1)
    return F.real(d) if R.is_complex(d) else d


def eigvalsh_jvp(A_t, A):
    """dL = diag(V^H dA V), with V from A's eigh (A read from its lower triangle)."""
    V = linalg_eigh(A)[1]
    return _real_diagonal(R.mH(V) @ _hermitian_from_lower(A_t) @ V)


def svd_jvp(A_t, out, full_matrices):
    """A = U diag(S) V^H (reduced, k = min(m, n)), P = U^H dA V, E_ij = 1/(S_j^2 - S_i^2) off the diagonal:
    dS = Re diag(P), dU = U (E o (P S + S P^H) + D) + (I - U U^H) dA V S^{-1},
    dV = V (E o (S P + P^H S) - D) + (I - V V^H) dA^H U S^{-1}, dVh = dV^H, with D = diag(i Im P_ii / (2 S_i))
    (0 for real A; the phases split evenly between U and V, as torch).
    With ``full_matrices`` and m != n the extra columns of U or V are arbitrary: not supported."""
    U, S, Vh = out
    m, n = U.shape[-2], Vh.shape[-1]
    if full_matrices and m != n:
        raise NotImplementedError("linalg.svd: forward-mode AD with full_matrices=True needs a square matrix (the "
                                  "extra singular vectors are arbitrary); use full_matrices=False")
    V = R.mH(Vh)
    P = R.mH(U) @ A_t @ V
    S_row, S_col = R.as_row(S), R.as_column(S)
    E = R.off_diagonal_inverse(R.as_row(S * S) - R.as_column(S * S))
    Omega_U = E * (P * S_row + S_col * R.mH(P))
    Omega_V = E * (S_col * P + R.mH(P) * S_row)
    if R.is_complex(P):
        D = 0.5j * F.imag(P * np.eye(P.shape[-1])) / S_row
        Omega_U, Omega_V = Omega_U + D, Omega_V - D
    dU, dV = U @ Omega_U, V @ Omega_V
    if m > n:
        dU = dU + (A_t @ V - U @ P) / S_row
    if n > m:
        dV = dV + (R.mH(A_t) @ U - V @ R.mH(P)) / S_row
    return dU, _real_diagonal(P), R.mH(dV)


def svdvals_jvp(A_t, A):
    """dS = Re diag(U^H dA V), with U, V from A's reduced SVD."""
    U, _, Vh = linalg_svd(A, full_matrices=False)
    return _real_diagonal(R.mH(U) @ A_t @ R.mH(Vh))


def pinv_jvp(A_t, A, out, atol, rtol):
    """X = pinv(A), constant rank (Golub & Pereyra 1973):
    dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X; through the SVD when the tolerances drop singular
    values that are not zero to rounding (as the VJP)."""
    kept = _truncated(A, atol, rtol)
    if kept is not None:
        U, S, Vh = linalg_svd(A, full_matrices=False)
        dU, dS, dVh = svd_jvp(A_t, (U, S, Vh), False)
        inverse = F.where(kept, 1 / F.where(kept, S, 1.0), 0.0)
        Uh = R.mH(U)
        return (R.mH(dVh) * R.as_row(inverse)) @ Uh + R.mH(Vh) @ (R.as_column(inverse) * R.mH(dU)) \
            - (R.mH(Vh) * R.as_row(dS * inverse * inverse)) @ Uh
    X, dAh = out, R.mH(A_t)
    return -(X @ A_t @ X) + (X @ R.mH(X)) @ (dAh - (dAh @ A) @ X) + (dAh - X @ (A @ dAh)) @ (R.mH(X) @ X)


def vector_norm_jvp(x_t, x, out, ord, dim, keepdim):  # noqa: A002
    """d||x|| = sum_i (d||x|| / dx_i) dx_i, with the VJP's partials (so its choices at 0 and at ties)."""
    return R.real_reduce_jvp(x_t, vector_norm_grad(R.ones(out), x, out, ord, dim, keepdim), dim, keepdim)


# ----- the table ------------------------------------------------------------------------------
linalg_inv      = defop("linalg_inv",      _inv,      A=lambda g, out: -(R.mH(out) @ g @ R.mH(out)),
                        jvp=lambda A_t, out: -(out @ A_t @ out))
linalg_det      = defop("linalg_det",      _det,      A=det_grad, jvp=det_jvp)
linalg_slogdet  = defop("linalg_slogdet",  _slogdet,  A=slogdet_grad, multi_output=True, jvp=slogdet_jvp)
linalg_solve    = defop("linalg_solve",    _solve,    A=solve_A_grad, B=solve_B_grad, jvp=solve_jvp)
linalg_cholesky = defop("linalg_cholesky", _cholesky, A=cholesky_grad, jvp=cholesky_jvp)
linalg_qr       = defop("linalg_qr",       _qr,       A=qr_grad, multi_output=True, jvp=qr_jvp)
linalg_eigh     = defop("linalg_eigh",     _eigh,     A=eigh_grad, multi_output=True, jvp=eigh_jvp)
linalg_eigvalsh = defop("linalg_eigvalsh", _eigvalsh, A=eigvalsh_grad, jvp=eigvalsh_jvp)
linalg_svd      = defop("linalg_svd",      _svd,      A=svd_grad, multi_output=True, jvp=svd_jvp)
linalg_svdvals  = defop("linalg_svdvals",  _svdvals,  A=svdvals_grad, jvp=svdvals_jvp)
linalg_pinv     = defop("linalg_pinv",     _pinv,     A=pinv_grad, jvp=pinv_jvp)
linalg_vector_norm = defop("linalg_vector_norm", _vector_norm, x=vector_norm_grad, jvp=vector_norm_jvp)


@composite
def logdet(x):
    """log det(x) of a square matrix (or a stack), as torch.logdet: -inf where det(x) = 0 and NaN where it is
    negative, where the gradient is 0 (as torch); elsewhere the gradient is x^{-T}.

    Example:
        >>> import funcgrad as fg
        >>> fg.logdet(fg.tensor([[2.0, 0.0], [0.0, -1.0]]))
        tensor(nan)
    """
    sign, logabsdet = linalg_slogdet(x)
    return F.where(F.lt(sign, 0), np.nan, logabsdet)

# ----- complex inputs: inv, det and solve conjugate (A^{-H}), as torch; the vector norm is real, its gradient ----
# that of a real function of z. The other decompositions raise for complex values.
allow_complex(linalg_vector_norm, linalg_inv, linalg_det, linalg_solve, linalg_slogdet, linalg_cholesky, linalg_eigh,
              linalg_eigvalsh, linalg_svd, linalg_svdvals, linalg_pinv, linalg_qr)

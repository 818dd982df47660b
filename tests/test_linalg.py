"""funcgrad.linalg: analytic gradients, sign-invariant checks of decompositions, batched VJPs, errors.

The op table test (tests/ops/test_table.py) already runs gradcheck and gradgradcheck on every
sample; this file checks what those samples cannot: known closed forms, functions of eigh/svd/qr
outputs that do not depend on sign choices, ``is_grads_batched`` and the error messages.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.linalg as LA
from funcgrad.check import gradcheck, gradgradcheck
from tests.ops.samples_linalg import SPD, D, W

rng = np.random.default_rng(7)


def leaf(a: np.ndarray) -> fg.Tensor:
    return fg.tensor(a, requires_grad=True)


def grad_of(f: Callable[[fg.Tensor], fg.Tensor], a: np.ndarray) -> np.ndarray:
    x = leaf(a)
    (g,) = fg.autograd.grad(fg.sum(f(x)), x)
    return np.asarray(g)


# ----- closed forms ---------------------------------------------------------------------------
def test_det_gradient_is_det_times_inverse_transpose() -> None:
    a = W(2, 3, 3)
    expected = np.linalg.det(a)[:, None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
    np.testing.assert_allclose(grad_of(LA.det, a), expected, rtol=1e-10)


def test_logabsdet_gradient_is_inverse_transpose() -> None:
    a = -W(3, 3)
    sign, logabsdet = np.linalg.slogdet(a)
    out = LA.slogdet(leaf(a))
    np.testing.assert_allclose(out[0].data, sign)
    np.testing.assert_allclose(out[1].data, logabsdet)
    np.testing.assert_allclose(grad_of(lambda x: LA.slogdet(x)[1], a), np.linalg.inv(a).T, rtol=1e-10)


@pytest.mark.parametrize("b_shape", [(3,), (3, 2), (2, 3), (4, 2, 3, 2)])
def test_solve_matches_inverse_times_b(b_shape: tuple[int, ...]) -> None:
    a, b = W(2, 3, 3), rng.standard_normal(b_shape)
    A, B = leaf(a), leaf(b)
    vector = b.ndim == 1 or b.shape == a.shape[:-1]
    via_inv = fg.matmul(LA.inv(A), B[..., None] if vector else B)
    expected = via_inv[..., 0] if vector else via_inv
    X = LA.solve(A, B)
    np.testing.assert_allclose(X.data, expected.data, rtol=1e-10)
    grads = fg.autograd.grad(fg.sum(X * X), (A, B))
    expected_grads = fg.autograd.grad(fg.sum(expected * expected), (A, B))
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g.data, e.data, rtol=1e-9, atol=1e-12)


def test_eigh_and_cholesky_through_a_symmetric_input() -> None:
    """sum(eigvals(X X^T)) = trace(X X^T) and logdet(X X^T) = 2 sum(log diag(chol)): gradients 2X and 2 X^-T."""
    x = W(3, 3)
    np.testing.assert_allclose(grad_of(lambda X: LA.eigh(X @ X.mT)[0], x), 2 * x, rtol=1e-9)
    logdet = grad_of(lambda X: 2 * fg.log(fg.sum(LA.cholesky(X @ X.mT) * np.eye(3), -1)), x)
    np.testing.assert_allclose(logdet, 2 * np.linalg.inv(x).T, rtol=1e-9)


def test_eigh_and_cholesky_gradients_live_on_the_lower_triangle() -> None:
    a = SPD(3, 3)
    for f in (lambda X: LA.eigh(X)[1] ** 3, lambda X: LA.cholesky(X) ** 3):
        assert np.all(np.triu(grad_of(f, a), 1) == 0)


def test_singular_values_and_nuclear_norm_gradients() -> None:
    a = D(4, 3)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(grad_of(lambda X: LA.matrix_norm(X, "nuc"), a), u @ vh, rtol=1e-9)
    np.testing.assert_allclose(grad_of(lambda X: LA.norm(X, 2), a), np.outer(u[:, 0], vh[0]), rtol=1e-9)


# ----- decompositions: functions that do not depend on sign choices ---------------------------
def _svd_reconstruction(full_matrices: bool) -> Callable[[fg.Tensor], fg.Tensor]:
    def f(X: fg.Tensor) -> fg.Tensor:
        U, S, Vh = LA.svd(X, full_matrices=full_matrices)
        k = S.shape[-1]
        return fg.matmul(U[..., :k] * S[..., None, :], Vh[..., :k, :])
    return f


def _eigh_parts(X: fg.Tensor) -> fg.Tensor:
    L, V = LA.eigh(X)
    return fg.matmul(V * L[..., None, :] ** 2, V.mT) + fg.abs(V)


def _qr_parts(X: fg.Tensor) -> fg.Tensor:
    Q, R = LA.qr(X)
    return fg.matmul(Q, R) + fg.sum(fg.abs(Q), -1, True) + fg.sum(fg.abs(R))


def _svd_parts(X: fg.Tensor) -> fg.Tensor:
    U, S, Vh = LA.svd(X, full_matrices=False)
    return fg.sum(fg.abs(U), -1) * fg.sum(S ** 2) + fg.sum(fg.abs(Vh))


INVARIANT = [
    pytest.param(_svd_reconstruction(False), D(4, 3), id="svd-reduced-tall"),
    pytest.param(_svd_reconstruction(False), D(2, 3, 5), id="svd-reduced-wide"),
    pytest.param(_svd_reconstruction(True), D(3, 3), id="svd-full-square"),
    pytest.param(_svd_parts, D(2, 4), id="svd-abs"),
    pytest.param(_eigh_parts, SPD(2, 3, 3), id="eigh"),
    pytest.param(_qr_parts, D(4, 3), id="qr-tall"),
    pytest.param(_qr_parts, D(2, 3, 4), id="qr-wide"),
]


@pytest.mark.parametrize("f,a", INVARIANT)
def test_invariant_functions_of_decompositions(f: Callable[[fg.Tensor], fg.Tensor], a: np.ndarray) -> None:
    assert gradcheck(f, (leaf(a),))
    assert gradgradcheck(f, (leaf(a),))


@pytest.mark.parametrize("shape", [(4, 2), (2, 4)])
def test_svd_full_matrices_ignores_the_extra_columns(shape: tuple[int, int]) -> None:
    """As torch: with full_matrices=True on a non-square A only the first min(m, n) vectors get gradients."""
    a = D(*shape)
    np.testing.assert_allclose(grad_of(_svd_reconstruction(True), a), grad_of(_svd_reconstruction(False), a))
    assert gradcheck(_svd_reconstruction(True), (leaf(a),))


# ----- batched gradients ------------------------------------------------------------------------
BATCHED = [
    pytest.param(LA.inv, (W(2, 3, 3),), id="inv"),
    pytest.param(LA.det, (W(2, 3, 3),), id="det"),
    pytest.param(LA.slogdet, (W(3, 3),), id="slogdet"),
    pytest.param(LA.solve, (W(2, 3, 3), rng.standard_normal(3)), id="solve-vector"),
    pytest.param(LA.solve, (W(3, 3), rng.standard_normal((2, 3, 2))), id="solve-matrix"),
    pytest.param(LA.cholesky, (SPD(2, 3, 3),), id="cholesky"),
    pytest.param(LA.qr, (D(2, 4),), id="qr"),
    pytest.param(LA.eigh, (SPD(3, 3),), id="eigh"),
    pytest.param(LA.eigvalsh, (SPD(2, 3, 3),), id="eigvalsh"),
    pytest.param(lambda X: LA.svd(X, full_matrices=False), (D(2, 4, 3),), id="svd"),
    pytest.param(LA.svdvals, (D(3, 4),), id="svdvals"),
    pytest.param(LA.pinv, (D(4, 3),), id="pinv"),
    pytest.param(lambda x: LA.vector_norm(x, 3, 1), (rng.standard_normal((2, 3)),), id="vector_norm"),
]


@pytest.mark.parametrize("f,arrays", BATCHED)
def test_batched_gradients_equal_stacked_single_ones(f: Callable[..., Any], arrays: tuple[np.ndarray, ...]) -> None:
    inputs = tuple(leaf(a) for a in arrays)
    out = f(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    vs = tuple(rng.standard_normal((4,) + o.shape) for o in outs)
    batched = fg.autograd.grad(outs, inputs, vs, retain_graph=True, is_grads_batched=True)
    for i in range(4):
        single = fg.autograd.grad(outs, inputs, tuple(v[i] for v in vs), retain_graph=True)
        for b, s in zip(batched, single):
            np.testing.assert_allclose(b.data[i], s.data, rtol=1e-9, atol=1e-12)


# ----- errors -----------------------------------------------------------------------------------
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
NOT_PD = np.array([[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize("f,a,message", [
    (LA.inv, SINGULAR, "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed "
                       "because the input matrix is singular."),
    (LA.inv, np.stack([np.eye(3), SINGULAR]), "linalg.inv: (Batch element 1): The diagonal element 3 is zero"),
    (lambda a: LA.solve(a, np.ones(3)), SINGULAR,
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    (LA.cholesky, NOT_PD, "linalg.cholesky: The factorization could not be completed because the input is not "
                          "positive-definite (the leading minor of order 2 is not positive-definite)."),
    (LA.cholesky, np.stack([np.eye(2), NOT_PD]), "linalg.cholesky: (Batch element 1): The factorization"),
])
def test_singular_and_indefinite_inputs_raise(f: Callable[..., Any], a: np.ndarray, message: str) -> None:
    with pytest.raises(LA.LinAlgError) as info:
        f(leaf(a))
    assert str(info.value).startswith(message)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, np.linalg.LinAlgError)


@pytest.mark.parametrize("f", [LA.inv, LA.det, LA.slogdet, LA.cholesky, LA.eigh, LA.eigvalsh])
def test_non_square_input_raises(f: Callable[..., Any]) -> None:
    name = f.__name__.replace("_", ".")
    with pytest.raises(RuntimeError, match=f"{name}: A must be batches of square matrices, but they are 2 by 3"):
        f(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        f(np.ones(3))


@pytest.mark.parametrize("call,message", [
    (lambda: LA.solve(np.eye(3), np.ones(4)),
     r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x1\)"),
    (lambda: LA.norm(np.ones((2, 2, 2)), 2), "If dim is not specified but ord is, the input must be 1D or 2D. Got 3D"),
    (lambda: LA.norm(np.ones((2, 2, 2)), dim=(0, 1, 2)), "dim is specified, it must be of length 1 or 2"),
    (lambda: LA.matrix_norm(np.ones((2, 2)), 3), "linalg.matrix_norm: Order 3 not supported"),
    (lambda: LA.matrix_norm(np.ones(2)), "must have at least 2 dimensions"),
    (lambda: LA.matrix_norm(np.ones((2, 2)), dim=0), "dim must be a 2-tuple"),
])
def test_bad_arguments_raise(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        call()


def test_vector_norm_rejects_matrix_orders() -> None:
    with pytest.raises(TypeError, match="ord must be a number"):
        LA.vector_norm(np.ones(3), "fro")


def test_names_follow_torch() -> None:
    A = leaf(W(3, 3))
    assert LA.inv(A).grad_fn.name() == "LinalgInvBackward0"
    assert LA.norm(A).grad_fn.name() == "LinalgVectorNormBackward0"
    assert not isinstance(LA.det(W(3, 3)), fg.Tensor)


# ----- degenerate and singular inputs ----------------------------------------------------------
def _cofactor(a: np.ndarray) -> np.ndarray:
    """C_ij = (-1)^(i+j) det(a without row i and column j), by the definition."""
    n = a.shape[-1]
    minor = lambda i, j: np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) if n > 1 else 1.0
    return np.array([[(-1) ** (i + j) * minor(i, j) for j in range(n)] for i in range(n)])


RANK_ONE = np.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
NILPOTENT = np.array([[0.0, 1.0], [0.0, 0.0]])


@pytest.mark.parametrize("a", [SINGULAR, RANK_ONE, np.zeros((3, 3)), np.zeros((1, 1)), NILPOTENT],
                         ids=["rank-2", "rank-1", "zero", "zero-1x1", "nilpotent"])
def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix(a: np.ndarray) -> None:
    """As torch: d det / dA is the adjugate's transpose at every rank, on every path."""
    expected = _cofactor(a)
    np.testing.assert_allclose(grad_of(LA.det, a), expected, atol=1e-13)
    A = leaf(a)
    (g,) = fg.autograd.grad(LA.det(A), A, create_graph=True)
    np.testing.assert_allclose(g.data, expected, atol=1e-13)
    stack = np.stack([a, W(*a.shape)])
    np.testing.assert_allclose(grad_of(LA.det, stack), np.stack([expected, _cofactor(stack[1])]), atol=1e-12)
    t = rng.standard_normal(a.shape)
    _, jvp = fg.functional.jvp(LA.det, fg.tensor(a), fg.tensor(t))
    np.testing.assert_allclose(jvp.data, np.sum(expected * t), atol=1e-12)


def test_det_second_derivative_at_a_singular_matrix() -> None:
    """det is a polynomial: its derivatives exist everywhere, and finite differences see them."""
    assert gradcheck(LA.det, (leaf(SINGULAR),))
    assert gradgradcheck(LA.det, (leaf(SINGULAR),))


def test_slogdet_and_logdet_at_singular_and_negative_determinants() -> None:
    """As torch: log|det| = -inf with a gradient that is not finite (never an exception); logdet is NaN
    for a negative determinant, with gradient 0 there."""
    A = leaf(SINGULAR)
    sign, logabsdet = LA.slogdet(A)
    assert sign.item() == 0 and logabsdet.item() == -np.inf
    logabsdet.backward()
    assert not np.isfinite(A.grad.data).any()
    a = np.array([[-2.0, 1.0], [1.0, 3.0]])
    B = leaf(a)
    out = fg.logdet(B)
    assert np.isnan(out.item())
    out.backward()
    np.testing.assert_array_equal(B.grad.data, np.zeros((2, 2)))
    positive = np.array([[-2.0, 1.0], [1.0, -3.0]])
    np.testing.assert_allclose(grad_of(fg.logdet, positive), np.linalg.inv(positive).T, rtol=1e-12)
    assert fg.logdet(np.zeros((2, 2))) == -np.inf


@pytest.mark.parametrize("f", [
    pytest.param(lambda X: LA.eigh(X)[0], id="eigh-values"),
    pytest.param(LA.eigvalsh, id="eigvalsh"),
    pytest.param(lambda X: LA.svd(X)[1], id="svd-values"),
    pytest.param(lambda X: LA.svd(X, full_matrices=False)[1], id="svd-reduced-values"),
    pytest.param(LA.svdvals, id="svdvals"),
])
def test_values_alone_have_finite_gradients_at_repeated_values(f: Callable[[fg.Tensor], fg.Tensor]) -> None:
    """A repeated eigen/singular value: the vectors' terms (1 / gaps) must be skipped when the vectors get
    no gradient, as torch, on the plain, recorded and batched (``vectorize=True``) paths."""
    a = np.diag([2.0, 2.0, 5.0])
    expected = 2 * a  # sum(values ** 2) = trace(A^2) = ||A||_F^2 for this symmetric positive A
    np.testing.assert_array_equal(grad_of(lambda X: f(X) ** 2, a), expected)
    A = leaf(a)
    (g,) = fg.autograd.grad(fg.sum(f(A) ** 2), A, create_graph=True)
    np.testing.assert_array_equal(g.data, expected)
    values = f(fg.tensor(a))
    jac = fg.functional.jacobian(f, fg.tensor(a), vectorize=True)
    np.testing.assert_array_equal(np.tensordot(2 * values.data, jac.data, 1), expected)
    np.testing.assert_array_equal(fg.functional.jacobian(f, fg.tensor(np.eye(3))).data,
                                  fg.functional.jacobian(f, fg.tensor(np.eye(3)), vectorize=True).data)
    assert np.isfinite(fg.functional.jacobian(f, fg.tensor(np.eye(3)), vectorize=True).data).all()


@pytest.mark.parametrize("f,a", [
    pytest.param(lambda X: LA.eigh(X)[0], SPD(2, 3, 3), id="eigh-values"),
    pytest.param(lambda X: LA.eigh(X)[1] ** 3, SPD(3, 3), id="eigh-vectors"),
    pytest.param(LA.eigvalsh, SPD(2, 3, 3), id="eigvalsh"),
    pytest.param(lambda X: LA.svd(X, full_matrices=False)[1], D(4, 3), id="svd-values"),
    pytest.param(lambda X: LA.svd(X, full_matrices=False)[0] ** 3, D(4, 3), id="svd-U"),
    pytest.param(lambda X: LA.svd(X, full_matrices=False)[2] ** 3, D(3, 4), id="svd-Vh"),
    pytest.param(lambda X: LA.qr(X)[1], D(4, 3), id="qr-R"),
    pytest.param(lambda X: LA.qr(X)[0], D(3, 4), id="qr-Q"),
])
def test_one_output_of_a_decomposition_checks_to_second_order(f: Callable[[fg.Tensor], fg.Tensor],
                                                               a: np.ndarray) -> None:
    """The rules skip the terms of outputs without a gradient: the rest must still be exactly right."""
    assert gradcheck(f, (leaf(a),))
    assert gradgradcheck(f, (leaf(a),))


def test_the_module_holds_only_its_public_names() -> None:
    """Issue 12: no np, F, R or Any leaking from funcgrad.linalg; every public name is in __all__."""
    public = {name for name in vars(LA) if not name.startswith("__")}
    assert public == set(LA.__all__)
    assert {"eigvalsh", "matrix_norm", "norm", "LinAlgError"} <= public
    a = SPD(3, 3)
    np.testing.assert_allclose(LA.eigvalsh(a), np.linalg.eigvalsh(a))


def test_torchs_options_of_the_decompositions() -> None:
    """``cholesky(upper=)``, ``eigh``/``eigvalsh(UPLO=)``, ``solve(left=)``, ``qr(mode='r')`` and ``svd(driver=)``
    were TypeErrors; each reads what torch reads (the upper triangle for upper=True and UPLO='U')."""
    rng = np.random.default_rng(3)
    b = rng.normal(size=(3, 3))
    spd = b @ b.T + 3 * np.eye(3)
    upper_only = np.triu(spd) + np.tril(rng.normal(size=(3, 3)), -1)  # the lower triangle is noise
    A = fg.tensor(upper_only, requires_grad=True)
    U = fg.linalg.cholesky(A, upper=True)
    np.testing.assert_allclose((U.mT @ U).detach().numpy(), spd, atol=1e-12)
    np.testing.assert_allclose(fg.linalg.eigvalsh(A, UPLO="U").detach().numpy(), np.linalg.eigvalsh(spd), rtol=1e-12)
    w, V = fg.linalg.eigh(A, UPLO="U")
    np.testing.assert_allclose((V @ fg.diag(w) @ V.mT).detach().numpy(), spd, atol=1e-12)
    X = fg.linalg.solve(fg.tensor(spd), fg.tensor(b), left=False)
    np.testing.assert_allclose((X @ fg.tensor(spd)).numpy(), b, atol=1e-12)
    Q, R = fg.linalg.qr(fg.tensor(b), mode="r")
    assert Q.shape == (0,) and np.allclose(np.abs(R.numpy()), np.abs(np.linalg.qr(b)[1]))
    np.testing.assert_allclose(fg.linalg.svd(fg.tensor(b), driver=None)[1].numpy(), np.linalg.svd(b)[1])
    assert gradcheck(lambda a: fg.linalg.cholesky(a, upper=True), (A,))
    assert gradgradcheck(lambda a: fg.linalg.eigvalsh(a, UPLO="U"), (A,))
    assert gradcheck(lambda a, c: fg.linalg.solve(a, c, left=False), (fg.tensor(spd, requires_grad=True),
                                                                        fg.tensor(b, requires_grad=True)))


def test_linalg_cross_takes_the_last_dim_by_default_and_is_differentiable() -> None:
    a = fg.tensor(np.arange(9.0).reshape(3, 3) / 7 + 0.1, requires_grad=True)
    row = fg.tensor([[0.3, -1.2, 0.5]], requires_grad=True)  # broadcast over a's rows
    column = fg.tensor([[0.3], [-1.2], [0.5]], requires_grad=True)  # broadcast over a's columns
    np.testing.assert_allclose(LA.cross(a, row).data, np.cross(a.data, row.data))  # dim -1 by default
    np.testing.assert_allclose(LA.cross(a, column, dim=0).data, np.cross(a.data, column.data, axis=0))
    assert gradcheck(lambda x, y: LA.cross(x, y), (a, row))
    assert gradgradcheck(lambda x, y: LA.cross(x, y, dim=0), (a, column))
    with pytest.raises(RuntimeError, match="must have length 3"):
        LA.cross(a, row, dim=0)

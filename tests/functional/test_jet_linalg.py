"""The Taylor rules of the linear-algebra ops (inv, solve, cholesky, det, slogdet, eigh, eigvalsh in ops/taylor.py):
each jet of order 5 along a random curve against nested reverse mode, on batched, complex and constant-factor
inputs; closed forms along a line; the phases of complex eigenvectors; the fallback at a singular matrix; the Taylor
path of a small Gaussian log-likelihood.
(jax.experimental.jet has no rules for these ops, so it cannot serve as a reference.)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.func import directional_derivative, jet
from funcgrad.func.jet import NoTaylorRule
from tests.functional.test_jet_rules import ORDER, check, jet_module, nested, no_fallback

Draw = Callable[[np.random.Generator], np.ndarray]


def matrices(*shape: int, kind: str = "real") -> Draw:
    """Well-conditioned random square matrices (M + n I); ``kind`` "complex", or "spd" / "hpd" for M M^H + n I."""
    n = shape[-1]

    def draw(rng: np.random.Generator) -> np.ndarray:
        M = rng.uniform(-1, 1, shape) + (1j * rng.uniform(-1, 1, shape) if kind in ("complex", "hpd") else 0)
        if kind in ("spd", "hpd"):
            M = M @ np.conj(np.swapaxes(M, -1, -2))
        return M + n * np.eye(n)
    return draw


def vectors(*shape: int) -> Draw:
    return lambda rng: rng.uniform(-1, 1, shape)


def as_real(f: Callable[..., Any]) -> Callable[..., Any]:
    """f with a complex result seen as its real and imaginary parts (nested reverse mode needs a real loss)."""
    return lambda *args: fg.view_as_real(f(*args))


def complex_slogdet(a: Any) -> Any:
    """The sign (as its real and imaginary parts) and log|det a| in one real result."""
    sign, logabsdet = fg.linalg.slogdet(a)
    return fg.view_as_real(sign) * fg.unsqueeze(logabsdet, -1)


def eigenpairs(w: Any, v: Any) -> Any:
    """Eigenvectors scaled by their eigenvalues: both outputs of eigh in one result."""
    return v * fg.unsqueeze(w, -2)


A = matrices(3, 3)(np.random.default_rng(8))
CASES: dict[str, tuple[Callable[..., Any], list[Draw]]] = {
    "inv": (fg.linalg.inv, [matrices(3, 3)]),
    "inv, batched": (fg.linalg.inv, [matrices(2, 2, 4, 4)]),
    "inv of complex": (as_real(fg.linalg.inv), [matrices(3, 3, kind="complex")]),
    "solve": (fg.linalg.solve, [matrices(3, 3), vectors(3, 2)]),
    "solve, batches broadcasting": (fg.linalg.solve, [matrices(2, 1, 3, 3), vectors(4, 3, 2)]),
    "solve, batched vectors": (fg.linalg.solve, [matrices(2, 3, 3), vectors(2, 3)]),
    "solve, one vector": (fg.linalg.solve, [matrices(2, 3, 3), vectors(3)]),
    "solve, constant A": (lambda b: fg.linalg.solve(fg.tensor(A), b), [vectors(3, 2)]),
    "solve, constant B": (lambda a: fg.linalg.solve(a, fg.tensor(A[:, :2])), [matrices(3, 3)]),
    "solve, left=False": (lambda a, b: fg.linalg.solve(a, b, left=False), [matrices(3, 3), vectors(2, 3)]),
    "solve of complex": (as_real(fg.linalg.solve), [matrices(2, 3, 3, kind="complex"), vectors(3)]),
    "cholesky": (fg.linalg.cholesky, [matrices(4, 4, kind="spd")]),
    "cholesky, batched": (fg.linalg.cholesky, [matrices(2, 3, 3, kind="spd")]),
    "cholesky, upper": (lambda a: fg.linalg.cholesky(a, upper=True), [matrices(3, 3, kind="spd")]),
    "cholesky of complex": (as_real(fg.linalg.cholesky), [matrices(3, 3, kind="hpd")]),
    "det": (fg.linalg.det, [matrices(3, 3)]),
    "det, batched, some negative": (fg.linalg.det, [lambda rng: rng.uniform(-1, 1, (4, 3, 3))]),
    "det of complex": (as_real(fg.linalg.det), [matrices(2, 3, 3, kind="complex")]),
    "slogdet": (lambda a: fg.stack(fg.linalg.slogdet(a)), [lambda rng: rng.uniform(-1, 1, (4, 3, 3))]),
    "slogdet of complex": (complex_slogdet, [matrices(2, 3, 3, kind="complex")]),
    "logdet": (fg.logdet, [matrices(2, 3, 3, kind="spd")]),
    "eigh": (lambda a: eigenpairs(*fg.linalg.eigh(a)), [matrices(4, 4, kind="spd")]),
    "eigh, batched, lower triangle read": (lambda a: eigenpairs(*fg.linalg.eigh(a)), [vectors(2, 3, 3)]),
    "eigh of complex, |V|^2": (lambda a: fg.abs(fg.linalg.eigh(a)[1]) ** 2, [matrices(3, 3, kind="hpd")]),
    "eigvalsh": (fg.linalg.eigvalsh, [matrices(2, 4, 4, kind="spd")]),
    "eigvalsh of complex": (fg.linalg.eigvalsh, [matrices(3, 3, kind="hpd")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jet_matches_nested_reverse_mode(name: str) -> None:
    f, draws = CASES[name]
    rng = np.random.default_rng(sorted(CASES).index(name))
    check(f, [draw(rng) for draw in draws], rng, rtol=1e-8)


def test_closed_forms_along_a_line() -> None:
    """Along A + t V: d^k/dt^k A(t)^{-1} = k! (-A^{-1} V)^k A^{-1}, and det(A + t V), a polynomial of degree n, has
    the n-th derivative n! det V and none above."""
    rng = np.random.default_rng(9)
    a, v = matrices(3, 3)(rng), rng.uniform(-1, 1, (3, 3))
    line = [v] + [np.zeros((3, 3))] * (ORDER - 1)
    inverse = np.linalg.inv(a)
    _, got = jet(fg.linalg.inv, (a,), (line,))
    for k, g in enumerate(got, 1):
        np.testing.assert_allclose(g, math.factorial(k) * np.linalg.matrix_power(-inverse @ v, k) @ inverse,
                                   rtol=1e-10)
    _, got = jet(fg.linalg.det, (a,), (line,))
    np.testing.assert_allclose(got[2], 6 * np.linalg.det(v), rtol=1e-10)
    np.testing.assert_allclose(got[3:], 0, atol=1e-10)


def test_complex_eigenvectors_stay_orthonormal_with_the_jvp_rules_phases() -> None:
    """Complex eigenvectors have a free phase each (nested reverse mode refuses a loss that depends on it): along the
    curve V^H V = I, and V^H V' has a zero diagonal, the phases the JVP rule dV = V (P o E) follows."""
    rng = np.random.default_rng(13)
    a = matrices(2, 3, 3, kind="hpd")(rng)
    terms = [rng.uniform(-1, 1, a.shape) * (1 - 1j) for _ in range(ORDER)]
    (w, v), (_, V) = jet(fg.linalg.eigh, (a,), (terms,), factorial_scaled=False)
    V = np.stack([v, *V])
    Vh = np.conj(np.swapaxes(V, -1, -2))
    gram = np.stack([sum(Vh[j] @ V[k - j] for j in range(k + 1)) for k in range(ORDER + 1)])
    gram[0] -= np.eye(3)
    np.testing.assert_allclose(gram, 0, atol=1e-10)
    velocity = [sum((k + 1 - j) * Vh[j] @ V[k + 1 - j] for j in range(k + 1)) for k in range(ORDER)]
    np.testing.assert_allclose(np.diagonal(velocity, 0, -2, -1), 0, atol=1e-10)


def test_det_at_a_singular_matrix_falls_back_to_nested_reverse_mode() -> None:
    """det's rule expands log det, which a singular matrix has not: jet raises NoTaylorRule, and
    directional_derivative takes nested reverse mode, whose derivatives are right there."""
    rng = np.random.default_rng(10)
    a, v = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.5, 0.0, 1.0]]), rng.uniform(-1, 1, (3, 3))
    with pytest.raises(NoTaylorRule, match="'linalg_det' has no Taylor expansion here"):
        jet(fg.linalg.det, (a,), ([v],))
    np.testing.assert_allclose(directional_derivative(fg.linalg.det, 3)(a, v), 6 * np.linalg.det(v), rtol=1e-10)


Y = np.random.default_rng(11).uniform(-1, 1, 3)


def gaussian_log_likelihood(x: Any) -> Any:
    """-2 log N(y; 0, C) + const of a covariance C built from x, by each of the five ops."""
    C = fg.outer(x, x) + fg.diag(fg.exp(x)) + fg.tensor(np.eye(3))
    L = fg.linalg.cholesky(C)
    return (fg.logdet(C) + fg.sum(fg.linalg.solve(C, fg.tensor(Y)) * fg.tensor(Y))
            + 2 * fg.sum(fg.log(fg.diagonal(L))) + fg.sum(fg.linalg.inv(C)) + fg.linalg.det(C))


def test_derivatives_of_a_log_likelihood_take_the_taylor_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(12)
    x, v = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    expected = nested(gaussian_log_likelihood, [x], [[v] + [np.zeros(3)] * (ORDER - 1)], np.ones(()), ORDER)
    monkeypatch.setattr(jet_module, "_nested_directional", no_fallback)
    for n in range(1, ORDER + 1):
        np.testing.assert_allclose(directional_derivative(gaussian_log_likelihood, n)(x, v), expected[n - 1],
                                   rtol=1e-9)

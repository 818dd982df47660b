"""Sparsity detection, colorings, sparse Jacobians and Hessians against the dense ones."""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.func as ff
from funcgrad.func.coloring import column_coloring, row_coloring, seed_matrix, star_coloring, symmetric_recovery
from tests.budget import examples


def banded(x: Any) -> Any:
    """Pentadiagonal: second differences two apart, plus a cube."""
    inner = x[:-4] - 2 * x[2:-2] + x[4:]
    return fg.cat([x[:2] ** 2, inner * fg.exp(-x[2:-2]), x[-2:] * 3]) + x ** 3


def block_diagonal(x: Any) -> Any:
    """Blocks of 3: each block mixed by a dense 3 x 3 matrix."""
    W = np.arange(1.0, 10.0).reshape(3, 3) / 7
    return fg.tanh(x.reshape(-1, 3) @ fg.tensor(W)).reshape(-1)


def arrow(x: Any) -> Any:
    """Arrow-shaped: the first output reads everything, each other output itself and the first input."""
    return fg.cat([fg.sum(fg.sin(x))[None], x[1:] ** 2 + x[0] * x[1:]])


FAMILIES: dict[str, tuple[Callable[[Any], Any], int]] = {"banded": (banded, 12), "block": (block_diagonal, 12),
                                                         "arrow": (arrow, 9)}


def _random_pattern_function(mask: np.ndarray, seed: int) -> Callable[[Any], Any]:
    """f(x) = (C * mask) @ tanh(x) + mask-row-wise squares: its Jacobian's pattern is ``mask`` exactly."""
    rng = np.random.default_rng(seed)
    A = fg.tensor(np.where(mask, rng.uniform(0.5, 1.5, mask.shape) * rng.choice([-1, 1], mask.shape), 0.0))
    return lambda x: A @ fg.tanh(x) + (A @ x) ** 2


@pytest.mark.parametrize("name", FAMILIES)
def test_detection_is_exact_on_the_families(name: str) -> None:
    f, n = FAMILIES[name]
    x = np.random.default_rng(0).uniform(0.2, 0.9, n)
    pattern = ff.jacobian_sparsity(f)(x)
    assert isinstance(pattern, sps.csr_array) and pattern.dtype == bool
    np.testing.assert_array_equal(pattern.toarray(), ff.jacrev(f)(x) != 0)


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_sparse_jacobian_equals_the_dense_one(name: str, mode: str) -> None:
    f, n = FAMILIES[name]
    x = np.random.default_rng(1).uniform(0.2, 0.9, n)
    J = ff.sparse_jacobian(f, mode=mode)(x)  # type: ignore[arg-type]
    assert isinstance(J, sps.csr_array)
    np.testing.assert_allclose(J.toarray(), ff.jacrev(f)(x), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", FAMILIES)
def test_sparse_hessian_equals_the_dense_one(name: str) -> None:
    f, n = FAMILIES[name]
    x = np.random.default_rng(2).uniform(0.2, 0.9, n)

    def scalar(u: Any) -> Any:
        return fg.sum(f(u) ** 2)

    dense = ff.hessian(scalar)(x)
    assert (ff.hessian_sparsity(scalar)(x).toarray() | (dense == 0)).all()  # never misses an entry
    np.testing.assert_allclose(ff.sparse_hessian(scalar)(x).toarray(), dense, rtol=1e-12, atol=1e-12)


def test_the_tridiagonal_case_needs_three_colors() -> None:
    from tests.functional.test_scale import energy, residual

    x = np.linspace(0.0, 1.0, 200)
    pattern = ff.jacobian_sparsity(residual)(x)
    assert pattern.nnz == 3 * 200 - 2
    assert column_coloring(pattern).max() + 1 == 3
    assert star_coloring(ff.hessian_sparsity(energy)(x)).max() + 1 <= 5  # pentadiagonal Hessian
    np.testing.assert_allclose(ff.sparse_jacobian(residual, sparsity=pattern)(x).toarray(), ff.jacrev(residual)(x),
                               atol=1e-13)


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.floats(0.05, 0.6), st.integers(0, 2 ** 16))
def test_random_patterns_are_found_and_recovered(m: int, n: int, density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    mask = rng.random((m, n)) < density
    f = _random_pattern_function(mask, seed)
    x = rng.uniform(-1, 1, n)
    pattern = ff.jacobian_sparsity(f)(x)
    np.testing.assert_array_equal(pattern.toarray(), mask)
    dense = ff.jacrev(f)(x)
    for mode in ("forward", "reverse", "auto"):
        np.testing.assert_allclose(ff.sparse_jacobian(f, sparsity=pattern, mode=mode)(x).toarray(), dense,
                                   rtol=1e-12, atol=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(1, 25), st.floats(0.02, 0.5), st.integers(0, 2 ** 16))
def test_colorings_allow_recovery(n: int, density: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    mask = rng.random((n, n)) < density
    for colors, by in ((column_coloring(sps.csr_array(mask)), mask), (row_coloring(sps.csr_array(mask)), mask.T)):
        for c in range(colors.max(initial=-1) + 1):  # columns of one color share no row
            assert by[:, colors == c].sum(axis=1).max(initial=0) <= 1
    sym = mask | mask.T | np.eye(n, dtype=bool)
    colors = star_coloring(sps.csr_array(sym))
    read = symmetric_recovery(sps.csr_array(sym), colors)
    assert read is not None
    H = rng.normal(size=(n, n))
    H = (H + H.T) * sym
    compressed = H @ seed_matrix(colors).T
    rows, cols = np.nonzero(sym)  # CSR order
    np.testing.assert_allclose(compressed[read[0], read[1]], H[rows, cols])


_STEPS: dict[str, Callable[[Any], Any]] = {
    "sin": fg.sin, "square": lambda t: t * t, "shift": lambda t: fg.cat([t[1:], t[:1]]),
    "diff": lambda t: fg.cat([t[:1], t[1:] - t[:-1]]), "cumsum": lambda t: t.cumsum(0), "flip": lambda t: t.flip(0),
    "where": lambda t: fg.where(t > 0, t, t * t), "sum": lambda t: t + t.sum(), "pad": lambda t: fg.pad(t[1:], (0, 1)),
    "pairs": lambda t: (t.reshape(-1, 2) * t.reshape(-1, 2)[:, ::-1]).reshape(-1),
    "write": lambda t: _written(t),
}


def _written(t: Any) -> Any:
    z = t.clone()
    z[::2] = t[::2] * t[1::2]
    return z


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.sampled_from(sorted(_STEPS)), min_size=1, max_size=5), st.integers(1, 4), st.integers(0, 2 ** 16))
def test_detection_never_misses_a_dependency(steps: list[str], half: int, seed: int) -> None:
    x = np.random.default_rng(seed).uniform(-0.9, 0.9, 2 * half)

    def f(t: Any) -> Any:
        for step in steps:
            t = fg.tanh(_STEPS[step](t))  # bounded: no overflow whatever the chain
        return t

    dense = ff.jacrev(f)(x)
    assert not ((dense != 0) & ~ff.jacobian_sparsity(f)(x).toarray()).any()
    hess = ff.hessian(lambda t: fg.sum(f(t)))(x)
    assert not ((hess != 0) & ~ff.hessian_sparsity(lambda t: fg.sum(f(t)))(x).toarray()).any()


def test_untraceable_functions_get_the_dense_pattern_with_a_warning() -> None:
    def leaves_numpy(t: Any) -> Any:
        return fg.tensor(np.sin(np.asarray(t))) * t

    with pytest.warns(RuntimeWarning, match="dense"):
        pattern = ff.jacobian_sparsity(leaves_numpy)(np.ones(3))
    assert pattern.toarray().all()


def test_a_given_pattern_is_checked() -> None:
    with pytest.raises(ValueError, match="shape"):
        ff.sparse_jacobian(banded, sparsity=sps.eye_array(5))(np.ones(12))
    with pytest.raises(ValueError, match="rows"):
        ff.sparse_jacobian(banded, sparsity=sps.eye_array(13, 12))(np.ones(12))
    with pytest.raises(ValueError, match="mode"):
        ff.sparse_jacobian(banded, mode="sideways")  # type: ignore[arg-type]


def test_sparse_results_in_chunks_of_colors() -> None:
    x = np.random.default_rng(3).uniform(0.2, 0.9, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        J = ff.sparse_jacobian(banded, chunk_size=1)(x)
    np.testing.assert_allclose(J.toarray(), ff.jacrev(banded)(x), atol=1e-13)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_the_pattern_of_np_pad_in_every_mode_it_moves_elements(mode: str) -> None:
    """np.pad's pattern is found by replaying it on element numbers; only mode "constant" takes
    constant_values (edge padding raised NumPy's "unsupported keyword arguments for mode 'edge'")."""
    f = lambda u: np.pad(u, 2, mode=mode) ** 2  # noqa: E731
    x = np.arange(1.0, 5.0)
    np.testing.assert_array_equal(ff.jacobian_sparsity(f)(x).toarray(), ff.jacrev(f)(x) != 0)
    np.testing.assert_allclose(ff.sparse_jacobian(f)(x).toarray(), ff.jacrev(f)(x))


def test_an_empty_hessian_pattern() -> None:
    """A pattern without entries (a linear function's, given): the recovery raised a TypeError, as SciPy indexes
    a sparse array by empty index arrays into a sparse result."""
    assert star_coloring(sps.csr_array((3, 3), dtype=bool)).shape == (3,)
    H = ff.sparse_hessian(lambda x: fg.sum(x * 2), sparsity=np.zeros((3, 3)))(np.ones(3))
    assert H.shape == (3, 3) and H.nnz == 0


@pytest.mark.parametrize("f", [lambda x: [x ** 2], lambda x: (x * 2, x[0]), lambda x: {"a": x}],
                         ids=["list", "tuple", "dict"])
def test_detection_needs_one_array(f: Callable[[Any], Any]) -> None:
    """A pattern is one output's rows: f returning [x ** 2] was read as a constant (an empty pattern, and
    sparse_jacobian returned a zero Jacobian where it is 2 diag(x))."""
    for transform in (ff.jacobian_sparsity, ff.sparse_jacobian, ff.hessian_sparsity, ff.sparse_hessian):
        with pytest.raises(TypeError, match="f must return one array"):
            transform(f)(np.ones(3))


def test_sparse_hessian_needs_a_scalar_function() -> None:
    """The Hessian of a vector function's first element was returned for the whole (sparse_hessian of
    [x0^2, x1^2, x2^2] gave diag(2, 0, 0)); now an error, with a detected or a given pattern."""
    with pytest.raises(ValueError, match="scalar"):
        ff.sparse_hessian(lambda x: x ** 2)(np.ones(3))
    with pytest.raises(ValueError, match="scalar"):
        ff.sparse_hessian(lambda x: x ** 2, sparsity=np.eye(3))(np.ones(3))

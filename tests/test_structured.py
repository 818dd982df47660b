"""BatchedDiagonal, the structured identity seed of one-pass Jacobians: every operation, structured or
not, gives exactly what the dense stack gives."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.core.structured import BatchedDiagonal, ScaledStack, identity_seed

RNG = np.random.default_rng(0)


def diagonal(shape):
    return BatchedDiagonal(RNG.standard_normal(shape))


def test_dense_is_the_scaled_identity():
    d = np.arange(1.0, 7.0).reshape(2, 3)
    G = BatchedDiagonal(d)
    assert G.shape == (6, 2, 3) and G.ndim == 3 and G.dtype == d.dtype and len(G) == 6
    np.testing.assert_array_equal(np.asarray(G).reshape(6, 6), np.diag(d.ravel()))
    np.testing.assert_array_equal(np.asarray(identity_seed((4,), np.float32)), np.eye(4, dtype=np.float32))
    assert np.asarray(identity_seed((), np.float64)).shape == (1,)


@pytest.mark.parametrize("op", [np.multiply, np.true_divide])
@pytest.mark.parametrize("other_shape", [(), (3,), (1, 3), (2, 3), (2, 1)])
def test_scaling_by_an_entry_shaped_value_stays_diagonal(op, other_shape):
    G = diagonal((2, 3))
    other = RNG.uniform(1, 2, other_shape)
    result = op(G, other)
    assert isinstance(result, BatchedDiagonal)
    np.testing.assert_allclose(np.asarray(result), op(np.asarray(G), other))
    if op is np.multiply:
        swapped = other * G
        assert isinstance(swapped, BatchedDiagonal)
        np.testing.assert_allclose(np.asarray(swapped), np.asarray(result))


def test_values_with_a_batch_dim_give_the_dense_result():
    G = diagonal((3,))
    other = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(G * other, np.asarray(G) * other)
    with np.errstate(divide="ignore"):  # a value divided by a stack: dense, with NumPy's infinities
        np.testing.assert_array_equal(np.true_divide(2.0, G), 2.0 / np.asarray(G))
    np.testing.assert_allclose(np.exp(G), np.exp(np.asarray(G)))


def test_known_zeros_stay_zero_where_the_dense_pass_makes_nan():
    """d(x / y)/dx at y_1 = 0: row 0 of the Jacobian does not depend on x_1, so its entry is 0 (dense: 0/0)."""
    G = identity_seed((2,), np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        structured, dense = np.asarray(G / np.array([2.0, 0.0])), np.eye(2) / np.array([2.0, 0.0])
    np.testing.assert_array_equal(structured, [[0.5, 0.0], [0.0, np.inf]])
    assert np.isnan(dense[0, 1])


def test_sums_and_differences():
    A, B = diagonal((2, 2)), diagonal((2, 2))
    dense = RNG.standard_normal((4, 2, 2))
    for result, expected in [(A + B, np.asarray(A) + np.asarray(B)), (A - B, np.asarray(A) - np.asarray(B)),
                             (-A, -np.asarray(A))]:
        assert isinstance(result, BatchedDiagonal)
        np.testing.assert_allclose(np.asarray(result), expected)
    for result, expected in [(A + dense, np.asarray(A) + dense), (dense + A, dense + np.asarray(A)),
                             (A - dense, np.asarray(A) - dense), (dense - A, dense - np.asarray(A))]:
        assert type(result) is np.ndarray
        np.testing.assert_allclose(result, expected)
    buffer = dense.copy()
    np.add(buffer, A, out=buffer, casting="same_kind")  # the engine summing into a buffer it owns
    np.testing.assert_allclose(buffer, dense + np.asarray(A))


def test_reshape_of_the_entries_stays_diagonal():
    G = diagonal((2, 3))
    for shape in [(6, 3, 2), (-1, 6), (6, 1, 6, 1)]:
        result = np.reshape(G, shape)
        assert isinstance(result, BatchedDiagonal)
        np.testing.assert_array_equal(np.asarray(result), np.asarray(G).reshape(shape))
    np.testing.assert_array_equal(G.reshape(3, 2, 6), np.asarray(G).reshape(3, 2, 6))  # mixes the batch: dense
    assert np.shape(G) == (6, 2, 3) and np.ndim(G) == 3


@pytest.mark.parametrize("left, right", [((4,), (4, 5)), ((5, 4), (4, 1)), ((1, 1), (1, 4)), ((4, 1), (1, 1)),
                                         ((1, 4), (4, 5)), ((3, 4), (4, 2)), ((4, 2), (2, 3))])
def test_products_with_a_matrix(left, right):
    """The vector cases of matmul's rules are structured; the rest are dense; all equal the dense product."""
    cases = [(diagonal(right), RNG.standard_normal(left), "MG"), (diagonal(left), RNG.standard_normal(right), "GM")]
    for G, M, args in cases:
        dense = np.asarray(G)
        expected = M @ dense if args == "MG" else dense @ M
        result = M @ G if args == "MG" else G @ M
        np.testing.assert_allclose(np.asarray(result), expected, atol=1e-12)


def scaled(shape, cols_shape=()):
    return ScaledStack(RNG.standard_normal(shape), RNG.standard_normal(shape[0]),
                       RNG.standard_normal(cols_shape) if cols_shape else 1.0)


def test_scaled_stack_is_rows_times_base_times_cols():
    S = scaled((4, 3, 2), (3, 1))
    expected = S.rows[:, None, None] * S.base * S.cols
    np.testing.assert_allclose(np.asarray(S), expected)
    assert S.shape == (4, 3, 2) and S.dtype == np.float64 and S.ndim == 3 and S.size == 24


def test_scaled_stack_scaling_negation_and_sums():
    S = scaled((4, 3), (3,))
    factor = RNG.uniform(1, 2, 3)
    for result, expected in [(S * factor, np.asarray(S) * factor), (factor * S, factor * np.asarray(S)),
                             (S / factor, np.asarray(S) / factor), (-S, -np.asarray(S)),
                             (2.0 * S, 2.0 * np.asarray(S))]:
        assert isinstance(result, ScaledStack) and result.base is S.base
        np.testing.assert_allclose(np.asarray(result), expected)
    like = ScaledStack(S.base, S.rows.copy(), RNG.standard_normal(3))
    for result, expected in [(S + like, np.asarray(S) + np.asarray(like)),
                             (S - like, np.asarray(S) - np.asarray(like))]:
        assert isinstance(result, ScaledStack)
        np.testing.assert_allclose(np.asarray(result), expected)
    other = scaled((4, 3))  # another base: the sum is dense
    dense = RNG.standard_normal((4, 3))
    for result, expected in [(S + other, np.asarray(S) + np.asarray(other)), (S - dense, np.asarray(S) - dense),
                             (S * dense, np.asarray(S) * dense)]:
        assert type(result) is np.ndarray
        np.testing.assert_allclose(result, expected)


def test_scaled_stack_reshape_and_products():
    full, broadcast = scaled((4, 2, 3), (2, 3)), scaled((4, 2, 3), (3,))
    for S in (full, broadcast):
        reshaped = np.reshape(S, (4, 6))
        assert isinstance(reshaped, ScaledStack) == (S is full)
        np.testing.assert_allclose(np.asarray(reshaped), np.asarray(S).reshape(4, 6))
    S, M = scaled((4, 5), (5,)), RNG.standard_normal((5, 3))
    np.testing.assert_allclose(S @ M, np.asarray(S) @ M)
    unscaled = scaled((4, 5))
    np.testing.assert_allclose(unscaled @ M, np.asarray(unscaled) @ M)
    as32 = S.astype(np.float32)
    assert as32.dtype == np.float32
    np.testing.assert_allclose(np.asarray(as32), np.asarray(S), rtol=1e-6)


def test_everything_else_sees_the_dense_stack():
    G = diagonal((3,))
    dense = np.asarray(G)
    np.testing.assert_array_equal(G[1], dense[1])
    np.testing.assert_array_equal(np.sum(G, axis=1), dense.sum(axis=1))
    np.testing.assert_array_equal(G.sum(axis=0), dense.sum(axis=0))
    np.testing.assert_array_equal(G.T, dense.T)
    assert isinstance(G.astype(np.float32), BatchedDiagonal) and G.astype(np.float32).dtype == np.float32
    np.testing.assert_array_equal(np.where(dense > 0, G, 0.0), np.where(dense > 0, dense, 0.0))
    np.testing.assert_array_equal(np.stack([G, G]), np.stack([dense, dense]))  # stacks inside sequences too
    np.testing.assert_array_equal(np.concatenate([G, dense], axis=1), np.concatenate([dense, dense], axis=1))


@given(st.lists(st.integers(1, 3), min_size=0, max_size=3), st.sampled_from(["tanh", "matvec", "rowvec", "mixed"]))
def test_structured_seed_gives_the_dense_seeds_jacobian(shape, kind):
    shape = tuple(shape)
    x = fg.tensor(RNG.standard_normal(shape))
    n = x.numel()
    W = fg.tensor(RNG.standard_normal((2, n)))

    def f(x):
        if kind == "tanh":
            return fg.tanh(x) * 2.0 - x
        if kind == "matvec":
            return W @ fg.sin(x.reshape(-1))
        if kind == "rowvec":
            return fg.exp(x.reshape(-1)) @ W.T
        return (x.reshape(-1)[None, :] * x.reshape(-1)[:, None]).sum(0) + x.reshape(-1)

    for seed_kind in ("structured", "dense"):
        xr = x.detach().requires_grad_()
        y = f(xr)
        seed = (identity_seed(tuple(y.shape), np.float64) if seed_kind == "structured"
                else np.eye(y.numel()).reshape((y.numel(), *y.shape)))
        (g,), = [fg.autograd.grad(y, xr, seed, is_grads_batched=True)]
        if seed_kind == "structured":
            structured = g.numpy()
    np.testing.assert_allclose(structured, g.numpy(), atol=1e-12)
    assert isinstance(g, fg.Tensor) and type(g.data) is np.ndarray


# ----- structured tangents: a forward-mode Jacobian's identity ----------------------------------------
def _forward_jacobian(f, x0, tangent, requires_grad=False):
    """The tangent of f at x0 for a batch of tangents, and the gradient of a weighted sum of it."""
    from funcgrad.autograd import forward_ad as fwAD

    x = fg.tensor(x0, requires_grad=requires_grad)
    with fwAD.dual_level():
        t = fwAD.unpack_dual(f(fwAD.make_dual(x, tangent))).tangent
    assert type(t.data) is np.ndarray  # structure never leaves the pass
    if not requires_grad:
        return t.numpy(), None
    fg.sum(t * fg.tensor(np.arange(t.numel(), dtype=float).reshape(t.shape))).backward()
    return t.detach().numpy(), x.grad.numpy()


TANGENT_FUNCTIONS = {
    "softplus-sum": lambda x: fg.sum(fg.log1p(fg.exp(x))) + 0.5 * (x @ x),
    "matvec": lambda x: fg.tanh(fg.tensor(np.linspace(-1, 1, 3 * x.numel()).reshape(3, -1)) @ x),
    "elementwise": lambda x: fg.sin(x) * x / (1.5 + fg.cos(x)),
    "mixed": lambda x: fg.stack([fg.sum(x * x), fg.max(x)]),
}


@pytest.mark.parametrize("name", sorted(TANGENT_FUNCTIONS))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_structured_tangents_give_the_dense_tangents_results(name, requires_grad):
    f, x0 = TANGENT_FUNCTIONS[name], RNG.standard_normal(4)
    structured = _forward_jacobian(f, x0, identity_seed((4,), np.float64), requires_grad)
    dense = _forward_jacobian(f, x0, np.eye(4), requires_grad)
    np.testing.assert_allclose(structured[0], dense[0], atol=1e-12)
    if requires_grad:  # reverse mode through the tangents (reverse-over-forward)
        np.testing.assert_allclose(structured[1], dense[1], atol=1e-12)


def test_forward_mode_jacobians_and_hessians_use_and_match_structured_tangents():
    A = fg.tensor(RNG.standard_normal((6, 4)))
    x = fg.tensor(RNG.standard_normal(4))

    def f(x):
        return fg.sum(fg.log1p(fg.exp(A @ x))) + 0.5 * (x @ x)

    H = fg.functional.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")
    np.testing.assert_allclose(H.numpy(), fg.functional.hessian(f, x).numpy(), atol=1e-12)
    J = fg.functional.jacobian(lambda x: fg.tanh(A @ x), x, vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(J.numpy(), fg.functional.jacobian(lambda x: fg.tanh(A @ x), x).numpy(), atol=1e-12)
    np.testing.assert_allclose(fg.func.jacfwd(lambda x: fg.tanh(A @ x))(x.numpy()), J.numpy(), atol=1e-12)


def test_custom_function_jvp_sees_dense_tangents():
    from funcgrad.autograd import Function
    from funcgrad.autograd import forward_ad as fwAD

    seen = []

    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, x_t):
            seen.append(type(x_t.data))
            return x_t * 2

    with fwAD.dual_level():
        y = Double.apply(fwAD.make_dual(fg.tensor([1.0, 2.0]), identity_seed((2,), np.float64)))
        np.testing.assert_array_equal(fwAD.unpack_dual(y).tangent.numpy(), 2 * np.eye(2))
    assert seen == [np.ndarray, np.ndarray]  # one dense direction at a time


@pytest.mark.parametrize("rows_ones", [True, False])
@pytest.mark.parametrize("cols", ["one", "scalar", "vector"])
def test_dense_transposed_is_the_transpose_of_dense(rows_ones: bool, cols: str) -> None:
    """What a forward-mode Jacobian's block is made of (``jacobian_blocks``): ``dense().T``, C-ordered."""
    rng = np.random.default_rng(5)
    base = rng.normal(size=(4, 6)).T  # a transposed view, as a product with a matrix leaves it
    rows = np.ones(6) if rows_ones else rng.normal(size=6)
    factor = {"one": 1.0, "scalar": 2.5, "vector": rng.normal(size=4)}[cols]
    for stack in (ScaledStack(base, rows, factor), BatchedDiagonal(rng.normal(size=5))):
        result = stack.dense_transposed()
        np.testing.assert_array_equal(result, stack.dense().T)
        assert result.flags.c_contiguous

"""Products and contractions: analytic gradients, einsum against explicit formulas, batched gradients,
PyTorch's error messages and a property test over matmul's rank combinations."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.check import gradcheck
from tests.budget import examples
from tests.ops.samples_linear import SAMPLES

rng = np.random.default_rng(0)


def leaf(*shape: int) -> fg.Tensor:
    return fg.tensor(rng.standard_normal(shape), requires_grad=True)


def grads(out: fg.Tensor, inputs: tuple[fg.Tensor, ...], g: np.ndarray) -> list[np.ndarray]:
    return [t.data for t in fg.autograd.grad(out, inputs, fg.tensor(g))]


# ----- analytic gradients ---------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape,y_shape", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5))])
def test_matmul_gradients_are_the_transposed_products(x_shape: tuple[int, ...], y_shape: tuple[int, ...]) -> None:
    x, y = leaf(*x_shape), leaf(*y_shape)
    out = x @ y
    g = rng.standard_normal(out.shape)
    gx, gy = grads(out, (x, y), g)
    np.testing.assert_allclose(gx, g @ y.data.swapaxes(-1, -2))
    np.testing.assert_allclose(gy, x.data.swapaxes(-1, -2) @ g)


def test_matmul_with_vectors() -> None:
    v, w, m = leaf(4), leaf(4), leaf(4, 3)
    gv, gw = grads(fg.matmul(v, w), (v, w), np.array(2.0))
    np.testing.assert_allclose(gv, 2 * w.data)
    np.testing.assert_allclose(gw, 2 * v.data)
    g = rng.standard_normal(3)
    gv, gm = grads(v @ m, (v, m), g)
    np.testing.assert_allclose(gv, m.data @ g)
    np.testing.assert_allclose(gm, np.outer(v.data, g))
    g = rng.standard_normal(3)
    gm, gw = grads(fg.matmul(m.T, w), (m, w), g)
    np.testing.assert_allclose(gm, np.outer(w.data, g))
    np.testing.assert_allclose(gw, m.data @ g)


def test_matmul_sums_broadcast_batch_dims() -> None:
    x, y = leaf(2, 3, 4), leaf(4, 5)
    g = rng.standard_normal((2, 3, 5))
    gx, gy = grads(x @ y, (x, y), g)
    np.testing.assert_allclose(gx, g @ y.data.T)
    np.testing.assert_allclose(gy, sum(x.data[i].T @ g[i] for i in range(2)))


def test_matmul_operators_and_methods() -> None:
    x, a = leaf(3, 4), rng.standard_normal((2, 3))
    out = a @ x
    assert isinstance(out, fg.Tensor) and out.grad_fn.name() == "MatmulBackward0"
    np.testing.assert_allclose(out.data, a @ x.data)
    np.testing.assert_allclose(x.matmul(x.T).data, x.data @ x.data.T)
    np.testing.assert_allclose((x @ np.ones(4)).data, x.data.sum(1))


def test_dot_vdot_outer_mm_bmm() -> None:
    v, w = leaf(4), leaf(4)
    for op in (fg.dot, fg.vdot):
        gv, gw = grads(op(v, w), (v, w), np.array(3.0))
        np.testing.assert_allclose(gv, 3 * w.data)
        np.testing.assert_allclose(gw, 3 * v.data)
    u = leaf(3)
    g = rng.standard_normal((4, 3))
    gv, gu = grads(fg.outer(v, u), (v, u), g)
    np.testing.assert_allclose(gv, g @ u.data)
    np.testing.assert_allclose(gu, v.data @ g)
    x, y = leaf(2, 3, 4), leaf(2, 4, 5)
    np.testing.assert_allclose(fg.bmm(x, y).data, x.data @ y.data)
    a, b = leaf(3, 4), leaf(4, 5)
    np.testing.assert_allclose(fg.mm(a, b).data, a.data @ b.data)


def test_vdot_conjugates_the_first_argument() -> None:
    a, b = np.array([1 + 2j, 3 - 1j]), np.array([2 - 1j, 1j])
    assert fg.vdot(fg.tensor(a), fg.tensor(b)).item() == np.sum(np.conj(a) * b)
    assert fg.dot(fg.tensor(a), fg.tensor(b)).item() == np.sum(a * b)


@pytest.mark.parametrize("dims", [2, ([1, 0], [0, 2])])
def test_tensordot_matches_numpy(dims: Any) -> None:
    x, y = leaf(4, 3, 2), leaf(3, 2, 5) if dims == 2 else leaf(3, 5, 4)
    out = fg.tensordot(x, y, dims)
    axes = dims if isinstance(dims, int) else tuple(dims)
    np.testing.assert_allclose(out.data, np.tensordot(x.data, y.data, axes))
    assert gradcheck(lambda a, b: fg.tensordot(a, b, dims), (x, y))


# ----- einsum against explicit formulas ---------------------------------------------------------------
def test_einsum_trace_and_diagonal() -> None:
    a = leaf(3, 3)
    trace = fg.einsum("ii", a)
    np.testing.assert_allclose(trace.data, np.trace(a.data))
    (ga,) = grads(trace, (a,), np.array(2.0))
    np.testing.assert_allclose(ga, 2 * np.eye(3))
    g = rng.standard_normal(3)
    (ga,) = grads(fg.einsum("ii->i", a), (a,), g)
    np.testing.assert_allclose(ga, np.diag(g))


def test_einsum_batched_product_is_bmm() -> None:
    x, y = leaf(2, 3, 4), leaf(2, 4, 5)
    out = fg.einsum("bij,bjk->bik", [x, y])  # a single list of operands, as torch accepts
    np.testing.assert_allclose(out.data, x.data @ y.data)
    g = rng.standard_normal(out.shape)
    gx, gy = grads(out, (x, y), g)
    np.testing.assert_allclose(gx, g @ y.data.swapaxes(1, 2))
    np.testing.assert_allclose(gy, x.data.swapaxes(1, 2) @ g)


def test_einsum_sum_and_implicit_output() -> None:
    a, v = leaf(2, 3), leaf(3)
    (ga,) = grads(fg.einsum("ij->", a), (a,), np.array(1.5))
    np.testing.assert_allclose(ga, np.full((2, 3), 1.5))
    out = fg.einsum("ji,j", a, leaf(2))  # implicit output: 'i'
    assert out.shape == (3,)
    out = fg.einsum("...j,j", leaf(4, 2, 3), v)
    assert out.shape == (4, 2)


def test_einsum_ellipsis_broadcasts() -> None:
    x, y = leaf(5, 1, 3, 4), leaf(2, 4, 2)
    out = fg.einsum("...ij,...jk->...ik", x, y)
    np.testing.assert_allclose(out.data, x.data @ y.data)
    g = rng.standard_normal(out.shape)
    gx, gy = grads(out, (x, y), g)
    np.testing.assert_allclose(gx, (g @ y.data.swapaxes(-1, -2)).sum(1, keepdims=True))
    np.testing.assert_allclose(gy, (x.data.swapaxes(-1, -2) @ g).sum(0))


# ----- batched gradients ------------------------------------------------------------------------------
BATCHED = [pytest.param(name, case, id=f"{name}-{i}") for name, cases in SAMPLES.items()
           for i, case in enumerate(cases)]


@pytest.mark.parametrize("name,case", BATCHED)
def test_batched_gradients_match_one_at_a_time(name: str, case: Any) -> None:
    args = [fg.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a for a in case.args]
    inputs = tuple(a for a in args if isinstance(a, fg.Tensor))
    out = getattr(fg, name)(*args, **case.kwargs)
    v = rng.standard_normal((3, *out.shape))
    batched = fg.autograd.grad(out, inputs, fg.tensor(v), is_grads_batched=True, retain_graph=True)
    for k, vk in enumerate(v):
        single = fg.autograd.grad(out, inputs, fg.tensor(vk), retain_graph=True)
        for b, s in zip(batched, single):
            np.testing.assert_allclose(b.data[k], s.data, atol=1e-12)


# ----- errors -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,shapes,message", [
    (fg.mm, ((2, 3, 4), (4, 5)), "self must be a matrix"),
    (fg.mm, ((3, 4), (4,)), "mat2 must be a matrix"),
    (fg.mm, ((3, 4), (3, 4)), r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x4\)"),
    (fg.bmm, ((3, 4), (2, 4, 5)), "batch1 must be a 3D tensor"),
    (fg.bmm, ((2, 3, 4), (3, 4, 5)), r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\]"),
    (fg.dot, ((3,), (4,)), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    (fg.dot, ((2, 3), (3,)), "1D tensors expected, but got 2D and 1D tensors"),
    (fg.vdot, ((3,), (2, 3)), "1D tensors expected, but got 1D and 2D tensors"),
    (fg.outer, ((3,), (2, 3)), "outer: Expected 1-D argument vec2, but got 2-D"),
    (fg.matmul, ((), (3,)), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (fg.matmul, ((3,), (4,)), r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    (fg.matmul, ((3, 4), (5, 6)), r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x6\)"),
    (fg.matmul, ((2, 3, 4), (3, 4, 5)), "batch dimensions"),
])
def test_shape_errors_say_what_is_wrong(op: Any, shapes: tuple[tuple[int, ...], ...], message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        op(*(leaf(*s) for s in shapes))


@pytest.mark.parametrize("dims,message", [
    (-1, "tensordot expects dims >= 0, but got dims=-1"),
    (3, "tensordot expects dims < ndim_a or ndim_b, but got dims=3"),
    (([1], [0, 1]), "both dimension lists should have same length"),
    (([1], [0]), "contracted dimensions need to match, but first has size 4 in dim 1 and second has size 3 in dim 0"),
])
def test_tensordot_errors(dims: Any, message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        fg.tensordot(leaf(3, 4), leaf(3, 4), dims)


# ----- matmul over rank combinations --------------------------------------------------------------------
@st.composite
def matmul_shapes(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes matmul accepts: 1-4 dims each, batch dims broadcastable (some of size 1)."""
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    x_batch, y_batch = ([draw(st.sampled_from([b, 1])) for b in batch][draw(st.integers(0, len(batch))):]
                        for _ in range(2))
    x = (k,) if draw(st.booleans()) else (*x_batch, m, k)
    y = (k,) if draw(st.booleans()) else (*y_batch, k, n)
    return x, y


@settings(max_examples=examples(25), deadline=None)
@given(shapes=matmul_shapes())
def test_matmul_any_ranks(shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    x, y = (leaf(*s) for s in shapes)
    np.testing.assert_allclose(fg.matmul(x, y).data, np.matmul(x.data, y.data))
    assert gradcheck(fg.matmul, (x, y))


@pytest.mark.parametrize("equation", ["ii->i", "ij->ji", "ij"])
def test_an_einsum_of_one_operand_owns_its_memory(equation: str) -> None:
    """NumPy answers a diagonal or a transpose with a view; the result had its own version counter, so changing
    the operand in place after the forward silently changed what a node had saved (x * einsum("ii->i", a):
    x.grad [0, 8, 16] after a.mul_(2), not the diagonal [0, 4, 8]), and changing the result wrote into the
    operand unseen."""
    a = fg.tensor(np.arange(9.0).reshape(3, 3))
    expected = np.einsum(equation, a.data).copy()
    x = fg.tensor(np.ones(expected.shape), requires_grad=True)
    out = fg.einsum(equation, a)
    loss = (x * out).sum()
    a.mul_(2.0)
    loss.backward()
    np.testing.assert_array_equal(x.grad.data, expected)
    out.add_(1.0)
    np.testing.assert_array_equal(a.data, 2 * np.arange(9.0).reshape(3, 3))

"""Semantics of reductions and shape ops beyond gradcheck: tie and kink conventions, zeros in products,
views versus copies, Tensor-method call forms, batched gradients and random shapes and dims."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

import funcgrad as fg
import funcgrad.func as ff
from funcgrad.check import gradcheck
from tests.budget import examples


def leaf(values: Any) -> fg.Tensor:
    return fg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def grad_of(out: fg.Tensor, x: fg.Tensor, **kwargs: Any) -> np.ndarray:
    (g,) = fg.autograd.grad(out, x, **kwargs)
    return g.data


def hessian(f: Any, values: Any) -> np.ndarray:
    """The Hessian of scalar ``f`` at ``values`` by double backward, one row per element."""
    x = leaf(values)
    (g,) = fg.autograd.grad(f(x), x, create_graph=True)
    flat = fg.reshape(g, (-1,))
    return np.stack([grad_of(flat[i], x, retain_graph=True).ravel() for i in range(flat.numel())])


# ----- ties and kinks, as torch -------------------------------------------------------------------
def test_amax_ties_share_the_gradient_evenly() -> None:
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(grad_of(fg.amax(x, 1).sum(), x), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(grad_of(fg.amin(x), x), [[1, 0, 0], [0, 0, 0]])
    np.testing.assert_allclose(grad_of(fg.max(x), x), [[0, 0.5, 0.5], [0, 0, 0]])


def test_amax_of_a_group_with_nans_shares_the_gradient_among_its_nans() -> None:
    nan = float("nan")
    x = leaf([[1.0, nan, 3.0, nan], [2.0, 2.0, 1.0, 0.0]])
    for reduce in (fg.amax, fg.amin):
        np.testing.assert_allclose(grad_of(reduce(x, 1).sum(), x), [[0, 0.5, 0, 0.5], [0.5, 0.5, 0, 0]]
                                   if reduce is fg.amax else [[0, 0.5, 0, 0.5], [0, 0, 0, 1]])
        np.testing.assert_allclose(grad_of(reduce(x), x), [[0, 0.5, 0, 0.5], [0, 0, 0, 0]])
    single = fg.tensor(np.array([[2.0, 5.0, 5.0]], np.float32), requires_grad=True)
    g = grad_of(fg.amax(single, 1, True).sum(), single)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [[0, 0.5, 0.5]])


def test_max_with_dim_sends_the_gradient_to_the_first_maximum() -> None:
    x = leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    values, indices = fg.max(x, dim=1)
    np.testing.assert_array_equal(indices.data, [1, 0])
    np.testing.assert_allclose(grad_of(values.sum(), x), [[0, 1, 0], [1, 0, 0]])
    low = x.min(0, keepdim=True)
    assert low.values.shape == (1, 3) and low.indices.data.tolist() == [[0, 1, 1]]


def test_max_call_forms() -> None:
    x, y = leaf([[1.0, 5.0], [7.0, 2.0]]), leaf([4.0, 4.0])
    assert x.max().item() == 7.0
    assert x.max(dim=1).values.data.tolist() == [5.0, 7.0]
    assert x.max(1, keepdim=True).indices.shape == (2, 1)
    np.testing.assert_array_equal(fg.max(x, y).data, [[4, 5], [7, 4]])
    np.testing.assert_array_equal(fg.min(x, other=y).data, [[1, 4], [4, 2]])
    assert fg.argmax(x).item() == 2 and fg.argmin(x, 1, keepdim=True).shape == (2, 1)


def test_std_and_norm_have_zero_gradient_where_they_are_zero() -> None:
    x = leaf([1.5, 1.5, 1.5])
    np.testing.assert_array_equal(grad_of(fg.std(x), x), [0, 0, 0])
    zero = leaf([0.0, 0.0])
    np.testing.assert_array_equal(grad_of(fg.norm(zero), zero), [0, 0])


# ----- products with zeros --------------------------------------------------------------------------
@pytest.mark.parametrize("values, grad, pairs", [
    ([0.0, 2.0, 3.0], [6, 0, 0], {(0, 1): 3, (0, 2): 2}),   # d2/dx_i dx_j = product of the rest
    ([0.0, 0.0, 3.0], [0, 0, 0], {(0, 1): 3}),
    ([2.0, 3.0, 4.0], [12, 8, 6], {(0, 1): 4, (0, 2): 3, (1, 2): 2}),
])
def test_prod_with_zeros(values: list[float], grad: list[float], pairs: dict[tuple[int, int], float]) -> None:
    x = leaf(values)
    np.testing.assert_allclose(grad_of(fg.prod(x), x), grad)
    expected = np.zeros((3, 3))
    for (i, j), v in pairs.items():
        expected[i, j] = expected[j, i] = v
    np.testing.assert_allclose(hessian(fg.prod, values), expected)


def test_cumprod_with_zeros() -> None:
    x = leaf([2.0, 0.0, 3.0])  # out = (2, 0, 0)
    np.testing.assert_allclose(grad_of(fg.cumprod(x, 0).sum(), x), [1, 2 + 6, 0])
    # d2 sum(cumprod) / dx dx: x0 x1 appears in out_1, x0 x1 x2 in out_2
    np.testing.assert_allclose(hessian(lambda t: fg.cumprod(t, 0).sum(), [2.0, 0.0, 3.0]),
                               [[0, 1 + 3, 0], [1 + 3, 0, 2], [0, 2, 0]])


# ----- views and copies -------------------------------------------------------------------------------
@pytest.mark.parametrize("call,value,grad", [
    (lambda x: fg.mean(x, 0), 1.5, 1.0),
    (lambda x: x.mean(-1, keepdim=True), 1.5, 1.0),
    (lambda x: fg.prod(x, 0), 1.5, 1.0),
    (lambda x: fg.prod(x, -1, True), 1.5, 1.0),
    (lambda x: fg.var(x, (0,), correction=0), 0.0, 0.0),
    (lambda x: fg.std(x, 0, correction=0), 0.0, 0.0),
    (lambda x: fg.var(x, 0), np.nan, np.nan),  # N - 1 = 0 degrees of freedom, as torch
    (lambda x: fg.std(x, -1), np.nan, np.nan),
    (lambda x: fg.flip(x, 0), 1.5, 1.0),
    (lambda x: x.flip(-1), 1.5, 1.0),
    (lambda x: fg.flip(x, (0, -1)), 1.5, 1.0),
], ids=["mean", "mean-keepdim", "prod", "prod-keepdim", "var-biased", "std-biased", "var", "std", "flip", "flip-method",
        "flip-both"])
def test_zero_dim_inputs_take_dim_0_and_minus_1(call: Any, value: float, grad: float) -> None:
    """Issue 12: dim 0 / -1 of a 0-d tensor name no axis, in the forward and the backward (values as torch)."""
    x = fg.tensor(1.5, requires_grad=True)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Degrees of freedom <= 0", as torch warns
        out = call(x)
        out.backward()
    assert out.shape == ()
    np.testing.assert_array_equal(out.data, value)
    np.testing.assert_array_equal(x.grad.data, grad)


def test_zero_dim_inputs_reject_other_dims() -> None:
    x = fg.tensor(1.5, requires_grad=True)
    for call in (lambda: fg.flip(x, 1), lambda: fg.mean(x, 1), lambda: fg.prod(x, -2)):
        with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\]"):
            call()
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        fg.flip(fg.ones(2), (0, -1))


def test_view_shares_memory_and_version_with_its_base() -> None:
    x = fg.arange(6.0)
    v = x.view(2, 3)
    assert v._base is x and np.shares_memory(v.data, x.data)
    x.add_(1.0)
    assert v._version == x._version == 1 and v.data[1, 2] == 6.0
    for y in (x.reshape(3, 2), fg.unsqueeze(x, 0), fg.flatten(v), v.T, fg.diagonal(v), v.expand(2, 2, 3)):
        assert y._base is x, y


def test_view_of_a_non_contiguous_tensor_raises_and_reshape_copies() -> None:
    t = fg.arange(6.0).view(2, 3).T
    with pytest.raises(RuntimeError, match="Use .reshape"):
        t.view(6)
    flat = t.reshape(6)
    assert not flat.is_view and not np.shares_memory(flat.data, t.data)
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        fg.arange(6.0).view(4, 2)


def test_copying_ops_do_not_share_memory() -> None:
    x = fg.arange(6.0).view(2, 3)
    for y in (x.flip(0), fg.roll(x, 1), x.repeat(1, 2), fg.diag(x), fg.triu(x)):
        assert not y.is_view and not np.shares_memory(y.data, x.data)


def test_varargs_and_tuple_forms_agree() -> None:
    x = fg.arange(24.0).reshape((2, 3, 4))
    assert x.permute(2, 0, 1).shape == x.permute((2, 0, 1)).shape == (4, 2, 3)
    assert x.view(6, 4).shape == x.view([6, 4]).shape == (6, 4)
    assert x[:, :1].expand(5, -1, 1, 4).shape == (5, 2, 1, 4)
    assert x.repeat(2, 1, 1, 1).shape == (2, 2, 3, 4) and x.tile(2).shape == (2, 3, 8)
    np.testing.assert_array_equal(x.flip(0, 2).data, x.flip((0, 2)).data)
    assert fg.view_as(x, np.zeros((4, 6))).shape == (4, 6) and x[:1].expand_as(x).shape == (2, 3, 4)


@pytest.mark.parametrize("call, message", [
    (lambda x: x.expand(4, 4), r"must match the existing size \(3\) at non-singleton dimension 1"),
    (lambda x: x.repeat(2), "can not be smaller than number of dimensions"),
    (lambda x: x.flatten(1, 0), "start_dim cannot come after end_dim"),
    (lambda x: x.unflatten(1, (2, 2)), "don't multiply up to the size of dim 1"),
    (lambda x: fg.norm(x, "abc"), "p must be a positive number"),
    (lambda x: fg.sum(x, 2), "Dimension out of range"),
])
def test_errors(call: Any, message: str) -> None:
    with pytest.raises((RuntimeError, ValueError, IndexError), match=message):
        call(fg.ones(2, 3))


# ----- batched gradients ------------------------------------------------------------------------------
BATCHED = [
    (lambda x: fg.var(x, 1), (3, 4)),
    (lambda x: fg.std(x, (0, 2), keepdim=True), (2, 3, 4)),
    (lambda x: fg.prod(x, 0), (3, 4)),
    (lambda x: fg.cumsum(x, 0), (3, 4)),
    (lambda x: fg.cumprod(x, -1), (3, 4)),
    (lambda x: fg.softmax(x, 0), (3, 4)),
    (lambda x: fg.log_softmax(x, -1), (3, 4)),
    (lambda x: fg.logsumexp(x, 1), (3, 4)),
    (lambda x: fg.norm(x, 3, 1), (3, 4)),
    (lambda x: fg.max(x, 1).values, (3, 4)),
    (lambda x: x.view(4, 3), (3, 4)),
    (lambda x: fg.squeeze(x, 0), (1, 4)),
    (lambda x: fg.movedim(x, 0, -1), (2, 3, 4)),
    (lambda x: x.repeat(2, 1, 3), (3, 4)),
    (lambda x: fg.roll(x, 2), (3, 4)),
    (lambda x: fg.diagonal(x, 1, 2, 0), (2, 3, 4)),
    (lambda x: fg.diag(x), (3,)),
    (lambda x: fg.trace(x), (3, 4)),
]


@pytest.mark.parametrize("fn, shape", BATCHED)
def test_batched_gradients_equal_stacked_ones(fn: Any, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    x = leaf(rng.uniform(0.5, 2.0, shape))
    out = fn(x)
    vs = rng.standard_normal((3,) + out.shape)
    batched = grad_of(out, x, grad_outputs=fg.tensor(vs), is_grads_batched=True, retain_graph=True)
    stacked = [grad_of(out, x, grad_outputs=fg.tensor(v), retain_graph=True) for v in vs]
    np.testing.assert_allclose(batched, np.stack(stacked), rtol=1e-12, atol=1e-12)


# ----- random shapes and dims ---------------------------------------------------------------------
@st.composite
def array_and_dims(draw: Any) -> tuple[np.ndarray, tuple[int, ...], bool]:
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3))
    dims = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape),
                         unique_by=lambda d: d % len(shape)))
    values = draw(st.integers(0, 2**32 - 1).map(lambda seed: np.random.default_rng(seed).uniform(-2, 2, shape)))
    return values, tuple(dims), draw(st.booleans())


@settings(max_examples=examples(25), deadline=None)
@given(array_and_dims())
def test_reductions_over_random_shapes_and_dims(case: tuple[np.ndarray, tuple[int, ...], bool]) -> None:
    values, dims, keepdim = case
    axes = tuple(d % values.ndim for d in dims)
    x = leaf(values)
    for name, reference in (("sum", np.sum), ("mean", np.mean), ("var", lambda a, **kw: np.var(a, ddof=1, **kw))):
        fn = getattr(fg, name)
        np.testing.assert_allclose(fn(x, dims, keepdim=keepdim).data, reference(values, axis=axes, keepdims=keepdim))
        assert gradcheck(lambda t, fn=fn: fn(t, dims, keepdim=keepdim), (x,))
    out = fg.softmax(x, dims[0])
    np.testing.assert_allclose(out.sum(dims[0]).data, 1.0)
    assert gradcheck(lambda t: fg.softmax(t, dims[0]), (x,))


@pytest.mark.parametrize("values", [[0.5, 3.2e-16, 2.0], [0.0, 1.0, 3.2e-16], [0.3, -1e-4, 1.0, 2.0]])
def test_prod_third_derivative_with_a_tiny_entry(values: list[float]) -> None:
    # prod's zero-safe rule runs through cumprod, whose rule divided by x_i: differentiated twice more, that
    # cancels terms of size 1/x_i (the first case gave an error of 1.0); reverse mode must match forward mode
    x = np.array(values)
    reverse = ff.jacrev(ff.jacrev(ff.jacrev(lambda t: fg.prod(fg.sin(t)))))(x)
    forward = ff.jacfwd(ff.jacfwd(ff.jacfwd(lambda t: fg.prod(fg.sin(t)))))(x)
    np.testing.assert_allclose(reverse, forward, atol=1e-12)


@pytest.mark.parametrize("shape,to", [((2, 3, 4), (5,)), ((2, 3, 4), (2, 4)), ((4,), (4, 4)), ((2, 6), (3, 4))])
def test_sum_to_a_shape_that_does_not_broadcast_raises_torchs_error(shape: tuple, to: tuple) -> None:
    with pytest.raises(RuntimeError, match=rf"size \{{\[{', '.join(map(str, to))}\]\}} is not expandable"):
        fg.sum_to(fg.zeros(*shape), to)


def test_sum_to_its_own_shape_owns_its_memory() -> None:
    """The kernel answers x's own shape with x itself; the result had its own version counter, so changing x in
    place after the forward silently changed what a node had saved (y * v * y with y = sum_to(x, x.shape): the
    gradient of v was (2x)^2 after x.mul_(2), not x^2)."""
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = fg.tensor([1.0, 1.0, 1.0], requires_grad=True)
    y = fg.sum_to(x, (3,))
    loss = (y * v * y).sum()
    with fg.no_grad():
        x.mul_(2.0)
    loss.backward()
    np.testing.assert_array_equal(v.grad.data, [1.0, 4.0, 9.0])


@pytest.mark.parametrize("dim", [(0, 1), [0, 1], 2.0])
def test_max_and_min_with_a_dim_that_is_no_int_raise_as_torch(dim: Any) -> None:
    """``x.max((0, 1))`` is no elementwise maximum with [0, 1] (torch raises; NumPy would reduce)."""
    x = leaf([[1.0, 5.0], [7.0, 2.0]])
    with pytest.raises(TypeError, match=r"max\(\) received an invalid combination.*amax\(x, dim=\.\.\.\)"):
        x.max(dim)
    with pytest.raises(TypeError, match=r"min\(\) received an invalid combination"):
        fg.min(x, dim=dim)
    assert x.max(axis=(0, 1)).item() == 7.0  # NumPy's spelling reduces


@pytest.mark.parametrize("op", [lambda m, x: m.logsumexp(x, 1), lambda m, x: m.logsumexp(x, 0),
                                lambda m, x: m.softmax(x, 1), lambda m, x: m.log_softmax(x, 0),
                                lambda m, x: m.cumprod(x, 1)])
def test_empty_tensors_in_logsumexp_softmax_and_cumprod_as_torch(op: Any) -> None:
    """Torch's values (logsumexp of nothing is -inf, softmax of nothing empty) and empty gradients; these raised
    NumPy's 'zero-size array to reduction operation maximum'."""
    torch = pytest.importorskip("torch")
    x = leaf(np.zeros((3, 0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = op(fg, x)
    expected = op(torch, torch.zeros(3, 0, dtype=torch.float64))
    np.testing.assert_array_equal(out.data, expected.numpy())
    out.sum().backward()
    assert x.grad.shape == (3, 0)
